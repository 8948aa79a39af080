"""Buffers, lifetimes and the bounds they give: what must be in memory at each step.

Buffers and lifetimes
---------------------
1. Each non-constant tensor is a buffer. A RESHAPE, SQUEEZE or EXPAND_DIMS output shares its
   input's buffer (an alias: the same bytes under another shape, no copy). An op whose kernel
   can run in place (its kind's in_place trait, mcugen/ops: it reads element k of an input before writing
   element k of the output, and never reads element k again) writes its output over an input of
   the same shape and dtype when that input dies at this op: the output joins the input's
   buffer. A CONCATENATION whose inputs are contiguous byte ranges of its output (every
   dimension before the axis is 1), of its dtype and quantization, each read only by it, is
   done by its producers: each input is a view at its byte offset in the output's buffer, and
   the op emits no code (`concat_slices`; the plan is made with and without this, and the
   smaller kept). Each op that needs scratch gets a scratch buffer of its own, a planned tensor
   like any other.
2. Lifetimes, in steps of the execution order: a buffer lives from the step that produces it
   (graph inputs: step 0) to the last step that reads it (graph outputs: one past the last
   step, so they survive `invoke`). A variable's state (stateful models, mcugen/state.py)
   lives from step 0 to one past the last: it keeps its value across invokes, so no other
   buffer ever shares its bytes. Aliased and in-place tensors merge their lifetimes. A scratch
   buffer lives only during its op's step. Two buffers conflict when their lifetimes share a
   step: they must not share a byte.
3. Steps (`StepView`): by default every op is a step of its own (`OP_STEPS`). Tiling (tiling.py)
   is another view: a chain of ops run in stripes is seen as one step, its last op's: its
   external inputs are read and its output written there, its intermediate tensors are no
   buffers at all, one "stripes of ops a..b" buffer holds their stripe slots and one scratch
   buffer (the largest its ops need) serves all its calls. Where the chain's input dies in it,
   its output may share the input's buffer, starting `lag` bytes before it (a view at offset
   lag); the plan is made with and without that sharing, and the smaller kept. This module
   knows the view only through the protocol, never tiling itself.
4. Pinned tensors (Vela-compiled models, `Tensor.pin`): the NPU's command stream addresses its
   IFMs and OFMs at offsets Vela fixed in its scratch area. Each area is one buffer, live for
   the whole invoke, as large as its scratch tensor (or its farthest pinned tensor); every
   tensor pinned in it is a view at its offset. Ops that read or write a pinned tensor merge
   nothing (no alias, in-place or concatenation view), and `check_pinned` holds Vela's offsets
   to this order: two pinned tensors that share a byte are never live at once, but for an IFM
   and an OFM of one ethos-u op (the NPU reads the IFM's bytes before it writes over them).

Bounds
------
`lower_bound` is the largest sum of buffer sizes live at any one step. Of the whole-tensor
buffers of an order, without in-place (`whole_tensor_bound`), it is the liveness bound of that
order: no placement of whole tensors in that order can use less (in-place execution and tiling
can). `file_lower_bound` is the same for TFLite's own order. The scheduler (schedule.py)
minimises exactly this bound, through these functions, so the two never differ.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Protocol

from ..ir import Activation, ConcatenationOptions, Graph, Op, OpKind, Tensor
from ..ops.registry import op_def
from ..records import dataclass
from ..state import state_tensors

ScratchBytes = Callable[[Op], int]


@dataclass(eq=False)
class Buffer:
    """A range of pool bytes that one or more aliased tensors (or one op's scratch) occupy."""

    name: str
    size: int
    first: int
    last: int
    tensors: list[Tensor] = field(default_factory=list)
    scratch_of: Op | None = None
    offset: int = -1
    pool: str = "arena"  # pools.DEFAULT_POOL_NAME; the plan sets it (pools.py imports this module)
    uses: int = 0  # ops that read or write it
    in_place_ops: list[int] = field(default_factory=list)  # op indices writing over it in place
    pad: int = 0  # guard bytes planned after the buffer
    view_offsets: dict[int, int] = field(default_factory=dict)  # id(tensor) -> bytes into the buffer
    concat_ops: list[int] = field(default_factory=list)  # concatenations whose inputs are views here
    # an NPU op's encoded weights and scales, DMA'd here from flash (mcugen/npu/weight_buffers.py)
    weights_of: Op | None = None
    # > 0: the buffer is two slots that the weights of that op's OFM depth slices of this many
    # channels stream through, one slice per slot in turn (mcugen/npu/weight_stream.py)
    stream_depth: int = 0

    @property
    def extent(self) -> int:
        return self.size + self.pad

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last

    def overlaps_in_space(self, other: Buffer) -> bool:
        return self.offset < other.offset + other.extent and other.offset < self.offset + self.extent


class StepView(Protocol):
    """How `collect_buffers` sees the steps of an order: which tensors each op reads and writes
    at its step, which ops run as part of a larger step, where scratch goes, and the buffers the
    view adds of its own."""

    def reads(self, op: Op) -> list[Tensor | None]:
        """The tensors read at `op`'s step ([] if another op's step reads them)."""
        ...

    def writes(self, op: Op) -> list[Tensor]:
        """The tensors written at `op`'s step."""
        ...

    def grouped(self, op: Op) -> bool:
        """`op` runs inside a step of several ops: no alias, in-place or view of its own."""
        ...

    def scratch(self, op: Op, step: int, scratch_bytes: ScratchBytes) -> tuple[int, int]:
        """(step, bytes) of the scratch buffer planned for `op` (0 bytes: none)."""
        ...

    def add_buffers(self, buffers: list[Buffer]) -> list[Buffer]:
        """`buffers` with the view's own buffers added and its merges made (called last)."""
        ...


class OpSteps:
    """The plain view: every op is a step of its own."""

    def reads(self, op: Op) -> list[Tensor | None]:
        return list(op.inputs)

    def writes(self, op: Op) -> list[Tensor]:
        return list(op.outputs)

    def grouped(self, op: Op) -> bool:
        return False

    def scratch(self, op: Op, step: int, scratch_bytes: ScratchBytes) -> tuple[int, int]:
        return step, scratch_bytes(op)

    def add_buffers(self, buffers: list[Buffer]) -> list[Buffer]:
        return buffers


OP_STEPS = OpSteps()


# --- which tensors share a buffer ----------------------------------------------------------


def alias_input(op: Op) -> Tensor | None:
    """The tensor whose buffer `op`'s output shares as an alias (its kind's alias trait), if any."""
    source = op.inputs[0] if op.inputs else None
    if op_def(op.kind).traits.alias and source is not None and not source.is_constant:
        return source
    return None


def _squeezed(shape: Sequence[int]) -> tuple[int, ...]:
    dims = list(shape)
    while dims and dims[0] == 1:
        dims.pop(0)
    return tuple(dims)


def in_place_candidate(op: Op, dead: Callable[[Tensor], bool]) -> Tensor | None:
    """The input `op` may overwrite with its output, if any: same shape and dtype, dying here."""
    if not op_def(op.kind).traits.in_place or len(op.outputs) != 1:
        return None
    out = op.outputs[0]
    for tensor in op.inputs:
        if tensor is None or tensor.is_constant:
            continue
        if tensor.dtype == out.dtype and _squeezed(tensor.shape) == _squeezed(out.shape) and dead(tensor):
            return tensor
    return None


def concat_slices(op: Op, can_view: Callable[[Tensor], bool]) -> list[tuple[Tensor, int]] | None:
    """(input, byte offset in the output) for a concatenation whose producers can write their
    outputs straight into the output: every dimension before the axis is 1 (so each input is
    one contiguous byte range of the output), no activation, and every input distinct, of the
    output's dtype and quantization (the copy would change no byte) and `can_view`."""
    options = op.options
    if op.kind is not OpKind.CONCATENATION or len(op.outputs) != 1 or not isinstance(options, ConcatenationOptions):
        return None
    out = op.outputs[0]
    rank = len(out.shape)
    axis = options.axis + rank if options.axis < 0 else options.axis
    if options.activation is not Activation.NONE or not 0 <= axis < rank or any(d != 1 for d in out.shape[:axis]):
        return None
    slices: list[tuple[Tensor, int]] = []
    start = 0
    for tensor in op.inputs:
        if (tensor is None or tensor.is_constant or any(t is tensor for t, _ in slices) or tensor.dtype != out.dtype
                or tensor.quant != out.quant or not can_view(tensor)):
            return None
        slices.append((tensor, start))
        start += tensor.nbytes
    return slices if start == out.nbytes else None


# --- buffers and lifetimes ---------------------------------------------------------------


def collect_buffers(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes,
                    in_place: bool = True, concat_in_place: bool = False,
                    steps: StepView = OP_STEPS) -> list[Buffer]:
    """Buffers with lifetimes for the given execution order, its steps as `steps` sees them."""
    end = len(order)
    last_use: dict[int, int] = {}
    readers: dict[int, int] = {}
    reads = [steps.reads(op) for op in order]  # read twice below: a tiled view makes each list
    for step, read in enumerate(reads):
        for used in read:
            if used is not None and not used.is_constant:
                last_use[id(used)] = step
                readers[id(used)] = readers.get(id(used), 0) + 1
    for tensor in [*graph.outputs, *state_tensors(graph)]:
        last_use[id(tensor)] = end
    produced = {id(t) for op in order for t in op.outputs}

    parent: dict[int, Tensor] = {}
    members_last: dict[int, int] = {}  # id(root) -> last use over the tensors merged into it
    in_place_at: dict[int, list[int]] = {}
    view_delta: dict[int, int] = {}
    concat_at: dict[int, list[int]] = {}

    def read_only_at(tensor: Tensor, step: int) -> bool:
        return id(tensor) in produced and readers.get(id(tensor)) == 1 and last_use.get(id(tensor)) == step

    # Tensors a concatenation may take as views: their producers do not run in place, so that
    # they stay buffers of their own until the concatenation claims them.
    reserved: set[int] = set()
    for step, op in enumerate(order if concat_in_place else []):
        for tensor, _ in concat_slices(op, functools.partial(read_only_at, step=step)) or []:
            reserved.add(id(tensor))

    def root(tensor: Tensor) -> Tensor:
        while id(tensor) in parent:
            tensor = parent[id(tensor)]
        return tensor

    def offset_in_root(tensor: Tensor) -> int:
        """Bytes from the root's start: views of views (nested concatenations) add up."""
        start = 0
        while id(tensor) in parent:
            start += view_delta.get(id(tensor), 0)
            tensor = parent[id(tensor)]
        return start

    def join(tensor: Tensor, into: Tensor) -> None:
        base = root(into)
        parent[id(tensor)] = base
        members_last[id(base)] = max(members_last.get(id(base), last_use.get(id(base), -1)),
                                     last_use.get(id(tensor), -1))

    for step, op in enumerate(order):
        if steps.grouped(op) or touches_pinned(op):
            continue
        source = alias_input(op)
        if source is not None:
            join(op.outputs[0], source)
            continue
        if not in_place:
            continue
        if concat_in_place:

            def only_here(tensor: Tensor, step: int = step) -> bool:
                return id(tensor) not in parent and read_only_at(tensor, step)

            slices = concat_slices(op, only_here)
            if slices is not None:
                for tensor, start in slices:
                    join(tensor, op.outputs[0])
                    view_delta[id(tensor)] = start
                concat_at.setdefault(id(op.outputs[0]), []).append(op.index)
                continue

        def dead(tensor: Tensor, step: int = step) -> bool:
            base = root(tensor)
            return members_last.get(id(base), last_use.get(id(base), -1)) == step and base.nbytes == tensor.nbytes

        overwritten = in_place_candidate(op, dead)
        if overwritten is not None and id(op.outputs[0]) not in reserved:
            join(op.outputs[0], overwritten)
            in_place_at.setdefault(id(root(overwritten)), []).append(op.index)

    by_root: dict[int, Buffer] = {}
    buffers: list[Buffer] = []
    # id(root) -> the last step its buffer's uses counted: steps below `end` come in order
    # (inputs and state at 0, then op by op), so a buffer counts each step once
    counted: dict[int, int] = {}
    placed: set[int] = set()  # id(tensor) already in its root's buffer's tensors

    areas: dict[str, Buffer] = {}

    def touch(tensor: Tensor, step: int) -> None:  # the search's inner loop: root() inlined
        if tensor.pin is not None:
            _touch_pinned(areas, buffers, tensor, end)
            if step < end:
                areas[tensor.pin.area].uses += 1
            return
        base = tensor
        while id(base) in parent:
            base = parent[id(base)]
        key = id(base)
        buffer = by_root.get(key)
        if buffer is None:
            buffer = Buffer(name=base.name, size=base.nbytes, first=step, last=step,
                            in_place_ops=in_place_at.get(key, []))
            by_root[key] = buffer
            buffers.append(buffer)
        elif step < buffer.first:
            buffer.first = step
        elif step > buffer.last:
            buffer.last = step
        if id(tensor) not in placed:
            placed.add(id(tensor))
            buffer.tensors.append(tensor)
            buffer.concat_ops.extend(concat_at.get(id(tensor), []))  # nested ones too
            start = offset_in_root(tensor)
            if start:
                buffer.view_offsets[id(tensor)] = start
        if step < end and counted.get(key) != step:
            counted[key] = step
            buffer.uses += 1

    for tensor in graph.tensors:
        if tensor.pin is not None:  # the areas themselves, which no op reads as an input
            _touch_pinned(areas, buffers, tensor, end)
    for tensor in graph.inputs:
        touch(tensor, 0)
    for tensor in state_tensors(graph):  # kept across invokes: no other buffer ever has its bytes
        touch(tensor, 0)
        touch(tensor, end)
    for step, op in enumerate(order):
        for used in [*reads[step], *steps.writes(op)]:
            if used is not None and not used.is_constant:
                touch(used, step)
        at, size = steps.scratch(op, step, scratch_bytes)
        if size > 0:
            buffers.append(Buffer(name=f"scratch of op {op.index}", size=size, first=at, last=at,
                                  scratch_of=op, uses=1))
    for tensor in graph.outputs:
        touch(tensor, end)
    return steps.add_buffers(buffers)


def touches_pinned(op: Op) -> bool:
    """Whether the op reads or writes a tensor at an offset Vela fixed."""
    return any(t is not None and t.pin is not None for t in [*op.inputs, *op.outputs])


def _touch_pinned(areas: dict[str, Buffer], buffers: list[Buffer], tensor: Tensor, end: int) -> None:
    """Add a pinned tensor to its area's buffer (made on first use), which lives all invoke."""
    assert tensor.pin is not None
    area = areas.get(tensor.pin.area)
    if area is None:
        area = Buffer(name=f"npu {tensor.pin.area} area", size=0, first=0, last=end)
        areas[tensor.pin.area] = area
        buffers.append(area)
    if not any(t is tensor for t in area.tensors):
        area.tensors.append(tensor)
        area.size = max(area.size, tensor.pin.offset + tensor.nbytes)
        if tensor.pin.offset:
            area.view_offsets[id(tensor)] = tensor.pin.offset


def check_pinned(graph: Graph, order: list[Op]) -> str | None:
    """None if no two pinned tensors that share a byte of their area are live at one step of
    `order` (Vela's offsets hold for it), else the first such pair. Areas themselves (offset 0,
    read by no op) are the memory, not values, and are left out."""
    end = len(order)
    first: dict[int, int] = {id(t): 0 for t in graph.inputs}
    last: dict[int, int] = {id(t): end for t in graph.outputs}
    for step, op in enumerate(order):
        for tensor in op.outputs:
            first.setdefault(id(tensor), step)
        for read in op.inputs:
            if read is not None:
                last[id(read)] = max(last.get(id(read), step), step)
    pinned = [t for t in graph.tensors if t.pin is not None and id(t) in first]
    for i, a in enumerate(pinned):
        for b in pinned[i + 1:]:
            assert a.pin is not None and b.pin is not None
            if a.pin.area != b.pin.area:
                continue
            space = a.pin.offset < b.pin.offset + b.nbytes and b.pin.offset < a.pin.offset + a.nbytes
            a_last, b_last = last.get(id(a), first[id(a)]), last.get(id(b), first[id(b)])
            time = first[id(a)] <= b_last and first[id(b)] <= a_last
            if space and time and not _handed_over(a, b, order, first, last):
                return (f"'{a.name}' [{a.pin.offset}, {a.pin.offset + a.nbytes}) and '{b.name}' "
                        f"[{b.pin.offset}, {b.pin.offset + b.nbytes}) of the {a.pin.area} area are live at once")
    return None


def _handed_over(a: Tensor, b: Tensor, order: list[Op], first: dict[int, int], last: dict[int, int]) -> bool:
    """Whether the two share only the step of an ethos-u op that reads one and writes the other:
    inside its NPU subgraph Vela orders the reads of an IFM before the writes over its bytes."""
    for read, written in ((a, b), (b, a)):
        step = first[id(written)]
        if last.get(id(read), first[id(read)]) == step and step < len(order):
            op = order[step]
            if (op.kind is OpKind.ETHOS_U and any(t is read for t in op.inputs)
                    and any(t is written for t in op.outputs)):
                return True
    return False


# --- bounds ----------------------------------------------------------------------------------


def live_by_step(buffers: Sequence[Buffer]) -> list[int]:
    """Bytes live at each step, 0 .. the last step of any buffer."""
    if not buffers:
        return []
    totals = [0] * (max(b.last for b in buffers) + 1)
    for buffer in buffers:
        for step in range(buffer.first, buffer.last + 1):
            totals[step] += buffer.size
    return totals


def lower_bound(buffers: Sequence[Buffer]) -> int:
    """The largest total size of buffers live at one step."""
    return max(live_by_step(buffers), default=0)


def peak_step(buffers: Sequence[Buffer]) -> int:
    totals = live_by_step(buffers)
    return totals.index(max(totals)) if totals else 0


def whole_tensor_bound(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes) -> int:
    """The whole-tensor liveness bound of `order`: its buffers without in-place, at their peak."""
    return lower_bound(collect_buffers(graph, order, scratch_bytes, in_place=False))


def file_lower_bound(graph: Graph, scratch_bytes: ScratchBytes) -> int:
    """The whole-tensor liveness bound of TFLite's own order (the file's)."""
    return whole_tensor_bound(graph, list(graph.ops), scratch_bytes)
