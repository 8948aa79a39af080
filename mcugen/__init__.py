"""mcugen: quantized TensorFlow Lite models to plain C for microcontrollers."""

from .frontend.lazy_schema import install as _import_tflite_lazily

__version__ = "0.1.0"

# Import-time savings for every command, before any other module of the package runs:
_import_tflite_lazily()  # the flatbuffer schema's classes imported as they are used
