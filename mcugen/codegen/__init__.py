"""Code generation: per-op emitters (ops_*.py) register themselves in emit.EMITTERS."""

from __future__ import annotations

import importlib
import pkgutil


def load_emitters() -> None:
    """Import every ops_* module of this package so that its emitters register."""
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("ops_"):
            importlib.import_module(f"{__name__}.{module.name}")
