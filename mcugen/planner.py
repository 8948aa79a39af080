"""Static memory planning: every activation tensor and kernel scratch buffer gets an offset in
one arena, fixed at build time.

Algorithm
---------
1. Buffers. Each non-constant tensor is a buffer; a RESHAPE, SQUEEZE or EXPAND_DIMS output
   shares its input's buffer (an alias: the same bytes under another shape, no copy). Each op
   that needs scratch gets a scratch buffer of its own.
2. Lifetimes, in steps of the execution order: a buffer lives from the step that produces it
   (graph inputs: step 0) to the last step that reads it (graph outputs: one past the last
   step, so they survive `invoke`). Aliased tensors merge their lifetimes. A scratch buffer
   lives only during its op's step.
3. Placement, greedy by size with first fit: buffers in decreasing size (ties: earlier first
   use, then creation order) each take the lowest 16-byte-aligned offset at which they do not
   overlap, in address, any already placed buffer whose lifetime overlaps theirs.
4. The arena size is the highest end offset, rounded up to 16 bytes.

The lower bound printed next to the plan is the largest sum of buffer sizes live at any one
step: no placement of whole tensors in this order can use less. `verify_plan` re-checks the
result (alignment, capacity, no two simultaneously live buffers sharing a byte) and raises
PlanningError on any violation; there is no silent fallback and no slack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .errors import PlanningError
from .ir import Graph, Op, OpKind, Tensor

ALIGNMENT = 16

# Ops whose output is the input's bytes under another shape: planned as one buffer, no code.
ALIAS_KINDS = frozenset({OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS})


def align_up(value: int, alignment: int = ALIGNMENT) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass(eq=False)
class Buffer:
    """A range of arena bytes that one or more aliased tensors (or one op's scratch) occupy."""

    name: str
    size: int
    first: int
    last: int
    tensors: list[Tensor] = field(default_factory=list)
    scratch_of: Optional[Op] = None
    offset: int = -1

    def overlaps_in_time(self, other: "Buffer") -> bool:
        return self.first <= other.last and other.first <= self.last

    def overlaps_in_space(self, other: "Buffer") -> bool:
        return self.offset < other.offset + other.size and other.offset < self.offset + self.size


@dataclass
class Plan:
    buffers: list[Buffer]
    arena_size: int
    lower_bound: int
    steps: int

    def buffer_of(self, tensor: Tensor) -> Buffer:
        for buffer in self.buffers:
            if any(t is tensor for t in buffer.tensors):
                return buffer
        raise KeyError(tensor.name)

    def offset_of(self, tensor: Tensor) -> int:
        return self.buffer_of(tensor).offset

    def scratch_of(self, op: Op) -> Optional[Buffer]:
        for buffer in self.buffers:
            if buffer.scratch_of is op:
                return buffer
        return None


def _alias_root(tensor: Tensor, alias_of: dict[int, Tensor]) -> Tensor:
    while id(tensor) in alias_of:
        tensor = alias_of[id(tensor)]
    return tensor


def collect_buffers(graph: Graph, order: list[Op], scratch_bytes: Callable[[Op], int]) -> list[Buffer]:
    """Buffers with lifetimes for the given execution order."""
    alias_of: dict[int, Tensor] = {}
    for op in order:
        source = op.inputs[0] if op.inputs else None
        if op.kind in ALIAS_KINDS and source is not None and not source.is_constant:
            alias_of[id(op.outputs[0])] = source

    end = len(order)
    by_root: dict[int, Buffer] = {}
    buffers: list[Buffer] = []

    def touch(tensor: Tensor, step: int) -> None:
        root = _alias_root(tensor, alias_of)
        buffer = by_root.get(id(root))
        if buffer is None:
            buffer = Buffer(name=root.name, size=root.nbytes, first=step, last=step)
            by_root[id(root)] = buffer
            buffers.append(buffer)
        buffer.first = min(buffer.first, step)
        buffer.last = max(buffer.last, step)
        if not any(t is tensor for t in buffer.tensors):
            buffer.tensors.append(tensor)

    for tensor in graph.inputs:
        touch(tensor, 0)
    for step, op in enumerate(order):
        for used in [*op.inputs, *op.outputs]:
            if used is not None and not used.is_constant:
                touch(used, step)
        size = scratch_bytes(op)
        if size > 0:
            buffers.append(Buffer(name=f"scratch of op {op.index}", size=size, first=step, last=step, scratch_of=op))
    for tensor in graph.outputs:
        touch(tensor, end)
    return buffers


def lower_bound(buffers: list[Buffer]) -> int:
    """The largest total size of buffers live at one step."""
    if not buffers:
        return 0
    last_step = max(b.last for b in buffers)
    return max(sum(b.size for b in buffers if b.first <= step <= b.last) for step in range(last_step + 1))


def place_greedy_by_size(buffers: list[Buffer]) -> None:
    """Largest first, each at the lowest aligned offset free for its whole lifetime."""
    order = sorted(enumerate(buffers), key=lambda item: (-item[1].size, item[1].first, item[0]))
    placed: list[Buffer] = []
    for _, buffer in order:
        conflicts = sorted((b for b in placed if b.overlaps_in_time(buffer)), key=lambda b: b.offset)
        offset = 0
        for other in conflicts:
            if offset + buffer.size <= other.offset:
                break
            offset = max(offset, align_up(other.offset + other.size))
        buffer.offset = offset
        placed.append(buffer)


def plan_memory(graph: Graph, order: list[Op], scratch_bytes: Callable[[Op], int]) -> Plan:
    buffers = collect_buffers(graph, order, scratch_bytes)
    place_greedy_by_size(buffers)
    arena = align_up(max((b.offset + b.size for b in buffers), default=0))
    plan = Plan(buffers=buffers, arena_size=arena, lower_bound=lower_bound(buffers), steps=len(order))
    verify_plan(plan)
    return plan


def verify_plan(plan: Plan) -> None:
    """Alignment, capacity, and no two buffers live at the same step sharing a byte."""
    for buffer in plan.buffers:
        if buffer.offset < 0 or buffer.offset % ALIGNMENT:
            raise PlanningError(f"buffer '{buffer.name}' at offset {buffer.offset} is not {ALIGNMENT}-byte aligned")
        if buffer.offset + buffer.size > plan.arena_size:
            raise PlanningError(
                f"buffer '{buffer.name}' ends at {buffer.offset + buffer.size}, past the arena of {plan.arena_size}"
            )
    for i, a in enumerate(plan.buffers):
        for b in plan.buffers[i + 1 :]:
            if a.size and b.size and a.overlaps_in_time(b) and a.overlaps_in_space(b):
                raise PlanningError(
                    f"buffers '{a.name}' [{a.offset}, {a.offset + a.size}) and '{b.name}' "
                    f"[{b.offset}, {b.offset + b.size}) overlap while both are live"
                )
