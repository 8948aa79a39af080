"""QUANTIZE and DEQUANTIZE -> mcugen_quantize.c (float) and mcugen_activation.c (int -> int).

Integer requantization (int8/int16 -> int8/int16, int8 <-> uint8) is the rescale-and-clamp
kernel with the double ratio of the scales (opparams.activation.requantize_params).
"""

from __future__ import annotations

from ..ir import DType, Op, OpKind
from ..opparams.activation import dequantize_params, quantize_float_params, requantize_params
from .cnames import c_float
from .emit import EmitContext, KernelCall, emitter
from .ops_activation import initialiser, rescale_call, unsupported_dtype

_SHORT = {DType.INT8: "s8", DType.INT16: "s16", DType.UINT8: "u8"}


def _affine_call(op: Op, ctx: EmitContext, scale: float, zero_point: int, function: str) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    name = f"affine_params_{op.index}"
    fields = {"scale": c_float(scale), "zero_point": zero_point}
    return KernelCall(
        declarations=[f"static const mcugen_affine_params {name} = {initialiser(fields)};"],
        calls=[f"{function}(&{name}, {x.num_elements}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime={"mcugen_quantize"},
    )


@emitter(OpKind.QUANTIZE)
def emit_quantize(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    if y.dtype not in _SHORT:
        raise unsupported_dtype(op)
    if x.dtype is DType.FLOAT32:
        if y.dtype is DType.UINT8:  # TFLM quantizes float32 to int8 and int16 only
            raise unsupported_dtype(op)
        p = quantize_float_params(op)
        return _affine_call(op, ctx, p.scale, p.zero_point, f"mcugen_quantize_f32_{_SHORT[y.dtype]}")
    return rescale_call(op, ctx, requantize_params(op, ctx.rounding))


@emitter(OpKind.DEQUANTIZE)
def emit_dequantize(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    if x.dtype not in _SHORT or y.dtype is not DType.FLOAT32:
        raise unsupported_dtype(op)
    p = dequantize_params(op)
    return _affine_call(op, ctx, p.scale, p.zero_point, f"mcugen_dequantize_{_SHORT[x.dtype]}_f32")
