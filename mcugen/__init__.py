"""mcugen: quantized TensorFlow Lite models to plain C for microcontrollers."""

from .dataclass_code import install_default as _cache_dataclass_code
from .frontend.lazy_schema import install as _import_tflite_lazily

__version__ = "0.1.0"

# Import-time savings for every command, before any other module of the package runs:
_cache_dataclass_code()  # dataclass methods compiled once per user, not per process
_import_tflite_lazily()  # the flatbuffer schema's classes imported as they are used
