"""What makes importing mcugen fast must not change what gets imported.

- Dataclass methods come from a per-user cache of compiled code (mcugen/dataclass_code.py): a
  warm cache compiles nothing and gives every class of mcugen the very code objects Python's
  own dataclasses compile (the oracle: a process with the cache off); a damaged cache is a miss;
  other modules' dataclasses are never cached.
- The `tflite` schema package is imported a class at a time (mcugen/frontend/lazy_schema.py):
  whatever is read of it, through attributes, `from tflite.X import X` or after `dir()`, is what
  the package imported in full gives (the oracle: a process that imports it without mcugen).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

# Imports most of mcugen, then prints the compiled code of every generated dataclass method.
DIGEST = """
import builtins, dataclasses, hashlib, json, sys, types
import mcugen
from mcugen.dataclass_code import CodeCache
if PLAIN:
    dataclasses.exec = builtins.exec  # Python's own dataclasses for every class from here on
import mcugen.driver, mcugen.codegen.generate, mcugen.analysis.measure

def shape(code):  # what makes two code objects equal (marshal's bytes also carry refcounts)
    parts = []
    for name in ("co_code", "co_consts", "co_names", "co_varnames", "co_freevars", "co_cellvars",
                 "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_flags", "co_name",
                 "co_qualname", "co_filename", "co_firstlineno", "co_linetable", "co_exceptiontable"):
        value = getattr(code, name)
        if name == "co_consts":
            value = tuple(shape(c) if isinstance(c, types.CodeType) else repr(c) for c in value)
        parts.append(value)
    return repr(tuple(parts))

methods = {}
for name, module in sorted(sys.modules.items()):
    if not name.startswith("mcugen"):
        continue
    for cls in vars(module).values():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == name:
            for method, function in sorted(vars(cls).items()):
                code = getattr(function, "__code__", None)
                if code is not None and code.co_filename == "<string>":
                    methods[f"{name}.{cls.__qualname__}.{method}"] = hashlib.sha256(shape(code).encode()).hexdigest()
cache = getattr(dataclasses.exec, "__self__", None)
print(json.dumps({"methods": methods, "compiled": cache.compiled if isinstance(cache, CodeCache) else None}))
"""


def _digest(cache_dir: str, plain: bool = False) -> dict:
    return _run(f"PLAIN = {plain}\n{DIGEST}", cache_dir)


def _run(code: str, cache_dir: str | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MCUGEN_CACHE_DIR", None)
    if cache_dir is not None:
        env["MCUGEN_CACHE_DIR"] = cache_dir
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])  # the last line: what the code printed last


def test_warm_dataclass_cache_compiles_nothing_and_gives_the_same_code(tmp_path: Path) -> None:
    plain = _digest("", plain=True)
    cold = _digest(str(tmp_path))
    warm = _digest(str(tmp_path))
    assert len(plain["methods"]) > 300  # every class of a build, each with its generated methods
    assert plain["compiled"] is None and cold["compiled"] > 0
    assert warm["compiled"] == 0
    assert cold["methods"] == plain["methods"] == warm["methods"]


def test_damaged_dataclass_cache_is_a_miss(tmp_path: Path) -> None:
    first = _digest(str(tmp_path))
    [cache_file] = tmp_path.glob("dataclass-code-*.marshal")
    cache_file.write_bytes(cache_file.read_bytes()[: cache_file.stat().st_size // 2])
    damaged = _digest(str(tmp_path))
    assert damaged["compiled"] > 0 and damaged["methods"] == first["methods"]
    assert _digest(str(tmp_path))["compiled"] == 0  # written back whole


def test_other_modules_dataclasses_are_not_cached() -> None:
    import mcugen  # noqa: F401  (installs the cache)

    cache = dataclasses.exec.__self__  # type: ignore[attr-defined]
    before = dict(cache.codes)

    @dataclasses.dataclass(frozen=True)
    class NotOurs:
        value: int = 0

    assert NotOurs(3) == NotOurs(3) and NotOurs(3).value == 3
    assert cache.codes == before


# Reads `tflite` the ways mcugen and the generated code do, then prints every public name of the
# package with what it is bound to.
SCHEMA = """
import json, sys
{prelude}
import tflite
model = tflite.Model                      # an attribute first
from tflite.Buffer import Buffer          # a module first, through an import
assert tflite.Buffer is Buffer
builtins = vars(tflite.BuiltinOperator)
names = {{name: f"{{getattr(v, '__module__', '')}}.{{getattr(v, '__qualname__', repr(v))}}"
         for name in dir(tflite) if not name.startswith("_") for v in [getattr(tflite, name)]}}
names["__version__"] = tflite.__version__
print(json.dumps({{"names": names, "model": model.__qualname__, "conv": builtins["CONV_2D"]}}))
"""


def test_lazy_schema_package_is_the_package() -> None:
    lazy = _run(SCHEMA.format(prelude="import mcugen, mcugen.frontend.lazy_schema as l; "
                                      "assert type(sys.modules['tflite']) is l._LazyPackage"), "")
    full = _run(SCHEMA.format(prelude="assert 'mcugen' not in sys.modules"), "")
    assert len(full["names"]) > 500
    assert lazy == full


def test_a_build_imports_a_fraction_of_the_schema(tmp_path: Path) -> None:
    model = REPO.parent / "shared" / "models" / "kws_dscnn.tflite"
    code = f"""
import json, sys
from mcugen.cli import main
try:
    main(["build", {str(model)!r}, "-o", {str(tmp_path / "out")!r}])
except SystemExit:
    pass
print(json.dumps({{"modules": [m for m in sys.modules if m.startswith("tflite.")]}}))
"""
    loaded = _run(code, "")["modules"]
    spec = importlib.util.find_spec("tflite")
    assert spec is not None and spec.submodule_search_locations
    schema = [p for p in Path(spec.submodule_search_locations[0]).glob("*.py") if p.stem != "__init__"]
    assert 0 < len(loaded) < len(schema) // 3
    assert (tmp_path / "out" / "kws_dscnn_model.c").exists()
