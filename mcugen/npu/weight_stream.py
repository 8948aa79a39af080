"""Weight streaming: a convolution whose weights do not fit SRAM whole runs in OFM depth slices
whose weights flow through two small SRAM slots, as Vela's streams do.

The device streams an op's weights from flash again for every OFM block position (1 byte/cycle),
so a convolution with large weights over a few block positions is bound by flash, and a whole
weight buffer (weight_buffers.py) may not fit under the arena's peak. Split by OFM depth into
slices of `depth` channels, each slice is an NPU operation of its own (its OFM a window of the
whole OFM, with the whole one's strides; its weights and bias/scale entries those of its
channels, lower.py `CommandStream.ofm_slice`), and each slice's blob (weights, then scales) is
copied by DMA into slot k mod 2 (two buffers of the plan) while the slice before runs:

    [before the previous op's kernel, where the buffer is free then: DMA 0 -> slot 0, DMA 1 -> slot 1]
    slice k: KERNEL_WAIT 0 (slice k - 1 is done, its slot is free), DMA k + 1 -> slot (k + 1) mod 2,
             DMA_WAIT 1 (DMA k has ended), the kernel of slice k

so the flash reads of slice k + 1 overlap the kernel of slice k, and every slice reads its
weights once from flash and then per block position from SRAM (8 bytes/cycle). Once the last
slice's DMA is issued, the next op's weight DMAs follow it (beside the last two kernels). Each
slot is a Buffer of no tensor (weights_of = the op, stream_depth = the slice depth), live from the
previous op's step when that is an NPU op (the first two DMAs run beside it) to the op's own; the
planner may put the two in different gaps.

Which ops stream and how deep their slices are (`plan_weight_streams`, `--npu-weights auto`): the
weighted CONV_2D and FULLY_CONNECTED ops outside striped chains that have no whole weight buffer,
each slice depth (with and without the early DMAs) priced by the estimate of the whole order
(`stream_cycles`: the device's timeline for the commands above, estimate.op_cycles per slice)
with the streams chosen so far; ops by their saving alone, largest first, each with the way of
fewest cycles whose re-made plan is no larger than the plan without streams (so streaming never
costs SRAM).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from ..errors import BuildError, PlanningError
from ..ir import Graph, Op, OpKind, Quant, Tensor
from ..memory.liveness import Buffer, ScratchBytes
from ..memory.plan import Plan, plan_memory
from ..memory.pools import PoolSpec
from ..records import dataclass
from .config import NpuConfig
from .estimate import flash_copy_cycles, op_cycles, segment_cycles
from .featuremap import LoweringError, Place, apart
from .lower import Flash
from .memo import memoised, op_id_key
from .overlap import limits_of
from .registers import Cmd0
from .stream import CommandStream
from .weight_dma import WeightBuffer, addressable, emit_weight_dma
from .weights import STREAM_ALIGN

STREAMED = frozenset({OpKind.CONV_2D, OpKind.FULLY_CONNECTED})
MAX_SLICES = 16
SLOTS = 2
NO_COMMANDS = frozenset({OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS})

LowerOp = Callable[[Op, Place, Flash, NpuConfig, CommandStream], None]


def depth_slices(channels: int, depth: int) -> list[tuple[int, int]]:
    """OFM channels [first, stop) of each slice of `depth` channels (the last may be shorter)."""
    return [(first, min(first + depth, channels)) for first in range(0, channels, depth)]


def slice_depths(channels: int, config: NpuConfig) -> list[int]:
    """Slice depths worth trying: 2 to MAX_SLICES slices, each a whole number of OFM micro-blocks."""
    unit = config.ofm_ublock.depth
    per_slice = (-(-channels // count) for count in range(2, MAX_SLICES + 1))
    depths = {-(-channels_each // unit) * unit for channels_each in per_slice}
    return sorted(d for d in depths if 0 < d < channels)


def _out_channels(op: Op) -> int:
    return op.outputs[0].shape[-1]


def _channel_window(tensor: Tensor, first: int, stop: int) -> Tensor:
    """A constant's rows [first, stop) along axis 0 (weights O..., bias O), with its scales."""
    assert tensor.data is not None
    quant = tensor.quant
    if quant is not None and quant.per_channel:
        quant = Quant(quant.scale[first:stop], quant.zero_point[first:stop], quant.axis)
    return dataclasses.replace(tensor, shape=(stop - first, *tensor.shape[1:]), data=tensor.data[first:stop],
                               quant=quant, consumers=[])


def slice_op(op: Op, first: int, stop: int) -> Op:
    """A stand-in for OFM channels [first, stop) of `op`: what one slice's kernel computes."""
    x, w = op.inputs[0], op.inputs[1]
    assert w is not None
    rest = [_channel_window(t, first, stop) if t is not None and t.is_constant else t for t in op.inputs[2:]]
    y = op.outputs[0]
    out = dataclasses.replace(y, shape=(*y.shape[:-1], stop - first), consumers=[], producer=None)
    return dataclasses.replace(op, inputs=[x, _channel_window(w, first, stop), *rest], outputs=[out])


@memoised(lambda op, config, depth, lower_op: op_id_key(op, config, depth, lower_op))
def slice_blobs(op: Op, config: NpuConfig, depth: int, lower_op: LowerOp) -> list[int] | None:
    """The bytes each slice's DMA copies (a trial lowering per slice); None if one does not lower."""
    lengths = []
    for window in depth_slices(_out_channels(op), depth):
        trial = CommandStream()
        trial.weight_buffer, trial.ofm_slice = (1, 0), window
        try:
            lower_op(op, apart(), Flash(), config, trial)
        except LoweringError:
            return None
        if trial.weight_copy is None:
            return None
        lengths.append(trial.weight_copy[1])
    return lengths


def slot_bytes(blobs: Sequence[int]) -> int:
    """One slot's bytes: the largest slice blob, rounded up to 16."""
    return -(-max(blobs) // STREAM_ALIGN) * STREAM_ALIGN


def stream_timeline(kernels: Sequence[int], copies: Sequence[int], beside: int, prefetched: bool) -> tuple[int, int]:
    """The device's timeline (mcugen_npu_cycles.c) for the commands of a streamed op that follows
    a kernel of `beside` cycles issued at 0 (`prefetched`: the first DMAs were issued before that
    kernel): (cycles the op adds after that kernel, the cycles before its end from which the next
    op's DMAs, issued once the last slice's is, have the DMA engine)."""
    command, kernel_end, dma_end = 0, beside, 0
    pending: list[int] = []

    def dma(cycles: int) -> None:
        nonlocal dma_end
        dma_end = max(command, dma_end) + cycles
        pending.append(dma_end)

    if not prefetched:
        command = kernel_end
    for k in range(min(SLOTS, len(copies))):
        dma(copies[k])
    last = len(kernels) - 1
    next_start = 0
    for k, kernel in enumerate(kernels):
        if 1 <= k < last:
            command = max(command, kernel_end)  # KERNEL_WAIT 0
            dma(copies[k + 1])
        while len(pending) > (1 if k < last else 0):  # DMA_WAIT
            command = max(command, pending.pop(0))
        if k == max(0, last - 1):  # the next op's DMAs are issued here (after a KERNEL_WAIT 0), behind ours
            next_start = max(command, dma_end, kernel_end)
        command = max(command, kernel_end)
        kernel_end = command + kernel
    return kernel_end - beside, kernel_end - next_start


def stream_cycles(op: Op, config: NpuConfig, depth: int, blobs: Sequence[int], beside: int,
                  prefetched: bool) -> tuple[int, int]:
    """Estimated (cycles added after the previous kernel, cycles the next op's DMAs run beside it) of `op` streamed in
    slices of `depth` channels whose DMAs copy `blobs` bytes each."""
    return stream_timeline(slice_cycles(op, config, depth), [flash_copy_cycles(b) for b in blobs], beside, prefetched)


@memoised(lambda op, config, depth: op_id_key(op, config, depth))
def slice_cycles(op: Op, config: NpuConfig, depth: int) -> list[int]:
    """Each slice's kernel cycles (its weights in SRAM) of `op` in slices of `depth` channels."""
    return [op_cycles(slice_op(op, first, stop), config, True) for first, stop in depth_slices(_out_channels(op), depth)]


# --- planning --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One way to stream an op: its slice depth, slot bytes, lifetime and estimated saving."""

    op: Op
    depth: int
    slot: int
    first: int  # the step its first DMAs start
    step: int
    saving: int  # estimated, alone
    blobs: tuple[int, ...]  # bytes each slice's DMA copies

    def cycles(self, config: NpuConfig) -> Callable[[int], tuple[int, int]]:
        """estimate.segment_cycles' view of the op streamed this way."""
        def streamed(beside: int) -> tuple[int, int]:
            return stream_cycles(self.op, config, self.depth, self.blobs, beside, self.first < self.step and beside > 0)
        return streamed

    def buffers(self) -> list[Buffer]:
        """Its slots: one buffer each, so that the planner may put them in different gaps."""
        return [Buffer(name=f"npu weight stream of op {self.op.index} slot {n}", size=self.slot, first=self.first,
                       last=self.step, weights_of=self.op, uses=1, stream_depth=self.depth) for n in range(SLOTS)]


def _beside(order: list[Op], step: int, config: NpuConfig) -> int | None:
    """The cycles of the NPU op before step `step` that the first DMAs run beside (None: none)."""
    before = order[step - 1] if step else None
    if before is None or before.backend != "npu" or before.kind in NO_COMMANDS:
        return None
    return op_cycles(before, config)


def options(order: list[Op], plan: Plan, config: NpuConfig, lower_op: LowerOp) -> list[list[Option]]:
    """Per streamable op of `order` (an NPU CONV_2D or FULLY_CONNECTED outside the plan's striped
    chains, without a whole weight buffer), its slice depths that save cycles, most saving first."""
    chained = {id(op) for chain in (plan.tiling.chains if plan.tiling is not None else []) for op in chain.ops}
    chained |= set(limits_of(order, plan))  # an op over its own input: a depth slice would overwrite it
    found = []
    for step, op in enumerate(order):
        if (op.backend != "npu" or op.kind not in STREAMED or id(op) in chained
                or plan.weights_buffer_of(op) is not None or op.inputs[1] is None or not op.inputs[1].is_constant):
            continue
        beside = _beside(order, step, config)
        whole = op_cycles(op, config)
        ways = []
        for depth in slice_depths(_out_channels(op), config):
            blobs = slice_blobs(op, config, depth, lower_op)
            if blobs is None:
                continue
            # the first DMAs beside the previous kernel (the buffer live from its step), or after it
            for prefetched in {beside is not None, False}:
                added, _ = stream_cycles(op, config, depth, blobs, beside or 0, prefetched)
                if whole - added > 0:
                    ways.append(Option(op, depth, slot_bytes(blobs), step - 1 if prefetched else step, step,
                                       whole - added, tuple(blobs)))
        if ways:
            found.append(sorted(ways, key=lambda o: (-o.saving, o.slot)))
    return sorted(found, key=lambda ways: -ways[0].saving)


def order_cycles(order: list[Op], plan: Plan, config: NpuConfig, chosen: Sequence[Option] | None = None,
                 lower_op: LowerOp | None = None) -> int:
    """The estimated NPU cycles of `order` (each run of NPU ops as one segment) with the plan's
    stripes and weight buffers, and the `chosen` streams (None: the plan's, lowered by `lower_op`)."""
    sram = frozenset(id(b.weights_of) for b in plan.buffers if b.weights_of is not None and not b.stream_depth)
    if chosen is None:
        assert lower_op is not None
        streamed = estimates(order, plan, config, lower_op)
    else:
        streamed = {id(o.op): o.cycles(config) for o in chosen}
    total, run, limits = 0, list[Op](), limits_of(order, plan)
    for op in [*order, None]:
        if op is not None and op.backend == "npu":
            run.append(op)
            continue
        total += segment_cycles(tuple(run), config, plan.tiling, sram, streamed, limits) if run else 0
        run = []
    return total


def _kept_buffers(plan: Plan) -> list[Buffer]:
    """The plan's weight buffers (whole or streamed), to place again with new ones."""
    return [dataclasses.replace(b, offset=-1) for b in plan.buffers if b.weights_of is not None]


def plan_weight_streams(graph: Graph, order: list[Op], plan: Plan, policy: str, config: NpuConfig,
                        scratch_bytes: ScratchBytes, pools: Sequence[PoolSpec], guard: int,
                        lower_op: LowerOp, ceiling: int | None = None) -> Plan:
    """`plan` re-made with the weight streams `policy` takes ("auto" only; its tiling, step view
    and weight buffers kept): per op, largest saving first, the slice depth of most saving whose
    plan is no larger than `plan` (or `ceiling`, if larger)."""
    if policy != "auto":
        return plan
    chosen: list[Option] = []
    best, cycles = plan, order_cycles(order, plan, config, [])
    for ways in options(order, plan, config, lower_op):
        # each way by the whole order's estimate with the streams chosen so far (a stream changes
        # what the next op's DMAs run beside)
        priced = sorted((order_cycles(order, plan, config, [*chosen, way]), n, way) for n, way in enumerate(ways))
        for total, _, way in priced:
            if total >= cycles:
                break
            try:
                trial = plan_memory(graph, order, scratch_bytes, pools, guard, tiling=plan.tiling,
                                    extra=[*_kept_buffers(plan), *(b for o in [*chosen, way] for b in o.buffers())],
                                    steps=plan.step_view)
            except PlanningError:
                continue
            if trial.arena_size <= max(plan.arena_size, ceiling or 0) and addressable(trial):
                trial.schedule_exact, trial.async_groups = plan.schedule_exact, plan.async_groups
                best, chosen, cycles = trial, [*chosen, way], total
                break
    return best


# --- the segment's stream --------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightStream:
    """Where one streamed op's slots are ((region, address) each; `slot` bytes each), its slice
    depth, and whether its first DMAs run beside the previous op (its slots are free then)."""

    slots: tuple[tuple[int, int], ...]
    slot: int
    depth: int
    prefetch: bool

    def slot_buffer(self, k: int) -> WeightBuffer:
        region, address = self.slots[k % len(self.slots)]
        return WeightBuffer(region, address, self.prefetch)


def stream_buffers_of(plan: Plan, op: Op) -> list[Buffer]:
    """The plan's weight stream slots of `op`, slot 0 first ([] if it does not stream)."""
    return sorted((b for b in plan.buffers if b.weights_of is op and b.stream_depth), key=lambda b: b.name)


def stream_buffer_of(plan: Plan, op: Op) -> Buffer | None:
    """The plan's first weight stream slot of `op`, if it streams."""
    found = stream_buffers_of(plan, op)
    return found[0] if found else None


def weight_streams(ops: list[Op], plan: Plan, region: Mapping[str, int], number: int) -> dict[int, WeightStream]:
    """Each streamed op of `ops` (id) -> where its slots are."""
    found: dict[int, WeightStream] = {}
    for op in ops:
        slots = stream_buffers_of(plan, op)
        if not slots:
            continue
        if any(b.pool not in region for b in slots):
            raise BuildError(f"NPU segment {number}: a weight stream slot of op {op.index} is in a pool "
                             "which holds none of its tensors")
        first = slots[0]
        found[id(op)] = WeightStream(tuple((region[b.pool], b.offset) for b in slots), first.size,
                                     first.stream_depth, first.first < first.last)
    return found


class StreamedOp:
    """One streamed op's slices as the segment's stream writes them: each slice's blob is in
    `flash` (a trial lowering put it there), so its DMA can be written before its kernel."""

    def __init__(self, op: Op, where: WeightStream, place: Place, flash: Flash, config: NpuConfig,
                 lower_op: LowerOp, lut: tuple[int | None, bool]) -> None:
        self.op, self.where, self.place, self.config, self.lower_op = op, where, place, config, lower_op
        self.lut_slot, self.lut_reserved = lut
        self.windows = depth_slices(_out_channels(op), where.depth)
        self.sources = [self._lowered(k, flash, CommandStream()) for k in range(len(self.windows))]
        self.started = 0  # DMAs issued

    def _lowered(self, k: int, flash: Flash, stream: CommandStream) -> tuple[int, int]:
        """Slice k lowered into `stream` reading slot k mod 2; the blob its DMA copies."""
        slot = self.where.slot_buffer(k)
        stream.weight_buffer, stream.weight_copy, stream.ofm_slice = (slot.region, slot.address), None, self.windows[k]
        stream.lut_slot, stream.lut_reserved = self.lut_slot, self.lut_reserved
        try:
            self.lower_op(self.op, self.place, flash, self.config, stream)
        finally:
            stream.weight_buffer, stream.ofm_slice, stream.lut_slot, stream.lut_reserved = None, None, None, False
        if stream.weight_copy is None or stream.weight_copy[1] > self.where.slot:
            raise LoweringError(f"slice {k}'s weights do not fit the stream's {self.where.slot}-byte slot")
        return stream.weight_copy

    def start_first(self, stream: CommandStream) -> int:
        """The DMAs of the first slices, one per slot (both slots are free before the op); the
        DMAs started."""
        before = self.started
        while self.started < min(SLOTS, len(self.windows)):
            emit_weight_dma(stream, self.sources[self.started], self.where.slot_buffer(self.started))
            self.started += 1
        return self.started - before

    def emit(self, flash: Flash, stream: CommandStream, next_prefetch: Callable[[], int]) -> None:
        """Every slice: the next slice's DMA, the wait for this one's, its kernel. Once the last
        slice's DMA is issued, `next_prefetch` starts the next op's DMAs (behind ours on the DMA
        engine, beside our last two kernels) and says how many, for the last wait."""
        self.start_first(stream)
        last = len(self.windows) - 1
        newer = 0  # the next op's DMAs, issued after all of ours
        for k in range(len(self.windows)):
            if k + 1 < len(self.windows) and self.started == k + 1:
                emit_weight_dma(stream, self.sources[k + 1], self.where.slot_buffer(k + 1))  # KERNEL_WAIT 0 first
                self.started += 1
            # DMA k has ended; the DMAs issued after it may run on
            stream.cmd0(Cmd0.OP_DMA_WAIT, self.started - k - 1 + newer)
            if k == max(0, last - 1):
                newer = next_prefetch()
            if self._lowered(k, flash, stream) != self.sources[k]:
                raise LoweringError(f"slice {k}'s weight stream differs from the one its DMA copied")


def estimates(ops: Sequence[Op], plan: Plan, config: NpuConfig, lower_op: LowerOp) -> dict[int, Callable[[int], tuple[int, int]]]:
    """For estimate.segment_cycles: each streamed op of `ops` (id) -> (cycles beside it before) ->
    (cycles it adds, cycles the next op's DMAs run beside it)."""
    found: dict[int, Callable[[int], tuple[int, int]]] = {}
    for op in ops:
        buffer = stream_buffer_of(plan, op)
        if buffer is None:
            continue
        blobs = slice_blobs(op, config, buffer.stream_depth, lower_op)
        if blobs is None:
            continue

        def cycles(beside: int, op: Op = op, depth: int = buffer.stream_depth, blobs: list[int] = blobs,
                   prefetched: bool = buffer.first < buffer.last) -> tuple[int, int]:
            return stream_cycles(op, config, depth, blobs, beside, prefetched and beside > 0)

        found[id(op)] = cycles
    return found


__all__ = ["LowerOp", "StreamedOp", "WeightStream", "depth_slices", "estimates", "order_cycles", "plan_weight_streams", "slice_op",
           "stream_cycles", "stream_timeline", "weight_streams"]
