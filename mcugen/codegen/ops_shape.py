"""Shape-only ops. A RESHAPE is normally an alias (the planner gives its output the input's
bytes and no code is emitted); only a reshaped constant that is a graph output needs a copy."""

from __future__ import annotations

from ..ir import Op, OpKind
from .emit import EmitContext, KernelCall, emitter


@emitter(OpKind.RESHAPE)
def emit_reshape(op: Op, ctx: EmitContext) -> KernelCall:
    source, target = op.inputs[0], op.outputs[0]
    assert source is not None
    return KernelCall(
        calls=[f"mcugen_copy({ctx.ptr(target)}, {ctx.ptr(source)}, {target.nbytes})"],
        runtime={"mcugen_copy"},
    )
