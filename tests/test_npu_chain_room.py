"""Outputs over their inputs on the NPU, and weight buffers in the room that frees
(mcugen/memory/tiling.py's sharing rule, mcugen/npu/chain_room.py).

- the rule, on the plan's own offsets: for every chain whose output shares its input's buffer,
  no byte a stripe writes is one that a read still to come needs (in a chain of one op, the
  call's own reads too: its blocks run in an order the stream does not fix); consecutive chains
  share one buffer (the second's input is the first's output), top-down and bottom-up;
- a depthwise + 1x1 convolution pair, twice (kws_dscnn's shape), built by default on u55-128:
  its ops run as chains of one op over their inputs with the 1x1 convolutions' weights in SRAM,
  in no more arena than the whole-tensor build and fewer estimated cycles; the generated C under
  ASan/UBSan equals TFLM bit for bit;
- the same build with the lag taken away (each output over its input at offset 0): a stripe then
  writes rows the next stripe still reads, and the outputs no longer equal TFLM's, so the check
  above would see a write that overtook a read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
from oracles import assert_exact, run_tflm
from test_tiling import _Chain
from test_tiling_share import writes_before_last_reads

from mcugen.driver import BuildOptions, compile_model, load_graph
from mcugen.errors import BuildError
from mcugen.memory import tiling as tiling_module
from mcugen.memory.plan import Plan, plan_memory
from mcugen.memory.tiling import Chain, Tiling, make_chain, row_bytes
from mcugen.npu import lower as npu_lower
from mcugen.npu.config import npu_config
from mcugen.npu.segments import mark_npu_ops, with_npu_scratch
from mcugen.ops.registry import scratch_bytes
from mcugen.schedule import schedule
from mcugen.targets import HOST
from mcugen.toolchain.host import build_program, run_program


def _pairs(rng: np.random.Generator, rows: int = 25) -> tuple[bytes, list[np.ndarray]]:
    """depthwise 3x3 SAME -> conv 1x1 -> depthwise 3x3 SAME -> conv 1x1, 64 channels, int8."""
    shape = [1, rows, 5, 64]
    chain = _Chain(rng, shape)
    for _ in range(2):
        chain.window("DEPTHWISE_CONV_2D", 3)
        chain.window("CONV_2D", 1, channels=64)
    return chain.model(), chain.inputs(shape)


def _options(size: str = "u55-128", tiling: bool = True, prefix: str | None = None) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)), tiling=tiling, prefix=prefix)


def _planned(model: bytes, make: Callable[[list], list[Chain]]) -> Plan:
    """The model's plan with the chains `make` cuts from its order (NPU ops marked)."""
    options = _options()
    graph = load_graph(model, "pairs.tflite", options.rounding, options.target)
    config = npu_config("u55-128")
    mark_npu_ops(graph, config)
    sizes = with_npu_scratch(scratch_bytes(options.target))
    order = schedule(graph, sizes).order
    return plan_memory(graph, order, sizes, tiling=Tiling(make(order)))


def _check_no_write_overtakes_a_read(plan: Plan) -> int:
    """Assert the rule for every chain whose output shares its input's buffer (the byte
    timeline of test_tiling_share); how many do."""
    assert plan.tiling is not None
    shared = 0
    for chain in plan.tiling.chains:
        if plan.buffer_of(chain.input) is not plan.buffer_of(chain.output):
            continue
        shared += 1
        assert writes_before_last_reads(chain, plan) == [], chain.describe()
    return shared


@pytest.mark.parametrize("count", (3, 5, 25))
def test_consecutive_chains_share_one_buffer_and_no_write_overtakes_a_read(count: int) -> None:
    """Two dw + 1x1 chains: the second's input is the first's output, both over one buffer."""
    model, _ = _pairs(np.random.default_rng(1))

    def pairs(order: list) -> list[Chain]:
        return [c for a in (0, 2) if (c := make_chain(order[a:a + 2], a, count)) is not None]

    plan = _planned(model, pairs)
    assert plan.tiling is not None
    first, second = plan.tiling.chains
    assert _check_no_write_overtakes_a_read(plan) == 2
    buffer = plan.buffer_of(first.input)
    assert buffer is plan.buffer_of(second.output)  # one buffer for t0, t2 and t4
    for chain in (first, second):
        assert chain.lag is not None and chain.lag > 0
        assert plan.offset_of(chain.input) - plan.offset_of(chain.output) == chain.lag
    assert buffer.size == first.input.nbytes + first.lag + second.lag  # whole plus the two lags


@pytest.mark.parametrize("count", (2, 5, 25))
def test_chains_of_one_op_alternate_and_count_their_own_reads(count: int) -> None:
    """Every op a chain of one op, top-down then bottom-up: the buffer grows by the largest lag
    and the drift, not by every lag; a call's own reads are kept clear of its writes."""
    model, _ = _pairs(np.random.default_rng(2))

    def singles(order: list) -> list[Chain]:
        return [c for a in range(4) if (c := make_chain(order[a:a + 1], a, count, bottom_up=a % 2 == 1)) is not None]

    plan = _planned(model, singles)
    assert plan.tiling is not None
    chains = plan.tiling.chains
    assert _check_no_write_overtakes_a_read(plan) == 4
    rows = -(-25 // count)
    row = row_bytes(chains[0].input)
    for chain in chains:  # the depthwise's halo row and its own rows; the 1x1's own rows
        assert abs(chain.lag or 0) >= (rows + (chain.ops[0].kind.name == "DEPTHWISE_CONV_2D")) * row
        assert (chain.lag or 0) < 0 if chain.bottom_up else (chain.lag or 0) > 0
    buffer = plan.buffer_of(chains[0].input)
    assert buffer is plan.buffer_of(chains[-1].output)
    assert buffer.size < chains[0].input.nbytes + sum(abs(c.lag or 0) for c in chains)


def _build(model: bytes, inputs: list[np.ndarray], prefix: str) -> tuple[np.ndarray, Plan]:
    options = _options(prefix=prefix)
    compiled = compile_model(model, options)
    program = build_program(model, options, "pairs.tflite", sanitize=True)
    (actual,) = run_program(program, [inputs])[0]
    return actual, compiled.plan


def test_pairs_run_over_their_inputs_with_weights_in_sram_bit_exact() -> None:
    model, inputs = _pairs(np.random.default_rng(3))
    expected = run_tflm(model, inputs)[0]
    actual, plan = _build(model, inputs, "room")
    assert_exact(actual.reshape(expected.shape), expected)
    whole = compile_model(model, _options(tiling=False))
    assert plan.tiling is not None and all(len(c.ops) == 1 for c in plan.tiling.chains)
    assert _check_no_write_overtakes_a_read(plan) == 4
    buffered = [b.weights_of for b in plan.buffers if b.weights_of is not None]
    assert {op.kind.name for op in buffered if op is not None} == {"CONV_2D"}
    assert all(plan.tiling.chain_of(op) is not None for op in buffered if op is not None)
    assert plan.arena_size <= whole.plan.arena_size
    built = compile_model(model, _options(prefix="room"))  # their figures: the estimated NPU cycles
    assert whole.npu is not None and built.npu is not None
    assert built.npu["cycles_estimate"] < whole.npu["cycles_estimate"]


def test_a_write_over_a_read_still_to_come_changes_the_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lag taken away: the lowering's own overlap check (lower.overlap_limit) refuses the
    calls, and with that check taken away too the oracle above catches a write that overtakes a read."""
    model, inputs = _pairs(np.random.default_rng(3))
    expected = run_tflm(model, inputs)[0]
    real = tiling_module._output_lag
    monkeypatch.setattr(tiling_module, "_output_lag", lambda chain: 0 if len(chain.ops) == 1 else real(chain))
    with pytest.raises(BuildError, match="OFM overlaps its IFM where no OFM block keeps that safe"):
        _build(model, inputs, "room_refused")
    monkeypatch.setattr(npu_lower, "overlap_limit", lambda k, kind: None)
    actual, plan = _build(model, inputs, "room_overtaken")
    assert plan.tiling is not None and any(len(c.ops) == 1 for c in plan.tiling.chains)
    assert not np.array_equal(actual.reshape(expected.shape), expected)
