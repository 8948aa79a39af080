"""LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU, RSQRT, NEG and ABS, bit-exact with
TFLite's reference kernels in both modes.

Where TFLM and LiteRT differ:
- int8 LOGISTIC and TANH: TFLM computes gemmlowp's fixed-point logistic/tanh per element
  (reference_integer_ops::Logistic/Tanh: rescale into Q4.27, saturate beyond the input radius,
  Q0.31 result rounded to the output); LiteRT's BUILTIN_REF builds a 256-entry table at Prepare
  from float32 1/(1+expf(-x)) and tanhf (LUTPopulate<int8_t>). TFLM's TANH ignores the output
  quantization (it always writes Q0.7); mcugen's rules require scale 1/128 and zero point 0.
- RELU6: TFLM clamps in the input's quantized domain and ignores the output quantization;
  LiteRT rescales to the output as for RELU (see opparams.activation.relu_params).
int16 LOGISTIC/TANH use the same sigmoid-table interpolation in both (reference_integer_ops).
Float kernels follow the reference code's float operations; LOGISTIC and TANH call the C
library's expf/tanhf, so their float results are exact only against the same libm.
"""

from __future__ import annotations

import numpy as np

from ..ir import DType, LeakyReluOptions, Op, OpKind
from ..opparams.activation import (
    SIGMOID_TABLE_UINT16,
    HardSwishParams,
    RescaleParams,
    RsqrtParams,
    abs_params,
    expf,
    f32,
    fixed_point_sigmoid_params,
    hard_swish_params,
    int16_sigmoid_params,
    leaky_relu_params,
    litert_rsqrt_lut16,
    litert_sigmoid_lut,
    relu_params,
    rsqrt_params,
    tanhf,
)
from ..ops.fixedpoint import (
    INT32_MAX,
    as_int64,
    clamp,
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
)
from ..ops.fixedpoint import saturating_rounding_doubling_high_mul as srdhm
from ..quantization import Rounding, dtype_range
from . import reference
from .softmax import (
    exp_on_negative_values,
    lut_lookup_int16,
    one_over_one_plus_x_for_x_in_0_1,
    rounding_half_sum,
    saturating_shift_left,
)

_48_OVER_17 = 1515870810
_NEG_32_OVER_17 = -1010580540


# --- gemmlowp logistic and tanh on Q4.27 --------------------------------------------------


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """(1 - a) / (1 + a) for a in [0, 1), Q0.31: Newton-Raphson in Q2.29, as gemmlowp."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = _48_OVER_17 + srdhm(half_denominator, _NEG_32_OVER_17)
    for _ in range(3):
        x = x + saturating_shift_left(srdhm(x, (1 << 29) - srdhm(half_denominator, x)), 2)
    return saturating_shift_left(x - (1 << 29), 2)


def logistic_q4(a: np.ndarray) -> np.ndarray:
    """gemmlowp::logistic for FixedPoint<int32, 4>: Q0.31 result."""
    a = as_int64(a)
    positive = a > 0
    magnitude = np.where(positive, a, -a)
    if_positive = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(-magnitude, 4))
    return np.where(a == 0, 1 << 30, np.where(positive, if_positive, INT32_MAX - if_positive))


def tanh_q4(a: np.ndarray) -> np.ndarray:
    """gemmlowp::tanh for FixedPoint<int32, 4>: exp of 2a (the raw value read as Q5.26)."""
    a = as_int64(a)
    negative = a < 0
    n = np.where(negative, a, -a)
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, 5))
    return np.where(a == 0, 0, np.where(negative, -t, t))


def sigmoid_int8_fixed_point(op: Op, x: np.ndarray) -> np.ndarray:
    """TFLM's reference_integer_ops::Logistic / Tanh for int8."""
    p = fixed_point_sigmoid_params(op)
    centred = as_int64(x) - p.input_zero_point
    inside = np.where(np.abs(centred) < p.input_range_radius, centred, 0)
    q4 = multiply_by_quantized_multiplier(inside, p.input_multiplier, p.input_left_shift)
    if op.kind is OpKind.LOGISTIC:
        value = clamp(rounding_divide_by_pot(logistic_q4(q4), 23) - 128, -128, 127)
    else:
        value = clamp(rounding_divide_by_pot(tanh_q4(q4), 24), -128, 127)
    return np.where(centred <= -p.input_range_radius, -128,
                    np.where(centred >= p.input_range_radius, 127, value))


def sigmoid_int16(op: Op, x: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic / Tanh for int16: the sigmoid table, interpolated."""
    p = int16_sigmoid_params(op)
    rounding = (1 << (p.input_right_shift - 1)) if p.input_right_shift > 0 else 0
    value = (as_int64(x) * p.input_multiplier + rounding) >> p.input_right_shift
    magnitude = np.abs(value)
    table = SIGMOID_TABLE_UINT16.astype(np.int64)
    if op.kind is OpKind.LOGISTIC:
        index = magnitude >> 9
        safe = np.minimum(index, 254)
        low, high = table[safe], table[safe + 1]
        result = np.where(index >= 255, 0x7FFF << 10, (low << 9) + (magnitude & 0x1FF) * (high - low))
        result = np.where(value >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1)
        return result >> 10
    index = magnitude >> 8
    safe = np.minimum(index, 254)
    low, high = table[safe], table[safe + 1]
    result = np.where(index >= 255, 0xFFFF << 8, (low << 8) + (magnitude & 0xFF) * (high - low))
    result = np.where(value >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1)
    return result >> 8


def logistic_f32(x: np.ndarray) -> np.ndarray:
    """reference_ops::Logistic<float>: 1 above 16.619047, expf(x) below -9, else 1/(1+expf(-x))."""
    out = np.empty(x.shape, dtype=np.float32)
    flat, result = x.astype(np.float32).ravel(), out.ravel()
    for i, v in enumerate(flat):
        if v > f32(16.619047164916992188):
            result[i] = f32(1.0)
        elif v < f32(-9.0):
            result[i] = expf(v)
        else:
            result[i] = f32(1.0) / (f32(1.0) + expf(-v))
    return out


def tanh_f32(x: np.ndarray) -> np.ndarray:
    flat = x.astype(np.float32).ravel()
    return np.array([tanhf(v) for v in flat], dtype=np.float32).reshape(x.shape)


@reference(OpKind.LOGISTIC)
@reference(OpKind.TANH)
def sigmoid(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    dtype = op.outputs[0].dtype
    if dtype is DType.FLOAT32:
        return [logistic_f32(x) if op.kind is OpKind.LOGISTIC else tanh_f32(x)]
    if dtype is DType.INT16:
        return [sigmoid_int16(op, x).astype(np.int16)]
    if rounding is Rounding.LITERT:
        return [litert_sigmoid_lut(op)[as_int64(x) + 128].astype(np.int8)]
    return [sigmoid_int8_fixed_point(op, x).astype(np.int8)]


# --- HARD_SWISH ---------------------------------------------------------------------------


def _wrap16(x: np.ndarray) -> np.ndarray:
    return ((as_int64(x) + (1 << 15)) & 0xFFFF) - (1 << 15)


def _srdhm16(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul for int16."""
    product = as_int64(a) * b
    total = product + np.where(product >= 0, 1 << 14, 1 - (1 << 14))
    quotient = np.where(total >= 0, total >> 15, -((-total) >> 15))
    return np.where((as_int64(a) == -32768) & (b == -32768), 32767, quotient)


def _rounding_divide_by_pot16(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT on int16: the mask (2^exponent - 1) is an int16 too, so
    for exponents of 16 and more it is -1 and every x >= 0 gives 1, every x < 0 gives -1
    (TFLite's HARD_SWISH reaches this for output scales beyond 2^16 / 128 input scales)."""
    x = as_int64(x)
    mask = ((1 << exponent) - 1 + (1 << 15)) % (1 << 16) - (1 << 15)  # as an int16
    remainder = _wrap16(x & mask)
    threshold = (mask >> 1) + (x < 0)
    return _wrap16((x >> exponent) + (remainder > threshold))


def _saturating_left_shift16(x: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(as_int64(x) * (1 << amount), -32768, 32767)


def hard_swish_int8(p: HardSwishParams, x: np.ndarray) -> np.ndarray:
    """reference_ops::HardSwish<int8_t>: int16 fixed point throughout."""
    hires = _wrap16((as_int64(x) - p.input_zero_point) * 128)
    preshift_output = _srdhm16(hires, p.output_multiplier)
    reluish = hires
    if p.reluish_exponent > 0:
        reluish = _saturating_left_shift16(reluish, p.reluish_exponent - 1)
    reluish = _srdhm16(reluish, p.reluish_multiplier)
    if p.reluish_exponent > 0:
        reluish = _saturating_left_shift16(reluish, 1)
    if p.reluish_exponent < 0:
        reluish = _rounding_divide_by_pot16(reluish, -p.reluish_exponent)
    reluish = (reluish + (1 << 15)) >> 1
    product = reluish * preshift_output  # SaturatingDoublingHighMul: truncating division
    doubled_high = np.where(product >= 0, product >> 15, -((-product) >> 15))
    output = _rounding_divide_by_pot16(_wrap16(doubled_high), -p.output_exponent)
    return clamp(_wrap16(output + p.output_zero_point), -128, 127)


def hard_swish_f32(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    return (x * np.minimum(f32(6), np.maximum(f32(0), x + f32(3))) / f32(6)).astype(np.float32)


@reference(OpKind.HARD_SWISH)
def hard_swish(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if op.outputs[0].dtype is DType.FLOAT32:
        return [hard_swish_f32(x)]
    return [hard_swish_int8(hard_swish_params(op), x).astype(np.int8)]


# --- RELU, RELU6, LEAKY_RELU, ABS: one rescale ----------------------------------------------


def rescale(p: RescaleParams, x: np.ndarray) -> np.ndarray:
    """The per-element arithmetic of ReluQuantized, Relu6Quantized (TFLM), QuantizeLeakyRelu,
    AbsEvalQuantized and Requantize, selected by the parameters."""
    v = as_int64(x) - p.input_offset
    if p.absolute:
        v = np.abs(v)
    if p.identity:
        scaled = v
    else:
        positive = multiply_by_quantized_multiplier(v, p.positive_multiplier, p.positive_shift)
        negative = multiply_by_quantized_multiplier(v, p.negative_multiplier, p.negative_shift)
        if p.negate_negative:
            negative = -negative
        scaled = np.where(v >= 0, positive, negative)
    return clamp(scaled + p.output_offset, p.activation_min, p.activation_max)


def _float_relu(op: Op, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    if op.kind is OpKind.RELU:
        return np.where(x < 0, f32(0), x).astype(np.float32)
    if op.kind is OpKind.RELU6:
        return np.where(x > 6, f32(6), np.where(x < 0, f32(0), x)).astype(np.float32)
    options = op.options
    assert isinstance(options, LeakyReluOptions)
    return np.where(x > 0, x, x * f32(options.alpha)).astype(np.float32)


@reference(OpKind.RELU)
@reference(OpKind.RELU6)
@reference(OpKind.LEAKY_RELU)
def relu(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    y = op.outputs[0]
    if y.dtype is DType.FLOAT32:
        return [_float_relu(op, x)]
    params = leaky_relu_params(op, rounding) if op.kind is OpKind.LEAKY_RELU else relu_params(op, rounding)
    return [rescale(params, x).astype(y.dtype.numpy)]


@reference(OpKind.ABS)
def absolute(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    y = op.outputs[0]
    if y.dtype is DType.FLOAT32:
        return [np.abs(x.astype(np.float32))]
    return [rescale(abs_params(op, rounding), x).astype(y.dtype.numpy)]


@reference(OpKind.NEG)
def negate(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """NEG: float32 only (TFLM's NEG has no integer kernel)."""
    x = inputs[0]
    assert x is not None
    return [(-x.astype(np.float32)).astype(np.float32)]


# --- RSQRT ---------------------------------------------------------------------------------


def inv_sqrt_multiplier(value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """GetInvSqrtQuantizedMultiplierExp(value, kReverseShift = -1) for values in [2, 2^31):
    (multiplier, shift) with 1/sqrt(value) ~= multiplier * 2^(shift - 31)."""
    value = as_int64(value)
    shift = np.full(value.shape, 11, dtype=np.int64)
    while np.any(value >= 1 << 29):
        big = value >= 1 << 29
        value = np.where(big, value // 4, value)
        shift = shift + big
    leading_zeros = 32 - np.frexp(value.astype(np.float64))[1].astype(np.int64)
    pairs = (leading_zeros - 1) // 2 - 1
    shift = shift - pairs
    value = value << (2 * pairs)
    half_input = rounding_divide_by_pot(value >> 1, 1)  # Q3.28
    half_three = (1 << 28) + (1 << 27)  # 1.5 in Q3.28
    x = np.full(value.shape, 1 << 28, dtype=np.int64)  # 1.0 in Q3.28
    for _ in range(5):
        x3 = saturating_shift_left(srdhm(srdhm(x, x), x), 6)
        x = saturating_shift_left(srdhm(x, half_three) - srdhm(half_input, x3), 3)
    x = srdhm(x, 1518500250)  # sqrt(2) / 2 in Q0.31
    x = np.where(shift < 0, x << np.maximum(-shift, 0), x)
    return x, -np.maximum(shift, 0)


def rsqrt_fixed_point(p: RsqrtParams, x: np.ndarray, dtype: DType) -> np.ndarray:
    """RsqrtEvalQuantized (TFLM int8 and int16, LiteRT int8): 1/sqrt of the centred input, via
    a Newton-Raphson multiplier and two rescales around a 2^20 integer. A centred 0 gives the
    maximum; inputs below the zero point make TFLite fail the op, mcugen writes the maximum."""
    low, high = dtype_range(dtype)
    value = as_int64(x) - p.input_zero_point
    safe = np.maximum(value, 2)
    multiplier, shift = inv_sqrt_multiplier(safe)
    multiplier = np.where(value == 1, INT32_MAX, multiplier)
    shift = np.where(value == 1, 0, shift)
    data = multiply_by_quantized_multiplier(np.ones_like(value), multiplier, shift + 20)
    output = multiply_by_quantized_multiplier(data, p.multiplier, p.shift - 20) + p.output_zero_point
    return np.where(value <= 0, high, clamp(output, low, high))


@reference(OpKind.RSQRT)
def rsqrt(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """int16: TFLM computes per element like int8; LiteRT interpolates a float-built table."""
    x = inputs[0]
    assert x is not None
    y = op.outputs[0]
    if y.dtype is DType.FLOAT32:
        with np.errstate(divide="ignore", invalid="ignore"):  # inf and NaN, as in C
            return [(f32(1.0) / np.sqrt(x.astype(np.float32))).astype(np.float32)]
    if y.dtype is DType.INT16 and rounding is Rounding.LITERT:
        return [lut_lookup_int16(x, litert_rsqrt_lut16(op)).astype(np.int16)]
    return [rsqrt_fixed_point(rsqrt_params(op, rounding), x, y.dtype).astype(y.dtype.numpy)]
