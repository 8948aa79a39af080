"""Imports every reference kernel module so that each registers itself."""

from . import shape  # noqa: F401
from . import conv, fully_connected  # noqa: F401
from . import pool, elementwise, reduce, softmax  # noqa: F401
