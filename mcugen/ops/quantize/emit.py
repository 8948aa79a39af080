"""QUANTIZE and DEQUANTIZE -> mcugen_quantize.c (float) and mcugen_activation.c (int -> int).

Integer requantization (int8/int16 -> int8/int16, int8 <-> uint8) is the activation family's
rescale-and-clamp kernel with the double ratio of the scales (prepare.requantize_params).
"""

from __future__ import annotations

from ...codegen.cnames import c_float
from ...ir import DType, Op
from ..activation.emit import initialiser, rescale_call
from ..base import setting_of
from ..emitting import EmitContext, KernelCall
from .prepare import AffineParams, prepare_dequantize, prepare_quantize

_SHORT = {DType.INT8: "s8", DType.INT16: "s16", DType.UINT8: "u8"}


def _affine_call(op: Op, ctx: EmitContext, p: AffineParams, function: str) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    name = f"affine_params_{op.index}"
    fields = {"scale": c_float(p.scale), "zero_point": p.zero_point}
    return KernelCall(
        declarations=[f"static const mcugen_affine_params {name} = {initialiser(fields)};"],
        calls=[f"{function}(&{name}, {x.num_elements}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime={"mcugen_quantize"},
    )


def emit_quantize(op: Op, ctx: EmitContext) -> KernelCall:
    y = op.outputs[0]
    p = prepare_quantize(op, setting_of(ctx))
    if isinstance(p, AffineParams):  # float32 -> int8 / int16 (the rule dtype_pairs)
        return _affine_call(op, ctx, p, f"mcugen_quantize_f32_{_SHORT[y.dtype]}")
    return rescale_call(op, ctx, p)


def emit_dequantize(op: Op, ctx: EmitContext) -> KernelCall:
    x = op.inputs[0]
    assert x is not None
    p = prepare_dequantize(op, setting_of(ctx))
    return _affine_call(op, ctx, p, f"mcugen_dequantize_{_SHORT[x.dtype]}_f32")
