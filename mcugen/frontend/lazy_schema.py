"""The `tflite` package (TFLite's flatbuffer schema, one generated module per table, enum and
union) imported a class at a time, as it is used.

The package's `__init__` imports all of its ~190 modules (`from tflite.X import *` for each), a
third of the instructions a build spends importing, where a build reads a few dozen of them.
`install()` puts the package in `sys.modules` with its `__init__` not yet run: reading
`tflite.X` imports the module `tflite.X` and gives its class `X`, which is what the full package
binds `tflite.X` to, whether the module is first imported through the attribute or by another
module (the generated code imports its neighbours inside its methods). A name that is no module
of the package (`__version__`, the generated builder functions, `dir()`) runs the real
`__init__` first, so anything beyond `tflite.X` sees the package exactly as imported in full.
Once `tflite` is imported in full, or by other means, `install()` leaves it alone.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

PACKAGE = "tflite"


class _LazyPackage(types.ModuleType):
    """A package whose `__init__` runs on the first name that is not one of its modules."""

    def __setattr__(self, name: str, value: Any) -> None:
        # The import system binds a submodule to its package's attribute; the full package
        # rebinds the same name to the class the module defines (its `import *`).
        if isinstance(value, types.ModuleType) and value.__name__ == f"{PACKAGE}.{name}":
            value = value.__dict__.get(name, value)
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__"):
            try:
                module = importlib.import_module(f"{PACKAGE}.{name}")
            except ModuleNotFoundError as missing:
                if missing.name != f"{PACKAGE}.{name}":
                    raise
            else:
                value = module.__dict__.get(name, module)
                super().__setattr__(name, value)
                return value
        return _load_fully(self, name)

    def __dir__(self) -> list[str]:
        _load_fully(self, "__dict__")
        return list(self.__dict__)


def _load_fully(package: types.ModuleType, name: str) -> Any:
    """Run the package's real `__init__` into it (once), then look `name` up as usual."""
    if type(package) is _LazyPackage:
        package.__class__ = types.ModuleType  # type: ignore[assignment]  # a plain module from here on
        spec = package.__spec__
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(package)
    return getattr(package, name) if name != "__dict__" else package.__dict__


def install() -> None:
    """Put the lazy `tflite` package in `sys.modules`, unless it is imported already or absent."""
    if PACKAGE in sys.modules:
        return
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    package.__class__ = _LazyPackage
    sys.modules[PACKAGE] = package
