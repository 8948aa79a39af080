"""Tiling through squeeze-excitation and U-Net skip connections (issue 16).

The chain shapes beyond window ops (mcugen/memory/tiling_search.py `_row_wise`, tiling.py's
resize geometry, codegen/stripes.py): element-wise activations, a resize (its row table sliced
per stripe), a concatenation along channels with a skip tensor made before the chain, and the
squeeze-excitation scaling (MUL by one row broadcast over every stripe, the pooled vector kept
whole). Each structure is a small model of its own, compiled with the tiling forced (halo rows
kept and recomputed) and with the chooser's own tiling, and compared with TFLite (TFLM or
LiteRT) to the bit; the converter-made SE and U-Net fixtures against their stored outputs, under
ASan and UBSan, and their arenas against Vela's Size-mode SRAM (Vela run here).
"""

from __future__ import annotations

import csv
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oracles import assert_exact, oracle_output
from test_fixtures import _assert_same, _cases, _expected, _model
from test_tiling import _Chain, _emulate, _graph

from mcugen import driver
from mcugen.driver import BuildOptions, compile_model
from mcugen.ir import Graph, Op, OpKind
from mcugen.memory.plan import plan_memory
from mcugen.memory.tiling import Tiling, make_chain
from mcugen.memory.tiling_search import chain_runs
from mcugen.quantization import Rounding
from mcugen.toolchain.host import build_program, run_program

# --- the single-structure models -----------------------------------------------------------------


class _Net(_Chain):
    """_Chain plus the ops of SE blocks and skip connections."""

    forced: tuple[float, int] | None = None  # the next activation's quantization, if set

    def _activation(self, name: str, shape: Any, scale: float) -> int:
        if self.forced is None:
            return super()._activation(name, shape, scale)
        scale, self.zero_point = self.forced
        self.forced = None
        return self.b.add_tensor(name, shape, self.dtype, scale=scale, zero_point=self.zero_point)

    def unary(self, kind: str) -> int:
        self.count += 1
        if kind == "LOGISTIC":  # TFLite's fixed int8 output quantization
            out = self.b.add_tensor(f"t{self.count}", self.shape, "int8", scale=1 / 256, zero_point=-128)
            self.scale, self.zero_point = 1 / 256, -128
        else:
            out = self._activation(f"t{self.count}", self.shape, self.scale * 0.7)
            self.scale *= 0.7
        self.b.add_op(kind, [self.current], [out], {})
        self.current = out
        return out

    def resize(self, kind: str, height: int, width: int, **options: Any) -> int:
        self.count += 1
        size = self.b.add_tensor(f"size{self.count}", [2], "int32", data=np.array([height, width], np.int32))
        shape = [1, height, width, self.shape[3]]
        out = self.b.add_tensor(f"t{self.count}", shape, self.dtype, scale=self.scale, zero_point=self.zero_point)
        self.b.add_op(kind, [self.current, size], [out], options)
        self.shape, self.current = shape, out
        return out

    def concat(self, skip: int, skip_channels: int, skip_first: bool = True) -> int:
        """The running tensor and `skip` along channels (inputs in either order)."""
        self.count += 1
        self.shape = [*self.shape[:3], self.shape[3] + skip_channels]
        # TFLM's int8 concatenation takes inputs of the output's quantization only.
        out = self.b.add_tensor(f"t{self.count}", self.shape, self.dtype, scale=self.scale,
                                zero_point=self.zero_point)
        inputs = [skip, self.current] if skip_first else [self.current, skip]
        self.b.add_op("CONCATENATION", inputs, [out], {"axis": 3})
        self.current = out
        return out

    def mean_rows(self) -> int:
        """MEAN over rows and columns, keep_dims: the SE block's squeeze."""
        self.count += 1
        axes = self.b.add_tensor(f"axes{self.count}", [2], "int32", data=np.array([1, 2], np.int32))
        self.shape = [1, 1, 1, self.shape[3]]
        out = self._activation(f"t{self.count}", self.shape, self.scale)
        self.b.add_op("MEAN", [self.current, axes], [out], {"keep_dims": True})
        self.current = out
        return out

    def scale_by(self, feature: int, feature_shape: list[int], feature_scale: float, vector_first: bool) -> int:
        """MUL of a feature map by the running [1, 1, 1, C] vector (the SE block's excitation)."""
        self.count += 1
        vector = self.current
        out = self._activation(f"t{self.count}", feature_shape, feature_scale * self.scale * 1.5)
        self.scale = feature_scale * self.scale * 1.5
        self.b.add_op("MUL", [vector, feature] if vector_first else [feature, vector], [out], {})
        self.shape, self.current = list(feature_shape), out
        return out


def activations_model(rng: np.random.Generator) -> tuple[bytes, list[np.ndarray]]:
    """conv 3x3 -> HARD_SWISH -> depthwise 3x3 stride 2 -> LOGISTIC -> conv 1x1 -> RELU6."""
    shape = [1, 14, 9, 3]
    net = _Net(rng, shape)
    net.window("CONV_2D", 3, channels=8)
    net.unary("HARD_SWISH")
    net.window("DEPTHWISE_CONV_2D", 3, stride=2)
    net.unary("LOGISTIC")
    net.window("CONV_2D", 1, channels=4)
    net.unary("RELU6")
    return net.model(), net.inputs(shape)


def skip_model(rng: np.random.Generator, resize: str, skip_first: bool = True, dtype: str = "int8",
               **options: Any) -> tuple[bytes, list[np.ndarray]]:
    """conv 3x3 (the skip) -> [max pool 2x2 stride 2 -> conv 3x3 -> resize back -> concatenation
    with the skip -> conv 3x3]: a U-Net level."""
    shape = [1, 16, 10, 3]
    net = _Net(rng, shape, dtype)
    skip = net.window("CONV_2D", 3, channels=6)
    net.window("MAX_POOL_2D", 2, stride=2)
    skip_scale = net.scale
    net.forced = (skip_scale, net.zero_point)  # the concatenation's inputs share it
    net.window("CONV_2D", 3, channels=8)
    net.scale = skip_scale
    net.resize(resize, 16, 10, **options)
    net.concat(skip, 6, skip_first)
    net.window("CONV_2D", 3, channels=4)
    return net.model(), net.inputs(shape)


def se_model(rng: np.random.Generator, vector_first: bool = False, rows: int = 12,
             residual: bool = False) -> tuple[bytes, list[np.ndarray]]:
    """conv 3x3 (the feature map) -> MEAN -> conv 1x1 -> LOGISTIC -> MUL with the feature map
    -> conv 3x3 -> depthwise 3x3 (or, `residual`, ADD of the feature map): a squeeze-excitation
    block and the layers after it."""
    shape = [1, rows, 8, 4]
    net = _Net(rng, shape)
    feature = net.window("CONV_2D", 3, channels=8)
    feature_shape, feature_scale, feature_zero = list(net.shape), net.scale, net.zero_point
    net.mean_rows()
    net.window("CONV_2D", 1, channels=8)
    net.unary("LOGISTIC")
    net.scale_by(feature, feature_shape, feature_scale, vector_first)
    if residual:
        net.window("CONV_2D", 3, channels=8)
        net.add(feature, feature_scale, feature_zero)
    else:
        net.window("CONV_2D", 3, channels=12)
        net.window("DEPTHWISE_CONV_2D", 3)
    return net.model(), net.inputs(shape)


# --- forcing a tiling ------------------------------------------------------------------------------

Pick = Callable[[list[Op]], bool]


def _run(graph: Graph, order: list[Op], pick: Pick) -> tuple[int, int]:
    """The one run of chainable ops that `pick` takes."""
    (run,) = [(a, b) for a, b in chain_runs(graph, order) if pick(order[a:b + 1])]
    return run


def _forced(pick: Pick, rolling: bool, count: int) -> Any:
    def plan(graph: Graph, order: list[Op], scratch_bytes: Any, pools: Any, guard: int, tiling: bool,
             steps: Any = None, **_optimize: Any) -> Any:
        first, last = _run(graph, order, pick)
        chain = make_chain(order[first:last + 1], first, count, rolling)
        assert chain is not None
        return plan_memory(graph, order, scratch_bytes, guard=guard, tiling=Tiling([chain]))

    return plan


def _longest(ops: list[Op]) -> bool:
    return len(ops) > 2


def _has(kind: OpKind) -> Pick:
    return lambda ops: any(op.kind is kind for op in ops)


def _check_forced(model: bytes, inputs: list[np.ndarray], pick: Pick, rolling: bool, count: int,
                  monkeypatch: pytest.MonkeyPatch, rounding: Rounding = Rounding.TFLM,
                  sanitize: bool = False) -> None:
    expected = oracle_output(model, inputs, rounding)
    with monkeypatch.context() as patch:
        patch.setattr(driver, "plan_model", _forced(pick, rolling, count))
        options = BuildOptions(rounding=rounding, prefix=f"skip_{'k' if rolling else 'r'}{count}", guard=16)
        compiled = compile_model(model, options)
        assert compiled.plan.tiling is not None and compiled.plan.tiling.chains
        program = build_program(model, options, "chain.tflite", sanitize=sanitize)
    (actual,) = run_program(program, [inputs])[0]
    assert_exact(actual.reshape(expected.shape), expected)


def _emulate_every_cut(model: bytes, pick: Pick) -> int:
    """The geometry emulator (test_tiling) over every cut of the picked run and its sub-chains."""
    graph = _graph(model)
    first, last = _run(graph, graph.ops, pick)
    checked = 0
    for a in range(first, last):
        for b in range(a + 1, last + 1):
            ops = graph.ops[a:b + 1]
            for rolling in (True, False):
                for count in (2, 3, 5, 8, 16):
                    chain = make_chain(ops, a, count, rolling)
                    if chain is not None:
                        _emulate(chain)
                        checked += 1
    return checked


# --- geometry ---------------------------------------------------------------------------------------


SKIPS = [("RESIZE_NEAREST_NEIGHBOR", {}), ("RESIZE_NEAREST_NEIGHBOR", {"half_pixel_centers": True}),
         ("RESIZE_BILINEAR", {}), ("RESIZE_BILINEAR", {"half_pixel_centers": True}),
         ("RESIZE_BILINEAR", {"align_corners": True})]


def test_the_new_chain_shapes_are_runs_of_their_own() -> None:
    """Activations, resize, concatenation and the broadcast MUL join chains; the SE MUL starts
    one (its input 0 is the whole feature map), a MUL whose input 0 is the vector does not."""
    graph = _graph(activations_model(np.random.default_rng(1))[0])
    assert chain_runs(graph, graph.ops) == [(0, len(graph.ops) - 1)]
    graph = _graph(skip_model(np.random.default_rng(2), "RESIZE_BILINEAR")[0])
    (first, last), = chain_runs(graph, graph.ops)
    assert [op.kind for op in graph.ops[first:last + 1]] == [
        OpKind.MAX_POOL_2D, OpKind.CONV_2D, OpKind.RESIZE_BILINEAR, OpKind.CONCATENATION, OpKind.CONV_2D]
    for vector_first in (False, True):
        graph = _graph(se_model(np.random.default_rng(3), vector_first)[0])
        starts = [graph.ops[a].kind for a, _ in chain_runs(graph, graph.ops)]
        assert (OpKind.MUL in starts) is not vector_first


@pytest.mark.parametrize(("resize", "options"), SKIPS)
def test_stripe_geometry_through_resize_and_concatenation(resize: str, options: dict[str, Any]) -> None:
    model, _ = skip_model(np.random.default_rng(4), resize, **options)
    assert _emulate_every_cut(model, _longest) > 50


def test_stripe_geometry_through_activations_and_se_scaling() -> None:
    assert _emulate_every_cut(activations_model(np.random.default_rng(5))[0], _longest) > 50
    assert _emulate_every_cut(se_model(np.random.default_rng(6))[0], _has(OpKind.MUL)) > 10


def test_resize_reach_is_the_last_row_the_made_input_reaches() -> None:
    """tiling._reach for a resize (solved from its row table) against a row-by-row search."""
    from mcugen.memory.tiling import _geometry, _reach, op_rows

    checked = 0
    for resize, options in SKIPS:
        graph = _graph(skip_model(np.random.default_rng(7), resize, **options)[0])
        op = next(op for op in graph.ops if op.kind.name == resize)
        height, in_h = op.outputs[0].shape[1], op.inputs[0].shape[1]  # type: ignore[union-attr]
        for done in range(height + 1):
            for available in range(in_h + 1):
                stop = done
                while stop < height and op_rows(op, done, stop + 1).in_stop <= available:
                    stop += 1
                assert _reach(_geometry(op), done, available) == stop
                checked += 1
    assert checked > 300


# --- compiled C against TFLite -----------------------------------------------------------------------


@pytest.mark.parametrize(("rolling", "count", "sanitize"), [(True, 14, True), (False, 3, False)])
def test_compiled_activation_chain_is_bit_exact(rolling: bool, count: int, sanitize: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    model, inputs = activations_model(np.random.default_rng(8))
    _check_forced(model, inputs, _longest, rolling, count, monkeypatch, sanitize=sanitize)


@pytest.mark.parametrize(("resize", "options"), SKIPS)
@pytest.mark.parametrize(("rolling", "count"), [(True, 8), (False, 4)])
def test_compiled_skip_chain_is_bit_exact(resize: str, options: dict[str, Any], rolling: bool, count: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    model, inputs = skip_model(np.random.default_rng(9), resize, skip_first=rolling, **options)
    _check_forced(model, inputs, _longest, rolling, count, monkeypatch, sanitize=rolling)


def test_compiled_int16_skip_chain_is_bit_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """int16x8 (TFLM has no int16 bilinear resize: nearest)."""
    model, inputs = skip_model(np.random.default_rng(15), "RESIZE_NEAREST_NEIGHBOR", dtype="int16")
    _check_forced(model, inputs, _longest, True, 8, monkeypatch, sanitize=True)


def test_compiled_skip_chain_is_bit_exact_with_litert_rounding(monkeypatch: pytest.MonkeyPatch) -> None:
    model, inputs = skip_model(np.random.default_rng(10), "RESIZE_BILINEAR", half_pixel_centers=True)
    _check_forced(model, inputs, _longest, True, 8, monkeypatch, rounding=Rounding.LITERT)


@pytest.mark.parametrize(("rolling", "count"), [(True, 12), (False, 3)])
def test_compiled_se_scaling_chain_is_bit_exact(rolling: bool, count: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    model, inputs = se_model(np.random.default_rng(11))
    _check_forced(model, inputs, _has(OpKind.MUL), rolling, count, monkeypatch, sanitize=rolling)


def _chosen(model: bytes, inputs: list[np.ndarray], target: str = "host") -> tuple[Any, Any]:
    """The chooser's tiling and the untiled plan; the tiled C against TFLM, under the sanitizers."""
    tiled = compile_model(model, BuildOptions(target=target))
    whole = compile_model(model, BuildOptions(target=target, tiling=False))
    expected = oracle_output(model, inputs, Rounding.TFLM)
    program = build_program(model, BuildOptions(target=target), "chosen.tflite", sanitize=True)
    (actual,) = run_program(program, [inputs])[0]
    assert_exact(actual.reshape(expected.shape), expected)
    return tiled.plan, whole.plan


@pytest.mark.parametrize("residual", [False, True])
def test_the_chooser_tiles_through_the_se_scaling(residual: bool) -> None:
    """Where the feature map outlives the scaling (a residual ADD reads it), the scaled map would
    sit whole beside it: the chooser runs MUL -> conv -> ADD in stripes, the vector kept whole.
    Without the residual the MUL runs in place over the dying map, and the chain after it starts
    at the conv; either way the plan goes below the whole-tensor bound."""
    model, inputs = se_model(np.random.default_rng(12), rows=24, residual=residual)
    tiled, whole = _chosen(model, inputs)
    assert tiled.tiling is not None
    assert any(chain.ops[0].kind is OpKind.MUL for chain in tiled.tiling.chains) is residual
    assert tiled.arena_size < whole.arena_size and tiled.arena_size < tiled.lower_bound


def test_the_chooser_tiles_through_the_skip_connection() -> None:
    model, inputs = skip_model(np.random.default_rng(13), "RESIZE_NEAREST_NEIGHBOR")
    tiled, whole = _chosen(model, inputs, "cortex-m4")
    assert tiled.tiling is not None
    assert any(op.kind is OpKind.CONCATENATION for chain in tiled.tiling.chains for op in chain.ops)
    assert tiled.arena_size < whole.arena_size


# --- the converter-made SE and U-Net fixtures ----------------------------------------------------------


def vela_size_sram(model: bytes, tmp: Path) -> int:
    """Vela 5.2's SRAM for ethos-u55-128, --optimise Size (its summary CSV, KiB)."""
    source = tmp / "model.tflite"
    source.write_bytes(model)
    subprocess.run([sys.executable, "-m", "ethosu.vela", str(source), "--accelerator-config", "ethos-u55-128",
                    "--optimise", "Size", "--output-dir", str(tmp / "out")], check=True, capture_output=True)
    with open(next((tmp / "out").glob("*_summary_*.csv")), newline="") as f:
        return round(float(next(csv.DictReader(f))["sram_memory_used"]) * 1024)


# TFLM's arena total after one invoke (benchmarks/memory/vela.py, tflite-micro 0.dev20261023).
FIXTURE_TFLM_ARENA = {"model_se_hard_swish": 5104, "model_unet": 13936}


@pytest.mark.parametrize("name", sorted(FIXTURE_TFLM_ARENA))
@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_se_and_unet_fixtures_tile_below_vela_and_stay_exact(name: str, target: str, tmp_path: Path) -> None:
    model = _model(name)
    options = BuildOptions(target=target, optimize="ram")  # the least RAM, as Vela's Size mode
    compiled = compile_model(model, options, f"{name}.tflite")
    tiling = compiled.plan.tiling
    assert tiling is not None and tiling.chains
    kinds = {op.kind for chain in tiling.chains for op in chain.ops}
    assert kinds & {OpKind.HARD_SWISH, OpKind.RESIZE_NEAREST_NEIGHBOR, OpKind.RESIZE_BILINEAR,
                    OpKind.CONCATENATION}
    assert compiled.plan.arena_size < vela_size_sram(model, tmp_path)
    assert compiled.plan.arena_size <= 0.6 * FIXTURE_TFLM_ARENA[name]
    program = build_program(model, options, f"{name}.tflite", sanitize=True)
    for k, (outputs, expected) in enumerate(zip(run_program(program, _cases(name)), _expected(name, "tflm"))):
        _assert_same(outputs, expected, f"{name} case{k} ({target}, tiled, sanitized)")


def test_a_chain_starting_at_a_row_wise_op_keeps_its_other_operands_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain [ADD -> conv] (a sub-chain the search tries): the ADD's residual operand is read
    in every stripe, so the planner must keep it whole until the chain has run."""
    rng = np.random.default_rng(14)
    shape = [1, 12, 6, 4]
    net = _Net(rng, shape)
    residual = net.window("CONV_2D", 3, channels=6)
    residual_scale, residual_zero = net.scale, net.zero_point
    net.window("CONV_2D", 3, channels=6)
    net.add(residual, residual_scale, residual_zero)
    net.window("CONV_2D", 3, channels=4)
    model, inputs = net.model(), net.inputs(shape)

    def plan(graph: Graph, order: list[Op], scratch_bytes: Any, pools: Any, guard: int, tiling: bool,
             steps: Any = None, **_optimize: Any) -> Any:
        start = next(n for n, op in enumerate(order) if op.kind is OpKind.ADD)
        chain = make_chain(order[start:start + 2], start, 6, True)
        assert chain is not None
        variable = [t.name for t in chain.external_inputs() if not t.is_constant]
        assert variable == [t.name for t in order[start].inputs]  # type: ignore[union-attr]
        return plan_memory(graph, order, scratch_bytes, guard=guard, tiling=Tiling([chain]))

    expected = oracle_output(model, inputs, Rounding.TFLM)
    with monkeypatch.context() as patch:
        patch.setattr(driver, "plan_model", plan)
        options = BuildOptions(prefix="add_first", guard=16)
        program = build_program(model, options, "chain.tflite", sanitize=True)
    (actual,) = run_program(program, [inputs])[0]
    assert_exact(actual.reshape(expected.shape), expected)
