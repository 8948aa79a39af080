"""Shape-only ops: RESHAPE, SQUEEZE, EXPAND_DIMS and SHAPE -> mcugen_copy (mcugen_copy.c).

RESHAPE, SQUEEZE and EXPAND_DIMS are normally aliases (the planner gives the output the input's
bytes and no code is emitted); when the planner cannot alias (a constant input, say) the output
gets a byte copy of the input. SHAPE's output is known at build time: it is written from a
constant in flash (the constant folder usually removes the op before it gets here).
"""

from __future__ import annotations

from ...ir import Op
from ..base import setting_of
from ..emitting import EmitContext, KernelCall
from ..movement.emit import byte_source
from .prepare import prepare_shape


def emit_reshape(op: Op, ctx: EmitContext) -> KernelCall:
    """RESHAPE, SQUEEZE and EXPAND_DIMS: a byte copy (no shape is needed for it)."""
    source, target = op.inputs[0], op.outputs[0]
    assert source is not None
    return KernelCall(
        calls=[f"mcugen_copy({ctx.ptr(target)}, {byte_source(source, ctx)}, {target.nbytes})"],
        runtime={"mcugen_copy"},
    )


def emit_shape(op: Op, ctx: EmitContext) -> KernelCall:
    target = op.outputs[0]
    values = prepare_shape(op, setting_of(ctx))
    constant = ctx.constant(f"shape_{op.index}", values, target.dtype.ctype)
    return KernelCall(
        calls=[f"mcugen_copy({ctx.ptr(target)}, {constant}, {target.nbytes})"],
        runtime={"mcugen_copy"},
    )
