"""Tiling (mcugen/memory/tiling.py): chains of spatial ops run in horizontal stripes, bit-exact.

Two kinds of check:
- the stripe geometry, on many random chains, by an emulator that follows every call of every
  stripe through the slots (no compiler): each call's sub-tensor holds exactly the rows its taps
  reach, with the same taps in bounds as the whole call; every slot holds the rows its reader
  needs when it reads them, and live slots never share a byte; every output row is written, and
  an output sharing its input's buffer never overwrites an input byte still to be read;
- the generated C, compiled, against TFLite (TFLM or LiteRT) on chains with strides 1 and 2,
  SAME and VALID, dilation, depth multipliers, both pools, a residual ADD, int8 and int16x8,
  with halo rows kept and recomputed; and the public models' arenas against the targets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from conftest import public_model
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output

from mcugen import driver
from mcugen.driver import BuildOptions, compile_model
from mcugen.frontend.tflite import parse_model
from mcugen.ir import DType, Graph, Op, OpKind
from mcugen.memory.plan import plan_memory
from mcugen.memory.tiling import RESIZES, Chain, Tiling, make_chain, op_rows, row_bytes
from mcugen.memory.tiling_search import chain_runs
from mcugen.ops.registry import op_def, op_macs
from mcugen.quantization import Rounding
from mcugen.toolchain.host import build_program, run_program

# --- building chains ----------------------------------------------------------------------------

Spec = dict[str, Any]


def _out_rows(size: int, kernel: int, stride: int, dilation: int, padding: str) -> int:
    effective = (kernel - 1) * dilation + 1
    return -(-size // stride) if padding == "SAME" else -(-(size - effective + 1) // stride)


class _Chain:
    """Writes a chain of ops into a ModelBuilder, tracking the running tensor's shape."""

    def __init__(self, rng: np.random.Generator, shape: Sequence[int], dtype: str = "int8") -> None:
        self.rng, self.dtype, self.b = rng, dtype, ModelBuilder()
        self.scale, self.zero_point = (0.05, -3) if dtype == "int8" else (0.001, 0)
        self.shape = list(shape)
        self.input = self.b.add_tensor("x", shape, dtype, scale=self.scale, zero_point=self.zero_point)
        self.current = self.input
        self.count = 0

    def _activation(self, name: str, shape: Sequence[int], scale: float) -> int:
        """A new running tensor (its zero point becomes the chain's)."""
        self.zero_point = int(self.rng.integers(-10, 10)) if self.dtype == "int8" else 0
        return self.b.add_tensor(name, shape, self.dtype, scale=scale, zero_point=self.zero_point)

    def _spread(self, fan_in: int, w_scale: float) -> float:
        """An output scale that keeps the accumulators' spread inside the output's range."""
        data = 73.0 if self.dtype == "int8" else 18918.0
        target = 40.0 if self.dtype == "int8" else 8000.0
        return self.scale * w_scale * data * 73.0 * float(np.sqrt(fan_in)) / target

    def window(self, kind: str, kernel: int, stride: int = 1, dilation: int = 1, padding: str = "SAME",
               channels: int = 0, multiplier: int = 1) -> int:
        n, h, w, c = self.shape
        self.count += 1
        out_h = _out_rows(h, kernel, stride, dilation, padding)
        out_w = _out_rows(w, kernel, stride, dilation, padding)
        options: dict[str, Any] = {"padding": padding, "stride_h": stride, "stride_w": stride}
        if kind in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
            out = self.b.add_tensor(f"t{self.count}", [n, out_h, out_w, c], self.dtype, scale=self.scale,
                                    zero_point=self.zero_point)
            options |= {"filter_height": kernel, "filter_width": kernel}
            self.b.add_op(kind, [self.current], [out], options)
            self.shape, self.current = [n, out_h, out_w, c], out
            return out
        out_c = c * multiplier if kind == "DEPTHWISE_CONV_2D" else channels
        w_scales = self.rng.uniform(0.005, 0.02, out_c)
        weights = self.rng.integers(-127, 128, (1, kernel, kernel, out_c) if kind == "DEPTHWISE_CONV_2D"
                                    else (out_c, kernel, kernel, c), dtype=np.int8)
        fan_in = kernel * kernel * (1 if kind == "DEPTHWISE_CONV_2D" else c)
        axis = 3 if kind == "DEPTHWISE_CONV_2D" else 0
        wt = self.b.add_tensor(f"w{self.count}", weights.shape, "int8", scale=list(w_scales),
                               zero_point=[0] * out_c, quantized_dimension=axis, data=weights)
        bias_type = np.int32 if self.dtype == "int8" else np.int64
        bias = self.rng.integers(-2000, 2000, out_c).astype(bias_type)
        bt = self.b.add_tensor(f"b{self.count}", [out_c], "int32" if self.dtype == "int8" else "int64",
                               scale=list(self.scale * w_scales), zero_point=[0] * out_c, data=bias)
        scale = self._spread(fan_in, float(w_scales.mean()))
        out = self._activation(f"t{self.count}", [n, out_h, out_w, out_c], scale)
        options |= {"dilation_h_factor": dilation, "dilation_w_factor": dilation}
        if kind == "DEPTHWISE_CONV_2D":
            options["depth_multiplier"] = multiplier
        self.b.add_op(kind, [self.current, wt, bt], [out], options)
        self.shape, self.current, self.scale = [n, out_h, out_w, out_c], out, scale
        return out

    def add(self, other: int, other_scale: float, other_zero_point: int, kind: str = "ADD",
            other_first: bool = False) -> int:
        """The running tensor ADD (or MUL) `other`, of its shape; `other_first`: as TFLite's first operand."""
        self.count += 1
        scale = 2.0 * max(self.scale, other_scale) if kind == "ADD" else self.scale * other_scale * 40.0
        out = self._activation(f"t{self.count}", self.shape, scale)
        operands = [other, self.current] if other_first else [self.current, other]
        self.b.add_op(kind, operands, [out], {})
        self.current, self.scale = out, scale
        return out

    def model(self) -> bytes:
        self.b.set_io([self.input], [self.current])
        return self.b.build()

    def inputs(self, shape: Sequence[int]) -> list[np.ndarray]:
        dtype = np.int8 if self.dtype == "int8" else np.int16
        info = np.iinfo(dtype)
        return [self.rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)]


def _random_chain(rng: np.random.Generator) -> tuple[bytes, list[int]]:
    """A chain of 2..5 window ops with random kernels, strides, dilations and paddings."""
    shape = [1, int(rng.integers(6, 24)), int(rng.integers(2, 6)), int(rng.integers(1, 4))]
    chain = _Chain(rng, shape)
    for _ in range(int(rng.integers(2, 6))):
        kind = str(rng.choice(["CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D"]))
        kernel, stride = int(rng.integers(1, 5)), int(rng.integers(1, 3))
        dilation = int(rng.integers(1, 3)) if kind in ("CONV_2D", "DEPTHWISE_CONV_2D") else 1
        padding = str(rng.choice(["SAME", "VALID"]))
        h = chain.shape[1]
        if _out_rows(h, kernel, stride, dilation, padding) < 2 or _out_rows(chain.shape[2], kernel, stride,
                                                                             dilation, padding) < 1:
            continue
        chain.window(kind, kernel, stride, dilation, padding, channels=int(rng.integers(1, 4)),
                     multiplier=int(rng.integers(1, 3)))
    return chain.model(), shape


def _graph(model: bytes) -> Graph:
    graph = parse_model(model, "chain.tflite")
    driver.prepare_graph(graph)
    return graph


# --- the geometry emulator -----------------------------------------------------------------------


def _taps(op: Op, row: int, in_h: int, pad: int, kernel: int, stride: int, dilation: int) -> set[int]:
    origin = row * stride - pad
    return {origin + i * dilation for i in range(kernel) if 0 <= origin + i * dilation < in_h}


def _window_of(op: Op) -> tuple[int, int, int, int]:
    from mcugen.memory.tiling import _window

    return _window(op)


def _emulate(chain: Chain) -> None:
    """Follow every call of every stripe; assert the invariants of the module docstring."""
    ops, links = chain.ops, len(chain.ops) - 1
    slot_rows: list[list[int | None]] = [[None] * (chain.region_bytes // max(1, row_bytes(op.outputs[0])) + 1)
                                         for op in ops[:-1]]
    written = [set() for _ in ops]
    writes = [0] * len(ops)
    sizes = [max(s.held[j][1] - s.held[j][0] for s in chain.stripes) * row_bytes(ops[j].outputs[0])
             for j in range(links)]
    for k, stripe in enumerate(chain.stripes):
        for j, kept in enumerate(stripe.kept):
            if kept is not None:
                start, count = kept
                slot_rows[j][:count] = slot_rows[j][start:start + count]
        for j, (op, rows) in enumerate(zip(ops, stripe.calls)):
            if rows is None:
                continue
            assert rows == op_rows(op, rows.out_start, rows.out_stop)
            x = op.inputs[0]
            assert x is not None
            if op.kind in RESIZES:  # the call's input rows hold every row its table reads
                tables = resize_source_rows(op)
                for row in range(rows.out_start, rows.out_stop):
                    assert all(rows.in_start <= t[row] < rows.in_stop for t in tables), (j, row)
            elif op_def(op.kind).traits.window:
                kernel, stride, dilation, pad = _window_of(op)
                for row in range(rows.out_start, rows.out_stop):
                    whole = _taps(op, row, x.shape[1], pad, kernel, stride, dilation)
                    local = _taps(op, row - rows.out_start, rows.in_rows, rows.pad_top, kernel, stride, dilation)
                    assert whole == {t + rows.in_start for t in local}, (j, row)
                    assert rows.pad_top >= 0
            else:  # row-wise: it reads the rows it writes
                assert (rows.in_start, rows.in_stop) == (rows.out_start, rows.out_stop)
            if j > 0:  # the slot holds, at its rows, the input rows the call reads
                first = stripe.held[j - 1][0]
                got = slot_rows[j - 1][rows.in_start - first:rows.in_stop - first]
                assert got == list(range(rows.in_start, rows.in_stop)), (k, j, got)
            if j < links:
                first = stripe.held[j][0]
                assert (rows.out_stop - first) * row_bytes(op.outputs[0]) <= sizes[j]
                for row in range(rows.out_start, rows.out_stop):
                    slot_rows[j][row - first] = row
            written[j] |= set(range(rows.out_start, rows.out_stop))
            writes[j] += rows.out_rows
    # Every output row is written; an earlier op may skip rows no later op reads (VALID, strides).
    assert written[-1] == set(range(ops[-1].outputs[0].shape[1]))
    for j, op in enumerate(ops):
        if chain.rolling:
            assert writes[j] == op.outputs[0].shape[1], "a rolling chain computes every row once"
    assert chain.extra_macs == sum((w - op.outputs[0].shape[1]) * op_macs(op) // op.outputs[0].shape[1]
                                   for w, op in zip(writes, ops))
    _check_layout(chain, sizes)
    _check_lag(chain)


def _check_layout(chain: Chain, sizes: list[int]) -> None:
    """Slots live at the same time (neighbours, or one that keeps rows) share no byte."""
    from mcugen.memory.tiling import _keeps_rows

    keeps = _keeps_rows(chain.stripes, len(sizes))
    for i in range(len(sizes)):
        assert chain.slot_offsets[i] + sizes[i] <= chain.region_bytes
        for j in range(i + 1, len(sizes)):
            if j == i + 1 or keeps[i] or keeps[j]:
                a, b = chain.slot_offsets[i], chain.slot_offsets[j]
                assert a + sizes[i] <= b or b + sizes[j] <= a, (i, j)


def _check_lag(chain: Chain) -> None:
    """With the output `lag` bytes before the input, no output byte lands on an input byte that
    a later call reads."""
    assert chain.lag is not None and chain.lag % 16 == 0
    x, y = chain.input, chain.output
    reads: list[tuple[int, int]] = []  # (stripe, first input byte read)
    for k, stripe in enumerate(chain.stripes):
        for j, (op, rows) in enumerate(zip(chain.ops, stripe.calls)):
            if rows is None:
                continue
            for n, tensor in enumerate(op.inputs):
                if tensor is x:
                    start = rows.in_start if n == chain.flow_operand(j) else rows.out_start
                    reads.append((k, chain.lag + start * row_bytes(x)))
    for k, stripe in enumerate(chain.stripes):
        last = stripe.calls[-1]
        if last is None:
            continue
        end = last.out_stop * row_bytes(y)
        later = [at for s, at in reads if s > k]
        assert not later or end <= min(later), k


def resize_source_rows(op: Op) -> list[np.ndarray]:
    """Every input row a resize's kernel reads for each output row (its own tables)."""
    from mcugen.ops.resize.prepare import bilinear_tables, nearest_tables

    if op.kind is OpKind.RESIZE_NEAREST_NEIGHBOR:
        return [nearest_tables(op).rows]
    x = op.inputs[0]
    assert x is not None
    rows = bilinear_tables(op, integer=x.dtype is not DType.FLOAT32).rows
    return [rows.lower, rows.upper]


def _chains(graph: Graph) -> list[Chain]:
    (first, last), = chain_runs(graph, graph.ops)
    ops = graph.ops[first:last + 1]
    found = []
    for rolling in (True, False):
        rows = (ops[0] if rolling else ops[-1]).outputs[0].shape[1]
        for count in sorted({2, 3, rows // 2, rows}):
            chain = make_chain(ops, first, count, rolling) if count >= 2 else None
            if chain is not None:
                found.append(chain)
    return found


def test_stripe_geometry_on_random_chains() -> None:
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(60):
        model, _ = _random_chain(rng)
        graph = _graph(model)
        if len(graph.ops) < 2:
            continue
        for chain in _chains(graph):
            _emulate(chain)
            checked += 1
    assert checked > 150


def test_reach_is_the_last_row_the_made_input_reaches() -> None:
    """tiling._reach solves for the row; its definition searches row by row with op_rows."""
    from mcugen.memory.tiling import _geometry, _reach

    def searched(op: Op, done: int, available: int) -> int:
        stop = done
        while stop < op.outputs[0].shape[1] and op_rows(op, done, stop + 1).in_stop <= available:
            stop += 1
        return stop

    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(30):
        graph = _graph(_random_chain(rng)[0])
        for op in graph.ops:
            if op.kind is OpKind.ADD or op.kind in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D,
                                                    OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D):
                x = op.inputs[0]
                assert x is not None
                for done in range(op.outputs[0].shape[1] + 1):
                    for available in range(x.shape[1] + 1):
                        assert _reach(_geometry(op), done, available) == searched(op, done, available)
                        checked += 1
    assert checked > 1000


def test_one_walk_gives_every_prefix_its_own_walk() -> None:
    """tiling.rolling_prefixes (the search's shared walk) against walking each prefix alone."""
    from mcugen.memory.tiling import _rolling_stripes, rolling_prefixes

    rng = np.random.default_rng(12)
    compared = 0
    for _ in range(40):
        graph = _graph(_random_chain(rng)[0])
        runs = chain_runs(graph, graph.ops)
        if not runs:
            continue
        (first, last), = runs
        ops = graph.ops[first:last + 1]
        rows = ops[0].outputs[0].shape[1]
        for count in sorted({2, 3, max(2, rows // 4), max(2, rows // 2), max(2, rows), rows + 3}):
            walks = rolling_prefixes(ops, count)
            assert len(walks) == len(ops) - 1
            for m, walk in enumerate(walks, start=2):
                alone = _rolling_stripes(ops[:m], count)
                assert walk == alone, (m, count)
                compared += 1
    assert compared > 200


# --- compiled C against TFLite -------------------------------------------------------------------


def _forced(rolling: bool, count: int) -> Any:
    """A plan_model that tiles the graph's chain of ops as told, whatever it costs."""

    def plan(graph: Graph, order: list[Op], scratch_bytes: Any, pools: Any, guard: int, tiling: bool,
             steps: Any = None, **_optimize: Any) -> Any:
        (first, last), = chain_runs(graph, order)
        chain = make_chain(order[first:last + 1], first, count, rolling)
        assert chain is not None
        return plan_memory(graph, order, scratch_bytes, guard=guard, tiling=Tiling([chain]))

    return plan


def _check_compiled(model: bytes, inputs: list[np.ndarray], rounding: Rounding, rolling: bool, count: int,
                    monkeypatch: pytest.MonkeyPatch, sanitize: bool = False) -> None:
    expected = oracle_output(model, inputs, rounding)
    monkeypatch.setattr(driver, "plan_model", _forced(rolling, count))
    # The prefix keeps each forced tiling's program apart in the harness cache.
    options = BuildOptions(rounding=rounding, prefix=f"tiled_{'k' if rolling else 'r'}{count}", guard=16)
    compiled = compile_model(model, options)
    assert compiled.plan.tiling is not None and compiled.plan.tiling.chains
    program = build_program(model, options, "chain.tflite", sanitize=sanitize)
    (actual,) = run_program(program, [inputs])[0]
    assert_exact(actual.reshape(expected.shape), expected)


def _model_a(rng: np.random.Generator) -> tuple[bytes, list[np.ndarray]]:
    """conv 3x3 SAME -> depthwise 3x3 stride 2 SAME x2 -> max pool 3x3 SAME -> conv 3x3
    dilation 2 VALID -> average pool 2x2 VALID."""
    shape = [1, 20, 12, 3]
    chain = _Chain(rng, shape)
    chain.window("CONV_2D", 3, channels=8)
    chain.window("DEPTHWISE_CONV_2D", 3, stride=2, multiplier=2)
    chain.window("MAX_POOL_2D", 3)
    chain.window("CONV_2D", 3, dilation=2, padding="VALID", channels=6)
    chain.window("AVERAGE_POOL_2D", 2, padding="VALID")
    return chain.model(), chain.inputs(shape)


@pytest.mark.parametrize(("rolling", "count", "sanitize"), [(True, 20, True), (False, 3, False)])
def test_compiled_chain_is_bit_exact(rolling: bool, count: int, sanitize: bool,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    model, inputs = _model_a(np.random.default_rng(1))
    _check_compiled(model, inputs, Rounding.TFLM, rolling, count, monkeypatch, sanitize)


def test_compiled_residual_chain_is_bit_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """conv -> [conv 3x3 stride 1 -> conv 3x3 stride 1 -> ADD(x) -> average pool 3x3 stride 2],
    the residual operand being the chain's own input, which the output overwrites (lag)."""
    rng = np.random.default_rng(2)
    shape = [1, 16, 8, 4]
    chain = _Chain(rng, shape)
    x = chain.window("CONV_2D", 3, channels=8)
    x_scale, x_zero = chain.scale, chain.zero_point
    chain.window("CONV_2D", 3, channels=8)
    chain.window("CONV_2D", 3, stride=1, channels=8)
    chain.add(x, x_scale, x_zero)
    chain.window("AVERAGE_POOL_2D", 3, stride=2, padding="VALID")
    model = chain.model()
    graph = _graph(model)
    (first, last), = chain_runs(graph, graph.ops)
    assert [op.kind for op in graph.ops[first:last + 1]][-2:] == [OpKind.ADD, OpKind.AVERAGE_POOL_2D]
    _check_compiled(model, chain.inputs(shape), Rounding.LITERT, True, 8, monkeypatch)


def test_compiled_int16_chain_is_bit_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """int16x8: conv 3x3 stride 2 VALID -> depthwise 3x3 SAME -> conv 1x1 -> max pool 2x2 SAME."""
    rng = np.random.default_rng(3)
    shape = [1, 19, 7, 2]
    chain = _Chain(rng, shape, "int16")
    chain.window("CONV_2D", 3, stride=2, padding="VALID", channels=4)
    chain.window("DEPTHWISE_CONV_2D", 3)
    chain.window("CONV_2D", 1, channels=5)
    chain.window("MAX_POOL_2D", 2)
    _check_compiled(chain.model(), chain.inputs(shape), Rounding.TFLM, True, 9, monkeypatch)


def test_the_chooser_tiles_when_it_lowers_the_arena_and_stays_exact() -> None:
    rng = np.random.default_rng(4)
    shape = [1, 32, 16, 3]
    chain = _Chain(rng, shape)
    chain.window("CONV_2D", 3, channels=16)
    chain.window("DEPTHWISE_CONV_2D", 3)
    chain.window("CONV_2D", 1, channels=16)
    chain.window("DEPTHWISE_CONV_2D", 3, stride=2)
    chain.window("CONV_2D", 1, channels=4)
    model, inputs = chain.model(), chain.inputs(shape)
    tiled = compile_model(model, BuildOptions())
    whole = compile_model(model, BuildOptions(tiling=False))
    assert whole.plan.tiling is None
    assert tiled.plan.tiling is not None
    assert tiled.plan.arena_size < whole.plan.arena_size
    assert tiled.plan.arena_size < tiled.plan.lower_bound  # below the whole-tensor bound
    report = tiled.report()["tiling"]
    assert report["enabled"] and report["chains"] and report["extra_macs"] == sum(
        c["extra_macs"] for c in report["chains"])
    assert not whole.report()["tiling"]["chains"] and not whole.report()["tiling"]["enabled"]
    expected = oracle_output(model, inputs, Rounding.TFLM)
    (actual,) = run_program(build_program(model, BuildOptions(), "chain.tflite"), [inputs])[0]
    assert_exact(actual.reshape(expected.shape), expected)


def test_a_model_without_chains_is_not_tiled() -> None:
    compiled = compile_model(public_model("ad_autoencoder"), BuildOptions())
    assert compiled.plan.tiling is None


# TensorFlow Lite Micro's arena for the public models (../shared/ANCHORS.md, measured with the
# tflite-micro package); the target is at most 0.6 of it.
TFLM_ARENA = {"kws_dscnn": 24224, "ic_resnet8": 55936, "vww_mobilenet_v1_025": 103696}


@pytest.mark.parametrize("name", sorted(TFLM_ARENA))
def test_public_models_meet_the_arena_target(name: str) -> None:
    """With --optimize ram (the default, balanced, gives some RAM back for speed: test_optimize.py)."""
    tiled = compile_model(public_model(name), BuildOptions(optimize="ram"))
    whole = compile_model(public_model(name), BuildOptions(tiling=False))
    assert tiled.plan.arena_size <= 0.6 * TFLM_ARENA[name]
    assert tiled.plan.arena_size < whole.plan.arena_size <= whole.plan.lower_bound
    assert tiled.plan.tiling is not None
    for chain in tiled.plan.tiling.chains:
        _emulate(dataclasses.replace(chain))


def test_cli_no_tiling_turns_it_off(tmp_path: Any) -> None:
    """`--no-tiling` on plan and build; the plan lists the tiled chains and their extra MACs."""
    import json

    from click.testing import CliRunner

    from mcugen.cli import main

    model = str(public_model("kws_dscnn"))
    tiled = CliRunner().invoke(main, ["plan", model])
    assert tiled.exit_code == 0 and "tiled: ops " in tiled.output and "extra MACs" in tiled.output
    whole = CliRunner().invoke(main, ["plan", model, "--json", "--no-tiling"])
    assert whole.exit_code == 0
    data = json.loads(whole.output)
    assert data["tiling"]["chains"] == [] and data["arena_bytes"] >= data["lower_bound_bytes"]
    built = CliRunner().invoke(main, ["build", model, "-o", str(tmp_path / "out"), "--no-tiling"])
    assert built.exit_code == 0, built.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["tiling"] == {"enabled": False, "chains": [], "extra_macs": 0}
    assert report["arena_bytes"] == data["arena_bytes"]


@pytest.mark.parametrize("name", sorted(TFLM_ARENA))
def test_stripe_loops_unroll_to_the_stripes(name: str) -> None:
    """The loops the C runs (codegen/stripes.py) are exactly the stripes' calls, in order."""
    from mcugen.codegen import stripes as emitted
    from mcugen.codegen.generate import _Context
    from mcugen.ops.emitting import KernelCall

    compiled = compile_model(public_model(name), BuildOptions())
    assert compiled.plan.tiling is not None
    ctx = _Context(prefix=compiled.prefix, plan=compiled.plan, rounding=Rounding.TFLM)
    looped = 0
    for chain in compiled.plan.tiling.chains:
        region = next(b for b in compiled.plan.buffers if b.name == chain.region_name)
        stripes = emitted._stripe_calls(chain, ctx, f"{ctx.base(region)} + {region.offset}", KernelCall())
        runs = emitted._runs(stripes)
        looped += sum(count > 1 for _, _, _, count in runs)
        assert _unroll(runs) == _straight(stripes)
    assert looped


def _straight(stripes: list[list[str]]) -> list[str]:
    from mcugen.codegen.stripes import MARK

    return [call.replace(MARK, "") for calls in stripes for call in calls]


def _unroll(runs: list[Any]) -> list[str]:
    """The calls a list of loops makes, in order, each offset first + k * step."""
    calls = []
    for shape, first, step, count in runs:
        for k in range(count):
            values = iter(f + k * s for f, s in zip(first, step))
            calls += ["".join(t + (str(next(values)) if n < len(texts) - 1 else "") for n, t in enumerate(texts))
                      for texts in shape]
    return calls


def test_stripe_loops_break_where_offsets_stop_moving_evenly() -> None:
    from mcugen.codegen.stripes import MARK, _runs

    def call(offset: int) -> list[str]:
        return [f"f(p + {MARK}{offset}{MARK})"]

    uneven = [call(0), call(10), call(20), call(35), call(51), call(60)]
    runs = _runs(uneven)
    assert _unroll(runs) == _straight(uneven)
    three = [call(0), call(10), call(25)]
    assert [(first, step, count) for _, first, step, count in _runs(three)] == [((0,), (10,), 2), ((25,), (0,), 1)]
    alternating = [call(0), ["g()"], call(8), ["g()"], call(16), ["g()"]]
    runs = _runs(alternating)
    assert _unroll(runs) == _straight(alternating)
    assert [(first, step, count) for _, first, step, count in runs] == [((0,), (8,), 3)]
