"""mcugen's dataclasses without compiling their methods in every process.

`@dataclass` writes the Python source of each method it generates (`__init__`, `__repr__`,
`__eq__`, `__hash__`, and `__setattr__`/`__delattr__` of a frozen class) and compiles it with
`exec` when the class is defined, that is at import: about 2.5 million instructions a class, and
a build imports over a hundred of mcugen's classes, a fifth of all its instructions. Python keeps
a module's bytecode in __pycache__ but never this code. So, like __pycache__, the compiled code is
kept in a per-user file (cachedir.py): `dataclasses`' call of `exec` gets, for a class that one
of mcugen's modules defines, the code object compiled from exactly that source text (the key is
the whole text), the very object compiling it again would give, so the class is the same. A
source not in the file is compiled as before and written back at exit. The file is per Python
bytecode version; one that cannot be read, or holds anything but source -> code, is a miss for
every class. Other modules' dataclasses are left alone.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import importlib.util
import marshal
import os
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any

from .cachedir import cache_directory

FILE_NAME = f"dataclass-code-{importlib.util.MAGIC_NUMBER.hex()}.marshal"
MAX_ENTRIES = 4000  # beyond this, what this process did not use is dropped when writing back


def _ours(namespace: dict[str, Any] | None) -> bool:
    name = str((namespace or {}).get("__name__", ""))
    return name == "mcugen" or name.startswith("mcugen.")


class CodeCache:
    """Compiled code by source text, read from `path` (None: nothing kept between processes)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.codes = _read(path) if path is not None else {}
        self.used: set[str] = set()
        self.compiled = 0  # sources this process had to compile

    def exec(self, source: Any, globals: dict[str, Any] | None = None, locals: Any = None) -> None:
        """`exec` as `dataclasses` calls it, with the code of mcugen's sources cached."""
        if isinstance(source, str) and _ours(globals):
            code = self.codes.get(source)
            if code is None:
                # dont_inherit: not this module's `from __future__` flags (exec(str) in
                # dataclasses has none), else annotations would turn into strings
                code = compile(source, "<string>", "exec", dont_inherit=True)
                self.codes[source] = code
                self.compiled += 1
            self.used.add(source)
            source = code
        builtins.exec(source, globals, locals)  # noqa: S102  (what dataclasses does, with its text)

    def write(self) -> None:
        """Write the codes back if this process compiled any (replacing the file atomically);
        a directory that cannot be written only means compiling again next time."""
        if self.path is None or not self.compiled:
            return
        codes = self.codes if len(self.codes) <= MAX_ENTRIES else {s: self.codes[s] for s in self.used}
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".dataclass-code-")
            try:
                with os.fdopen(handle, "wb") as out:
                    marshal.dump(codes, out)
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass


def _read(path: Path) -> dict[str, CodeType]:
    try:
        codes = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(codes, dict) or not all(
            isinstance(s, str) and isinstance(c, CodeType) for s, c in codes.items()):
        return {}
    return codes


def install(directory: Path | None) -> CodeCache:
    """Route `dataclasses`' exec through a cache kept in `directory` (None: for this process
    only), written back at exit. Installed once per process; later calls return that one."""
    current = getattr(dataclasses, "exec", None)
    if isinstance(getattr(current, "__self__", None), CodeCache):
        return current.__self__  # type: ignore[union-attr]
    cache = CodeCache(directory / FILE_NAME if directory is not None else None)
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]  # a module global shadows the builtin
    atexit.register(cache.write)
    return cache


def install_default() -> CodeCache:
    """install() in the per-user cache directory (cachedir.py)."""
    return install(cache_directory())
