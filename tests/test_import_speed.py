"""What makes importing mcugen fast must not change what gets imported.

- The `tflite` schema package is imported a class at a time (mcugen/frontend/lazy_schema.py):
  whatever is read of it, through attributes, `from tflite.X import X` or after `dir()`, is what
  the package imported in full gives (the oracle: a process that imports it without mcugen).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def _run(code: str, cache_dir: str | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MCUGEN_CACHE_DIR", None)
    if cache_dir is not None:
        env["MCUGEN_CACHE_DIR"] = cache_dir
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])  # the last line: what the code printed last


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
