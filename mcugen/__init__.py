"""mcugen: quantized TensorFlow Lite models to plain C for microcontrollers."""

__version__ = "0.1.0"
