"""SOFTMAX -> mcugen_softmax_s8 / mcugen_softmax_s8_s16 (mcugen_softmax.c).

Softmax runs over the last axis of any rank: the C sees rows of the last dimension's size.
The Prepare-time values (input multiplier, left shift, diff_min) come from
mcugen.opparams (the same in both modes).
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import DType, Op, OpKind
from ..opparams import MAX_ROW_SIZE, softmax_params
from .emit import EmitContext, KernelCall, emitter

_FUNCTIONS = {DType.INT8: "mcugen_softmax_s8", DType.INT16: "mcugen_softmax_s8_s16"}


def _check_output(op: Op) -> None:
    """The kernels write value + type minimum: the output zero point must be that minimum."""
    y = op.outputs[0]
    expected = -(1 << (8 * y.dtype.itemsize - 1))
    if y.quant is None or y.quant.single_zero_point != expected:
        zero_point = None if y.quant is None else y.quant.single_zero_point
        raise UnsupportedError(
            f"{op.where()}: the {y.dtype.short} output needs zero point {expected}, got {zero_point}"
        )


@emitter(OpKind.SOFTMAX)
def emit_softmax(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    p = softmax_params(op)
    _check_output(op)
    row_size = x.shape[-1] if x.shape else 1
    if row_size > MAX_ROW_SIZE:
        raise UnsupportedError(f"{op.where()}: rows of {row_size} elements overflow the int32 sum "
                               f"of exponentials (at most {MAX_ROW_SIZE})")
    num_rows = x.num_elements // row_size if row_size else 0
    params = (f"{{ .input_multiplier = {p.input_multiplier}, .input_left_shift = {p.input_left_shift}, "
              f".diff_min = {p.diff_min} }}")
    name = f"softmax_params_{op.index}"
    return KernelCall(
        declarations=[f"static const mcugen_softmax_params {name} = {params};"],
        calls=[f"{_FUNCTIONS[y.dtype]}(&{name}, {num_rows}, {row_size}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime={"mcugen_softmax"},
    )
