"""LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU, RSQRT, NEG, ABS -> mcugen_activation.c;
SOFTMAX -> mcugen_softmax_s8 / _s8_s16 / _s16 / _f32 (mcugen_softmax.c).

Every activation is element-wise over the flat tensor. Prepare-time values come from the
kinds' prepare functions (prepare.py); per mode, int8 LOGISTIC/TANH are computed in gemmlowp
fixed point (TFLM) or looked up in LiteRT's float-built table (placed in flash), and int16
RSQRT is computed per element (TFLM) or interpolated in LiteRT's float-built table; int16
LOGISTIC/TANH interpolate TFLite's sigmoid table (in flash).

Softmax runs over the last axis of any rank: the C sees rows of the last dimension's size.
The int8 Prepare-time values (input multiplier, left shift, diff_min) are the same in both
modes; the int16 multiplier and the exp and 1/(1+x) tables differ (TFLM builds the tables in
float, LiteRT in double).
"""

from __future__ import annotations

from collections.abc import Mapping

from ...codegen.cnames import c_float
from ...ir import DType, LeakyReluOptions, Op, OpKind, SoftmaxOptions
from ..base import setting_of
from ..emitting import EmitContext, KernelCall
from .prepare import (
    SIGMOID_TABLE_UINT16,
    FixedPointSigmoidParams,
    Int16SigmoidParams,
    LookupTable,
    RescaleParams,
    SoftmaxInt16Params,
    SoftmaxParams,
    prepare_abs,
    prepare_hard_swish,
    prepare_relu,
    prepare_rsqrt,
    prepare_sigmoid,
    prepare_softmax,
)

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


def lut_call(op: Op, ctx: EmitContext, hint: str, p: LookupTable, ctype: str) -> KernelCall:
    """A table lookup per element (mcugen_lut_s8_s8 / mcugen_lut_s16_s16), the table in flash."""
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    table = ctx.constant(hint, p.table, ctype)
    short = _short(y.dtype)
    return KernelCall(
        calls=[f"mcugen_lut_{short}_{short}({table}, {x.num_elements}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime=set(RUNTIME))


def rescale_call(op: Op, ctx: EmitContext, p: RescaleParams) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    assert (x.dtype, y.dtype) in RESCALE_PAIRS, "the rule dtype_pairs"
    fields = {
        "input_offset": p.input_offset, "output_offset": p.output_offset,
        "positive_multiplier": p.positive_multiplier, "positive_shift": p.positive_shift,
        "negative_multiplier": p.negative_multiplier, "negative_shift": p.negative_shift,
        "negate_negative": p.negate_negative, "absolute": p.absolute, "identity": p.identity,
        "activation": {"min": p.activation_min, "max": p.activation_max},
    }
    function = f"mcugen_pointwise_rescale_{_short(x.dtype)}_{_short(y.dtype)}"
    return params_call(op, ctx, "mcugen_pointwise_rescale_params", fields, function)


def emit_sigmoid(op: Op, ctx: EmitContext) -> KernelCall:
    stem = "logistic" if op.kind is OpKind.LOGISTIC else "tanh"
    p = prepare_sigmoid(op, setting_of(ctx))
    if p is None:
        return float_call(op, ctx, f"mcugen_{stem}_f32")
    if isinstance(p, Int16SigmoidParams):
        table = ctx.constant("sigmoid_table_uint16", SIGMOID_TABLE_UINT16, "uint16_t")
        fields = {"input_multiplier": p.input_multiplier, "input_right_shift": p.input_right_shift}
        return params_call(op, ctx, "mcugen_sigmoid_s16_params", fields, f"mcugen_{stem}_s16",
                           extra=f"{table}, ")
    if isinstance(p, LookupTable):
        return lut_call(op, ctx, f"{stem}_lut", p, "int8_t")
    assert isinstance(p, FixedPointSigmoidParams)
    fields = {"input_zero_point": p.input_zero_point, "input_multiplier": p.input_multiplier,
              "input_left_shift": p.input_left_shift, "input_range_radius": p.input_range_radius}
    return params_call(op, ctx, "mcugen_sigmoid_s8_params", fields, f"mcugen_{stem}_s8")


def emit_hard_swish(op: Op, ctx: EmitContext) -> KernelCall:
    p = prepare_hard_swish(op, setting_of(ctx))
    if p is None:
        return float_call(op, ctx, "mcugen_hard_swish_f32")
    fields = {"input_zero_point": p.input_zero_point, "output_zero_point": p.output_zero_point,
              "reluish_multiplier": p.reluish_multiplier, "reluish_exponent": p.reluish_exponent,
              "output_multiplier": p.output_multiplier, "output_exponent": p.output_exponent}
    return params_call(op, ctx, "mcugen_hard_swish_params", fields, "mcugen_hard_swish_s8")


def emit_relu(op: Op, ctx: EmitContext) -> KernelCall:
    """RELU, RELU6 and LEAKY_RELU."""
    p = prepare_relu(op, setting_of(ctx))
    if p is not None:
        return rescale_call(op, ctx, p)
    if op.kind is OpKind.LEAKY_RELU:
        assert isinstance(op.options, LeakyReluOptions)
        return float_call(op, ctx, "mcugen_leaky_relu_f32", extra=f"{c_float(op.options.alpha)}, ")
    return float_call(op, ctx, f"mcugen_{op.kind.name.lower()}_f32")


def emit_abs(op: Op, ctx: EmitContext) -> KernelCall:
    p = prepare_abs(op, setting_of(ctx))
    return float_call(op, ctx, "mcugen_abs_f32") if p is None else rescale_call(op, ctx, p)


def emit_neg(op: Op, ctx: EmitContext) -> KernelCall:
    assert op.outputs[0].dtype is DType.FLOAT32, "the rule dtype_pairs"
    return float_call(op, ctx, "mcugen_neg_f32")


def emit_rsqrt(op: Op, ctx: EmitContext) -> KernelCall:
    y = op.outputs[0]
    p = prepare_rsqrt(op, setting_of(ctx))
    if p is None:
        return float_call(op, ctx, "mcugen_rsqrt_f32")
    if isinstance(p, LookupTable):
        return lut_call(op, ctx, "rsqrt_lut", p, "int16_t")
    fields = {"input_zero_point": p.input_zero_point, "output_zero_point": p.output_zero_point,
              "multiplier": p.multiplier, "shift": p.shift}
    return params_call(op, ctx, "mcugen_rsqrt_params", fields, f"mcugen_rsqrt_{_short(y.dtype)}")


# --- SOFTMAX -------------------------------------------------------------------------------

_SOFTMAX_FUNCTIONS = {DType.INT8: "mcugen_softmax_s8", DType.INT16: "mcugen_softmax_s8_s16"}


def _rows(op: Op) -> tuple[int, int]:
    """(rows, row size); the rule softmax_row_size bounds the row size per dtype."""
    x = op.inputs[0]
    assert x is not None
    row_size = x.shape[-1] if x.shape else 1
    return (x.num_elements // row_size if row_size else 0), row_size


def _emit_softmax_int16(op: Op, ctx: EmitContext, p: SoftmaxInt16Params) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    num_rows, row_size = _rows(op)
    exp_lut = ctx.constant("softmax_exp_lut", p.exp_lut, "int16_t")
    inv_lut = ctx.constant("softmax_one_over_one_plus_x_lut", p.one_over_one_plus_x_lut, "int16_t")
    name = f"softmax_s16_params_{op.index}"
    return KernelCall(
        declarations=[(f"static const mcugen_softmax_s16_params {name} = {{ .input_multiplier = "
                       f"{p.input_multiplier}, .input_shift = {p.input_shift} }};")],
        calls=[(f"mcugen_softmax_s16(&{name}, {exp_lut}, {inv_lut}, {num_rows}, {row_size}, "
                f"{ctx.ptr(x)}, {ctx.ptr(y)})")],
        runtime={"mcugen_softmax"},
    )


def _emit_softmax_float(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None and isinstance(op.options, SoftmaxOptions)
    num_rows, row_size = _rows(op)
    return KernelCall(
        calls=[(f"mcugen_softmax_f32({c_float(op.options.beta)}, {num_rows}, {row_size}, "
                f"{ctx.ptr(x)}, {ctx.ptr(y)})")],
        runtime={"mcugen_softmax"},
    )


def emit_softmax(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    p = prepare_softmax(op, setting_of(ctx))
    if p is None:
        return _emit_softmax_float(op, ctx)
    if isinstance(p, SoftmaxInt16Params):
        return _emit_softmax_int16(op, ctx, p)
    assert isinstance(p, SoftmaxParams)
    # The kernels write value + the type's minimum: the rule softmax_output makes that the
    # output zero point.
    num_rows, row_size = _rows(op)
    params = (f"{{ .input_multiplier = {p.input_multiplier}, .input_left_shift = {p.input_left_shift}, "
              f".diff_min = {p.diff_min} }}")
    name = f"softmax_params_{op.index}"
    return KernelCall(
        declarations=[f"static const mcugen_softmax_params {name} = {params};"],
        calls=[f"{_SOFTMAX_FUNCTIONS[y.dtype]}(&{name}, {num_rows}, {row_size}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime={"mcugen_softmax"},
    )
