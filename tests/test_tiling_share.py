"""Output over input through a skip connection (mcugen/memory/tiling.py's sharing rule).

A U-Net level's chain that ends in its CONCATENATION, [max pool -> conv -> resize ->
concatenation with the skip], reads the skip twice: the pool in its first call, the
concatenation in its last. The skip dies in the chain, so the concatenation's output may share
its bytes. The concatenation's call reads skip rows while it writes output rows that are wider
(the skip's channels and the resize's), one input after the other (codegen's one copy per
input): its own reads count against its writes. The rule as first written exempted every
row-wise op's own reads, as if each were a residual ADD (which writes element e over element e
after reading it): then the concatenation copied the resize's channels over skip rows its own
call had still to copy, and model_unet gave 487 of 512 outputs unlike TFLM's.

- the chain forced, each concatenation order, halos kept and recomputed: the skip and the
  output share one buffer; the byte timeline of every stripe's calls on the plan's own offsets
  shows no write before the last read of a byte (`writes_before_last_reads`); the compiled C
  equals TFLM's output bit for bit;
- the old rule put back (row-wise ops' own reads exempt): the timeline sees the overtaking write
  and the compiled C no longer equals TFLM, so the two checks above can fail.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from oracles import assert_exact, oracle_output
from test_tiling_skip import skip_model

from mcugen import driver
from mcugen.driver import BuildOptions, compile_model
from mcugen.ir import Graph, Op, OpKind, Tensor
from mcugen.memory import tiling as tiling_module
from mcugen.memory.plan import Plan, plan_memory
from mcugen.memory.tiling import Chain, Tiling, make_chain, row_bytes
from mcugen.quantization import Rounding
from mcugen.toolchain.host import build_program, run_program

# --- the byte timeline -------------------------------------------------------------------------


def _element_wise_over(op: Op, x: Tensor) -> bool:
    """`op` maps element e of x to element e of its output, same size (an ADD, MUL or activation
    of x's shape and dtype): within its call it reads element e before it writes element e."""
    y = op.outputs[0]
    return op.kind is not OpKind.CONCATENATION and y.shape == x.shape and y.dtype == x.dtype


def _reads_of_x(chain: Chain, j: int, k: int) -> tuple[int, int] | None:
    """The rows of the chain's input that op j's call in stripe k reads, if any."""
    op, rows, x = chain.ops[j], chain.stripes[k].calls[j], chain.input
    if rows is None or not any(t is x for t in op.inputs):
        return None
    flow = j == 0 or op.inputs[chain.flow_operand(j)] is x
    return (rows.in_start, rows.in_stop) if flow else (rows.out_start, rows.out_stop)


def writes_before_last_reads(chain: Chain, plan: Plan) -> list[str]:
    """Where a stripe's output write reaches an input byte that a call at or after it still
    reads, at the plan's offsets (overlapping_writes)."""
    return overlapping_writes(chain, plan.offset_of(chain.input), plan.offset_of(chain.output))


def overlapping_writes(chain: Chain, x_at: int, y_at: int) -> list[str]:
    """writes_before_last_reads with the input at byte x_at and the output at y_at. Calls run
    one after another in stripe order; a call may read and write in any order within itself,
    but for an element-wise op over its input with the output at or below it (it reads element
    e before it writes element e, never again); on the NPU, whose blocks need not run in address
    order, only with the output exactly over the input."""
    x, y = chain.input, chain.output
    x_row, y_row = row_bytes(x), row_bytes(y)
    last_read = np.full(x.nbytes, -1)  # per input byte: the time (stripe, op) of its last read
    calls = [(k, j) for k in range(len(chain.stripes)) for j in range(len(chain.ops))]
    for time, (k, j) in enumerate(calls):
        rows = _reads_of_x(chain, j, k)
        if rows is not None:
            last_read[rows[0] * x_row:rows[1] * x_row] = time
    last = len(chain.ops) - 1
    npu = chain.ops[last].backend == "npu"
    in_order = _element_wise_over(chain.ops[last], x) and (y_at == x_at if npu else y_at <= x_at)
    found = []
    for time, (k, j) in enumerate(calls):
        rows = chain.stripes[k].calls[j]
        if j != last or rows is None:
            continue
        start = max(y_at + rows.out_start * y_row, x_at) - x_at  # written bytes inside x
        stop = min(y_at + rows.out_stop * y_row, x_at + x.nbytes) - x_at
        if start >= stop:
            continue
        later = last_read[start:stop] > time
        own = last_read[start:stop] == time
        if later.any() or (own.any() and not in_order):
            found.append(f"stripe {k} writes input bytes [{start}, {stop}) that are read at or after it")
    return found


# --- the U-Net level's chain, forced ------------------------------------------------------------


def _is_level(ops: list[Op]) -> bool:
    return [op.kind for op in ops] == [OpKind.MAX_POOL_2D, OpKind.CONV_2D, OpKind.RESIZE_NEAREST_NEIGHBOR,
                                       OpKind.CONCATENATION]


def _forced(rolling: bool, count: int, seen: list[Plan]) -> Any:
    """driver.plan_model replaced: the chain from the pool to the concatenation, in `count`
    stripes; the plan kept in `seen`."""
    def plan(graph: Graph, order: list[Op], scratch_bytes: Any, pools: Any, guard: int, tiling: bool,
             steps: Any = None, **_optimize: Any) -> Any:
        (first,) = [n for n in range(len(order) - 3) if _is_level(order[n:n + 4])]
        chain = make_chain(order[first:first + 4], first, count, rolling)
        assert chain is not None
        made = plan_memory(graph, order, scratch_bytes, guard=guard, tiling=Tiling([chain]))
        seen.append(made)
        return made

    return plan


def _build(skip_first: bool, rolling: bool, count: int, prefix: str,
           monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, np.ndarray, Plan]:
    """(TFLM's output, the compiled C's, the plan) of the U-Net level with its chain forced."""
    model, inputs = skip_model(np.random.default_rng(31), "RESIZE_NEAREST_NEIGHBOR", skip_first=skip_first)
    expected = oracle_output(model, inputs, Rounding.TFLM)
    seen: list[Plan] = []
    with monkeypatch.context() as patch:
        patch.setattr(driver, "plan_model", _forced(rolling, count, seen))
        options = BuildOptions(prefix=prefix)
        compile_model(model, options)
        program = build_program(model, options, "level.tflite", sanitize=rolling)
    (actual,) = run_program(program, [inputs])[0]
    return expected, actual.reshape(expected.shape), seen[0]


def _shared_chain(plan: Plan) -> Chain:
    assert plan.tiling is not None
    (chain,) = plan.tiling.chains
    assert plan.buffer_of(chain.input) is plan.buffer_of(chain.output), "the output does not share the skip's bytes"
    return chain


@pytest.mark.parametrize("skip_first", [True, False])
@pytest.mark.parametrize(("rolling", "count"), [(True, 4), (False, 3), (True, 16)])
def test_a_chain_ending_in_the_concatenation_writes_over_the_skip_exactly(
        skip_first: bool, rolling: bool, count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    expected, actual, plan = _build(skip_first, rolling, count, f"share_{int(skip_first)}{int(rolling)}{count}",
                                    monkeypatch)
    chain = _shared_chain(plan)
    assert writes_before_last_reads(chain, plan) == []
    assert_exact(actual, expected)


def test_the_old_rule_lets_the_concatenation_overwrite_skip_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first rule: a row-wise last op's own reads never counted (as if in place)."""
    monkeypatch.setattr(tiling_module, "_in_place_over", lambda op, x: tiling_module._geometry(op).add)
    expected, actual, plan = _build(True, True, 4, "share_old", monkeypatch)
    chain = _shared_chain(plan)
    assert writes_before_last_reads(chain, plan)
    assert not np.array_equal(actual, expected)
