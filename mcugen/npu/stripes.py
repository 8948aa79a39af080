"""A tiled chain (mcugen/memory/tiling.py) inside an NPU segment: each op lowered once per stripe.

The planner chose the chain, its stripes and its stripe region as for the CPU; the NPU needs
only each call's boxes. In stripe k, op j's IFM is rows [in_start, in_stop) of its input (the
whole input's bytes from row in_start for the chain's first op, else its slot in the region),
its OFM rows [out_start, out_stop) of its output (the whole output's bytes for the last op,
else its slot), and its padding the stripe's: pad_top rows above, below as many as the last
output row's taps reach past the IFM (none unless the stripe ends at the input's last row). The
taps inside the IFM are those of the whole op, so every sum, maximum and count of real taps is
the one of the unstriped operation (the module docstring of tiling.py). All stripes are
unrolled into the segment's stream at build time; the weights are encoded once per block shape.

The NPU runs chains of CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D and AVERAGE_POOL_2D with the
halo rows recomputed (tiling_search keeps rolling stripes, whose kept rows move to the slot's
start between stripes, and residual ADDs to the CPU's chains). Every stripe costs each op its
fixed overhead and recomputes halo rows, so `fewer_stripes` then cuts each NPU chain in the
fewest stripes that keep the plan's bytes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..errors import PlanningError
from ..ir import Graph, Op, Tensor
from ..memory.liveness import ScratchBytes
from ..memory.plan import Plan, plan_memory
from ..memory.pools import PoolSpec
from ..memory.tiling import Chain, Stripe, Tiling, make_chain, row_bytes, stripe_view
from .config import NpuConfig
from .featuremap import LoweringError, Place, Placement
from .lower import Flash
from .stream import CommandStream

LowerOp = Callable[[Op, Place, Flash, NpuConfig, CommandStream], None]


def _at(placement: Placement, byte_offset: int) -> Placement:
    return Placement(placement.region, placement.address + byte_offset)


def _slot(chain: Chain, stripe: Stripe, region: Placement, j: int, row: int) -> Placement:
    """Where row `row` of intermediate j is in its slot during `stripe`."""
    offset = chain.slot_offsets[j] + (row - stripe.held[j][0]) * row_bytes(chain.ops[j].outputs[0])
    return _at(region, offset)


def _stripe_op(chain: Chain, stripe: Stripe, j: int, place: Place, region: Placement) -> tuple[Op, Place]:
    """Op j as one stripe's call: its input and output cut to the stripe's rows, and where they are."""
    op, rows = chain.ops[j], stripe.calls[j]
    assert rows is not None
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    if j == 0:
        ifm = _at(place(x), rows.in_start * row_bytes(x))
    else:
        ifm = _slot(chain, stripe, region, j - 1, rows.in_start)
    if j == len(chain.ops) - 1:
        ofm = _at(place(y), rows.out_start * row_bytes(y))
    else:
        ofm = _slot(chain, stripe, region, j, rows.out_start)
    x_rows, y_rows = stripe_view(x, rows.in_rows), stripe_view(y, rows.out_rows)
    stand_in = dataclasses.replace(op, inputs=[x_rows, *op.inputs[1:]], outputs=[y_rows])
    where = {id(x_rows): ifm, id(y_rows): ofm}

    def stripe_place(tensor: Tensor) -> Placement:
        return where[id(tensor)] if id(tensor) in where else place(tensor)

    return stand_in, stripe_place


def lower_chain(chain: Chain, region: Placement, lower_op: LowerOp, place: Place, flash: Flash,
                config: NpuConfig, stream: CommandStream) -> None:
    """Every stripe's calls of `chain`, in order, appended to `stream`; `region`: where the
    chain's stripe region is (its slots at chain.slot_offsets)."""
    if any(kept is not None for stripe in chain.stripes for kept in stripe.kept):
        raise LoweringError("a chain whose stripes keep halo rows (the NPU stream does not move them)")
    for stripe in chain.stripes:
        for j, rows in enumerate(stripe.calls):
            if rows is None:
                continue
            op, stripe_place = _stripe_op(chain, stripe, j, place, region)
            stream.pad_top = rows.pad_top
            try:
                lower_op(op, stripe_place, flash, config, stream)
            finally:
                stream.pad_top = None


FEWER_COUNTS = (2, 4, 8, 16)  # stripe counts fewer_stripes tries, fewest first


def fewer_stripes(graph: Graph, order: list[Op], plan: Plan, scratch_bytes: ScratchBytes,
                  pools: list[PoolSpec], guard: int) -> Plan:
    """`plan` with each NPU chain in the fewest stripes (of FEWER_COUNTS, below its own) whose
    placed plan is no larger: the tiling search counts bytes only, the NPU also pays per stripe."""
    chains = list(plan.tiling.chains) if plan.tiling is not None else []
    for n, chain in enumerate(chains):
        if chain.ops[0].backend != "npu":
            continue
        for count in (c for c in FEWER_COUNTS if c < len(chain.stripes)):
            fewer = make_chain(chain.ops, chain.first_step, count, rolling=False)
            if fewer is None:
                continue
            tried = [*chains[:n], fewer, *chains[n + 1:]]
            try:
                candidate = plan_memory(graph, order, scratch_bytes, pools, guard, tiling=Tiling(tried))
            except PlanningError:
                continue
            if candidate.arena_size <= plan.arena_size:
                plan, chains = candidate, tried
                break
    return plan


__all__ = ["fewer_stripes", "lower_chain"]
