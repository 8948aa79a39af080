"""SOFTMAX, bit-exact with TFLite's reference kernels: int8 -> int8 or int16 (below),
int16 -> int16 (reference_ops::SoftmaxInt16, table lookups; softmax_int16_rows) and float32
(reference_ops::Softmax<float> with the C library's expf; softmax_float_rows).

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

from ..errors import UnsupportedError
from ..ir import DType, Op, OpKind, SoftmaxOptions
from ..opparams import (
    ACCUMULATION_INTEGER_BITS,
    MAX_ROW_SIZE,
    SCALED_DIFF_INTEGER_BITS,
    SoftmaxParams,
    softmax_params,
)
from ..opparams.activation import SoftmaxInt16Params, expf, softmax_int16_params
from ..ops.fixedpoint import (
    INT32_MAX,
    INT32_MIN,
    as_int64,
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
)
from ..ops.fixedpoint import saturating_rounding_doubling_high_mul as srdhm
from ..quantization import Rounding
from . import reference

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


# --- the kernel --------------------------------------------------------------------------


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
    if np.any(total > INT32_MAX):
        raise UnsupportedError("SOFTMAX: the sum of exponentials overflows int32")
    scale, num_bits_over_unit = reciprocal(total, ACCUMULATION_INTEGER_BITS)
    exponent = num_bits_over_unit + 31 - p.output_bits
    if np.any((exponent < 0) | (exponent > 31)):
        # TFLite's TFLITE_CHECK(0 <= exponent && exponent <= 31) aborts here.
        raise UnsupportedError("SOFTMAX: too many elements near the row maximum for the output")
    out_min = -(1 << (p.output_bits - 1))
    out_max = (1 << (p.output_bits - 1)) - 1
    unsaturated = rounding_divide_by_pot(srdhm(scale, exps), exponent)
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


@reference(OpKind.SOFTMAX)
def softmax(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    y = op.outputs[0]
    if y.dtype is DType.FLOAT32:
        options = op.options
        assert isinstance(options, SoftmaxOptions)
        return [softmax_float_rows(x, options.beta)]
    if op.inputs[0] is not None and op.inputs[0].dtype is DType.INT16:
        return [softmax_int16_rows(x, softmax_int16_params(op, rounding)).astype(np.int16)]
    if x.shape and x.shape[-1] > MAX_ROW_SIZE:
        raise UnsupportedError(f"{op.where()}: rows of {x.shape[-1]} elements overflow the int32 sum")
    result = softmax_rows(x, softmax_params(op))
    y = op.outputs[0]
    return [result.reshape(y.shape).astype(y.dtype.numpy)]
