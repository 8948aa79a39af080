"""A sequence of IR ops as one NPU command stream: the driver payload and the read-only image.

`lower_ops` lowers each op in order into one stream (ending in NPU_OP_STOP) and collects the
encoded weights and scales of all of them in one read-only image (region 0). Feature maps are
where `place` puts them; the caller's plan decides that. `lowers` is the temporary "the NPU
takes this op" predicate: the op lowers without error for the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Op, OpKind, Tensor
from .config import NpuConfig
from .featuremap import LoweringError, Place, Placement
from .lower import LOWERINGS, Flash
from .lower_elementwise import ELEMENTWISE_LOWERINGS
from .lower_lut import LUT_LOWERINGS
from .stream import CommandStream, write_payload

NO_COMMANDS = frozenset({OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS})


@dataclass(frozen=True)
class NpuProgram:
    """One segment's payload ('COP1', CONFIG, the command stream) and read-only image."""

    payload: bytes
    flash: bytes
    operations: int  # NPU operation commands in the stream


def lower_ops(ops: list[Op], place: Place, config: NpuConfig) -> NpuProgram:
    """`ops` as one command stream for `config`; LoweringError naming the first op that does
    not lower."""
    stream, flash = CommandStream(), Flash()
    operations = 0
    for op in ops:
        before = len(stream.words)
        try:
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
    lowering = LOWERINGS.get(op.kind) or ELEMENTWISE_LOWERINGS.get(op.kind) or LUT_LOWERINGS.get(op.kind)
    if lowering is None:
        raise LoweringError(f"{op.kind.name} has no NPU lowering")
    lowering(op, place, flash, config, stream)


def _anywhere(tensor: Tensor) -> Placement:
    """A placement for trying a lowering: every feature map at region 1, offset 0."""
    if tensor.is_constant:
        raise LoweringError(f"'{tensor.name}' is a constant where the NPU reads a feature map")
    return Placement(1, 0)


def lowers(op: Op, config: NpuConfig) -> bool:
    """The temporary NPU predicate: `op` lowers for `config` (feature maps placed anywhere)."""
    try:
        lower_op(op, _anywhere, Flash(), config, CommandStream())
    except LoweringError:
        return False
    return True


__all__ = ["NpuProgram", "Placement", "lower_ops", "lowers"]
