"""Imports every reference kernel module of this package so that each registers itself."""

from __future__ import annotations

import importlib
import pkgutil

from . import __path__ as _package_path

_HELPERS = {"kernels"}  # modules with no kernels of their own

for _module in pkgutil.iter_modules(_package_path):
    if _module.name not in _HELPERS:
        importlib.import_module(f"{__package__}.{_module.name}")
