"""`--optimize ram|balanced|speed` (mcugen/memory/optimize.py, cost.py).

- The modes' plans are ordered as they promise: arena(ram) <= arena(balanced) <= arena(speed),
  est(speed) <= est(balanced) <= est(ram), balanced within BALANCED_PERCENT of speed; each
  mode's report names the others' figures, and the estimates are recomputed from the plans.
- Every mode's C is bit-exact with TensorFlow Lite Micro's stored outputs (host builds).
- On QEMU (exact instruction counts), the cost model ranks the ram and speed plans of a model
  as the measured counts do.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import PUBLIC_NAMES, public_model

from mcugen.cli import main
from mcugen.driver import BuildOptions, compile_model, schedule_and_plan
from mcugen.driver import load_graph as load
from mcugen.memory.cost import cost_model, estimate
from mcugen.memory.optimize import BALANCED_PERCENT, OPTIMIZE_MODES
from mcugen.memory.plan import Plan
from mcugen.targets import target as find_target
from mcugen.toolchain.host import build_program, run_program

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_NAMES = ("model_mobilenet_v2", "model_se_hard_swish", "model_unet")


def _model(name: str) -> Path:
    return public_model(name) if name in PUBLIC_NAMES else FIXTURES / f"{name}.tflite"


def _plans(name: str, core: str) -> dict[str, tuple[list, Plan]]:
    plans = {}
    for mode in OPTIMIZE_MODES:
        options = BuildOptions(target=core, optimize=mode)
        graph = load(_model(name), target=options.target)
        plans[mode] = schedule_and_plan(graph, options, name)
    return plans


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", [*PUBLIC_NAMES, *FIXTURE_NAMES])
def test_modes_trade_ram_for_instructions_in_order(name: str, core: str) -> None:
    plans = _plans(name, core)
    costs = cost_model(find_target(core))
    arena = {m: p.arena_size for m, (_, p) in plans.items()}
    # the estimate each plan reports is the cost model's of its own tiling, recomputed here
    est = {m: estimate(order, p.tiling, costs, p.portable) for m, (order, p) in plans.items()}
    for mode, (_, plan) in plans.items():
        assert plan.trade_off is not None and plan.trade_off.mode == mode
        assert plan.trade_off.chosen.arena_bytes == plan.arena_size
        assert plan.trade_off.chosen.estimated_instructions == est[mode]
        # every mode sees the same candidates: the figures it reports for ram and speed are theirs
        assert plan.trade_off.ram.arena_bytes == arena["ram"]
        assert plan.trade_off.speed.estimated_instructions == est["speed"]
    assert arena["ram"] <= arena["balanced"] <= arena["speed"], arena
    assert est["speed"] <= est["balanced"] <= est["ram"], est
    assert est["balanced"] <= est["speed"] * (1 + BALANCED_PERCENT / 100), est
    # speed tiles nothing unless tiling costs nothing
    untiled = estimate(plans["speed"][0], None, costs)
    assert plans["speed"][1].tiling is None or est["speed"] <= untiled


def _public_cases(name: str) -> tuple[list[list[np.ndarray]], list[np.ndarray]]:
    model = public_model(name)
    cases = [dict(np.load(model.with_name(f"{name}.case{k}.npz"))) for k in range(3)]
    inputs = [[c[k] for k in sorted(c) if k.startswith("input")] for c in cases]
    return inputs, [c["tflm_output0"] for c in cases]


def _fixture_cases(name: str) -> tuple[list[list[np.ndarray]], list[np.ndarray]]:
    stored = dict(np.load(FIXTURES / f"{name}.npz"))
    return [[stored[f"input0_{k}"]] for k in range(2)], [stored[f"tflm_output0_{k}"] for k in range(2)]


@pytest.mark.parametrize("mode", OPTIMIZE_MODES)
@pytest.mark.parametrize("name", [*PUBLIC_NAMES, *FIXTURE_NAMES])
def test_every_mode_is_bit_exact_with_tflm(name: str, mode: str) -> None:
    """Host builds for cortex-m4's plan (the plan differs by mode; the C runs its portable path)."""
    model = _model(name)
    inputs, expected = _public_cases(name) if name in PUBLIC_NAMES else _fixture_cases(name)
    options = BuildOptions(optimize=mode, prefix=f"opt_{mode}")
    program = build_program(model.read_bytes(), options, model.name)
    for k, (outputs, wanted) in enumerate(zip(run_program(program, inputs), expected, strict=True)):
        got = outputs[0].reshape(wanted.shape)
        assert np.array_equal(got, wanted), f"{name} case{k} --optimize {mode}: {np.count_nonzero(got != wanted)} differ"


def test_build_reports_the_trade_off(tmp_path: Path) -> None:
    model = public_model("kws_dscnn")
    result = CliRunner().invoke(main, ["build", str(model), "-o", str(tmp_path), "--target", "cortex-m4",
                                       "--optimize", "speed", "--no-size"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    figures = report["optimize"]
    assert figures["mode"] == "speed" and figures["balanced_percent"] == BALANCED_PERCENT
    assert figures["arena_bytes"] == report["arena_bytes"]
    assert figures["estimated_instructions"] == figures["speed"]["estimated_instructions"]
    assert figures["ram"]["arena_bytes"] <= figures["arena_bytes"]
    assert "optimize speed:" in result.output
    bad = CliRunner().invoke(main, ["build", str(model), "-o", str(tmp_path), "--optimize", "fast"])
    assert bad.exit_code == 2 and "fast" in bad.output
    planned = CliRunner().invoke(main, ["plan", str(model), "--target", "cortex-m4", "--optimize", "ram", "--json"])
    assert planned.exit_code == 0, planned.output
    ram = json.loads(planned.output)["optimize"]
    assert ram["mode"] == "ram" and ram["arena_bytes"] == figures["ram"]["arena_bytes"]
    assert ram["speed"] == figures["speed"] and ram["arena_bytes"] < figures["arena_bytes"]


@pytest.mark.parametrize("command", ["verify", "profile"])
def test_the_other_commands_take_the_mode(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0 and "--optimize [ram|balanced|speed]" in result.output


def test_run_with_a_mode_gives_tflm_outputs(tmp_path: Path) -> None:
    model = public_model("kws_dscnn")
    case = dict(np.load(model.with_name("kws_dscnn.case1.npz")))
    np.savez(tmp_path / "in.npz", input0=case["input0"])
    result = CliRunner().invoke(main, ["run", str(model), "--input", str(tmp_path / "in.npz"), "--output",
                                       str(tmp_path / "out.npz"), "--optimize", "ram"])
    assert result.exit_code == 0, result.output
    got = np.load(tmp_path / "out.npz")["output0"]
    assert np.array_equal(got.reshape(case["tflm_output0"].shape), case["tflm_output0"])


def test_cost_model_ranks_plans_as_qemu_counts_do() -> None:
    """Two plans of kws_dscnn on Cortex-M4 (ram: tiled in many stripes, some ops portable without
    their fast path's scratch; speed: whole ops, fast kernels): the estimate orders them as the exact QEMU instruction counts do, within 10% of each count."""
    from test_firmware import require_tools

    from mcugen.analysis.profile import profile_model

    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    model = public_model("kws_dscnn")
    case = dict(np.load(model.with_name("kws_dscnn.case0.npz")))
    measured, estimated = {}, {}
    for mode in ("ram", "speed"):
        options = BuildOptions(target="cortex-m4", optimize=mode)
        compiled = compile_model(model, options)
        estimated[mode] = estimate(compiled.order, compiled.plan.tiling, cost_model(options.target),
                                   compiled.plan.portable)
        result = profile_model(model, options, qemu=True, inputs=[case["input0"]], expected=[case["tflm_output0"]])
        measured[mode] = result.invoke_instructions
    assert estimated["ram"] != estimated["speed"]
    assert (estimated["ram"] > estimated["speed"]) == (measured["ram"] > measured["speed"]), (estimated, measured)
    for mode, count in measured.items():
        assert abs(estimated[mode] - count) <= 0.10 * count, (mode, estimated, measured)
