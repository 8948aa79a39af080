"""The guard run: the generated C with canary bytes after every buffer and around every pool,
under AddressSanitizer and UBSan, on the public models, with and without tiling (memory/tiling.py);
no canary touched, outputs bit-exact with TensorFlow Lite Micro (the `tflm_output0` of the case
files)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, public_model

from mcugen.codegen.memory import GUARD_STATUS
from mcugen.driver import BuildOptions, compile_model
from mcugen.errors import BuildError
from mcugen.memory.pools import PoolSpec, pool_symbol
from mcugen.toolchain.host import build_program, run_program

GUARD = 16
# One model is also guarded across several pools.
POOLS = {"ic_resnet8": (PoolSpec("DTCM", 24 << 10, "fast"), PoolSpec("SRAM", 64 << 10))}


def _cases(name: str) -> list[dict[str, np.ndarray]]:
    model = public_model(name)
    return [dict(np.load(model.with_name(f"{name}.case{k}.npz"))) for k in range(3)]


@pytest.mark.parametrize("tiling", [True, False], ids=["tiled", "whole"])
@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_guarded_build_touches_no_canary_and_is_bit_exact(name: str, tiling: bool) -> None:
    model = public_model(name)
    options = BuildOptions(guard=GUARD, pools=POOLS.get(name, ()), tiling=tiling)
    compiled = compile_model(model, options)
    # The models with spatial chains are tiled (their stripe slots are guarded buffers too).
    assert (compiled.plan.tiling is not None) == (tiling and name != "ad_autoencoder")
    source = compiled.code.files[f"{compiled.prefix}_model.c"]
    # Every buffer's canary is checked at least once, and both ends of each pool after every op.
    for buffer in compiled.plan.buffers:
        base = pool_symbol(compiled.prefix, buffer.pool)
        assert f"_guard_intact({base} + {buffer.offset + buffer.size}, {GUARD})" in source
    for pool in compiled.plan.pools:
        if pool.size:
            base = pool_symbol(compiled.prefix, pool.name)
            assert source.count(f"_guard_intact({base} + 0, {GUARD})") >= len(compiled.order)
            assert source.count(f"_guard_intact({base} + {pool.size - GUARD}, {GUARD})") >= len(compiled.order)
    assert len([p for p in compiled.plan.pools if p.size]) == (2 if name in POOLS else 1)
    cases = _cases(name)
    program = build_program(model.read_bytes(), options, model.name, sanitize=True)
    results = run_program(program, [[c["input0"]] for c in cases])
    for k, (case, outputs) in enumerate(zip(cases, results)):
        expected = case["tflm_output0"]
        mismatched = int(np.count_nonzero(outputs[0].reshape(expected.shape) != expected))
        assert mismatched == 0, f"{name} case{k}: {mismatched} elements differ"


def test_a_write_past_a_buffer_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard can fail: a kernel call patched to write one byte past its output is reported."""
    model = public_model("ad_autoencoder")
    options = BuildOptions(guard=GUARD)
    compiled = compile_model(model, options)
    name = f"{compiled.prefix}_model.c"
    source = compiled.code.files[name]
    first_check = source.index(f"if (!{compiled.prefix}_guard_intact(")
    statement_start = source.rindex("\n", 0, first_check) + 1
    buffer = next(b for b in compiled.plan.buffers if b.first == 0 and b.last >= 0)
    overrun = f"    {compiled.prefix}_arena[{buffer.offset + buffer.size}] ^= 1;\n"
    compiled.code.files[name] = source[:statement_start] + overrun + source[statement_start:]

    from mcugen.toolchain import host

    monkeypatch.setattr(host, "compile_model", lambda *args, **kwargs: compiled)
    monkeypatch.setenv("MCUGEN_CACHE_DIR", str(tmp_path))
    program = build_program(model.read_bytes(), options, model.name)
    case = _cases("ad_autoencoder")[0]
    with pytest.raises(BuildError, match=f"invoke failed with status {GUARD_STATUS} on case 0"):
        run_program(program, [[case["input0"]]])
