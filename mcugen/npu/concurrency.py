"""`--npu-async`: the CPU runs its ops while an NPU segment works, where the graph allows.

The generated invoke starts a segment (ethosu_invoke_async), runs the CPU ops of its group, then
waits for it (ethosu_wait). Before planning, `async_order` moves into each NPU run's group the CPU
ops since the previous group whose outputs the run does not read (they wait until it starts),
then the CPU ops up to the next NPU op that read nothing the run writes, directly or through an
op left behind. The run becomes a segment of its own (`segment_starts`). Views (RESHAPE and kin)
are no CPU work and stay where they are.

Memory: while the NPU runs, every buffer it reads or writes (its ops' feature maps, internal ones
included) must keep its bytes, and no CPU op of the group may write or read bytes the NPU writes.
`AsyncSteps` shows the planner each segment's tensors as read again at the step after its group
(after the wait), so they are live through the group: the planner keeps every buffer of the
group (outputs, scratch) apart from them, and no group op writes over them in place; an NPU
op's own scratch (a SOFTMAX's intermediates) lives to the wait too.
`check_concurrency` verifies the final plan.
"""

from __future__ import annotations

import dataclasses

from ..errors import BuildError
from ..ir import NpuSegmentOptions, Op, OpKind, Tensor
from ..memory.liveness import OP_STEPS, ScratchBytes
from ..memory.plan import Plan
from ..records import dataclass
from .compile import NO_COMMANDS
from .config import NpuConfig
from .support import npu_reasons


@dataclass(frozen=True)
class AsyncGroup:
    """A run of NPU ops (`npu`) and the CPU ops (`cpu`) that run after it before the wait."""

    npu: tuple[Op, ...]
    cpu: tuple[Op, ...]

    @property
    def npu_tensors(self) -> list[Tensor]:
        """The feature maps the NPU reads or writes while the group runs."""
        seen: dict[int, Tensor] = {}
        for op in self.npu:
            for tensor in [*op.inputs, *op.outputs]:
                if tensor is not None and not tensor.is_constant:
                    seen.setdefault(id(tensor), tensor)
        return list(seen.values())


def _on_npu(op: Op, config: NpuConfig) -> bool:
    """The NPU takes it (the views between NPU ops ride along; segments.py decides them after
    planning, and check_concurrency holds the result to the plan)."""
    return op.kind in NO_COMMANDS or not npu_reasons(op, config)


def _run_end(order: list[Op], start: int, config: NpuConfig) -> int:
    end = start
    while end < len(order) and _on_npu(order[end], config):
        end += 1
    return end


def _is_cpu_work(op: Op, config: NpuConfig) -> bool:
    return not _on_npu(op, config) and op.kind is not OpKind.ETHOS_U


def _sink(window: list[Op], run: list[Op], config: NpuConfig) -> tuple[list[Op], list[Op]]:
    """(the ops before `run` that stay, those that may wait for after its start): a CPU op whose
    outputs neither the run nor an op staying before it reads."""
    needed = {id(t) for op in run for t in op.inputs if t is not None}
    stay: list[Op] = []
    sunk: list[Op] = []
    for op in reversed(window):
        if _is_cpu_work(op, config) and not any(id(t) in needed for t in op.outputs):
            sunk.insert(0, op)
            continue
        stay.insert(0, op)
        needed |= {id(t) for t in op.inputs if t is not None}
    return stay, sunk


def _hoist(window: list[Op], run: list[Op], config: NpuConfig) -> tuple[list[Op], list[Op]]:
    """(the ops after `run` up to the next NPU op that may run before its wait, those left
    behind): a CPU op that reads nothing the run writes, directly or through an op left behind."""
    blocked = {id(t) for op in run for t in op.outputs}
    group: list[Op] = []
    rest: list[Op] = []
    for op in window:
        if _is_cpu_work(op, config) and not any(t is not None and id(t) in blocked for t in op.inputs):
            group.append(op)
            continue
        rest.append(op)
        blocked |= {id(t) for t in op.outputs}
    return group, rest


def _next_npu_op(order: list[Op], start: int, config: NpuConfig) -> int:
    """The position of the next op the NPU takes (not a view) at or after `start`."""
    position = start
    while position < len(order) and (order[position].kind in NO_COMMANDS or not _on_npu(order[position], config)):
        position += 1
    return position


def async_order(order: list[Op], config: NpuConfig) -> tuple[list[Op], list[AsyncGroup]]:
    """`order` with each NPU run's group right after it, and the groups: the CPU ops since the
    last group that the run does not need (they wait until it starts) and the CPU ops up to the
    next NPU op that do not need the run. A group never ends the order: the step after it is
    where the NPU's buffers are released. A group's run is a segment of its own
    (`segment_starts`), even where the ops before it are NPU ops too."""
    order = list(order)
    groups: list[AsyncGroup] = []
    free = 0  # ops before this position belong to an earlier group or run
    position = _next_npu_op(order, 0, config)
    while position < len(order):
        end = _run_end(order, position, config)
        run = order[position:end]
        following = _next_npu_op(order, end, config)
        stay, sunk = _sink(order[free:position], run, config)
        group, rest = _hoist(order[end:following], run, config)
        group = sunk + group
        if group and not rest and following == len(order):
            rest = [group.pop()]  # the last op of the order runs after the wait
        order = order[:free] + stay + run + group + rest + order[following:]
        start = free + len(stay)
        if group:
            groups.append(AsyncGroup(tuple(run), tuple(group)))
        free = start + len(run) + len(group)
        position = _next_npu_op(order, free, config)
    return order, groups


def segment_starts(groups: list[AsyncGroup]) -> frozenset[int]:
    """The ops (by id) that must start a segment: each group's first NPU op."""
    return frozenset(id(group.npu[0]) for group in groups)


class AsyncSteps:
    """The plain step view, plus each group's NPU tensors read at the step after the group."""

    def __init__(self, order: list[Op], groups: list[AsyncGroup]) -> None:
        position = {id(op): n for n, op in enumerate(order)}
        self.extra: dict[int, list[Tensor]] = {}
        self.scratch_until: dict[int, int] = {}  # id of a group's NPU op -> the step after the group
        for group in groups:
            after = position[id(group.cpu[-1])] + 1
            self.extra.setdefault(id(order[after]), []).extend(group.npu_tensors)
            self.scratch_until.update((id(op), after) for op in group.npu)

    def reads(self, op: Op) -> list[Tensor | None]:
        return [*op.inputs, *self.extra.get(id(op), [])]

    def writes(self, op: Op) -> list[Tensor]:
        return list(op.outputs)

    def grouped(self, op: Op) -> bool:
        return False

    def scratch(self, op: Op, step: int, scratch_bytes: ScratchBytes) -> tuple[int, int]:
        return OP_STEPS.scratch(op, step, scratch_bytes)

    def add_buffers(self, buffers: list) -> list:
        """An NPU op's scratch (a SOFTMAX's intermediates) lives to the wait, as its tensors."""
        for buffer in buffers:
            if buffer.scratch_of is not None and id(buffer.scratch_of) in self.scratch_until:
                buffer.last = max(buffer.last, self.scratch_until[id(buffer.scratch_of)])
        return buffers


def concurrency_conflicts(npu_ops: tuple[Op, ...], cpu_ops: list[Op], plan: Plan) -> list[str]:
    """Where a CPU op running beside the NPU touches bytes the NPU reads or writes (one line
    each): a different buffer sharing a byte with an NPU buffer, or the same buffer where
    either side writes it."""
    npu_written = {id(t) for op in npu_ops for t in op.outputs}
    npu = [(plan.buffer_of(t), t.name, id(t) in npu_written) for t in AsyncGroup(npu_ops, ()).npu_tensors]
    npu += [(b, f"scratch of op {b.scratch_of.index}", True) for b in plan.buffers
            if b.scratch_of is not None and any(b.scratch_of is o for o in npu_ops)]
    found: list[str] = []
    for op in cpu_ops:
        cpu = [(t, False) for t in op.inputs if t is not None and not t.is_constant]
        cpu += [(t, True) for t in op.outputs]
        cpu_buffers = [(plan.buffer_of(t), t.name, written) for t, written in cpu]
        cpu_buffers += [(b, f"scratch of op {op.index}", True) for b in plan.buffers if b.scratch_of is op]
        for theirs, what, npu_writes in npu:
            for buffer, name, written in cpu_buffers:
                if buffer is theirs:
                    clash = written or npu_writes
                else:
                    clash = buffer.pool == theirs.pool and buffer.overlaps_in_space(theirs)
                if clash:
                    found.append(f"{op.where()} ('{name}') and the NPU's '{what}' share bytes")
    return found


def mark_concurrent(order: list[Op], groups: list[AsyncGroup]) -> None:
    """Each ETHOS_U op of `order` (after lowering) learns how many ops after it are its group's:
    the CPU ops right after it that the plan kept off its buffers."""
    for position, op in enumerate(order):
        if op.kind is not OpKind.ETHOS_U or not isinstance(op.options, NpuSegmentOptions):
            continue
        inside = {id(o) for o in op.options.ops}
        group = next((g for g in groups if any(id(o) in inside for o in g.npu)), None)
        planned = {id(o) for o in group.npu} if group is not None else set()
        views = {id(o) for o in op.options.ops if o.kind in NO_COMMANDS}
        # the plan kept the group's CPU ops off the run's buffers: the segment must be that run
        cpu = {id(o) for o in group.cpu} if group is not None and inside - views <= planned else set()
        count = 0
        while position + 1 + count < len(order) and id(order[position + 1 + count]) in cpu:
            count += 1
        op.options = dataclasses.replace(op.options, concurrent=count)


def check_concurrency(order: list[Op], plan: Plan) -> None:
    """Every ETHOS_U op's concurrent CPU ops keep off its buffers (BuildError otherwise)."""
    for position, op in enumerate(order):
        if op.kind is OpKind.ETHOS_U and isinstance(op.options, NpuSegmentOptions) and op.options.concurrent:
            cpu = order[position + 1: position + 1 + op.options.concurrent]
            conflicts = concurrency_conflicts(op.options.ops, cpu, plan)
            if conflicts:
                raise BuildError(f"--npu-async: {conflicts[0]}")
