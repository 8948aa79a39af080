"""SOFTMAX -> mcugen_softmax_s8 / _s8_s16 / _s16 / _f32 (mcugen_softmax.c).

Softmax runs over the last axis of any rank: the C sees rows of the last dimension's size.
The int8 Prepare-time values (input multiplier, left shift, diff_min) come from
mcugen.opparams (the same in both modes); the int16 multiplier and the exp and 1/(1+x) tables
from mcugen.opparams.activation (they differ between the modes: TFLM builds the tables in
float, LiteRT in double).
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import DType, Op, OpKind, SoftmaxOptions
from ..opparams import MAX_ROW_SIZE, softmax_params
from ..opparams.activation import softmax_int16_params
from .cnames import c_float
from .emit import EmitContext, KernelCall, emitter

MAX_ROW_SIZE_S16 = 65536  # MCUGEN_SOFTMAX_S16_MAX_ROW

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


def _rows(op: Op, limit: int) -> tuple[int, int]:
    x = op.inputs[0]
    assert x is not None
    row_size = x.shape[-1] if x.shape else 1
    if row_size > limit:
        raise UnsupportedError(f"{op.where()}: rows of {row_size} elements overflow the int32 sum "
                               f"of exponentials (at most {limit})")
    return (x.num_elements // row_size if row_size else 0), row_size


def emit_softmax_int16(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    p = softmax_int16_params(op, ctx.rounding)
    num_rows, row_size = _rows(op, MAX_ROW_SIZE_S16)
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


def emit_softmax_float(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None and isinstance(op.options, SoftmaxOptions)
    num_rows, row_size = _rows(op, 1 << 30)
    return KernelCall(
        calls=[(f"mcugen_softmax_f32({c_float(op.options.beta)}, {num_rows}, {row_size}, "
                f"{ctx.ptr(x)}, {ctx.ptr(y)})")],
        runtime={"mcugen_softmax"},
    )


@emitter(OpKind.SOFTMAX)
def emit_softmax(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    if x.dtype is DType.INT16 and y.dtype is DType.INT16:
        return emit_softmax_int16(op, ctx)
    if x.dtype is DType.FLOAT32 and y.dtype is DType.FLOAT32:
        return emit_softmax_float(op, ctx)
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
