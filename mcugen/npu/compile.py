"""A sequence of IR ops as one NPU command stream: the driver payload and the read-only image.

`lower_ops` lowers each op in order into one stream (ending in NPU_OP_STOP) and collects the
encoded weights and scales of all of them in one read-only image (region 0). Feature maps are
where `place` puts them; the caller's plan decides that. `lowering_error` says why an op does
not lower (mcugen/npu/support.py makes it the last of an op's NPU reasons).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..ir import Op, OpKind, Tensor
from ..memory.tiling import Chain
from .config import NpuConfig
from .featuremap import LoweringError, Place, Placement
from .lower import LOWERINGS, Flash
from .lower_concat import CONCAT_LOWERINGS
from .lower_elementwise import ELEMENTWISE_LOWERINGS
from .lower_lut import LUT_KINDS, LUT_LOWERINGS, load_lut, lut_table
from .lower_reduce import REDUCE_LOWERINGS
from .lower_softmax import SOFTMAX_LOWERINGS
from .stream import CommandStream, write_payload
from .stripes import lower_chain

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


def _fused(op: Op, then: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """`op` writing `then`'s output through `then`'s table (the intermediate never exists)."""
    lut_table(then)  # the table must exist before any command is written
    load_lut(then, flash, config, stream)
    inner, final = op.outputs[0], then.outputs[0]
    stream.lut_slot = 0
    try:
        lower_op(op, lambda t: place(final) if t is inner else place(t), flash, config, stream)
    finally:
        stream.lut_slot = None


def lower_ops(ops: list[Op], place: Place, config: NpuConfig, keep: frozenset[int] = frozenset(),
              striped: Striped | None = None, scratch: Scratch | None = None) -> NpuProgram:
    """`ops` as one command stream for `config`; LoweringError naming the first op that does
    not lower. A LUT op right after the op whose output only it reads runs in that op's output
    stage, unless the output is in `keep` (ids of tensors read outside the stream). The ops
    of a tiled chain (`striped`) run stripe by stripe at the chain's last op. `scratch` says
    where each op's planned scratch is (stream.scratch while it is lowered)."""
    striped = striped or {}
    stream, flash = CommandStream(), Flash()
    operations = 0
    fused: set[int] = set()
    for n, op in enumerate(ops):
        if id(op) in fused:
            continue
        before = len(stream.words)
        then = ops[n + 1] if n + 1 < len(ops) else None
        where = scratch(op) if scratch is not None else None
        stream.scratch = (where.region, where.address) if where is not None else None
        try:
            if id(op) in striped:
                chain, region = striped[id(op)]
                if op is chain.ops[-1]:
                    lower_chain(chain, region, lower_op, place, flash, config, stream)
            elif then is not None and _fusable(op, then, keep):
                _fused(op, then, place, flash, config, stream)
                fused.add(id(then))
            else:
                lower_op(op, place, flash, config, stream)
        except LoweringError as e:
            raise LoweringError(f"{op.where()}: {e}") from None
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


def _anywhere(tensor: Tensor) -> Placement:
    """A placement for trying a lowering: every feature map at region 1, offset 0."""
    if tensor.is_constant:
        raise LoweringError(f"'{tensor.name}' is a constant where the NPU reads a feature map")
    return Placement(1, 0)


def lowering_error(op: Op, config: NpuConfig) -> str | None:
    """Why `op` does not lower for `config` (feature maps placed anywhere), or None."""
    stream = CommandStream()
    stream.scratch = (1, 0)
    try:
        lower_op(op, _anywhere, Flash(), config, stream)
    except LoweringError as error:
        return str(error)
    return None


__all__ = ["NpuProgram", "Placement", "lower_ops", "lowering_error"]
