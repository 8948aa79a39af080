"""Static memory planning: every activation tensor and kernel scratch buffer gets a pool and an
offset in it, fixed at build time.

The package, in the order a plan is made (each module imports only those above it):

- liveness.py: buffers and their lifetimes, for an order seen through a step view, and the
  whole-tensor lower bounds;
- placement.py: offsets for the buffers of one pool (several algorithms, the best kept);
- pools.py: the pools of a build and the assignment of buffers to them;
- tiling.py, live_totals.py, tiling_search.py: chains of ops run in stripes, the bytes live
  per step of a tiling (what the search scores), and which to tile;
- cost.py, optimize.py: a plan's estimated instructions, and --optimize's choice by them;
- kernel_variants.py: which ops run their portable C, without their fast path's scratch;
- plan.py (here): the variants, the choice among them, and the check of the result.

Variants
--------
`plan_model` is the one place that tries different buffer sets for one order. Each candidate
(whole tensors; the least-RAM tiling; with --optimize balanced, maybe a tiling within an
instruction budget) keeps its smallest placed variant (sum over pools; ties: the earlier in
this list), and optimize.py chooses among the candidates by RAM and estimated instructions:

1. whole tensors, in-place execution on, concatenations copied;
2. whole tensors, in-place execution off (the placement is greedy, so sharing a buffer in place
   can, rarely, place worse than not sharing: a random graph of concatenations and adds did);
3. whole tensors, concatenations in place (their inputs are views of the output), when any
   concatenation can be: that makes the output live from its first input's producer on, which
   can cost more than it saves;
4. with `tiling`, if tiling_search finds chains that lower the liveness peak: the same order
   tiled, the chains' outputs over their dying inputs (at `lag`), then never over them, then
   with concatenations in place too.

With `fast` (the fast-path part of the scratch), a candidate whose arena drops when every fast
path's scratch is left out gets a lean twin (kernel_variants.py): the same tiling, the ops
whose fast-path scratch raises the arena run portable (Plan.portable).

A variant that does not fit the pools is skipped; if none fits, the error raised is the first
failure of the last candidate tried. `plan_memory` does the same for one given tiling (or
none): the variants of 1-3, or of 4 (and in-place execution may be turned off there).

Bounds and checks
-----------------
Plan.lower_bound is the whole-tensor liveness bound of the order (liveness.py), and
Plan.file_lower_bound the same for TFLite's order; in-place execution and tiling may go below
both. Pool sizes are rounded up to 16 bytes. `verify_plan` re-checks the result (alignment,
pool capacity, no two simultaneously live buffers of one pool sharing a byte) after every run
and raises PlanningError on any violation; there is no silent fallback and no slack. With
`guard` > 0 (tests), every buffer is followed by `guard` canary bytes and each pool starts and
ends with `guard` of them (pools.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import field, replace
from typing import Any

from ..errors import PlanningError
from ..ir import Graph, Op, OpKind, Tensor
from ..ops.registry import op_def
from ..records import dataclass
from .cost import CostModel, cost_model, estimator
from .kernel_variants import Portable, fast_path_ops, lean_portable, without_fast_paths
from .liveness import (
    OP_STEPS,
    Buffer,
    ScratchBytes,
    StepView,
    collect_buffers,
    file_lower_bound,
    whole_tensor_bound,
)
from .optimize import Figures, TradeOff, check_mode, choose, trade_off, within_budget
from .placement import ALIGNMENT
from .pools import DEFAULT_POOLS, PoolPlan, PoolSpec, place_pools
from .tiling import Tiling
from .tiling_search import TilingSearch


@dataclass
class Plan:
    buffers: list[Buffer]
    arena_size: int  # total bytes over every pool
    lower_bound: int  # whole-tensor liveness bound of the chosen order
    steps: int
    pools: list[PoolPlan] = field(default_factory=list)
    file_lower_bound: int = 0  # the same bound for TFLite's order
    guard: int = 0
    schedule_exact: bool = False  # set by the driver: no order has a smaller whole-tensor bound
    tiling: Tiling | None = None  # chains run in stripes (tiling.py), or None
    # set by the driver with --npu-async: npu/concurrency.py's AsyncGroups the plan was made for
    async_groups: tuple[Any, ...] = ()
    # --optimize: the mode and the arena and estimated instructions of the chosen, ram and speed
    # plans (optimize.py); None for a plan of one given tiling (plan_memory)
    trade_off: TradeOff | None = None
    # ops that run their portable C, their fast path's scratch left out (kernel_variants.py)
    portable: Portable = frozenset()
    kernel_choices: list[KernelChoice] = field(default_factory=list)
    # the step view of an untiled plan_memory(steps=...) (npu/overlap.py), for re-plans to keep
    step_view: StepView | None = None

    def __post_init__(self) -> None:
        if not self.pools:
            self.pools = [PoolPlan(DEFAULT_POOLS[0], self.arena_size)]

    @property
    def gap_percent(self) -> float:
        """How far the plan is above the whole-tensor bound of its order (negative: below)."""
        if self.lower_bound == 0:
            return 0.0
        return round(100.0 * (self.arena_size - self.lower_bound) / self.lower_bound, 2)

    def buffer_of(self, tensor: Tensor) -> Buffer:
        for buffer in self.buffers:
            if any(t is tensor for t in buffer.tensors):
                return buffer
        raise KeyError(tensor.name)

    def offset_of(self, tensor: Tensor) -> int:
        buffer = self.buffer_of(tensor)
        return buffer.offset + buffer.view_offsets.get(id(tensor), 0)

    def is_elided(self, op: Op) -> bool:
        """No code for the op: an alias of its input, or a concatenation whose inputs were
        written straight into their slices of its output."""
        out = op.outputs[0] if op.outputs else None
        if out is None or not op.inputs or any(t is None for t in op.inputs):
            return False
        if self.tiling is not None and self.tiling.grouped(op):  # it runs in its chain's stripes
            return False
        if op_def(op.kind).traits.alias:
            source = op.inputs[0]
            assert source is not None
            return self.buffer_of(source) is self.buffer_of(out) and self.offset_of(source) == self.offset_of(out)
        return op.index in self.buffer_of(out).concat_ops

    def pool_of(self, buffer: Buffer) -> PoolPlan:
        for pool in self.pools:
            if pool.name == buffer.pool:
                return pool
        raise KeyError(buffer.pool)

    def scratch_of(self, op: Op) -> Buffer | None:
        for buffer in self.buffers:
            if buffer.scratch_of is op:
                return buffer
        return None

    def kernel_scratch_bytes(self, op: Op, planned: int) -> int:
        """Bytes of `planned` scratch the op's kernel is told of: all, or for an op run portable
        only what its portable kernel needs, so that its fast path declines (scratch_ok) even
        where it shares a larger buffer (a tiled chain's)."""
        if op.index in self.portable:
            return min(planned, op_def(op.kind).scratch(op))
        return planned

    def weights_buffer_of(self, op: Op) -> Buffer | None:
        """The SRAM buffer `op`'s NPU weights are DMA'd to (--npu-weights), if any."""
        return next((b for b in self.buffers if b.weights_of is op), None)


# --- variants ------------------------------------------------------------------------------

# One buffer set to place: the tiling it was collected with (None: whole tensors) and its buffers.
Variant = tuple[Tiling | None, list[Buffer]]


def _variants(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes, in_place: bool,
              tiling: Tiling | None, steps: StepView = OP_STEPS, extra: Sequence[Buffer] = ()) -> list[Variant]:
    """The buffer sets of one tiling (None: whole tensors; then `steps` views the order), in the
    order of the docstring; each with a fresh copy of the `extra` buffers (placed like the rest)."""
    tilings = tiling.variants() if tiling is not None else [None]
    found: list[Variant] = [
        (tiling, collect_buffers(graph, order, scratch_bytes, in_place=in_place, steps=t or steps))
        for t in tilings
    ]
    if in_place and tiling is None and any(op_def(op.kind).traits.in_place for op in order):
        # placement is greedy: sharing a buffer in place can, rarely, place worse than not
        found.append((None, collect_buffers(graph, order, scratch_bytes, in_place=False, steps=steps)))
    if in_place and any(op.kind is OpKind.CONCATENATION for op in order):
        views = collect_buffers(graph, order, scratch_bytes, in_place=True, concat_in_place=True,
                                steps=tilings[0] or steps)
        if any(b.concat_ops for b in views):
            found.append((tiling, views))
    return [(t, [*buffers, *(replace(b, tensors=[]) for b in extra)]) for t, buffers in found]


Placed = tuple[int, int, Variant, list[PoolPlan]]  # (bytes over pools, variant number, variant, pools)


def _place(pools: Sequence[PoolSpec], guard: int, groups: list[list[Variant]]) -> tuple[list[Placed], PlanningError | None]:
    """Every variant placed (those that fit), and the first failure of the last group."""
    if guard % ALIGNMENT:
        raise PlanningError(f"guard of {guard} bytes is not a multiple of {ALIGNMENT}")
    pools = list(pools) or list(DEFAULT_POOLS)
    placed: list[Placed] = []
    failure: PlanningError | None = None
    number = 0
    for group in groups:
        failure = None
        for variant in group:
            number += 1
            try:
                result = place_pools(variant[1], pools, guard)
            except PlanningError as error:
                failure = failure or error
                continue
            placed.append((sum(p.size for p in result), number, variant, result))
    return placed, failure


def _plan_of(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes, guard: int, placed: Placed) -> Plan:
    """The Plan of one placed variant, checked (verify_plan)."""
    _, _, (tiling, buffers), pool_plans = placed
    bound = whole_tensor_bound(graph, order, scratch_bytes)
    file_bound = bound if order == list(graph.ops) else file_lower_bound(graph, scratch_bytes)
    plan = Plan(buffers=buffers, arena_size=sum(p.size for p in pool_plans), lower_bound=bound,
                steps=len(order), pools=pool_plans, file_lower_bound=file_bound, guard=guard,
                tiling=tiling if tiling is not None and tiling.chains else None)
    verify_plan(plan)
    return plan


def _smallest(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes, pools: Sequence[PoolSpec],
              guard: int, groups: list[list[Variant]]) -> Plan:
    """Place every variant, keep the smallest (ties: the first), check it (verify_plan)."""
    placed, failure = _place(pools, guard, groups)
    if not placed:
        assert failure is not None
        raise failure
    return _plan_of(graph, order, scratch_bytes, guard, min(placed, key=lambda item: (item[0], item[1])))


def plan_memory(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes,
                pools: Sequence[PoolSpec] = DEFAULT_POOLS, guard: int = 0, in_place: bool = True,
                tiling: Tiling | None = None, extra: Sequence[Buffer] = (), steps: StepView | None = None) -> Plan:
    """Buffers, lifetimes, pools and offsets for `order` with exactly this tiling (None: whole
    tensors): the smallest of its variants; checked by verify_plan before return. `extra`:
    buffers of no tensor with their lifetimes (NPU weight buffers), placed with the others.
    `steps`: the view of an untiled order (None: every op a step), kept in Plan.step_view."""
    plan = _smallest(graph, order, scratch_bytes, pools, guard,
                     [_variants(graph, order, scratch_bytes, in_place, tiling, steps or OP_STEPS, extra)])
    plan.step_view = steps if tiling is None else None
    return plan


@dataclass(frozen=True)
class KernelChoice:
    """Which kernel an op with a fast-path scratch runs, and why (report.json, `mcugen plan`)."""

    op: Op
    variant: str  # "fast" or "portable"
    fast_scratch_bytes: int
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op.index, "kind": self.op.kind.name, "variant": self.variant,
                "fast_path_scratch_bytes": self.fast_scratch_bytes, "why": self.why}


def _kernel_choices(order: list[Op], fast: ScratchBytes, portable: Portable, leaned: Portable,
                    mode: str, costs: CostModel) -> list[KernelChoice]:
    """Per op with a fast-path scratch: the variant the plan runs and why (`leaned`: the ops
    some lean candidate ran portable, whose scratch raised the arena)."""
    found = []
    for op in fast_path_ops(order, fast):
        extra = f"~{round(costs.portable_penalty(op)):,} more instructions portable"
        if op.index in portable:
            why = f"its fast path's scratch raises the arena; --optimize {mode} chose the plan without it ({extra})"
        elif op.index in leaned:
            why = f"its fast path's scratch raises the arena; --optimize {mode} kept it ({extra})"
        else:
            why = "its fast path's scratch fits under the arena"
        found.append(KernelChoice(op, "portable" if op.index in portable else "fast", fast(op), why))
    return found


def plan_model(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes,
               pools: Sequence[PoolSpec] = DEFAULT_POOLS, guard: int = 0, tiling: bool = True,
               steps: StepView = OP_STEPS, optimize: str = "ram", costs: CostModel | None = None,
               fast: ScratchBytes | None = None) -> Plan:
    """The build's memory plan: whole tensors, or, with `tiling`, tiled where `optimize`
    (optimize.py) prefers it, instructions estimated with `costs` (cost.py; None: Cortex-M4's);
    with `fast` (the fast-path part of `scratch_bytes`), some ops maybe portable
    (kernel_variants.py); checked by verify_plan before return. `steps` views the untiled order
    (--npu-async: npu/concurrency.py's AsyncSteps). Plan.trade_off holds the figures of the
    choice, Plan.kernel_choices the kernel variants."""
    check_mode(optimize)
    model = costs or cost_model(None)
    instructions = estimator(order, model)
    figures: list[Figures] = []
    chosen: list[tuple[Placed, Portable]] = []
    failure: PlanningError | None = None

    def variants(tried: Tiling | None, portable: Portable = frozenset()) -> list[Variant]:
        sizes = without_fast_paths(scratch_bytes, fast, portable) if fast is not None else scratch_bytes
        return _variants(graph, order, sizes, True, tried, steps)

    def consider(tried: Tiling | None, group: list[Variant], portable: Portable = frozenset()) -> int | None:
        """Place the candidate; its arena, or None if it does not fit."""
        nonlocal failure
        placed, failure = _place(pools, guard, [group])
        if not placed:
            return None
        best = min(placed, key=lambda item: (item[0], item[1]))
        chosen.append((best, portable))
        figures.append(Figures(best[0], instructions(tried, portable),
                               len(tried.chains) if tried else 0, len(portable)))
        return best[0]

    tried_tilings: list[tuple[Tiling | None, int | None]] = [(None, consider(None, variants(None)))]
    if tiling:
        search = TilingSearch(graph, order, scratch_bytes)  # the second search reuses the first's work
        least = search.plan()
        if least.chains:
            tried_tilings.append((least, consider(least, variants(least))))
        if optimize == "balanced" and figures and choose(figures, "balanced") != choose(figures, "ram"):
            budget = within_budget(min(f.estimated_instructions for f in figures))
            cheap = search.plan(lambda t: instructions(t) <= budget)
            if cheap.chains:
                consider(cheap, variants(cheap))
    leaned: set[int] = set()
    if fast is not None and chosen and fast_path_ops(order, fast):
        for tried, arena in tried_tilings:
            if arena is not None:
                leaned |= _consider_lean(order, scratch_bytes, fast, tried, arena, steps, pools, guard,
                                         model, variants, consider)
    if not chosen:
        assert failure is not None
        raise failure
    index, plan_trade_off = trade_off(figures, optimize)
    placed, portable = chosen[index]
    sizes = without_fast_paths(scratch_bytes, fast, portable) if fast is not None else scratch_bytes
    plan = _plan_of(graph, order, sizes, guard, placed)
    plan.trade_off = plan_trade_off
    plan.portable = portable
    if fast is not None:
        plan.kernel_choices = _kernel_choices(order, fast, portable, frozenset(leaned), optimize, model)
    return plan


def _consider_lean(order: list[Op], scratch_bytes: ScratchBytes, fast: ScratchBytes, tried: Tiling | None,
                   fast_arena: int, steps: StepView, pools: Sequence[PoolSpec], guard: int, model: CostModel,
                   variants: Callable[[Tiling | None, Portable], list[Variant]],
                   consider: Callable[[Tiling | None, list[Variant], Portable], int | None]) -> Portable:
    """The lean twin of the candidate of `tried` (placed in `fast_arena` bytes; kernel_variants.py):
    when leaving every fast path's scratch out lowers its arena, the set lean_portable keeps
    portable, or every fast path left out if that set places larger. Returns the ops it runs
    portable (none: no twin)."""
    every = frozenset(op.index for op in fast_path_ops(order, fast))
    lean_placed, _ = _place(pools, guard, [variants(tried, every)])
    if not lean_placed:
        return frozenset()
    lean_best = min(lean_placed, key=lambda item: (item[0], item[1]))
    if lean_best[0] >= fast_arena:
        return frozenset()
    view_tiling, buffers = lean_best[2]
    view: StepView = view_tiling if view_tiling is not None else steps
    portable = lean_portable(order, view, scratch_bytes, fast, buffers, lean_best[0], model.portable_penalty)
    if not portable:
        return frozenset()
    group = variants(tried, portable)
    placed, _ = _place(pools, guard, [group])
    if portable != every and (not placed or min(p[0] for p in placed) > lean_best[0]):
        consider(tried, variants(tried, every), every)  # the set did not place as small: all of them
        return every
    consider(tried, group, portable)
    return portable


def refigured(plan: Plan, order: list[Op], replaced: Plan, costs: CostModel | None = None) -> Plan:
    """`plan`, made from `replaced` by a later stage (the NPU's fewer stripes, planned with
    replaced's portable ops), with replaced's trade-off figures, the chosen ones now its own, and
    its kernel variants."""
    if plan is not replaced:
        plan.portable, plan.kernel_choices = replaced.portable, replaced.kernel_choices
    if replaced.trade_off is not None and plan is not replaced:
        chains = len(plan.tiling.chains) if plan.tiling is not None else 0
        instructions = estimator(order, costs or cost_model(None))(plan.tiling, plan.portable)
        mine = Figures(plan.arena_size, instructions, chains, len(plan.portable))
        plan.trade_off = dataclasses.replace(replaced.trade_off, chosen=mine)
    return plan


# --- checks and reports ----------------------------------------------------------------------


def verify_plan(plan: Plan) -> None:
    """Alignment, pool capacity, and no two buffers of a pool live at one step sharing a byte."""
    sizes = {p.name: p.size for p in plan.pools}
    for pool in plan.pools:
        if pool.size % ALIGNMENT:
            raise PlanningError(f"pool {pool.name} of {pool.size} bytes is not a multiple of {ALIGNMENT}")
        if pool.spec.capacity is not None and pool.size > pool.spec.capacity:
            raise PlanningError(f"pool {pool.name} uses {pool.size} bytes, over its capacity {pool.spec.capacity}")
    for buffer in plan.buffers:
        if buffer.pool not in sizes:
            raise PlanningError(f"buffer '{buffer.name}' is in pool '{buffer.pool}', which the plan does not have")
        if buffer.offset < 0 or buffer.offset % ALIGNMENT:
            raise PlanningError(f"buffer '{buffer.name}' at offset {buffer.offset} is not {ALIGNMENT}-byte aligned")
        if plan.guard and buffer.offset + buffer.extent > sizes[buffer.pool] - plan.guard:
            raise PlanningError(f"buffer '{buffer.name}' reaches into the end canary of pool {buffer.pool}")
        if buffer.offset + buffer.size > sizes[buffer.pool]:
            raise PlanningError(
                f"buffer '{buffer.name}' ends at {buffer.offset + buffer.size}, past the {sizes[buffer.pool]} "
                f"bytes of pool {buffer.pool}"
            )
        for tensor in buffer.tensors:
            start = buffer.view_offsets.get(id(tensor), 0)
            if start < 0 or start + tensor.nbytes > buffer.size:
                raise PlanningError(f"tensor '{tensor.name}' at {start} in buffer '{buffer.name}' runs past its "
                                    f"{buffer.size} bytes")
        if plan.guard and buffer.offset < plan.guard:
            raise PlanningError(f"buffer '{buffer.name}' reaches into the start canary of pool {buffer.pool}")
    ordered = sorted(plan.buffers, key=lambda b: (b.pool, b.offset))
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if b.pool != a.pool or b.offset >= a.offset + a.extent:
                break
            if a.size and b.size and a.overlaps_in_time(b) and a.overlaps_in_space(b):
                raise PlanningError(
                    f"buffers '{a.name}' [{a.offset}, {a.offset + a.size}) and '{b.name}' "
                    f"[{b.offset}, {b.offset + b.size}) overlap while both are live"
                )


def plan_report(plan: Plan) -> dict[str, object]:
    """The plan's numbers for report.json and `mcugen plan --json`."""
    return {
        "arena_bytes": plan.arena_size,
        "lower_bound_bytes": plan.lower_bound,
        "lower_bound_tflite_order_bytes": plan.file_lower_bound,
        "gap_percent": plan.gap_percent,
        "schedule_exact": plan.schedule_exact,
        # --optimize: the mode, and arena and estimated instructions of the chosen, ram and speed plans
        **({"optimize": plan.trade_off.to_json()} if plan.trade_off is not None else {}),
        # per op with a fast-path scratch: the kernel variant the plan runs and why (kernel_variants.py)
        "kernel_variants": [c.to_json() for c in plan.kernel_choices],
        # variables' states (stateful models): in the pools, kept across invokes, part of arena_bytes
        "state_bytes": state_bytes_of(plan),
        "pools": [
            {"name": p.name, "bytes": p.size, "capacity": p.spec.capacity, "speed": p.spec.speed,
             "algorithm": p.algorithm, "optimal": p.exact}
            for p in plan.pools
        ],
        "buffers": [
            {"name": b.name, "bytes": b.size, "first": b.first, "last": b.last, "pool": b.pool,
             "offset": b.offset, "scratch": b.scratch_of is not None,
             "tensors": [t.name for t in b.tensors], "in_place_ops": list(b.in_place_ops),
             "concat_ops": list(b.concat_ops),
             **({"npu_weights_of": b.weights_of.index} if b.weights_of is not None else {}),
             **({"npu_stream_depth": b.stream_depth} if b.stream_depth else {})}
            for b in plan.buffers
        ],
    }


def state_bytes_of(plan: Plan) -> int:
    """Bytes of the plan's variable-state buffers (0 for a model without variables)."""
    return sum(b.size for b in plan.buffers if any(t.variable is not None for t in b.tensors))


def tiling_report(tiling: Tiling | None, enabled: bool = True) -> dict[str, Any]:
    """report.json's "tiling": on or off, each chain (ops, stripes, stripe bytes, extra MACs)."""
    chains = tiling.chains if tiling is not None else []
    return {"enabled": enabled, "chains": [c.describe() for c in chains],
            "extra_macs": sum(c.extra_macs for c in chains)}
