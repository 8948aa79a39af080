"""Build-time parameters of the weighted ops: CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV
here, and the rescale that FULLY_CONNECTED and BATCH_MATMUL (mcugen.ops.matmul) share with
them, in int8 and in int16x8 (int16 activations, int8 weights).

What the two TFLite runtimes do with the accumulator (read in tflite-micro's and LiteRT's
kernels/internal/reference/integer_ops/*.h and kernels/*.cc, and measured with tests):

- int8: an int32 accumulator (wrapping), then MultiplyByQuantizedMultiplier(int32 x, ...),
  which rounds twice (a rounding doubling high multiply, then a rounding shift): `Q31`.
- int16x8 with an int64 bias (the converter's default), or no bias: an int64 accumulator, then
  the int64 overload MultiplyByQuantizedMultiplier(int64_t x, ...), which is a different
  computation: the multiplier is first reduced to 16 bits, (m + 2^15) >> 16 (0x7FFF when m >=
  0x7FFF0000), and the product is rounded once, half up, by 15 - shift bits; the result is
  truncated to int32: `Q15_WIDE`. Both runtimes' double-rounding builds use this same code.
- int16x8 with an int32 bias: an int32 accumulator and the Q31 path (TFLM picks it from the
  bias type; LiteRT only when the op's quantized_bias_type option says INT32, see
  LITERT_INT32_BIAS).
- LiteRT's FULLY_CONNECTED, int8 and int16 alike: no integer multiplier at all but
  round(double(acc) * input_scale * weight_scale / output_scale): `DOUBLE`.
- BATCH_MATMUL: one per-tensor multiplier from GetQuantizedConvolutionMultipler (a float32
  product of the scales); int8 uses an int32 accumulator and Q31, int16 an int64 one and
  Q15_WIDE, in both runtimes.

Each kind's prepare assumes its plain support rules hold (mcugen.ops.conv.rules and the shared
weighted-op rules in mcugen.ops.rules: dtypes, int16 zero points 0, bias dtypes) and refuses
only what needs the computed parameters, through the PrepareRules below.
"""

from __future__ import annotations

import enum

import numpy as np

from ...ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    Op,
    OpKind,
    Padding,
    Tensor,
    TransposeConvOptions,
)
from ...quantization import Rounding, per_channel_multipliers
from ...records import dataclass
from ..base import PrepareRule, Setting
from ..common import conv_padding, output_clamp

# The shift range the int64 MultiplyByQuantizedMultiplier asserts (-31 <= shift < 8): the
# total right shift 15 - shift is then in [8, 46].
WIDE_SHIFT_RANGE = (-31, 7)
Q31_SHIFT_RANGE = (-31, 30)  # TFLite's QuantizeMultiplier range, which the C kernels check

SHIFT_RULE = PrepareRule(
    "The rescale factor input_scale * weight_scale / output_scale needs a shift in "
    f"[{Q31_SHIFT_RANGE[0]}, {Q31_SHIFT_RANGE[1]}] with an int32 accumulator, in "
    f"[{WIDE_SHIFT_RANGE[0]}, {WIDE_SHIFT_RANGE[1]}] with an int64 one (int16 activations)."
)
LITERT_INT32_BIAS = PrepareRule(
    "With --rounding litert, an int32 bias of an int16 op needs the option quantized_bias_type "
    "INT32: without it LiteRT reads the bias as int64, which mcugen does not reproduce."
)


class RescaleKind(enum.Enum):
    """How an accumulator becomes an output value (the C enum mcugen_rescale_kind)."""

    Q31 = 0
    Q15_WIDE = 1
    DOUBLE = 2


@dataclass(frozen=True)
class Rescale:
    """The per-output-channel requantization of one op.

    accumulator_bits 32 means the exact sum is wrapped to int32 (TFLite's int32 accumulator)
    before it is rescaled. Q31: multipliers and TFLite shifts (> 0 left). Q15_WIDE: reduced
    16-bit multipliers and total right shifts (15 - shift). DOUBLE: scales. Per-tensor
    quantization keeps one entry (per_channel False) that serves every channel.
    """

    kind: RescaleKind
    accumulator_bits: int
    multipliers: np.ndarray  # int32
    shifts: np.ndarray  # int32
    scales: np.ndarray  # float64
    per_channel: bool


# --- operands ----------------------------------------------------------------------------


def data_input(op: Op) -> Tensor:
    """The activation input: input 0, or input 2 of TRANSPOSE_CONV (after output_shape and
    the weights)."""
    x = op.inputs[2 if op.kind is OpKind.TRANSPOSE_CONV else 0]
    assert x is not None
    return x


def bias_of(op: Op) -> Tensor | None:
    """The optional bias tensor (input 2; TRANSPOSE_CONV: input 3)."""
    index = 3 if op.kind is OpKind.TRANSPOSE_CONV else 2
    return op.inputs[index] if len(op.inputs) > index else None


def weights_of(op: Op) -> Tensor:
    w = op.inputs[1]
    assert w is not None
    return w


def activation_dtype(op: Op) -> DType:
    """int8 or int16: the dtype of the input, the output and (BATCH_MATMUL) both inputs. The
    support rules (activation dtypes, same input and output dtype) have checked it."""
    dtype = data_input(op).dtype
    assert dtype in (DType.INT8, DType.INT16) and op.outputs[0].dtype is dtype, op.where()
    return dtype


def is_int16(op: Op) -> bool:
    """int16x8 (int16 activations, int8 weights) rather than int8."""
    return data_input(op).dtype is DType.INT16


def wide_accumulator(op: Op, rounding: Rounding) -> bool:
    """int64 accumulation for int16 activations, unless an int32 bias, or (no bias) the
    option quantized_bias_type INT32 of CONV_2D and FULLY_CONNECTED, asks for int32 (TFLM's
    requires_int32_accum; LiteRT's data->quantized_bias_type). DEPTHWISE_CONV_2D and
    TRANSPOSE_CONV have no such option in TFLM: int64 always.

    LiteRT reads an int32 bias of an int16 op as int64 memory unless quantized_bias_type says
    INT32 (measured: every output differs); mcugen cannot reproduce that read and refuses it.
    """
    if activation_dtype(op) is not DType.INT16:
        return False
    bias = bias_of(op)
    option = getattr(op.options, "quantized_bias_type", None)
    if bias is not None:
        LITERT_INT32_BIAS.require(
            not (bias.dtype is DType.INT32 and rounding is Rounding.LITERT
                 and option is not DType.INT32),
            op, lambda: f"int32 bias '{bias.name}' without quantized_bias_type INT32")
        return bias.dtype is DType.INT64
    return option is not DType.INT32


# --- rescale ----------------------------------------------------------------------------


def reduce_multiplier(multipliers: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The int64 MultiplyByQuantizedMultiplier's 16-bit multiplier and total right shift."""
    m = multipliers.astype(np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    return reduced.astype(np.int32), (15 - shifts.astype(np.int64)).astype(np.int32)


def _check_shifts(op: Op, shifts: np.ndarray, bounds: tuple[int, int], rule: PrepareRule) -> None:
    low, high = bounds
    rule.require(
        not shifts.size or low <= int(shifts.min()) and int(shifts.max()) <= high,
        op, lambda: f"shifts {int(shifts.min())}..{int(shifts.max())}")


def fixed_point(op: Op, multipliers: np.ndarray, shifts: np.ndarray, wide: bool,
                per_channel: bool, rule: PrepareRule = SHIFT_RULE) -> Rescale:
    """The Q31 or (wide) Q15_WIDE rescale of (multiplier, shift) pairs; `rule` refuses a shift
    outside the accumulator's range."""
    empty = np.zeros(0, dtype=np.float64)
    if wide:
        _check_shifts(op, shifts, WIDE_SHIFT_RANGE, rule)
        reduced, total = reduce_multiplier(multipliers, shifts)
        return Rescale(RescaleKind.Q15_WIDE, 64, reduced, total, empty, per_channel)
    _check_shifts(op, shifts, Q31_SHIFT_RANGE, rule)
    return Rescale(RescaleKind.Q31, 32, multipliers.astype(np.int32), shifts.astype(np.int32),
                   empty, per_channel)


def conv_multipliers(op: Op) -> tuple[np.ndarray, np.ndarray]:
    """PopulateConvolutionQuantizationParams: one (multiplier, shift) per output channel, the
    scale product formed in double; a per-tensor weight scale serves every channel."""
    x, w, y = data_input(op), weights_of(op), op.outputs[0]
    assert x.quant and w.quant and y.quant
    channels = y.shape[-1]
    scales = w.quant.scale if w.quant.per_channel else w.quant.scale * channels
    return per_channel_multipliers(x.quant.single_scale, scales, y.quant.single_scale)


def conv_rescale(op: Op, rounding: Rounding) -> Rescale:
    """CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV: per-channel multipliers (a per-tensor
    weight scale repeated, as PopulateConvolutionQuantizationParams does), both runtimes."""
    multipliers, shifts = conv_multipliers(op)
    wide = wide_accumulator(op, rounding)
    return fixed_point(op, multipliers, shifts, wide, per_channel=True)


# --- CONV_2D, DEPTHWISE_CONV_2D -----------------------------------------------------------


@dataclass(frozen=True)
class ConvParams:
    """TFLite's conv Prepare of one CONV_2D or DEPTHWISE_CONV_2D (or one stripe of it)."""

    int16: bool
    rescale: Rescale  # int8: Q31; int16: Q15_WIDE, or Q31 with an int32 accumulator
    input_offset: int  # -input zero point
    output_offset: int
    padding: tuple[int, int]  # (top, left)
    clamp: tuple[int, int]  # the fused activation's (low, high) in the output's dtype
    depth_multiplier: int  # DEPTHWISE_CONV_2D: output channels per input channel; CONV_2D 1


def prepare_conv(op: Op, setting: Setting) -> ConvParams:
    """CONV_2D and DEPTHWISE_CONV_2D: the rescale, offsets, padding and clamp."""
    o = op.options
    assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions))
    x, w, y = data_input(op), weights_of(op), op.outputs[0]
    assert x.quant is not None and y.quant is not None
    kh, kw = w.shape[1], w.shape[2]
    padding = (
        conv_padding(o.padding, x.shape[1], kh, o.stride_h, o.dilation_h, y.shape[1]),
        conv_padding(o.padding, x.shape[2], kw, o.stride_w, o.dilation_w, y.shape[2]),
    )
    # The rule depthwise_channels has checked that the input channels divide the output's.
    multiplier = w.shape[3] // x.shape[3] if op.kind is OpKind.DEPTHWISE_CONV_2D else 1
    return ConvParams(
        int16=is_int16(op),
        rescale=conv_rescale(op, setting.rounding),
        input_offset=-x.quant.single_zero_point,
        output_offset=y.quant.single_zero_point,
        padding=padding,
        clamp=output_clamp(op),
        depth_multiplier=multiplier,
    )


# --- TRANSPOSE_CONV -----------------------------------------------------------------------


@dataclass(frozen=True)
class TransposeConvParams:
    int16: bool
    rescale: Rescale
    input_offset: int
    output_offset: int
    padding: tuple[int, int]  # (top, left), cropped from the scattered canvas
    clamp: tuple[int, int]


def transpose_conv_padding(padding_same: bool, out_size: int, filter_size: int, stride: int) -> int:
    """TFLite's ComputePaddingHeightWidth applied to the *output* size, as both runtimes do
    for TRANSPOSE_CONV: the 'conv output' of an out_size input is ceil(out_size / stride)
    (SAME) or (out_size - filter + stride) // stride (VALID, which always pads 0)."""
    if not padding_same:
        return 0
    conv_out = (out_size + stride - 1) // stride
    return max((conv_out - 1) * stride + filter_size - out_size, 0) // 2


def prepare_transpose_conv(op: Op, setting: Setting) -> TransposeConvParams:
    o = op.options
    assert isinstance(o, TransposeConvOptions)
    x, w, y = data_input(op), weights_of(op), op.outputs[0]
    assert x.quant is not None and y.quant is not None
    same = o.padding is Padding.SAME
    return TransposeConvParams(
        int16=is_int16(op),
        rescale=conv_rescale(op, setting.rounding),
        input_offset=-x.quant.single_zero_point,
        output_offset=y.quant.single_zero_point,
        padding=(transpose_conv_padding(same, y.shape[1], w.shape[1], o.stride_h),
                 transpose_conv_padding(same, y.shape[2], w.shape[2], o.stride_w)),
        clamp=output_clamp(op),
    )
