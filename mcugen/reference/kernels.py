"""Imports every reference kernel module so that each registers itself."""

from . import (  # noqa: F401  # noqa: F401
    conv,
    elementwise,
    fully_connected,
    pool,
    reduce,
    shape,  # noqa: F401
    softmax,
)
