"""Build-time parameters of the weighted ops: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV,
FULLY_CONNECTED and BATCH_MATMUL, in int8 and in int16x8 (int16 activations, int8 weights).

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
  bias type; LiteRT only when the op's quantized_bias_type option says INT32, see support.py).
- LiteRT's FULLY_CONNECTED, int8 and int16 alike: no integer multiplier at all but
  round(double(acc) * input_scale * weight_scale / output_scale): `DOUBLE`.
- BATCH_MATMUL: one per-tensor multiplier from GetQuantizedConvolutionMultipler (a float32
  product of the scales); int8 uses an int32 accumulator and Q31, int16 an int64 one and
  Q15_WIDE, in both runtimes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import DType, Op, OpKind, Tensor
from ..quantization import Rounding, per_channel_multipliers, quantize_multiplier
from . import fc_multipliers, fc_real_scales

# The shift range the int64 MultiplyByQuantizedMultiplier asserts (-31 <= shift < 8): the
# total right shift 15 - shift is then in [8, 46].
WIDE_SHIFT_RANGE = (-31, 7)
Q31_SHIFT_RANGE = (-31, 30)


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


# --- operand checks ----------------------------------------------------------------------

_BIAS_DTYPES = {DType.INT8: (DType.INT32,), DType.INT16: (DType.INT32, DType.INT64)}


def activation_dtype(op: Op) -> DType:
    """int8 or int16: the dtype of the input, the output and (BATCH_MATMUL) both inputs."""
    dtype = data_input(op).dtype
    if dtype not in _BIAS_DTYPES or op.outputs[0].dtype is not dtype:
        raise UnsupportedError(
            f"{op.where()}: {dtype.short} -> {op.outputs[0].dtype.short}; the kernels take int8 "
            "or int16 activations with an output of the same dtype"
        )
    return dtype


def bias_of(op: Op) -> Tensor | None:
    """The optional bias tensor (input 2; TRANSPOSE_CONV: input 3)."""
    index = 3 if op.kind is OpKind.TRANSPOSE_CONV else 2
    return op.inputs[index] if len(op.inputs) > index else None


def weights_of(op: Op) -> Tensor:
    w = op.inputs[1]
    assert w is not None
    return w


def check_weighted_operands(op: Op) -> DType:
    """int8 (int8 weights, int32 bias) or int16x8 (int8 weights, int32 or int64 bias).

    Returns the activation dtype; int16 activations must have zero point 0.
    """
    dtype = activation_dtype(op)
    w = weights_of(op)
    if w.dtype is not DType.INT8:
        raise UnsupportedError(f"{op.where()}: weights '{w.name}' are {w.dtype.short}, not int8")
    bias = bias_of(op)
    if bias is not None and bias.dtype not in _BIAS_DTYPES[dtype]:
        allowed = " or ".join(d.short for d in _BIAS_DTYPES[dtype])
        raise UnsupportedError(
            f"{op.where()}: bias '{bias.name}' is {bias.dtype.short}, {dtype.short} needs {allowed}"
        )
    if dtype is DType.INT16:
        check_zero_zero_points(op)
    return dtype


def check_zero_zero_points(op: Op) -> None:
    """TFLite's int16 kernels ignore activation zero points: they must be 0."""
    tensors = [t for t in op.inputs if t is not None and not t.is_constant] + list(op.outputs)
    for tensor in tensors:
        if tensor.dtype is DType.INT16 and tensor.quant and tensor.quant.single_zero_point != 0:
            raise UnsupportedError(
                f"{op.where()}: int16 tensor '{tensor.name}' has zero point "
                f"{tensor.quant.single_zero_point}, TFLite requires 0"
            )


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
        if (bias.dtype is DType.INT32 and rounding is Rounding.LITERT
                and option is not DType.INT32):
            raise UnsupportedError(
                f"{op.where()}: int32 bias '{bias.name}' of an int16 op without "
                "quantized_bias_type INT32: LiteRT reads it as int64"
            )
        return bias.dtype is DType.INT64
    return option is not DType.INT32


# --- rescale ----------------------------------------------------------------------------


def reduce_multiplier(multipliers: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The int64 MultiplyByQuantizedMultiplier's 16-bit multiplier and total right shift."""
    m = multipliers.astype(np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    return reduced.astype(np.int32), (15 - shifts.astype(np.int64)).astype(np.int32)


def _check_shifts(op: Op, shifts: np.ndarray, bounds: tuple[int, int]) -> None:
    low, high = bounds
    if shifts.size and (int(shifts.min()) < low or int(shifts.max()) > high):
        raise UnsupportedError(
            f"{op.where()}: rescale factor input_scale * weight_scale / output_scale needs a "
            f"shift in [{low}, {high}], got {int(shifts.min())}..{int(shifts.max())}"
        )


def _fixed_point(op: Op, multipliers: np.ndarray, shifts: np.ndarray, wide: bool,
                 per_channel: bool) -> Rescale:
    empty = np.zeros(0, dtype=np.float64)
    if wide:
        _check_shifts(op, shifts, WIDE_SHIFT_RANGE)
        reduced, total = reduce_multiplier(multipliers, shifts)
        return Rescale(RescaleKind.Q15_WIDE, 64, reduced, total, empty, per_channel)
    _check_shifts(op, shifts, Q31_SHIFT_RANGE)
    return Rescale(RescaleKind.Q31, 32, multipliers.astype(np.int32), shifts.astype(np.int32),
                   empty, per_channel)


def data_input(op: Op) -> Tensor:
    """The activation input: input 0, or input 2 of TRANSPOSE_CONV (after output_shape and
    the weights)."""
    x = op.inputs[2 if op.kind is OpKind.TRANSPOSE_CONV else 0]
    assert x is not None
    return x


def _conv_multipliers(op: Op) -> tuple[np.ndarray, np.ndarray]:
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
    check_weighted_operands(op)
    multipliers, shifts = _conv_multipliers(op)
    wide = wide_accumulator(op, rounding)
    return _fixed_point(op, multipliers, shifts, wide, per_channel=True)


def fc_rescale(op: Op, rounding: Rounding) -> Rescale:
    """FULLY_CONNECTED: TFLM's fixed point, or LiteRT's double-precision rescale."""
    check_weighted_operands(op)
    w = weights_of(op)
    assert w.quant is not None
    wide = wide_accumulator(op, rounding)
    if rounding is Rounding.LITERT:
        empty = np.zeros(0, dtype=np.int32)
        return Rescale(RescaleKind.DOUBLE, 64 if wide else 32, empty, empty, fc_real_scales(op),
                       w.quant.per_channel)
    multipliers, shifts = fc_multipliers(op)
    return _fixed_point(op, multipliers, shifts, wide, w.quant.per_channel)


def batch_matmul_rescale(op: Op) -> Rescale:
    """BATCH_MATMUL: GetQuantizedConvolutionMultipler's float32 product of the two input
    scales, over the output scale; the same in TFLM and LiteRT."""
    dtype = activation_dtype(op)
    lhs, rhs, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert lhs is not None and rhs is not None
    for tensor in (lhs, rhs, y):
        if tensor.quant is None or tensor.quant.per_channel:
            raise UnsupportedError(f"{op.where()}: '{tensor.name}' needs per-tensor quantization")
    if rhs.dtype is not dtype:
        raise UnsupportedError(
            f"{op.where()}: inputs are {dtype.short} and {rhs.dtype.short}, not the same dtype"
        )
    if dtype is DType.INT16:
        check_zero_zero_points(op)
    assert lhs.quant and rhs.quant and y.quant
    product = float(np.float32(lhs.quant.single_scale) * np.float32(rhs.quant.single_scale))
    multiplier, shift = quantize_multiplier(product / float(np.float32(y.quant.single_scale)))
    return _fixed_point(op, np.array([multiplier]), np.array([shift]), dtype is DType.INT16,
                        per_channel=False)


# --- TRANSPOSE_CONV geometry --------------------------------------------------------------


def transpose_conv_padding(padding_same: bool, out_size: int, filter_size: int, stride: int) -> int:
    """TFLite's ComputePaddingHeightWidth applied to the *output* size, as both runtimes do
    for TRANSPOSE_CONV: the 'conv output' of an out_size input is ceil(out_size / stride)
    (SAME) or (out_size - filter + stride) // stride (VALID, which always pads 0)."""
    if not padding_same:
        return 0
    conv_out = (out_size + stride - 1) // stride
    return max((conv_out - 1) * stride + filter_size - out_size, 0) // 2
