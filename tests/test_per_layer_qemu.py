"""The DSP (Cortex-M4) and Helium (Cortex-M55) fast paths against TensorFlow Lite Micro, layer
by layer: every public model is cross-compiled with the dump hook, run on QEMU, and every
op output that the firmware writes back through semihosting is compared with the same tensor
in TFLM (preserving all tensors). Only the final outputs of two example models were checked
on the emulated cores before (issue 17).

The firmware builds are the cost: they live under the session's harness cache, keyed by the
model, the core and mcugen's sources, so that a rerun reuses them (make rebuilds nothing).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, public_model
from test_firmware import require_tools
from test_per_layer import _random_case, _tflm_tensors

from mcugen.analysis.per_layer import PerLayerResult, compare_layers, dump_layers_qemu
from mcugen.driver import BuildOptions
from mcugen.targets import target as find_target
from mcugen.toolchain.host import cache_root, source_fingerprint


def _build_dir(model: Path, target: str) -> Path:
    key = hashlib.sha256(model.read_bytes() + target.encode() + source_fingerprint().encode())
    return cache_root() / "per_layer_qemu" / key.hexdigest()[:24]


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_every_layer_on_the_emulated_core_matches_tflm(name: str, target: str) -> None:
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    model = public_model(name)
    inputs = _random_case(model, seed=3)
    graph, dumped = dump_layers_qemu(model, inputs, BuildOptions(target=find_target(target)),
                                     _build_dir(model, target))
    expected = _tflm_tensors(model.read_bytes(), inputs)
    result = compare_layers(PerLayerResult(model.name, "TFLM", "tflm"), dumped, expected)
    assert result.unmatched == [], result.unmatched
    # every op of the graph wrote its outputs (none folded away in these models' C)
    assert len(result.rows) >= len(graph.ops) - sum(op.kind.name == "RESHAPE" for op in graph.ops)
    bad = [(r.step, r.kind, r.tensor, r.mismatches) for r in result.rows if r.mismatches]
    assert bad == [], bad
    spread = [len(np.unique(d[2])) for d in dumped]
    assert min(spread) >= 2 and np.median(spread) >= 6, spread


def test_verify_qemu_needs_an_emulated_target() -> None:
    """--qemu is a flag that runs on the emulated core of --target (as profile --qemu): with
    --target host (the default) or a core without a QEMU board, one line and exit 2."""
    from click.testing import CliRunner

    from mcugen.cli import main

    model = public_model("kws_dscnn")
    for target in ("host", "cortex-m7"):
        result = CliRunner().invoke(main, ["verify", str(model), "--per-layer", "--target", target, "--qemu"])
        assert result.exit_code == 2, result.output
        assert f"--qemu with --target {target}" in result.output and "cortex-m4 or cortex-m55" in result.output
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output


def test_verify_per_layer_qemu_is_a_flag_of_target() -> None:
    """`verify --per-layer --target cortex-m4 --qemu`: every layer dumped on the emulated core
    (the table's first line says where) and bit-exact with TFLM."""
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    from click.testing import CliRunner

    from mcugen.cli import main

    model = Path(__file__).resolve().parent / "fixtures_float" / "small_cnn_int8.tflite"
    result = CliRunner().invoke(main, ["verify", str(model), "--per-layer", "--target", "cortex-m4", "--qemu"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == ("small_cnn_int8.tflite: 7 tensors against TensorFlow Lite Micro (tflm), "
                        "the C on QEMU mps2-an386 (cortex-m4)"), lines[0]
    assert lines[-1] == "no divergence: every tensor is bit-exact"
