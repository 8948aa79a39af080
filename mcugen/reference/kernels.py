"""Imports every reference kernel module so that each registers itself."""

from . import shape  # noqa: F401
