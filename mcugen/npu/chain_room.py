"""Room for weight buffers: NPU ops run as chains of one op, each output over its input.

Where every op of a run peaks the arena with its whole input and output (kws_dscnn: 8,000 + 8,000
bytes at each convolution), a weight buffer adds its bytes to the peak, so `--npu-weights auto`
keeps the weights in flash, which the device streams again for every OFM block position. Run in
stripes, an op may write its output over its dying input (tiling.py's rule, module docstring):
a chain of one op, each stripe one NPU operation, its output `lag` bytes before its input, where
the lag keeps every write of a call below every input byte that call or a later one reads (the
device runs a call's blocks in an order the stream does not fix, so a call's own reads count).
Consecutive ops share one buffer; their stripes alternate top-down and bottom-up (the output
after its input), so the buffer does not drift by a lag per op. What that frees holds weight
buffers, each live from the previous op's step so that its DMA runs beside that op's calls.

`make_room` tries it for each stripe count of COUNTS and keeps a build only if its estimated NPU
cycles (estimate.py: every call of every stripe, weights from SRAM where buffered, a DMA's time
beyond the previous op's) are below the given plan's and its arena is no larger: cycles are
bought with bytes the plan already spends, never with more. Which ops: every NPU op that can
form a chain (tiling_search.chain_runs) whose input dies at it, outside the plan's chains; then
weight buffers by estimated saving, largest first, kept while the arena stays within bounds;
then each chain that neither frees room for a kept buffer nor saves cycles is dropped again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import PlanningError
from ..ir import Graph, Op
from ..memory.liveness import Buffer, ScratchBytes
from ..memory.plan import Plan, plan_memory
from ..memory.pools import PoolSpec
from ..memory.tiling import Chain, Tiling, make_chain
from ..memory.tiling_search import chain_runs
from .compile import NO_COMMANDS, lower_op
from .config import NpuConfig
from .estimate import chain_cycles, op_cycles, segment_cycles, weight_copy_cycles
from .featuremap import LoweringError, Placement, apart
from .lower import Flash
from .stream import CommandStream
from .stripes import stripe_call
from .weight_buffers import WEIGHTED, lowered

# Stripe counts tried (of each op's output rows; a count at or above the rows is one row each).
COUNTS = (3, 4, 5, 6, 8)


def chain_blob(chain: Chain, config: NpuConfig) -> int | None:
    """The bytes of the one blob (weights, then scales) every call of `chain`'s op reads from a
    weight buffer; None if the calls' blobs differ (their OFM blocks differ in depth) or the op
    has none."""
    if len(chain.ops) != 1:
        return None
    flash, blobs = Flash(), set()  # equal blobs get one address in the trial image
    for stripe in chain.stripes:
        if stripe.calls[0] is None:
            continue
        call, place = stripe_call(chain, stripe, 0, apart(), Placement(1, 0))  # no overlap to narrow blocks
        trial = CommandStream()
        trial.weight_buffer, trial.pad_top = (1, 0), stripe.calls[0].pad_top
        try:
            lower_op(call, place, flash, config, trial)
        except LoweringError:
            return None
        blobs.add(trial.weight_copy)
    if len(blobs) != 1 or None in blobs:
        return None
    ((_, size),) = blobs  # type: ignore[misc]
    return int(size)


def single_chains(graph: Graph, order: Sequence[Op], taken: Tiling | None, count: int) -> list[Chain]:
    """Each NPU op that can form a chain and whose input dies at it (read by it alone, no graph
    output), outside `taken`'s chains, as a chain of one op in `count` stripes; an op whose input
    the previous such chain wrote runs the other way (bottom-up after top-down)."""
    outputs = {id(t) for t in graph.outputs}
    chained = {id(op) for chain in (taken.chains if taken is not None else []) for op in chain.ops}
    found: list[Chain] = []
    for first, last in chain_runs(graph, order):
        for step in range(first, last + 1):
            op = order[step]
            x = op.inputs[0]
            if (op.backend != "npu" or id(op) in chained or x is None or id(x) in outputs
                    or [id(c) for c in x.consumers] != [id(op)]):
                continue
            after = bool(found) and found[-1].output is x and not found[-1].bottom_up
            chain = make_chain([op], step, count, False, bottom_up=after)
            if chain is not None and chain.lag is not None:
                found.append(chain)
    return found


def _previous_npu(order: Sequence[Op], step: int) -> bool:
    before = order[step - 1] if step else None
    return before is not None and before.backend == "npu" and before.kind not in NO_COMMANDS


def _buffer(op: Op, size: int, step: int, order: Sequence[Op]) -> Buffer:
    """A weight buffer live from the previous op's step (its DMA beside that op) to `op`'s."""
    return Buffer(name=f"npu weights of op {op.index}", size=size, first=step - 1 if _previous_npu(order, step) else step,
                  last=step, weights_of=op, uses=1)


def _buffers(order: Sequence[Op], tiling: Tiling, config: NpuConfig, ops: frozenset[int]) -> dict[int, Buffer]:
    """id(op) -> the weight buffer each op of `ops` (ids) can have: a chain of one op's if all its
    calls read one blob, an op outside chains its own (weight_buffers.lowered)."""
    found: dict[int, Buffer] = {}
    for step, op in enumerate(order):
        if id(op) not in ops:
            continue
        chain = tiling.chain_of(op)
        if chain is None:
            sram, fused = lowered(op, config, True), lowered(op, config, True, 0)
            size = max(sram.copy_bytes, fused.copy_bytes) if sram is not None and fused is not None else None
        else:
            size = chain_blob(chain, config) if len(chain.ops) == 1 else None
        if size:
            found[id(op)] = _buffer(op, size, step, order)
    return found


def npu_cycles(order: Sequence[Op], tiling: Tiling | None, buffered: frozenset[int], config: NpuConfig) -> int:
    """The build's estimated NPU cycles: its NPU ops in order, as one segment (estimate.py)."""
    return segment_cycles(tuple(op for op in order if op.backend == "npu"), config, tiling, buffered)


class _Cycles:
    """npu_cycles for one tiling and many sets of buffered ops: each op's or chain's cycles with
    and without its buffer estimated once (segment_cycles' sum, from them)."""

    def __init__(self, order: Sequence[Op], tiling: Tiling, config: NpuConfig) -> None:
        self.tiling, self.config = tiling, config
        self.units: list[tuple[Op | Chain, tuple[Op, ...]]] = []  # in order: an op outside chains, or a chain
        for op in order:
            chain = tiling.chain_of(op)
            if op.backend == "npu" and (chain is None or op is chain.ops[-1]):
                self.units.append((op if chain is None else chain, (op,) if chain is None else tuple(chain.ops)))
        self.known: dict[tuple[int, frozenset[int]], int] = {}

    def _unit(self, unit: Op | Chain, buffered: frozenset[int]) -> int:
        key = (id(unit), buffered)
        if key not in self.known:
            if isinstance(unit, Chain):
                self.known[key] = chain_cycles(unit, self.config, buffered)
            else:
                self.known[key] = op_cycles(unit, self.config, bool(buffered))
        return self.known[key]

    def __call__(self, buffered: frozenset[int]) -> int:
        total = previous = 0
        for unit, ops in self.units:
            mine = frozenset(id(op) for op in ops if id(op) in buffered)
            cycles = self._unit(unit, mine)
            total += cycles + sum(max(0, weight_copy_cycles(op) - previous) for op in ops if id(op) in mine)
            previous = cycles
        return total


class _Trial:
    """Plans of one tiling with some weight buffers, within an arena budget."""

    def __init__(self, graph: Graph, order: list[Op], scratch_bytes: ScratchBytes, pools: Sequence[PoolSpec],
                 guard: int, budget: int) -> None:
        self.graph, self.order, self.scratch_bytes, self.pools, self.guard = graph, order, scratch_bytes, pools, guard
        self.budget = budget

    def plan(self, tiling: Tiling, buffers: Sequence[Buffer]) -> Plan | None:
        """The plan, or None if it is larger than the budget or does not fit the pools."""
        try:
            placed = plan_memory(self.graph, self.order, self.scratch_bytes, self.pools, self.guard,
                                 tiling=tiling, extra=[Buffer(b.name, b.size, b.first, b.last, weights_of=b.weights_of,
                                                              uses=1) for b in buffers])
        except PlanningError:
            return None
        return placed if placed.arena_size <= self.budget and _addressable(placed) else None


def _addressable(plan: Plan) -> bool:
    """Every weight buffer is in a pool that holds a feature map of its op (a region of its segment)."""
    for buffer in plan.buffers:
        op = buffer.weights_of
        if op is None:
            continue
        pools = {b.pool for b in plan.buffers for t in [*op.inputs, *op.outputs]
                 if t is not None and not t.is_constant and any(u is t for u in b.tensors)}
        if buffer.pool not in pools:
            return False
    return True


Choice = tuple[int, int, Plan]  # (estimated cycles, arena, plan)


def _with_buffers(trial: _Trial, tiling: Tiling, order: Sequence[Op], config: NpuConfig,
                  to_beat: int) -> Choice | None:
    """`tiling` with the weight buffers that save cycles, largest saving first: all of them if
    the plan stays within the budget, else each kept while it does; None if no such plan has
    fewer estimated cycles than `to_beat`."""
    cycles = _Cycles(order, tiling, config)
    none = cycles(frozenset())
    weighted = [id(op) for op in order if op.backend == "npu" and op.kind in WEIGHTED]
    savings = sorted(((none - cycles(frozenset({key})), key) for key in weighted), key=lambda item: -item[0])
    if cycles(frozenset(key for saving, key in savings if saving > 0)) >= to_beat:  # not even every buffer pays
        return None
    possible = _buffers(order, tiling, config, frozenset(key for saving, key in savings if saving > 0))
    worth = [key for saving, key in savings if saving > 0 and key in possible]
    if not worth or cycles(frozenset(worth)) >= to_beat:
        return None
    placed = trial.plan(tiling, [possible[k] for k in worth])
    if placed is not None:
        return cycles(frozenset(worth)), placed.arena_size, placed
    best: Choice | None = None
    kept: frozenset[int] = frozenset()
    for key in worth:
        tried = kept | {key}
        placed = trial.plan(tiling, [possible[k] for k in possible if k in tried])
        if placed is not None:
            kept, best = tried, (cycles(tried), placed.arena_size, placed)
    return best if best is not None and best[0] < to_beat else None


def _prune(trial: _Trial, choice: Choice, taken: Tiling | None, order: Sequence[Op], config: NpuConfig) -> Choice:
    """`choice` without each chain of one op whose removal keeps its weight buffers in budget and
    costs no estimated cycle (its stripes bought nothing)."""
    cycles, _, plan = choice
    assert plan.tiling is not None
    buffers = [b for b in plan.buffers if b.weights_of is not None]
    buffered = frozenset(id(b.weights_of) for b in buffers)
    chains = list(plan.tiling.chains)
    base = list(taken.chains) if taken is not None else []
    for chain in list(chains):
        if any(chain is c for c in base):
            continue
        if any(id(op) in buffered for op in chain.ops):
            continue  # its calls read the buffer: whole, the op would need another blob
        fewer = [c for c in chains if c is not chain]
        tiling = Tiling(fewer)
        estimate = npu_cycles(order, tiling, buffered, config)
        if estimate > cycles:
            continue
        placed = trial.plan(tiling, buffers)
        if placed is not None:
            chains, cycles, plan = fewer, estimate, placed
    return cycles, plan.arena_size, plan


def make_room(graph: Graph, order: list[Op], plan: Plan, config: NpuConfig, scratch_bytes: ScratchBytes,
              pools: Sequence[PoolSpec], guard: int, counts: Sequence[int] = COUNTS) -> Plan:
    """`plan`, or a plan with chains of one op and weight buffers whose estimated NPU cycles are
    fewer at no more arena bytes (module docstring)."""
    taken = plan.tiling
    buffered = frozenset(id(b.weights_of) for b in plan.buffers if b.weights_of is not None)
    best: Choice = (npu_cycles(order, taken, buffered, config), plan.arena_size, plan)
    trial = _Trial(graph, order, scratch_bytes, pools, guard, plan.arena_size)
    for count in counts:
        singles = single_chains(graph, order, taken, count)
        if not singles:
            continue
        tiling = Tiling(sorted([*(taken.chains if taken is not None else []), *singles], key=lambda c: c.first_step))
        found = _with_buffers(trial, tiling, order, config, best[0])
        if found is None:
            continue
        found = _prune(trial, found, taken, order, config)
        if found[:2] < best[:2]:
            best = found
    chosen = best[2]
    if chosen is not plan:
        chosen.schedule_exact, chosen.async_groups = plan.schedule_exact, plan.async_groups
    return chosen


__all__ = ["COUNTS", "chain_blob", "make_room", "npu_cycles", "single_chains"]
