"""Build-time quantization arithmetic shared by the code generator and the Python reference.

These are the facts of TFLite's quantized kernels that are computed once per model, not per
element: how a real-valued rescale factor becomes an int32 multiplier and a shift, and the
output range a fused activation clamps to. The per-element arithmetic lives twice, on purpose:
in C (templates/runtime/kernels) and in numpy (mcugen/reference), and tests hold both to TFLite.
"""

from __future__ import annotations

import enum
import functools
import math

import numpy as np

from .ir import Activation, DType, Quant


class Rounding(enum.Enum):
    """Which TFLite the generated code reproduces to the bit.

    TFLM: TensorFlow Lite Micro, which rescales every int32 accumulator with a fixed-point
    multiplier: MultiplyByQuantizedMultiplier rounds twice (a rounding doubling high multiply,
    then a rounding right shift). LITERT: the LiteRT 2.3.0 package's BUILTIN_REF reference
    kernels, which (as measured) do the same for CONV_2D, DEPTHWISE_CONV_2D, ADD, MEAN and
    SOFTMAX, and whose pooling is identical too. The one arithmetic difference is
    FULLY_CONNECTED: LiteRT's reference kernel rescales the accumulator in double precision,
    round(acc * input_scale * weight_scale / output_scale) with ties away from zero, instead of
    a fixed-point multiplier (see mcugen.ops.matmul.reference).
    """

    TFLM = "tflm"
    LITERT = "litert"


def _round_half_away(value: float) -> int:
    """TfLiteRound / std::round: halves go away from zero."""
    return math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)


@functools.lru_cache(maxsize=4096)  # a tiled chain asks again for each stripe's call
def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: real ~= multiplier * 2^(shift - 31), multiplier in [2^30, 2^31).

    Returns (multiplier, shift); shift > 0 is a left shift. Tiny factors flush to zero.
    """
    if real == 0.0:
        return 0, 0
    fraction, shift = math.frexp(real)
    fixed = _round_half_away(fraction * (1 << 31))
    if fixed == 1 << 31:
        fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return fixed, shift


def per_channel_multipliers(
    input_scale: float, weight_scales: tuple[float, ...], output_scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """Multipliers and shifts for input*weight -> output rescaling, one per output channel.

    Like TFLite's PopulateConvolutionQuantizationParams, the product is formed in double from
    the float32 scales stored in the model.
    """
    # quantize_multiplier on every channel at once (a build asks for hundreds of channels per
    # op, twice): frexp and the rounding are exact in float64, so the values are the same
    real = float(input_scale) * np.asarray(weight_scales, dtype=np.float64) / float(output_scale)
    fraction, shifts = np.frexp(real)
    fixed = np.floor(np.abs(fraction) * float(1 << 31) + 0.5) * np.sign(fraction)
    carry = fixed == float(1 << 31)
    fixed[carry] /= 2
    shifts[carry] += 1
    flushed = shifts < -31
    fixed[flushed] = 0
    shifts[flushed] = 0
    return fixed.astype(np.int32), shifts.astype(np.int32)


def dtype_range(dtype: DType) -> tuple[int, int]:
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def activation_range(activation: Activation, quant: Quant, dtype: DType) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized: the fused activation as a quantized clamp."""
    low, high = dtype_range(dtype)
    scale, zero_point = quant.single_scale, quant.single_zero_point

    def quantize(value: float) -> int:
        # TfLiteRound(value / scale) computed in float32, as TFLite does.
        return zero_point + _round_half_away(float(np.float32(value) / np.float32(scale)))

    if activation is Activation.NONE:
        return low, high
    if activation is Activation.RELU:
        return max(low, quantize(0.0)), high
    if activation is Activation.RELU6:
        return max(low, quantize(0.0)), min(high, quantize(6.0))
    if activation is Activation.RELU_N1_TO_1:
        return max(low, quantize(-1.0)), min(high, quantize(1.0))
    raise ValueError(f"activation {activation.name} has no quantized range")
