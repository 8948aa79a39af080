"""LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU, RSQRT, NEG, ABS -> mcugen_activation.c.

Every op is element-wise over the flat tensor. Prepare-time values come from
mcugen.opparams.activation; per mode, int8 LOGISTIC/TANH are computed in gemmlowp fixed point
(TFLM) or looked up in LiteRT's float-built table (placed in flash), and int16 RSQRT is computed
per element (TFLM) or interpolated in LiteRT's float-built table; int16 LOGISTIC/TANH
interpolate TFLite's sigmoid table (in flash).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import UnsupportedError
from ..ir import DType, LeakyReluOptions, Op, OpKind
from ..opparams.activation import (
    SIGMOID_TABLE_UINT16,
    RescaleParams,
    abs_params,
    fixed_point_sigmoid_params,
    hard_swish_params,
    int16_sigmoid_params,
    leaky_relu_params,
    litert_rsqrt_lut16,
    litert_sigmoid_lut,
    relu_params,
    rsqrt_params,
)
from ..quantization import Rounding
from .cnames import c_float
from .emit import EmitContext, KernelCall, emitter

RUNTIME = {"mcugen_activation", "mcugen_softmax"}  # the gemmlowp exp is in mcugen_softmax.c


def initialiser(fields: Mapping[str, object]) -> str:
    """A C designated initialiser; nested mappings become nested structs."""

    def value(v: object) -> str:
        if isinstance(v, Mapping):
            return initialiser(v)
        if isinstance(v, bool):
            return "1" if v else "0"
        return str(v)

    return "{ " + ", ".join(f".{name} = {value(v)}" for name, v in fields.items()) + " }"


def _short(dtype: DType) -> str:
    return {DType.INT8: "s8", DType.UINT8: "u8", DType.INT16: "s16", DType.FLOAT32: "f32"}[dtype]


# (input, output) dtypes of the mcugen_pointwise_rescale_* kernels.
RESCALE_PAIRS = {(DType.INT8, DType.INT8), (DType.INT8, DType.INT16), (DType.INT16, DType.INT8),
                 (DType.INT16, DType.INT16), (DType.INT8, DType.UINT8), (DType.UINT8, DType.INT8)}


def unsupported_dtype(op: Op) -> UnsupportedError:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    return UnsupportedError(f"{op.where()}: no kernel for {x.dtype.short} -> {y.dtype.short}")


def params_call(op: Op, ctx: EmitContext, struct: str, fields: Mapping[str, object],
                function: str, extra: str = "") -> KernelCall:
    """One `static const` params struct and one element-wise call over the flat tensor."""
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    name = f"{struct.removeprefix('mcugen_')}_{op.index}"
    return KernelCall(
        declarations=[f"static const {struct} {name} = {initialiser(fields)};"],
        calls=[f"{function}(&{name}, {extra}{x.num_elements}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime=set(RUNTIME),
    )


def float_call(op: Op, ctx: EmitContext, function: str, extra: str = "") -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    return KernelCall(calls=[f"{function}({extra}{x.num_elements}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
                      runtime=set(RUNTIME))


def rescale_call(op: Op, ctx: EmitContext, p: RescaleParams) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    if (x.dtype, y.dtype) not in RESCALE_PAIRS:
        raise unsupported_dtype(op)
    fields = {
        "input_offset": p.input_offset, "output_offset": p.output_offset,
        "positive_multiplier": p.positive_multiplier, "positive_shift": p.positive_shift,
        "negative_multiplier": p.negative_multiplier, "negative_shift": p.negative_shift,
        "negate_negative": p.negate_negative, "absolute": p.absolute, "identity": p.identity,
        "activation": {"min": p.activation_min, "max": p.activation_max},
    }
    function = f"mcugen_pointwise_rescale_{_short(x.dtype)}_{_short(y.dtype)}"
    return params_call(op, ctx, "mcugen_pointwise_rescale_params", fields, function)


@emitter(OpKind.LOGISTIC)
@emitter(OpKind.TANH)
def emit_sigmoid(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    stem = "logistic" if op.kind is OpKind.LOGISTIC else "tanh"
    if y.dtype is DType.FLOAT32:
        return float_call(op, ctx, f"mcugen_{stem}_f32")
    if y.dtype is DType.INT16:
        p16 = int16_sigmoid_params(op)
        table = ctx.constant("sigmoid_table_uint16", SIGMOID_TABLE_UINT16, "uint16_t")
        fields = {"input_multiplier": p16.input_multiplier, "input_right_shift": p16.input_right_shift}
        return params_call(op, ctx, "mcugen_sigmoid_s16_params", fields, f"mcugen_{stem}_s16",
                           extra=f"{table}, ")
    if y.dtype is not DType.INT8:
        raise unsupported_dtype(op)
    if ctx.rounding is Rounding.LITERT:
        table = ctx.constant(f"{stem}_lut", litert_sigmoid_lut(op), "int8_t")
        return KernelCall(
            calls=[f"mcugen_lut_s8_s8({table}, {x.num_elements}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
            runtime=set(RUNTIME))
    p = fixed_point_sigmoid_params(op)
    fields = {"input_zero_point": p.input_zero_point, "input_multiplier": p.input_multiplier,
              "input_left_shift": p.input_left_shift, "input_range_radius": p.input_range_radius}
    return params_call(op, ctx, "mcugen_sigmoid_s8_params", fields, f"mcugen_{stem}_s8")


@emitter(OpKind.HARD_SWISH)
def emit_hard_swish(op: Op, ctx: EmitContext) -> KernelCall:
    y = op.outputs[0]
    if y.dtype is DType.FLOAT32:
        return float_call(op, ctx, "mcugen_hard_swish_f32")
    if y.dtype is not DType.INT8:
        raise unsupported_dtype(op)
    p = hard_swish_params(op)
    fields = {"input_zero_point": p.input_zero_point, "output_zero_point": p.output_zero_point,
              "reluish_multiplier": p.reluish_multiplier, "reluish_exponent": p.reluish_exponent,
              "output_multiplier": p.output_multiplier, "output_exponent": p.output_exponent}
    return params_call(op, ctx, "mcugen_hard_swish_params", fields, "mcugen_hard_swish_s8")


@emitter(OpKind.RELU)
@emitter(OpKind.RELU6)
@emitter(OpKind.LEAKY_RELU)
def emit_relu(op: Op, ctx: EmitContext) -> KernelCall:
    y = op.outputs[0]
    if y.dtype is DType.FLOAT32:
        if op.kind is OpKind.LEAKY_RELU:
            assert isinstance(op.options, LeakyReluOptions)
            return float_call(op, ctx, "mcugen_leaky_relu_f32", extra=f"{c_float(op.options.alpha)}, ")
        return float_call(op, ctx, f"mcugen_{op.kind.name.lower()}_f32")
    if op.kind is OpKind.LEAKY_RELU:
        return rescale_call(op, ctx, leaky_relu_params(op, ctx.rounding))
    return rescale_call(op, ctx, relu_params(op, ctx.rounding))


@emitter(OpKind.ABS)
def emit_abs(op: Op, ctx: EmitContext) -> KernelCall:
    if op.outputs[0].dtype is DType.FLOAT32:
        return float_call(op, ctx, "mcugen_abs_f32")
    return rescale_call(op, ctx, abs_params(op, ctx.rounding))


@emitter(OpKind.NEG)
def emit_neg(op: Op, ctx: EmitContext) -> KernelCall:
    if op.outputs[0].dtype is not DType.FLOAT32:
        raise unsupported_dtype(op)
    return float_call(op, ctx, "mcugen_neg_f32")


@emitter(OpKind.RSQRT)
def emit_rsqrt(op: Op, ctx: EmitContext) -> KernelCall:
    y = op.outputs[0]
    x = op.inputs[0]
    assert x is not None
    if y.dtype is DType.FLOAT32:
        return float_call(op, ctx, "mcugen_rsqrt_f32")
    if y.dtype not in (DType.INT8, DType.INT16):
        raise unsupported_dtype(op)
    if y.dtype is DType.INT16 and ctx.rounding is Rounding.LITERT:
        table = ctx.constant("rsqrt_lut", litert_rsqrt_lut16(op), "int16_t")
        return KernelCall(
            calls=[f"mcugen_lut_s16_s16({table}, {x.num_elements}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
            runtime=set(RUNTIME))
    p = rsqrt_params(op, ctx.rounding)
    fields = {"input_zero_point": p.input_zero_point, "output_zero_point": p.output_zero_point,
              "multiplier": p.multiplier, "shift": p.shift}
    return params_call(op, ctx, "mcugen_rsqrt_params", fields, f"mcugen_rsqrt_{_short(y.dtype)}")
