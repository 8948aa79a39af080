"""The numpy reference kernels of the activation family, bit-exact with TFLite's reference
kernels in both modes: LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU, RSQRT, NEG, ABS
and SOFTMAX. They take their build-time parameters from the family's prepare functions, and
nothing else from the C path.

Where TFLM and LiteRT differ:
- int8 LOGISTIC and TANH: TFLM computes gemmlowp's fixed-point logistic/tanh per element
  (reference_integer_ops::Logistic/Tanh: rescale into Q4.27, saturate beyond the input radius,
  Q0.31 result rounded to the output); LiteRT's BUILTIN_REF builds a 256-entry table at Prepare
  from float32 1/(1+expf(-x)) and tanhf (LUTPopulate<int8_t>). TFLM's TANH ignores the output
  quantization (it always writes Q0.7); mcugen's rules require scale 1/128 and zero point 0.
- RELU6: TFLM clamps in the input's quantized domain and ignores the output quantization;
  LiteRT rescales to the output as for RELU (see prepare.relu_params).
int16 LOGISTIC/TANH use the same sigmoid-table interpolation in both (reference_integer_ops).
Float kernels follow the reference code's float operations; LOGISTIC and TANH call the C
library's expf/tanhf, so their float results are exact only against the same libm.

SOFTMAX: int8 -> int8 or int16 (softmax_rows), int16 -> int16 (reference_ops::SoftmaxInt16,
table lookups; softmax_int16_rows) and float32 (reference_ops::Softmax<float> with the C
library's expf; softmax_float_rows).

reference_ops::Softmax<int8_t, OutputT> (reference/softmax.h, the same in TFLM and LiteRT),
over the last axis, one row at a time:

  diff = x - max(row); elements with diff < diff_min add nothing and output the minimum
  e = exp_on_negative_values(rescale(diff))       rescale: MultiplyByQuantizedMultiplier-
                                                  GreaterThanOne into Q5.26; e is Q0.31
  sum = sum of RoundingDivideByPOT(e, 12)         Q12.19
  reciprocal via GetReciprocal (count leading zeros + one_over_one_plus_x_for_x_in_0_1)
  out = RoundingDivideByPOT(SRDHM(reciprocal, e), num_bits_over_unit + 31 - bits) + min

exp_on_negative_values and one_over_one_plus_x_for_x_in_0_1 are gemmlowp's fixed-point
functions (fixedpoint/fixedpoint.h), re-implemented here on int64 numpy arrays.

TFLM and LiteRT compute the same thing. PreprocessSoftmaxScaling (quantization_util.cc) caps
the real input multiplier beta * input_scale * 2^26 at 2^31 - 1 in a double-rounding build,
which both runtimes are (LiteRT 2.3.0's reference kernels measurably round twice), and
MultiplyByQuantizedMultiplierGreaterThanOne rounds twice in both.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...ir import DType, LeakyReluOptions, Op, OpKind, SoftmaxOptions
from ...quantization import Rounding, dtype_range
from ..base import Setting
from ..fixedpoint import (
    INT32_MAX,
    INT32_MIN,
    as_int64,
    clamp,
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
)
from ..fixedpoint import saturating_rounding_doubling_high_mul as srdhm
from .prepare import (
    ACCUMULATION_INTEGER_BITS,
    SCALED_DIFF_INTEGER_BITS,
    SIGMOID_TABLE_UINT16,
    FixedPointSigmoidParams,
    HardSwishParams,
    Int16SigmoidParams,
    LookupTable,
    RescaleParams,
    RsqrtParams,
    SoftmaxInt16Params,
    SoftmaxParams,
    expf,
    f32,
    prepare_abs,
    prepare_hard_swish,
    prepare_relu,
    prepare_rsqrt,
    prepare_sigmoid,
    prepare_softmax,
    tanhf,
)

# gemmlowp's Q0.31 constants: exp(-1/8), 1/3, and exp(-2^k) for the barrel shifter.
_EXP_MINUS_ONE_EIGHTH = 1895147668
_ONE_THIRD = 715827883
_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))
# Newton-Raphson constants 48/17 and -32/17 in Q2.29.
_48_OVER_17 = 1515870810
_NEG_32_OVER_17 = -1010580540
_ONE_Q2_29 = 1 << 29


# --- gemmlowp fixed point, vectorised ---------------------------------------------------


def saturating_shift_left(x: np.ndarray, exponent: int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0: a saturating left shift."""
    x = as_int64(x)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))


def rounding_half_sum(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """gemmlowp RoundingHalfSum for int32: (a + b + sign) / 2, truncating."""
    total = as_int64(a) + as_int64(b)
    biased = total + np.where(total >= 0, 1, -1)
    return np.where(biased >= 0, biased // 2, -((-biased) // 2))


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: np.ndarray) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), Q0.31 in and out: Taylor series around -1/8."""
    x = as_int64(a) + (1 << 28)
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(srdhm(x4_over_4 + x3, _ONE_THIRD) + x2, 1)
    return _EXP_MINUS_ONE_EIGHTH + srdhm(x + poly, _EXP_MINUS_ONE_EIGHTH)


def exp_on_negative_values(a: np.ndarray, integer_bits: int = SCALED_DIFF_INTEGER_BITS) -> np.ndarray:
    """exp(a) for a <= 0 given in Q(integer_bits).(31 - integer_bits); result in Q0.31."""
    a = as_int64(a)
    fractional_bits = 31 - integer_bits
    one_quarter = 1 << (fractional_bits - 2)
    mod_quarter_minus_quarter = (a & (one_quarter - 1)) - one_quarter
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_shift_left(mod_quarter_minus_quarter, integer_bits)
    )
    remainder = mod_quarter_minus_quarter - a
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = (remainder >> (fractional_bits + exponent)) & 1
            result = np.where(bit != 0, srdhm(result, multiplier), result)
    if integer_bits > 5:
        # Below -32 the result flushes to zero (-32 is raw -(1 << (36 - integer_bits))).
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, INT32_MAX, result)


def one_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """1 / (1 + a) for a in [0, 1), Q0.31 in and out: three Newton-Raphson steps in Q2.29."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = _48_OVER_17 + srdhm(half_denominator, _NEG_32_OVER_17)
    for _ in range(3):
        one_minus_half_denominator_times_x = _ONE_Q2_29 - srdhm(half_denominator, x)
        x = x + saturating_shift_left(srdhm(x, one_minus_half_denominator_times_x), 2)
    return saturating_shift_left(x, 1)


def reciprocal(total: np.ndarray, integer_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """GetReciprocal for positive int32 `total` in Q(integer_bits): (Q0.31 scale, num_bits_over_unit)."""
    total = as_int64(total)
    bit_length = np.frexp(total.astype(np.float64))[1].astype(np.int64)  # exact below 2^53
    headroom_plus_one = 32 - bit_length
    shifted_minus_one = (total << headroom_plus_one) - (1 << 31)
    return one_over_one_plus_x_for_x_in_0_1(shifted_minus_one), integer_bits - headroom_plus_one


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


def sigmoid_int8_fixed_point(op: Op, p: FixedPointSigmoidParams, x: np.ndarray) -> np.ndarray:
    """TFLM's reference_integer_ops::Logistic / Tanh for int8."""
    centred = as_int64(x) - p.input_zero_point
    inside = np.where(np.abs(centred) < p.input_range_radius, centred, 0)
    q4 = multiply_by_quantized_multiplier(inside, p.input_multiplier, p.input_left_shift)
    if op.kind is OpKind.LOGISTIC:
        value = clamp(rounding_divide_by_pot(logistic_q4(q4), 23) - 128, -128, 127)
    else:
        value = clamp(rounding_divide_by_pot(tanh_q4(q4), 24), -128, 127)
    return np.where(centred <= -p.input_range_radius, -128,
                    np.where(centred >= p.input_range_radius, 127, value))


def sigmoid_int16(op: Op, p: Int16SigmoidParams, x: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic / Tanh for int16: the sigmoid table, interpolated."""
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


def sigmoid(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """LOGISTIC and TANH."""
    x = inputs[0]
    assert x is not None
    p = prepare_sigmoid(op, Setting(rounding=rounding))
    if p is None:
        return [logistic_f32(x) if op.kind is OpKind.LOGISTIC else tanh_f32(x)]
    if isinstance(p, Int16SigmoidParams):
        return [sigmoid_int16(op, p, x).astype(np.int16)]
    if isinstance(p, LookupTable):  # LiteRT's int8 table
        return [p.table[as_int64(x) + 128].astype(np.int8)]
    return [sigmoid_int8_fixed_point(op, p, x).astype(np.int8)]


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


def hard_swish(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    p = prepare_hard_swish(op, Setting(rounding=rounding))
    return [hard_swish_f32(x) if p is None else hard_swish_int8(p, x).astype(np.int8)]


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


def relu(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """RELU, RELU6 and LEAKY_RELU."""
    x = inputs[0]
    assert x is not None
    p = prepare_relu(op, Setting(rounding=rounding))
    return [_float_relu(op, x) if p is None else rescale(p, x).astype(op.outputs[0].dtype.numpy)]


def absolute(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    p = prepare_abs(op, Setting(rounding=rounding))
    if p is None:
        return [np.abs(x.astype(np.float32))]
    return [rescale(p, x).astype(op.outputs[0].dtype.numpy)]


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


def rsqrt(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """int16: TFLM computes per element like int8; LiteRT interpolates a float-built table."""
    x = inputs[0]
    assert x is not None
    y = op.outputs[0]
    p = prepare_rsqrt(op, Setting(rounding=rounding))
    if p is None:
        with np.errstate(divide="ignore", invalid="ignore"):  # inf and NaN, as in C
            return [(f32(1.0) / np.sqrt(x.astype(np.float32))).astype(np.float32)]
    if isinstance(p, LookupTable):
        return [lut_lookup_int16(x, p.table).astype(np.int16)]
    return [rsqrt_fixed_point(p, x, y.dtype).astype(y.dtype.numpy)]


# --- SOFTMAX --------------------------------------------------------------------------


def softmax_rows(x: np.ndarray, p: SoftmaxParams) -> np.ndarray:
    """Softmax over the last axis of int8 `x`; int64 result in the output type's range."""
    x = as_int64(x)
    diff = x - x.max(axis=-1, keepdims=True)
    used = diff >= p.diff_min
    rescaled = multiply_by_quantized_multiplier(
        np.where(used, diff, 0), p.input_multiplier, p.input_left_shift
    )
    exps = exp_on_negative_values(rescaled)
    total = np.where(used, rounding_divide_by_pot(exps, ACCUMULATION_INTEGER_BITS), 0).sum(
        axis=-1, keepdims=True
    )
    # A guard, not a rule: the rule softmax_row_size keeps the sum within int32 for any values.
    if np.any(total > INT32_MAX):
        raise UnsupportedError("SOFTMAX: the sum of exponentials overflows int32")
    scale, num_bits_over_unit = reciprocal(total, ACCUMULATION_INTEGER_BITS)
    exponent = num_bits_over_unit + 31 - p.output_bits
    # TFLite's TFLITE_CHECK(0 <= exponent && exponent <= 31) aborts past 31: an int8 output
    # whose row's exponentials sum to 512 or more (it depends on how many values lie near the
    # row's maximum). Every probability is then at most 1/512, and the non-negative product,
    # below 2^31, divided by 2^exponent rounds to 0: the answer the wider shift gives.
    unsaturated = np.where(exponent > 31, 0,
                           rounding_divide_by_pot(srdhm(scale, exps), np.minimum(exponent, 31)))
    out_min = -(1 << (p.output_bits - 1))
    out_max = (1 << (p.output_bits - 1)) - 1
    result = np.clip(unsaturated + out_min, out_min, out_max)
    return np.where(used, result, out_min)


def lut_lookup_int16(value: np.ndarray, table: np.ndarray) -> np.ndarray:
    """LUTLookup for int16: 512 segments of 128 steps, linear interpolation, rounded."""
    value = as_int64(value)
    index = 256 + (value >> 7)
    offset = value & 0x7F
    base = table.astype(np.int64)[index]
    slope = table.astype(np.int64)[index + 1] - base
    return wrap_int16(base + ((slope * offset + 64) >> 7))


def wrap_int16(x: np.ndarray) -> np.ndarray:
    return ((as_int64(x) + (1 << 15)) & 0xFFFF) - (1 << 15)


def softmax_int16_rows(x: np.ndarray, p: SoftmaxInt16Params) -> np.ndarray:
    """reference_ops::SoftmaxInt16 over the last axis: exp and 1/(1+x) by table lookup."""
    x = as_int64(x)
    diff = x - x.max(axis=-1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, p.input_multiplier, p.input_shift)
    exps = lut_lookup_int16(np.clip(scaled + 32767, -32768, 32767), p.exp_lut)
    total = exps.sum(axis=-1, keepdims=True)
    headroom_plus_one = 32 - np.frexp(total.astype(np.float64))[1].astype(np.int64)
    shifted = ((total << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    symmetric = np.clip(shifted - ((1 << 15) + (1 << 16)), -32768, 32767)
    reciprocal = lut_lookup_int16(symmetric, p.one_over_one_plus_x_lut)
    right_shift = 31 - headroom_plus_one
    result = (exps * reciprocal + (np.int64(1) << (right_shift - 1))) >> right_shift
    return np.clip(result, 0, 32767)


def softmax_float_rows(x: np.ndarray, beta: float) -> np.ndarray:
    """reference_ops::Softmax<float>: expf((x - max) * beta) in float, then / sum."""
    x = x.astype(np.float32)
    out = np.empty_like(x)
    rows, flat_out = x.reshape(-1, x.shape[-1] if x.shape else 1), out.reshape(-1, x.shape[-1] if x.shape else 1)
    beta32 = np.float32(beta)
    for row, result in zip(rows, flat_out):
        largest = row.max()
        total = np.float32(0.0)
        for c, value in enumerate(row):
            result[c] = expf((value - largest) * beta32)
            total = np.float32(total + result[c])
        result[:] = result / total
    return out


def softmax(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    y = op.outputs[0]
    p = prepare_softmax(op, Setting(rounding=rounding))
    if p is None:
        options = op.options
        assert isinstance(options, SoftmaxOptions)
        return [softmax_float_rows(x, options.beta)]
    if isinstance(p, SoftmaxInt16Params):
        return [softmax_int16_rows(x, p).astype(np.int16)]
    return [softmax_rows(x, p).reshape(y.shape).astype(y.dtype.numpy)]
