"""The generated model sources stay byte-identical across refactors.

tests/golden/generated_c.json holds, for every committed fixture and public model, each
rounding mode and each target, the sha256 of the rendered `<prefix>_model.c` and
`<prefix>_model.h` (or "refused" where mcugen refuses the model in that mode). A change to
the package that is meant to leave the output alone (a redesign, a move, a rename) must keep
every hash; a change that means to alter the generated C regenerates the file on purpose:

    python3 tests/test_golden_codegen.py --update

and says in its commit why the output changed. The runtime kernels copied beside the model
(templates/runtime/) are static files with tests of their own and are not hashed here.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from mcugen.driver import BuildOptions, compile_model
from mcugen.errors import McugenError
from mcugen.quantization import Rounding

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS / "golden" / "generated_c.json"
PUBLIC_MODELS = TESTS.parent.parent / "shared" / "models"
TARGETS = ("host", "cortex-m4", "cortex-m55")


def _models() -> list[Path]:
    fixtures = sorted((TESTS / "fixtures").glob("*.tflite"))
    return fixtures + sorted(PUBLIC_MODELS.glob("*.tflite"))


def _cases(model: Path) -> list[tuple[str, BuildOptions]]:
    """(key, options): every rounding and target; untiled too for the public models, whose
    chains are tiled by default. "tiled" is --optimize ram, the least-RAM tiling (the default,
    balanced, picks between it, untiled and fewer stripes: test_optimize.py)."""
    tilings = (True, False) if model.parent == PUBLIC_MODELS else (True,)
    return [
        (f"{rounding.value}|{target}|{'tiled' if tiling else 'untiled'}",
         BuildOptions(rounding=rounding, target=target, tiling=tiling, optimize="ram"))
        for rounding in Rounding for target in TARGETS for tiling in tilings
    ]


def model_hashes(model: Path) -> dict[str, str]:
    """key -> sha256 of the model's rendered .c and .h, or 'refused'."""
    hashes = {}
    for key, options in _cases(model):
        try:
            compiled = compile_model(model, options)
        except McugenError:
            hashes[key] = "refused"
            continue
        digest = hashlib.sha256()
        for name in sorted(compiled.code.files):
            if name.endswith(("_model.c", "_model.h")):
                digest.update(name.encode() + b"\0" + compiled.code.files[name].encode() + b"\0")
        hashes[key] = digest.hexdigest()
    return hashes


def _golden() -> dict[str, dict[str, str]]:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("model", _models(), ids=lambda path: path.stem)
def test_generated_c_is_unchanged(model: Path) -> None:
    golden = _golden()
    assert model.name in golden, f"{model.name} has no golden hashes: run {Path(__file__).name} --update"
    changed = {key: value for key, value in model_hashes(model).items()
               if golden[model.name].get(key) != value}
    assert not changed, f"{model.name}: generated C changed for {sorted(changed)}"


def test_golden_covers_the_public_models() -> None:
    """The golden file is not silently missing the public models (CI always has them)."""
    names = {path.name for path in PUBLIC_MODELS.glob("*.tflite")}
    if not names:
        pytest.skip("public models not found")
    assert names <= set(_golden())


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(f"usage: python3 {sys.argv[0]} --update")
    table = {model.name: model_hashes(model) for model in _models()}
    GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"{GOLDEN}: {len(table)} models")
