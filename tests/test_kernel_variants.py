"""Kernel variants as a planning choice (mcugen/memory/kernel_variants.py): on Cortex-M4,
`--optimize ram` runs the portable C of the ops whose fast path's scratch (im2col columns, the
input widened to int16) raises the arena, `speed` keeps every fast path, `balanced` the least
arena within a few percent of the fastest.

The fixtures are those whose arena was above Vela's Size-mode SRAM only by that scratch (and
ad_autoencoder, whose FULLY_CONNECTED widens a 640-byte input): built with --optimize ram their
arena is at most the whole-tensor bound of TFLite's order without any kernel scratch, computed
here from the model; their outputs equal TFLM's, under ASan/UBSan on the host and on the
emulated Cortex-M4, where the portable kernels must really run (more instructions than the fast
build's, as the cost model says).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import public_model

from mcugen.driver import BuildOptions, compile_model, load_graph
from mcugen.memory.liveness import collect_buffers, live_by_step
from mcugen.memory.placement import ALIGNMENT
from mcugen.targets import target
from mcugen.toolchain.host import build_program, run_program

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
# above Vela's Size SRAM by the Cortex-M4 fast paths' scratch before the planner could choose
FAST_PATH_FIXTURES = ("conv2d_5x3_s2_same", "conv2d_per_tensor", "conv2d_same_relu",
                      "conv2d_valid_s2_relu6", "depthwise_same_relu6",
                      "fully_connected_3d", "fully_connected_relu", "model_audio_conv1d",
                      "model_dynamic_batch")
M4 = "cortex-m4"


def _path(name: str) -> Path:
    return public_model(name) if name == "ad_autoencoder" else FIXTURES / f"{name}.tflite"


def _cases(name: str) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    """(inputs, TFLM's outputs) of every stored case."""
    if name == "ad_autoencoder":
        stored = dict(np.load(_path(name).with_name(f"{name}.case0.npz")))
        return [[stored["input0"]]], [[stored["tflm_output0"]]]
    stored, entry = dict(np.load(FIXTURES / f"{name}.npz")), MANIFEST[name]
    inputs = [[stored[f"input{i}_{k}"] for i in range(len(entry["inputs"]))] for k in range(entry["cases"])]
    outputs = [[stored[f"tflm_output{o}_{k}"] for o in range(len(entry["outputs"]))] for k in range(entry["cases"])]
    return inputs, outputs


def scratch_free_bound(path: Path) -> int:
    """The largest sum of 16-byte-aligned whole activation tensors live at one op of TFLite's
    order, no kernel scratch, no in-place execution."""
    graph = load_graph(path, target=target(M4))
    buffers = collect_buffers(graph, list(graph.ops), lambda op: 0, in_place=False)
    for buffer in buffers:
        buffer.size = (buffer.size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    return max(live_by_step(buffers))


def test_no_scratch_where_the_fast_path_declines() -> None:
    """A depthwise with channel multiplier 2 never takes the DSP path, so even `speed` plans no
    scratch for it: its arena is the scratch-free bound and nothing is made portable."""
    path = _path("depthwise_mult2_s2_valid")
    speed = compile_model(path, BuildOptions(target=M4, optimize="speed"))
    assert speed.plan.arena_size == scratch_free_bound(path)
    assert not speed.plan.portable


@pytest.mark.parametrize("name", [*FAST_PATH_FIXTURES, "ad_autoencoder"])
def test_ram_drops_the_fast_path_scratch(name: str) -> None:
    ram = compile_model(_path(name), BuildOptions(target=M4, optimize="ram"))
    speed = compile_model(_path(name), BuildOptions(target=M4, optimize="speed"))
    bound = scratch_free_bound(_path(name))
    assert ram.plan.arena_size <= bound < speed.plan.arena_size, (ram.plan.arena_size, bound, speed.plan.arena_size)
    assert ram.plan.portable and not speed.plan.portable
    variants = ram.report()["kernel_variants"]
    assert {v["op"] for v in variants if v["variant"] == "portable"} == set(ram.plan.portable)
    # the C tells a portable op's kernel of no scratch, so its fast path declines (scratch_ok)
    source = next(text for file, text in ram.code.files.items() if file.endswith("_model.c"))
    ops = {op.index: op for op in ram.graph.ops}
    for index in ram.plan.portable:
        assert ram.plan.scratch_of(ops[index]) is None
        assert any(line.endswith(f"_ctx_{index} = {{ .buf = NULL, .size = 0 }};") for line in source.splitlines())


@pytest.mark.parametrize("name", [*FAST_PATH_FIXTURES, "ad_autoencoder"])
def test_ram_build_matches_tflm_sanitized(name: str) -> None:
    options = BuildOptions(target=M4, optimize="ram")
    inputs, expected = _cases(name)
    results = run_program(build_program(_path(name).read_bytes(), options, f"{name}.tflite", sanitize=True), inputs)
    for got, want in zip(results, expected, strict=True):
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(np.asarray(g).reshape(w.shape), w)


def test_balanced_keeps_a_fast_path_that_costs_more_than_its_budget() -> None:
    """conv2d_same_relu's portable C costs several times the fast path's instructions: balanced
    keeps the fast path and says why; the estimates differ by the cost model's penalty."""
    path = FIXTURES / "conv2d_same_relu.tflite"
    balanced = compile_model(path, BuildOptions(target=M4, optimize="balanced"))
    ram = compile_model(path, BuildOptions(target=M4, optimize="ram"))
    assert not balanced.plan.portable and balanced.plan.arena_size > ram.plan.arena_size
    (choice,) = balanced.plan.kernel_choices
    assert choice.variant == "fast" and "kept it" in choice.why
    trade = balanced.plan.trade_off
    assert trade is not None and trade.ram.portable == 1 and trade.ram.estimated_instructions > trade.chosen.estimated_instructions


def test_kernel_choice_off_keeps_every_fast_path() -> None:
    path = FIXTURES / "conv2d_same_relu.tflite"
    plan = compile_model(path, BuildOptions(target=M4, optimize="ram", kernel_choice=False)).plan
    assert not plan.portable and not plan.kernel_choices
    assert plan.arena_size == compile_model(path, BuildOptions(target=M4, optimize="speed")).plan.arena_size


def test_portable_choice_runs_on_the_core() -> None:
    """model_audio_conv1d on the emulated Cortex-M4: the ram build (three CONV_2D portable) and
    the speed build both reproduce TFLM's output byte for byte; the ram build runs more
    instructions, as many more as the cost model's portable penalty says (within 15%)."""
    from test_firmware import require_tools

    from mcugen.analysis.profile import profile_model
    from mcugen.memory.cost import cost_model, estimate

    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    path = FIXTURES / "model_audio_conv1d.tflite"
    inputs, expected = _cases("model_audio_conv1d")
    measured, estimated = {}, {}
    for mode in ("ram", "speed"):
        options = BuildOptions(target=M4, optimize=mode)
        compiled = compile_model(path, options)
        estimated[mode] = estimate(compiled.order, compiled.plan.tiling, cost_model(options.target), compiled.plan.portable)
        result = profile_model(path, options, qemu=True, inputs=inputs[0], expected=expected[0])
        measured[mode] = result.invoke_instructions or 0
    assert measured["ram"] > 2 * measured["speed"], measured
    # what the portable kernels add: the cost model's penalty against the counts' difference
    added = measured["ram"] - measured["speed"]
    assert abs(estimated["ram"] - estimated["speed"] - added) <= 0.15 * added, (estimated, measured)


def test_no_kernel_choice_reaches_the_cli_and_the_firmware_build(tmp_path: Path) -> None:
    """`--no-kernel-choice` keeps every fast path from the command line, and the firmware
    builds behind `mcugen profile --qemu` and the benchmarks pass it on (cross._mcugen_options):
    without it they measured the portable kernels of `--optimize ram`."""
    from click.testing import CliRunner

    from mcugen.cli import main
    from mcugen.toolchain.cross import _mcugen_options

    model = _path("conv2d_same_relu")
    for flag, portable in (("--kernel-choice", True), ("--no-kernel-choice", False)):
        out = tmp_path / flag
        result = CliRunner().invoke(main, ["build", str(model), "-o", str(out), "--target", M4,
                                           "--optimize", "ram", flag])
        assert result.exit_code == 0, result.output
        report = json.loads(next(out.glob("*report.json")).read_text())
        variants = {v["variant"] for v in report["kernel_variants"]}
        assert ("portable" in variants) is portable, report["kernel_variants"]
    assert "--no-kernel-choice" in _mcugen_options(BuildOptions(kernel_choice=False)).split()
    assert "--no-kernel-choice" not in _mcugen_options(BuildOptions()).split()
