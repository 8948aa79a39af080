"""A sequence of IR ops as one NPU command stream: the driver payload and the read-only image.

`lower_ops` lowers each op in order into one stream (ending in NPU_OP_STOP) and collects the
encoded weights and scales of all of them in one read-only image (region 0). Feature maps are
where `place` puts them; the caller's plan decides that. `lowering_error` says why an op does
not lower (mcugen/npu/support.py makes it the last of an op's NPU reasons).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

from ..ir import Op, OpKind, Tensor
from ..memory.tiling import Chain
from ..records import dataclass
from .config import NpuConfig
from .featuremap import LoweringError, Place, Placement, apart
from .lower import LOWERINGS, Flash
from .lower_concat import CONCAT_LOWERINGS
from .lower_elementwise import ELEMENTWISE_LOWERINGS
from .lower_lut import LUT_KINDS, LUT_LOWERINGS, load_lut, lut_table
from .lower_reduce import REDUCE_LOWERINGS
from .lower_softmax import SOFTMAX_LOWERINGS
from .lut_prefetch import emit_table_prefetch, table_prefetches
from .stream import CommandStream, write_payload
from .stripes import LowerOp, first_call, lower_chain
from .weight_dma import WeightBuffer, emit_dma_wait, emit_weight_dma
from .weight_stream import StreamedOp, WeightStream

# id of every op in a tiled chain -> its chain and where the chain's stripe region is
Striped = Mapping[int, tuple[Chain, Placement]]

NO_COMMANDS = frozenset({OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS})
# op -> where its planned scratch starts (None: it has none)
Scratch = Callable[[Op], Placement | None]
# programs of several operations, whose last output stage cannot take a LUT op's table
NOT_FUSABLE = frozenset({OpKind.SOFTMAX})


@dataclass(frozen=True)
class NpuProgram:
    """One segment's payload ('COP1', CONFIG, the command stream) and read-only image."""

    payload: bytes
    flash: bytes
    operations: int  # NPU operation commands in the stream


def _fusable(op: Op, then: Op | None, keep: frozenset[int]) -> bool:
    """Whether LUT op `then` can run in `op`'s output stage: it alone reads `op`'s int8 output,
    which nothing outside the stream needs (`keep`: ids of such tensors)."""
    if (then is None or then.kind not in LUT_KINDS or op.kind in LUT_KINDS or op.kind in NO_COMMANDS
            or op.kind in NOT_FUSABLE):
        return False
    out = op.outputs[0]
    return (len(op.outputs) == 1 and then.inputs[0] is out and out.dtype.short == "int8"
            and [id(c) for c in out.consumers] == [id(then)] and id(out) not in keep)


def _fusions(ops: list[Op], keep: frozenset[int], striped: Striped) -> dict[int, Op]:
    """id(op) -> the LUT op that runs in its output stage (see lower_ops)."""
    fused: dict[int, Op] = {}
    inner: set[int] = set()
    for op, then in itertools.pairwise(ops):
        if id(op) not in inner and id(op) not in striped and _fusable(op, then, keep):
            fused[id(op)] = then
            inner.add(id(then))
    return fused


def _fused(op: Op, then: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """`op` writing `then`'s output through `then`'s table (the intermediate never exists)."""
    lut_table(then)  # the table must exist before any command is written
    load_lut(then, flash, config, stream)
    stream.lut_slot = 0
    try:
        lower_op(op, _through(op, then, place), flash, config, stream)
    finally:
        stream.lut_slot = None


def _through(op: Op, then: Op, place: Place) -> Place:
    """`place`, with `op`'s output where `then`'s is (a LUT op fused into `op`)."""
    inner, final = op.outputs[0], then.outputs[0]
    return lambda t: place(final) if t is inner else place(t)


def _copy_source(op: Op, then: Op | None, place: Place, flash: Flash, config: NpuConfig,
                 buffer: WeightBuffer, lut_reserved: bool) -> tuple[int, int]:
    """(flash address, bytes) of the blob `op`'s weight DMA copies into `buffer`: a trial
    lowering as the stream will lower it (through `then`'s LUT if fused) adds it to `flash`."""
    trial = CommandStream()
    trial.weight_buffer, trial.lut_slot = (buffer.region, buffer.address), None if then is None else 0
    trial.lut_reserved = lut_reserved
    lower_op(op, place if then is None else _through(op, then, place), flash, config, trial)
    if trial.weight_copy is None:
        raise LoweringError("a weight buffer for an op without weights")
    return trial.weight_copy


class _WeightCopies:
    """The weight DMAs of one stream: which ops have a buffer and which copies have started."""

    def __init__(self, buffers: Mapping[int, WeightBuffer], fused: Mapping[int, Op], place: Place, flash: Flash,
                 config: NpuConfig, streams: Mapping[int, WeightStream],
                 calls: Mapping[int, tuple[Op, Place]] | None = None) -> None:
        self.buffers, self.fused, self.place, self.flash, self.config = buffers, fused, place, flash, config
        self.calls = calls or {}  # id(op) -> its first stripe's call, for an op of a tiled chain
        self.started: dict[int, tuple[int, int]] = {}  # id(op) -> the (flash address, bytes) copied
        self.lut_reserved: frozenset[int] = frozenset()  # ids of ops lowered with the LUT's banks left alone
        self.streams = streams
        self.streamed: dict[int, StreamedOp] = {}  # id(op) -> its slices, once their blobs are known

    def stream_of(self, op: Op) -> StreamedOp:
        """`op`'s slices (weight_stream.py), lowered as the stream will lower them."""
        if id(op) not in self.streamed:
            then = self.fused.get(id(op))
            self.streamed[id(op)] = StreamedOp(op, self.streams[id(op)],
                                               self.place if then is None else _through(op, then, self.place),
                                               self.flash, self.config, lower_op,
                                               (None if then is None else 0, id(op) in self.lut_reserved))
        return self.streamed[id(op)]

    def run_streamed(self, op: Op, after: Op | None, stream: CommandStream) -> None:
        """A streamed op's slices, the next op's prefetch before the last one."""
        then = self.fused.get(id(op))
        if then is not None:
            lut_table(then)
            load_lut(then, self.flash, self.config, stream)
        self.stream_of(op).emit(self.flash, stream, lambda: self.prefetch(op, after, stream))

    def start(self, op: Op, stream: CommandStream) -> int:
        """The DMA of `op`'s weights, unless it has started; the DMAs started (0 or 1)."""
        if id(op) in self.buffers and id(op) not in self.started:
            call, place = self.calls.get(id(op), (op, self.place))  # a chain's op: every call reads one blob
            source = _copy_source(call, self.fused.get(id(op)), place, self.flash, self.config, self.buffers[id(op)],
                                  id(op) in self.lut_reserved)
            emit_weight_dma(stream, source, self.buffers[id(op)])
            self.started[id(op)] = source
            return 1
        return 0

    def before_kernel(self, op: Op, after: Op | None, stream: CommandStream) -> None:
        """Before `op`'s kernel: its weights copied and waited for; then the copy for `after` (the
        op lowered next, if no LUT is fused into `op`) where its buffer is already free."""
        if id(op) in self.buffers:
            self.start(op, stream)
            emit_dma_wait(stream)
        self.prefetch(op, after, stream)

    def prefetch(self, op: Op, after: Op | None, stream: CommandStream) -> int:
        """The copy for `after` beside `op`'s kernel, where its buffer is already free; the DMAs
        started."""
        if after is None or id(op) in self.fused:
            return 0
        if id(after) in self.buffers and self.buffers[id(after)].prefetch:
            return self.start(after, stream)
        if id(after) in self.streams and self.streams[id(after)].prefetch:
            return self.stream_of(after).start_first(stream)
        return 0

    def check(self, op: Op, stream: CommandStream) -> None:
        """The op was lowered reading the blob its DMA copied (the trial lowering matched)."""
        if id(op) in self.buffers and stream.weight_copy != self.started.get(id(op)):
            raise LoweringError("its weight stream differs from the one copied into its buffer")

    def buffer(self, op: Op) -> tuple[int, int] | None:
        found = self.buffers.get(id(op))
        return None if found is None else (found.region, found.address)

    def chain_lowering(self, chain: Chain) -> LowerOp:
        """lower_op for the calls of `chain`: an op with a buffer reads every call's weights there,
        the blob its DMA copied (the calls' blobs are equal: npu/chain_room.py chose so)."""
        if any(id(op) in self.buffers for op in chain.ops[:-1]):
            raise LoweringError("a weight buffer for an op of a tiled chain other than its last")
        buffered = {op.index: op for op in chain.ops if id(op) in self.buffers}

        def lower(call: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
            op = buffered.get(call.index)
            stream.weight_buffer, stream.weight_copy = (self.buffer(op) if op is not None else None), None
            try:
                lower_op(call, place, flash, config, stream)
            finally:
                stream.weight_buffer = None
            if op is not None:
                self.check(op, stream)

        return lower


def lower_ops(ops: list[Op], place: Place, config: NpuConfig, keep: frozenset[int] = frozenset(),
              striped: Striped | None = None, scratch: Scratch | None = None,
              weights: Mapping[int, WeightBuffer] | None = None,
              streams: Mapping[int, WeightStream] | None = None) -> NpuProgram:
    """`ops` as one command stream for `config`; LoweringError naming the first op that does
    not lower. A LUT op right after the op whose output only it reads runs in that op's output
    stage, unless the output is in `keep` (ids of tensors read outside the stream). The ops
    of a tiled chain (`striped`) run stripe by stripe at the chain's last op. `scratch` says
    where each op's planned scratch is (stream.scratch while it is lowered). An op in `weights`
    reads its weights and scales from that SRAM buffer, copied there by DMA (weight_dma.py); an
    op in `streams` runs in OFM depth slices whose weights stream through two slots (weight_stream.py)."""
    striped = striped or {}
    stream, flash = CommandStream(), Flash()
    fused = _fusions(ops, keep, striped)
    weights = weights or {}
    calls = {id(op): first_call(chain, next(j for j, o in enumerate(chain.ops) if o is op), place, region)
             for op in ops if id(op) in weights and id(op) in striped for chain, region in [striped[id(op)]]}
    copies = _WeightCopies(weights, fused, place, flash, config, streams or {}, calls)
    inner = {id(then) for then in fused.values()}
    prefetches = table_prefetches(ops, fused, inner, striped, config)
    copies.lut_reserved = frozenset(i for p in prefetches.values() for i in p.reserved)
    operations = 0
    for n, op in enumerate(ops):
        if id(op) in inner:
            continue
        before = len(stream.words)
        then = fused.get(id(op))
        after = ops[n + 1] if n + 1 < len(ops) else None
        where = scratch(op) if scratch is not None else None
        stream.scratch = (where.region, where.address) if where is not None else None
        try:
            if id(op) in striped:
                chain, region = striped[id(op)]
                if op is chain.ops[-1]:
                    copies.before_kernel(op, after, stream)
                    lower_chain(chain, region, copies.chain_lowering(chain), place, flash, config, stream)
            elif id(op) in copies.streams:
                if id(op) in prefetches:
                    emit_table_prefetch(prefetches[id(op)], flash, config, stream)
                copies.run_streamed(op, after, stream)
            else:
                copies.before_kernel(op, after, stream)
                if id(op) in prefetches:
                    emit_table_prefetch(prefetches[id(op)], flash, config, stream)
                stream.lut_reserved = id(op) in copies.lut_reserved
                stream.weight_buffer, stream.weight_copy = copies.buffer(op), None
                if then is not None:
                    _fused(op, then, place, flash, config, stream)
                else:
                    lower_op(op, place, flash, config, stream)
                copies.check(op, stream)
        except LoweringError as e:
            raise LoweringError(f"{op.where()}: {e}") from None
        finally:
            stream.weight_buffer, stream.lut_reserved = None, False
        operations += len(stream.words) != before
    stream.stop()
    return NpuProgram(write_payload(stream, config), bytes(flash.data) or bytes(16), operations)


def lower_op(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """One op's commands appended to `stream` (none for a RESHAPE whose input and output
    share their bytes)."""
    if op.kind in NO_COMMANDS:
        if place(op.inputs[0]) != place(op.outputs[0]):  # type: ignore[arg-type]
            raise LoweringError("a reshape whose input and output are not the same bytes")
        return
    lowering = (LOWERINGS.get(op.kind) or ELEMENTWISE_LOWERINGS.get(op.kind) or LUT_LOWERINGS.get(op.kind)
                or REDUCE_LOWERINGS.get(op.kind) or CONCAT_LOWERINGS.get(op.kind) or SOFTMAX_LOWERINGS.get(op.kind))
    if lowering is None:
        raise LoweringError(f"{op.kind.name} has no NPU lowering")
    lowering(op, place, flash, config, stream)


def _anywhere(op: Op) -> Callable[[Tensor], Placement]:
    """Placements for trying `op`'s lowering: every feature map its own bytes in region 1, but a
    view's output its input's (the planner gives a RESHAPE's output its input's bytes)."""
    place = apart()

    def anywhere(tensor: Tensor) -> Placement:
        if tensor.is_constant:
            raise LoweringError(f"'{tensor.name}' is a constant where the NPU reads a feature map")
        if op.kind in NO_COMMANDS and tensor is op.outputs[0] and op.inputs[0] is not None:
            return place(op.inputs[0])
        return place(tensor)

    return anywhere


def lowering_error(op: Op, config: NpuConfig) -> str | None:
    """Why `op` does not lower for `config` (feature maps placed anywhere), or None."""
    stream = CommandStream()
    stream.scratch = (1, 0)
    try:
        lower_op(op, _anywhere(op), Flash(), config, stream)
    except LoweringError as error:
        return str(error)
    return None


__all__ = ["NpuProgram", "Placement", "lower_ops", "lowering_error"]
