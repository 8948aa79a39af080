"""Build-time parameters of the activation and softmax kernels: TFLite's Prepare step for
LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU, RSQRT, ABS, NEG and SOFTMAX, shared by the
C emitters (emit.py) and the numpy reference (reference.py). The quantize family's integer
requantization reuses the rescale-and-clamp parameters (RescaleParams) of this module.

Each kind's `prepare_*` function is its OpDef's prepare: it returns the parameters for the
op's dtypes and the build's rounding (None for float32, whose kernels need none) or raises a
RuleViolation of one of the PrepareRules below. It runs after the plain rules (rules.py) hold,
and relies on them: what those rules already refuse is only asserted here.

Where TFLite builds a lookup table at Prepare time (LiteRT's int8 LOGISTIC and TANH, both
runtimes' int16 SOFTMAX), the table is built here, with the same float arithmetic: float32
steps are numpy float32 operations, and the transcendental functions are the C library's own
expf/tanhf/exp (called through ctypes), which is what the TFLite runtimes call.
"""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Callable

import numpy as np

from ...ir import DType, LeakyReluOptions, Op, OpKind, SoftmaxOptions, Tensor
from ...quantization import Rounding, dtype_range, quantize_multiplier
from ...records import dataclass
from ..base import PrepareRule, Setting
from ..common import checked_multiplier, scale_of, zero_point_of

f32 = np.float32

# --- the C library's float functions (what TFLite's std::exp(float) etc. call) ------------


@functools.cache
def _libm() -> ctypes.CDLL:
    """The C math library, loaded at first use: finding it runs `ldconfig -p`, ~20 ms that a
    build without these functions need not pay."""
    import ctypes.util  # here: it imports subprocess

    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    for name in ("expf", "tanhf", "logf"):
        getattr(libm, name).restype = ctypes.c_float
        getattr(libm, name).argtypes = [ctypes.c_float]
    libm.exp.restype = ctypes.c_double
    libm.exp.argtypes = [ctypes.c_double]
    return libm


def expf(x: float | np.floating) -> np.float32:
    return f32(_libm().expf(float(x)))


def tanhf(x: float | np.floating) -> np.float32:
    return f32(_libm().tanhf(float(x)))


def logf(x: float | np.floating) -> np.float32:
    return f32(_libm().logf(float(x)))


def libm_exp(x: float) -> float:
    return float(_libm().exp(float(x)))


def round_half_away(x: float | np.floating) -> float:
    """TfLiteRound / std::round on a float or double value: halves go away from zero."""
    value = float(x)
    return math.copysign(math.floor(abs(value) + 0.5), value)




def _io(op: Op) -> tuple[Tensor, Tensor]:
    x = op.inputs[0]
    assert x is not None
    return x, op.outputs[0]


def _scale_ratio(a: float, b: float, rounding: Rounding) -> float:
    """input_scale / output_scale as each runtime forms it for RELU, LEAKY_RELU and ABS.

    LiteRT divides the float32 scales in float32 (then widens to double), as its source reads.
    The TFLM wheel measurably divides in double: with the float32 quotient, int16 RELU, ABS and
    LEAKY_RELU miss TFLM on elements whose exact product lies within 1e-4 of a half (scales
    0.00026099 -> 0.00032013: 5 of 9368 int16 ABS outputs), and with the double one LiteRT."""
    if rounding is Rounding.TFLM:
        return float(a) / float(b)
    return float(f32(a) / f32(b))


def assert_symmetric(*tensors: Tensor) -> None:
    """int16 tensors have zero point 0: the rules int16_zero_points and softmax_int16_input /
    softmax_output refuse any other before prepare runs."""
    assert all(zero_point_of(t) == 0 for t in tensors), [t.name for t in tensors]


# --- lookup tables -----------------------------------------------------------------------

FloatFunction = Callable[[float], float]


def lut_int8(transform: FloatFunction, in_scale: float, in_zp: int, out_scale: float,
             out_zp: int, out_dtype: DType = DType.INT8) -> np.ndarray:
    """LUTPopulateInt8 (LiteRT): entry i is the output for input i - 128, in float32."""
    low, high = dtype_range(out_dtype)
    inverse_scale = f32(1.0) / f32(out_scale)
    table = np.empty(256, dtype=np.int32)
    for index, value in enumerate(range(-128, 128)):
        dequantized = f32(in_scale) * f32(value - in_zp)
        transformed = f32(transform(float(dequantized)))
        rescaled = round_half_away(f32(transformed * inverse_scale))
        quantized = int(f32(rescaled) + f32(out_zp))
        table[index] = min(max(quantized, low), high)
    return table


def lut_int16(transform: FloatFunction, float_type: type, in_scale: float, in_zp: int,
              out_scale: float, out_zp: int) -> np.ndarray:
    """LUTPopulateInt16<FloatT>: 513 int16 samples with TFLite's midpoint bias correction,
    every step in `float_type` (np.float32 or np.float64)."""
    t = float_type
    input_min = t(in_scale) * t(-32768 - in_zp)
    input_max = t(in_scale) * t(32767 - in_zp)
    output_min = t(out_scale) * t(-32768 - out_zp)
    output_max = t(out_scale) * t(32767 - out_zp)
    step = (input_max - input_min) / t(512)
    half_step = step / t(2)
    scaling_inv = t(65536) / (output_max - output_min)

    def f(x: float) -> float:
        return t(transform(float(t(x))))

    def rnd(x: float) -> float:
        return t(round_half_away(t(x)))

    table = np.empty(513, dtype=np.int32)
    for i in range(512):
        val = f(input_min + t(i) * step)
        val_mid = f(input_min + t(i) * step + half_step)
        val_next = f(input_min + t(i + 1) * step)
        sample = rnd(val * scaling_inv)
        midpoint_interp = rnd((val_next * scaling_inv + rnd(val * scaling_inv)) / t(2))
        midpoint = rnd(val_mid * scaling_inv)
        bias = rnd((midpoint_interp - midpoint) / t(2))
        table[i] = int(min(max(sample - bias, t(-32768)), t(32767)))
    table[512] = int(min(max(rnd(f(input_max) * scaling_inv), t(-32768)), t(32767)))
    return table


def logistic_f32(x: float) -> float:
    """LiteRT's Prepare lambda: 1.0f / (1.0f + std::exp(-value)) in float."""
    return float(f32(1.0) / (f32(1.0) + expf(-f32(x))))


def tanh_f32(x: float) -> float:
    return float(tanhf(x))


@dataclass(frozen=True)
class LookupTable:
    """A table built at Prepare that the kernel looks values up in: 256 int8 entries (entry i is
    the output for input i - 128) or 513 int16 samples, interpolated (LUTLookup)."""

    table: np.ndarray


# --- int8 LOGISTIC and TANH (TFLM: gemmlowp fixed point; LiteRT: a float LUT) -----------

INPUT_INTEGER_BITS_S8 = 4

SIGMOID_MULTIPLIER = PrepareRule(
    "int8 input, TFLM mode: input scale * 2^27 rounds to a Q31 multiplier below 2^31 with a left "
    "shift of at most 31, i.e. an input scale below 16 (TFLM's fixed-point rescale into Q4.27).")


@dataclass(frozen=True)
class FixedPointSigmoidParams:
    """TFLM's int8 LOGISTIC/TANH Prepare: input rescale into Q4.27 and the saturation radius."""

    input_zero_point: int
    input_multiplier: int
    input_left_shift: int
    input_range_radius: int


def fixed_point_sigmoid_params(op: Op) -> FixedPointSigmoidParams:
    x, _ = _io(op)
    real = float(scale_of(x)) * float(1 << (31 - INPUT_INTEGER_BITS_S8))
    fraction, shift = math.frexp(real)
    multiplier = int(round_half_away(fraction * (1 << 31)))
    SIGMOID_MULTIPLIER.require(multiplier < 1 << 31 and shift <= 31, op, lambda: f"input scale {scale_of(x):g}")
    assert shift >= 0, "the rule sigmoid_input_scale refuses input scales below 2^-28"
    radius = math.floor(((1 << INPUT_INTEGER_BITS_S8) - 1) * float(1 << (31 - INPUT_INTEGER_BITS_S8))
                        / float(1 << shift))
    return FixedPointSigmoidParams(zero_point_of(x), multiplier, shift, radius)


def litert_sigmoid_lut(op: Op) -> np.ndarray:
    """LiteRT's int8 LOGISTIC/TANH table (activations.cc Prepare, LUTPopulate<int8_t>)."""
    x, y = _io(op)
    transform = logistic_f32 if op.kind is OpKind.LOGISTIC else tanh_f32
    return lut_int8(transform, scale_of(x), zero_point_of(x), scale_of(y), zero_point_of(y))


# --- int16 LOGISTIC and TANH (both runtimes: sigmoid table with interpolation) -----------

# TFLite's sigmoid_table_uint16 (kernels/internal/common.h): sigmoid(i / 24) in 0.16 format.
# A constant of the algorithm, not derivable bit for bit from a formula (44 entries differ
# by one from round(65536 * sigmoid(i / 24))), so it is carried here as data.
SIGMOID_TABLE_UINT16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
], dtype=np.uint16)


def checked_log2(x: float) -> tuple[bool, int]:
    """CheckedLog2: (is a power of two within 1e-3, rounded log2), in float as TFLite."""
    x_log2 = logf(x) * (f32(1.0) / logf(2.0))
    rounded = f32(round_half_away(x_log2))
    return bool(abs(x_log2 - rounded) < f32(1e-3)), int(rounded)


@dataclass(frozen=True)
class Int16SigmoidParams:
    """The effective input multiplier and right shift of reference_integer_ops::Logistic/Tanh
    for int16 (the power-of-two case already folded into 3 << shift, shift 0)."""

    input_multiplier: int
    input_right_shift: int


def int16_sigmoid_params(op: Op) -> Int16SigmoidParams:
    """LogisticPrepare / TanhPrepare for int16 (the same in TFLM and LiteRT)."""
    x, y = _io(op)
    assert_symmetric(x, y)
    is_pot, log2_in = checked_log2(scale_of(x))
    left_shift = (15 - 3) + log2_in
    allowed = (0,) if op.kind is OpKind.LOGISTIC else (0, 1)
    if is_pot and left_shift in allowed:
        multiplier, shift = 3 << left_shift, 0
    else:
        real = float(scale_of(x)) * 4096.0 * 3.0
        shift = 0
        while real <= 32767.0 / 2.0 and shift <= 30:
            shift += 1
            real *= 2.0
        multiplier = int(real)
        assert multiplier <= 32767, "the rule sigmoid_input_scale refuses int16 input scales this large"
    out_pot, log2_out = checked_log2(scale_of(y))
    assert out_pot and log2_out == -15, "the rules logistic_output and tanh_output require 2^-15"
    return Int16SigmoidParams(multiplier, shift)


SigmoidParams = FixedPointSigmoidParams | Int16SigmoidParams | LookupTable | None


def prepare_sigmoid(op: Op, setting: Setting) -> SigmoidParams:
    """LOGISTIC and TANH: int16 interpolates TFLite's sigmoid table (both runtimes); int8 is
    gemmlowp fixed point in TFLM and LiteRT's float-built table; float32 needs nothing."""
    dtype = op.outputs[0].dtype
    if dtype is DType.FLOAT32:
        return None
    if dtype is DType.INT16:
        return int16_sigmoid_params(op)
    if setting.rounding is Rounding.LITERT:
        return LookupTable(litert_sigmoid_lut(op))
    return fixed_point_sigmoid_params(op)


# --- HARD_SWISH ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HardSwishParams:
    input_zero_point: int
    output_zero_point: int
    reluish_multiplier: int  # int16 fixed point
    reluish_exponent: int
    output_multiplier: int  # int16 fixed point
    output_exponent: int  # <= 0


def _downscale_to_int16(multiplier: int) -> int:
    """DownScaleInt32ToInt16Multiplier: round the Q31 multiplier to Q15."""
    if multiplier >= (1 << 31) - 1 - (1 << 15):
        return 32767
    return (multiplier + (1 << 15)) >> 16


HARD_SWISH_OUTPUT_EXPONENT = PrepareRule(
    "The output multiplier (input scale / 128 / output scale, as a Q31 multiplier and exponent) "
    "has exponent 0 or less (TFLite shifts the result right only).")


def hard_swish_params(op: Op) -> HardSwishParams:
    """HardSwishPrepare (TFLM and LiteRT agree: float32 scale ratios, widened to double)."""
    x, y = _io(op)
    hires_input_scale = f32(1.0 / 128.0) * f32(scale_of(x))
    output_multiplier, output_exponent = quantize_multiplier(float(hires_input_scale / f32(scale_of(y))))
    HARD_SWISH_OUTPUT_EXPONENT.require(
        output_exponent <= 0, op,
        lambda: f"input scale {scale_of(x):g}, output scale {scale_of(y):g} (exponent {output_exponent})")
    reluish_multiplier, reluish_exponent = quantize_multiplier(
        float(hires_input_scale / f32(3.0 / 32768.0)))
    return HardSwishParams(zero_point_of(x), zero_point_of(y),
                           _downscale_to_int16(reluish_multiplier), reluish_exponent,
                           _downscale_to_int16(output_multiplier), output_exponent)


def prepare_hard_swish(op: Op, setting: Setting) -> HardSwishParams | None:
    return None if op.outputs[0].dtype is DType.FLOAT32 else hard_swish_params(op)


# --- RELU, RELU6, LEAKY_RELU, ABS, QUANTIZE (int): one rescale-and-clamp ------------------


@dataclass(frozen=True)
class RescaleParams:
    """out = clamp(output_offset + rescale(x - input_offset)), where rescale uses the positive
    pair for values >= 0 and the negative pair (negated result if negate_negative) below 0;
    `absolute` takes |x - input_offset| first; `identity` skips the multiplier entirely."""

    input_offset: int
    output_offset: int
    positive_multiplier: int
    positive_shift: int
    negative_multiplier: int
    negative_shift: int
    negate_negative: bool
    absolute: bool
    identity: bool
    activation_min: int
    activation_max: int


def plain_rescale(op: Op, multiplier: int, shift: int, low: int, high: int, *,
                  absolute: bool = False, identity: bool = False) -> RescaleParams:
    """One multiplier for both signs (everything but LEAKY_RELU and TFLM's RELU6)."""
    x, y = _io(op)
    return RescaleParams(zero_point_of(x), zero_point_of(y), multiplier, shift, multiplier, shift,
                         False, absolute, identity, low, high)


def relu_params(op: Op, rounding: Rounding) -> RescaleParams:
    """RELU and RELU6: ReluPrepare/CalculateReluOpData rescale by the scale ratio (see
    _scale_ratio) and clamp at zp + roundf(act / output_scale). TFLM's RELU6 differs: its
    Relu6Prepare clamps in the input's own quantized domain to [zp, zp + round(6 / input_scale)]
    and never rescales (the output quantization is ignored); LiteRT's RELU6 rescales like RELU."""
    x, y = _io(op)
    if x.dtype is DType.INT16:
        assert_symmetric(x, y)
    low, high = dtype_range(y.dtype)
    if op.kind is OpKind.RELU6 and rounding is Rounding.TFLM:
        zero = zero_point_of(x)
        six = min(max(int(round_half_away(f32(6.0) / f32(scale_of(x)))) + zero, low), high)
        return RescaleParams(0, 0, 0, 0, 0, 0, False, False, True, zero, six)
    multiplier, shift = checked_multiplier(op, _scale_ratio(scale_of(x), scale_of(y), rounding))
    out_zp = zero_point_of(y)
    act_low = max(low, out_zp + int(round_half_away(f32(0.0) / f32(scale_of(y)))))
    act_high = high
    if op.kind is OpKind.RELU6:
        act_high = min(high, out_zp + int(round_half_away(f32(6.0) / f32(scale_of(y)))))
    return plain_rescale(op, multiplier, shift, act_low, act_high)


def leaky_relu_params(op: Op, rounding: Rounding) -> RescaleParams:
    """LeakyReluPrepare: identity and alpha multipliers (input_scale * alpha / output_scale in
    float32 for LiteRT, in double for TFLM, like _scale_ratio); a negative alpha is applied as
    a positive multiplier whose result is negated."""
    x, y = _io(op)
    options = op.options
    assert isinstance(options, LeakyReluOptions)
    if x.dtype is DType.INT16:
        assert_symmetric(x, y)
    if rounding is Rounding.TFLM:
        alpha = float(scale_of(x)) * float(f32(options.alpha)) / float(scale_of(y))
    else:
        alpha = float(f32(scale_of(x)) * f32(options.alpha) / f32(scale_of(y)))
    alpha_multiplier, alpha_shift = checked_multiplier(op, alpha)
    identity_multiplier, identity_shift = checked_multiplier(op, _scale_ratio(scale_of(x), scale_of(y), rounding))
    low, high = dtype_range(y.dtype)
    return RescaleParams(zero_point_of(x), zero_point_of(y), identity_multiplier, identity_shift,
                         abs(alpha_multiplier), alpha_shift, alpha_multiplier < 0, False, False,
                         low, high)


def abs_params(op: Op, rounding: Rounding) -> RescaleParams:
    """PrepareAbsRsqrt for ABS: rescale only when the scales differ (as float32 values)."""
    x, y = _io(op)
    if x.dtype is DType.INT16:
        assert_symmetric(x, y)
    low, high = dtype_range(y.dtype)
    if f32(scale_of(x)) == f32(scale_of(y)):
        return plain_rescale(op, 0, 0, low, high, absolute=True, identity=True)
    multiplier, shift = checked_multiplier(op, _scale_ratio(scale_of(x), scale_of(y), rounding))
    return plain_rescale(op, multiplier, shift, low, high, absolute=True)


def prepare_relu(op: Op, setting: Setting) -> RescaleParams | None:
    """RELU, RELU6 and LEAKY_RELU (float32: none; the float kernels read LEAKY_RELU's alpha)."""
    if op.outputs[0].dtype is DType.FLOAT32:
        return None
    if op.kind is OpKind.LEAKY_RELU:
        return leaky_relu_params(op, setting.rounding)
    return relu_params(op, setting.rounding)


def prepare_abs(op: Op, setting: Setting) -> RescaleParams | None:
    return None if op.outputs[0].dtype is DType.FLOAT32 else abs_params(op, setting.rounding)


def prepare_neg(op: Op, setting: Setting) -> None:
    """NEG is float32 only (TFLM's NEG has no integer kernel): nothing to prepare."""
    return


# --- RSQRT --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RsqrtParams:
    input_zero_point: int
    output_zero_point: int
    multiplier: int
    shift: int


def rsqrt_params(op: Op, rounding: Rounding) -> RsqrtParams:
    """SetRsqrtOutputMultiplier: 1 / (sqrt(input_scale) * output_scale). LiteRT takes the
    square root and the product in float32, as its source reads; the TFLM wheel measurably
    works in double (with the float32 product, int16 RSQRT misses TFLM at x = 5793 for scales
    0.001 -> 0.001)."""
    x, y = _io(op)
    if x.dtype is DType.INT16:
        assert_symmetric(x, y)
    if rounding is Rounding.TFLM:
        product = math.sqrt(float(scale_of(x))) * float(scale_of(y))
    else:
        product = float(f32(np.sqrt(f32(scale_of(x)))) * f32(scale_of(y)))
    multiplier, shift = quantize_multiplier(1.0 / product)
    return RsqrtParams(zero_point_of(x), zero_point_of(y), multiplier, shift)


def litert_rsqrt_lut16(op: Op) -> np.ndarray:
    """LiteRT's int16 RSQRT table (elementwise.cc Prepare): LUTPopulate<int16_t> in float of
    1 / sqrtf(x), with 32767 * output_scale for x <= 0."""
    x, y = _io(op)
    out_scale = f32(scale_of(y))

    def transform(value: float) -> float:
        if f32(value) <= f32(0.0):
            return float(f32(32767) * out_scale)
        return float(f32(1.0) / f32(np.sqrt(f32(value))))

    return lut_int16(transform, f32, scale_of(x), zero_point_of(x), scale_of(y), zero_point_of(y))


def prepare_rsqrt(op: Op, setting: Setting) -> RsqrtParams | LookupTable | None:
    """int16 in LiteRT mode interpolates LiteRT's float-built table; every other integer case
    computes per element (RsqrtEvalQuantized)."""
    dtype = op.outputs[0].dtype
    if dtype is DType.FLOAT32:
        return None
    if dtype is DType.INT16 and setting.rounding is Rounding.LITERT:
        return LookupTable(litert_rsqrt_lut16(op))
    return rsqrt_params(op, setting.rounding)


# --- SOFTMAX int8 -> int8 / int16 ----------------------------------------------------------

SCALED_DIFF_INTEGER_BITS = 5  # the exp input is Q5.26
ACCUMULATION_INTEGER_BITS = 12  # the sum of exps is Q12.19
# The int32 sum of at most this many Q12.19 values below 1.0 cannot overflow.
MAX_ROW_SIZE = (1 << 31) // (1 << (31 - ACCUMULATION_INTEGER_BITS)) - 1
MAX_ROW_SIZE_S8 = MAX_ROW_SIZE
MAX_ROW_SIZE_S16 = 65536  # MCUGEN_SOFTMAX_S16_MAX_ROW
MAX_ROW_SIZE_F32 = 1 << 30  # the float kernel's row count and size are int


@dataclass(frozen=True)
class SoftmaxParams:
    input_multiplier: int
    input_left_shift: int
    diff_min: int
    output_bits: int  # 8 or 16: outputs are offset by -2^(bits-1)


def softmax_params(op: Op) -> SoftmaxParams:
    """SoftmaxPrepare: PreprocessSoftmaxScaling and CalculateInputRadius."""
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None and x.quant is not None
    options = op.options
    assert isinstance(options, SoftmaxOptions)
    assert x.dtype is DType.INT8 and y.dtype in (DType.INT8, DType.INT16), "the rule dtype_pairs"
    max_real_multiplier = float((1 << 31) - 1)
    real = min(options.beta * x.quant.single_scale * float(1 << (31 - SCALED_DIFF_INTEGER_BITS)),
               max_real_multiplier)
    # QuantizeMultiplierGreaterThanOne CHECK-fails otherwise; the rule softmax_beta refuses it.
    assert real > 1.0, "the rule softmax_beta"
    multiplier, left_shift = quantize_multiplier(real)
    radius = math.floor(
        ((1 << SCALED_DIFF_INTEGER_BITS) - 1) * float(1 << (31 - SCALED_DIFF_INTEGER_BITS))
        / float(1 << left_shift)
    )
    return SoftmaxParams(multiplier, left_shift, -radius, 8 * y.dtype.itemsize)


# --- SOFTMAX int16 -------------------------------------------------------------------------


@dataclass(frozen=True)
class SoftmaxInt16Params:
    input_multiplier: int
    input_shift: int
    exp_lut: np.ndarray  # 513 int16
    one_over_one_plus_x_lut: np.ndarray  # 513 int16


def softmax_int16_params(op: Op, rounding: Rounding) -> SoftmaxInt16Params:
    """SoftmaxPrepare for int16: the input rescale (the same in both runtimes) and the exp and
    1/(1+x) tables, which TFLM builds in float with expf and LiteRT in double with exp."""
    x, y = _io(op)
    options = op.options
    assert isinstance(options, SoftmaxOptions)
    assert_symmetric(x, y)
    assert abs(scale_of(y) - 1.0 / 32768) <= 0.001 / 32768, "the rule softmax_output requires 1/32768"
    beta = f32(options.beta)
    if rounding is Rounding.TFLM:  # static_cast<double>(scale) * static_cast<double>(beta)
        scaled_beta = float(scale_of(x)) * float(beta)
    else:  # LiteRT: input->params.scale * params->beta, a float32 product
        scaled_beta = float(f32(scale_of(x)) * beta)
    multiplier, shift = checked_multiplier(op, scaled_beta / (10.0 / 65535.0))
    span = 65535
    if rounding is Rounding.TFLM:
        exp_lut = lut_int16(lambda v: float(expf(v)), f32, float(f32(10.0) / f32(span)), 32767,
                            float(f32(2.0) / f32(span)), 0)
        inv_lut = lut_int16(lambda v: float(f32(1.0) / (f32(1.0) + f32(v))), f32,
                            float(f32(1.0) / f32(span)), -32768, float(f32(2.0) / f32(span)), 0)
    else:
        exp_lut = lut_int16(libm_exp, np.float64, 10.0 / span, 32767, 2.0 / span, 0)
        inv_lut = lut_int16(lambda v: 1.0 / (1.0 + v), np.float64, 1.0 / span, -32768,
                            2.0 / span, 0)
    return SoftmaxInt16Params(multiplier, shift, exp_lut, inv_lut)


def prepare_softmax(op: Op, setting: Setting) -> SoftmaxParams | SoftmaxInt16Params | None:
    """int8 input: the same in both runtimes; int16: the tables differ by runtime; float32:
    the kernel reads beta from the options."""
    x, y = _io(op)
    if y.dtype is DType.FLOAT32:
        return None
    if x.dtype is DType.INT16:
        return softmax_int16_params(op, setting.rounding)
    return softmax_params(op)
