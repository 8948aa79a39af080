"""A tiled chain (mcugen/memory/tiling.py) inside an NPU segment: each op lowered once per stripe.

The planner chose the chain, its stripes and its stripe region as for the CPU; the NPU needs
only each call's boxes. In stripe k, op j's IFM is rows [in_start, in_stop) of its input (the
whole input's bytes from row in_start for the chain's first op, else its slot in the region),
its OFM rows [out_start, out_stop) of its output (the whole output's bytes for the last op,
else its slot), and its padding the stripe's: pad_top rows above, below as many as the last
output row's taps reach past the IFM (none unless the stripe ends at the input's last row). The
taps inside the IFM are those of the whole op, so every sum, maximum and count of real taps is
the one of the unstriped operation (the module docstring of tiling.py). A residual ADD or MUL
in the chain reads its other operand's rows [out_start, out_stop) from the whole tensor (a row
broadcast over all rows whole), either operand being the IFM2 (tiling.call_view). All stripes are
unrolled into the segment's stream at build time; the weights are encoded once per block shape.

Halo rows are recomputed per stripe, or, in a rolling chain, computed once and kept: there a
slot of S rows is a ring, row r of intermediate j at (r mod S) x row bytes from the slot's
start, never moved (the CPU moves kept rows to the slot's start; the NPU stream has no moves).
A call's rows that run past the slot's end continue at its start: the feature map's tile 0
holds the rows up to the end, tile 2 (BASE2) the rest, as Vela addresses its rolling buffers.
The cut (tiling.pulled_stripes, or _walk's) keeps every row a later call reads among the last
S rows made, S being the most rows a slot holds in any stripe, so no row is overwritten before
its last read.

Which stripes an NPU chain runs in is `choose_stripes`' call: every stripe costs each op its
fixed overhead and re-streams its weights from flash per block (estimate.py counts both), so
it weighs the plan's bytes against the estimated cycles.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from ..errors import PlanningError
from ..ir import Graph, Op, Tensor
from ..memory.liveness import ScratchBytes
from ..memory.plan import Plan, plan_memory
from ..memory.pools import PoolSpec
from ..memory.tiling import (
    Chain,
    Stripe,
    Tiling,
    call_view,
    make_chain,
    pulled_stripes,
    row_bytes,
)
from ..records import dataclass
from .config import NpuConfig
from .estimate import chain_cycles, op_cycles
from .featuremap import Place, Placement
from .lower import Flash
from .stream import CommandStream

LowerOp = Callable[[Op, Place, Flash, NpuConfig, CommandStream], None]


def _at(placement: Placement, byte_offset: int) -> Placement:
    return Placement(placement.region, placement.address + byte_offset)


def ring_rows(chain: Chain, j: int) -> int:
    """The rows of intermediate j's slot in a rolling chain: the most it holds in a stripe."""
    return max(stripe.held[j][1] - stripe.held[j][0] for stripe in chain.stripes)


def _slot(chain: Chain, stripe: Stripe, region: Placement, j: int, row: int, rows: int) -> Placement:
    """Where rows [row, row + rows) of intermediate j are in its slot during `stripe`."""
    size = row_bytes(chain.ops[j].outputs[0])
    start = _at(region, chain.slot_offsets[j])
    if not chain.rolling:
        return _at(start, (row - stripe.held[j][0]) * size)
    ring = ring_rows(chain, j)
    first = row % ring
    wrapped = first + rows > ring
    return Placement(start.region, start.address + first * size, ring - first if wrapped else 0,
                     start.address if wrapped else 0)


def _stripe_op(chain: Chain, stripe: Stripe, j: int, place: Place, region: Placement) -> tuple[Op, Place]:
    """Op j as one stripe's call: its operands and output cut to the stripe's rows, and where they are."""
    op, rows = chain.ops[j], stripe.calls[j]
    assert rows is not None
    flow = chain.flow_operand(j)
    call = call_view(op, flow, rows)
    where: dict[int, Placement] = {}
    for n, (tensor, view) in enumerate(zip(op.inputs, call.inputs, strict=True)):
        if view is tensor or tensor is None:
            continue
        if n == flow and j > 0:
            where[id(view)] = _slot(chain, stripe, region, j - 1, rows.in_start, rows.in_rows)
        else:  # the chain's input, or a residual operand: the whole tensor's rows of this call
            first = rows.in_start if n == flow else rows.out_start
            where[id(view)] = _at(place(tensor), first * row_bytes(tensor))
    y = op.outputs[0]
    if j == len(chain.ops) - 1:
        where[id(call.outputs[0])] = _at(place(y), rows.out_start * row_bytes(y))
    else:
        where[id(call.outputs[0])] = _slot(chain, stripe, region, j, rows.out_start, rows.out_rows)

    def stripe_place(tensor: Tensor) -> Placement:
        return where[id(tensor)] if id(tensor) in where else place(tensor)

    return call, stripe_place


def first_call(chain: Chain, j: int, place: Place, region: Placement) -> tuple[Op, Place]:
    """Op j's first call in `chain` and where its feature maps are (what its weight DMA copies for)."""
    stripe = next(stripe for stripe in chain.stripes if stripe.calls[j] is not None)
    return stripe_call(chain, stripe, j, place, region)


def stripe_call(chain: Chain, stripe: Stripe, j: int, place: Place, region: Placement) -> tuple[Op, Place]:
    """Op j's call in `stripe` (which makes one) and where its feature maps are."""
    return _stripe_op(chain, stripe, j, place, region)


def lower_chain(chain: Chain, region: Placement, lower_op: LowerOp, place: Place, flash: Flash,
                config: NpuConfig, stream: CommandStream) -> None:
    """Every stripe's calls of `chain`, in order, appended to `stream`; `region`: where the
    chain's stripe region is (its slots at chain.slot_offsets)."""
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


# How an NPU chain's stripes are chosen (the build's --optimize, when it has one): "ram" the
# least SRAM whatever the cycles, "balanced" the least SRAM within BALANCED_SLACK of the
# unstriped build's estimated NPU cycles, "speed" no stripe that costs a cycle.
BALANCED_SLACK = 0.05
# Stripe heights tried (rows an op makes per stripe: the pace of a rolling chain, the last op's
# rows of a recomputing one); a height at or above the op's rows is no stripe.
PACES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48)


def cycle_slack(mode: str, whole_cycles: int) -> float:
    """Estimated NPU cycles the stripes may add to the unstriped build's `whole_cycles`."""
    return {"ram": math.inf, "balanced": BALANCED_SLACK * whole_cycles, "speed": 0.0}[mode]


def stripe_options(chain: Chain) -> list[Chain | None]:
    """The ways to run `chain`'s ops: whole (None), as the tiling search cut them, and in
    stripes of each of PACES rows of the last op, halos kept (rolling, pulled by the last op:
    tiling.pulled_stripes) or recomputed."""
    ops = chain.ops
    found: list[Chain | None] = [None, chain]
    rows = ops[-1].outputs[0].shape[1]
    for count in sorted({-(-rows // pace) for pace in PACES if pace < rows}, reverse=True):
        pulled = pulled_stripes(ops, count)
        options = [make_chain(ops, chain.first_step, count, True, pulled) if pulled is not None else None,
                   make_chain(ops, chain.first_step, count, False)]
        found.extend(option for option in options if option is not None)
    return found


def _extra_cycles(option: Chain | None, whole: int, config: NpuConfig) -> int:
    return chain_cycles(option, config) - whole if option is not None else 0


@dataclass(frozen=True)
class PricedOption:
    """One way to run an NPU chain, as choose_stripes weighed it (benchmarks/npu/stripe_options.py)."""

    chain: str  # the chain's op indices, "9..10"
    stripes: int  # 1: whole
    rolling: bool
    extra_cycles: int  # estimated NPU cycles over the chain run whole
    arena: int | None  # placed SRAM with this option (the other chains as chosen so far); None: no plan
    within_slack: bool


def _describe(chain: Chain, option: Chain | None, extra: int, arena: int | None, within: bool) -> PricedOption:
    ops = f"{chain.ops[0].index}..{chain.ops[-1].index}"
    if option is None:
        return PricedOption(ops, 1, False, extra, arena, within)
    return PricedOption(ops, len(option.stripes), option.rolling, extra, arena, within)


def choose_stripes(graph: Graph, order: list[Op], plan: Plan, scratch_bytes: ScratchBytes,
                   pools: list[PoolSpec], guard: int, config: NpuConfig, mode: str = "balanced",
                   priced: list[PricedOption] | None = None) -> Plan:
    """`plan` with each NPU chain run whole or in the stripes (stripe_options) that give the
    least placed SRAM among those whose estimated cycles (estimate.py, every call of every
    stripe) keep the build within cycle_slack(mode) of the unstriped one; ties: fewer cycles.
    The tiling search counts bytes only; this weighs them against cycles. Chains are chosen
    one by one, each spending what is left of the slack; the later ones keep the search's
    least-memory cut meanwhile, so that the peak a chain takes down shows. With `priced`, every
    option is also placed beyond the slack and appended there (a diagnostic; the choice is the same)."""
    # each chain's choice so far, at its place (None: run whole)
    chains: list[Chain | None] = list(plan.tiling.chains) if plan.tiling is not None else []
    slack = cycle_slack(mode, sum(op_cycles(op, config) for op in order if op.backend == "npu"))
    for n, chain in enumerate(list(chains)):
        if chain is None or chain.ops[0].backend != "npu":
            continue
        whole = sum(op_cycles(op, config) for op in chain.ops)
        placed: list[tuple[int, int, Plan, list[Chain | None]]] = []
        for option in stripe_options(chain):
            extra = _extra_cycles(option, whole, config)
            if extra > slack and priced is None:
                continue
            tried = [*chains[:n], option, *chains[n + 1:]]
            try:
                tiling = Tiling([c for c in tried if c is not None])
                candidate: Plan | None = plan_memory(graph, order, scratch_bytes, pools, guard, tiling=tiling)
            except PlanningError:
                candidate = None
            if priced is not None:
                priced.append(_describe(chain, option, extra, candidate.arena_size if candidate else None,
                                        extra <= slack))
            if candidate is not None and extra <= slack:
                placed.append((candidate.arena_size, extra, candidate, tried))
        if placed:
            _, extra, plan, chains = min(placed, key=lambda p: p[:2])
            slack -= max(0, extra)
    return plan


__all__ = ["PricedOption", "choose_stripes", "cycle_slack", "first_call", "lower_chain", "stripe_call",
           "stripe_options"]
