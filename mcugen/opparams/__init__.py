"""Build-time per-op parameters: TFLite's Prepare step, shared by the code generator and the
numpy reference.

Multipliers and shifts, activation clamps, padding, loop geometry and the operand checks that
go with them are facts of the model, not of either implementation: the C emitters
(mcugen.codegen.ops_*) and the reference kernels (mcugen.reference.*) both take them from
here, so the two paths differ only in the per-element arithmetic. That arithmetic is not
here: it lives, independently, in the generated C and in mcugen.reference.

This module holds the shared int8 conv, FC, pool and softmax parameters; each later family has
its own module beside it (conv, activation, movement, reduce, resize).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import DType, Op, SoftmaxOptions
from ..quantization import per_channel_multipliers, quantize_multiplier

# --- CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED -----------------------------------------


def conv_multipliers(op: Op) -> tuple[np.ndarray, np.ndarray]:
    """(multipliers, shifts), one per output channel.

    PopulateConvolutionQuantizationParams: a per-tensor filter scale is broadcast to every
    output channel; the product input_scale * filter_scale is formed in double.
    """
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert x is not None and w is not None and x.quant and w.quant and y.quant
    out_channels = y.shape[-1]
    scales = w.quant.scale if w.quant.per_channel else w.quant.scale * out_channels
    return per_channel_multipliers(x.quant.single_scale, scales, y.quant.single_scale)


def check_int8_operands(op: Op) -> None:
    """These kernels take int8 activations and weights and an int32 bias, nothing else."""
    expected = [DType.INT8, DType.INT8, DType.INT32]
    for tensor, dtype in zip(op.inputs, expected, strict=False):
        if tensor is not None and tensor.dtype is not dtype:
            raise UnsupportedError(
                f"{op.where()}: tensor '{tensor.name}' is {tensor.dtype.short}, the int8 kernel "
                f"needs {dtype.short}"
            )
    if op.outputs[0].dtype is not DType.INT8:
        raise UnsupportedError(f"{op.where()}: output is {op.outputs[0].dtype.short}, not int8")


def fc_multipliers(op: Op) -> tuple[np.ndarray, np.ndarray]:
    """TFLM's (multiplier, shift) per output unit (per-tensor: one pair, broadcast by numpy)."""
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert x is not None and w is not None and x.quant and w.quant and y.quant
    if w.quant.per_channel:
        return per_channel_multipliers(x.quant.single_scale, w.quant.scale, y.quant.single_scale)
    # GetQuantizedConvolutionMultipler: static_cast<double>(input_scale * filter_scale), a
    # float32 product, unlike the double product of the per-channel path.
    product = float(np.float32(x.quant.single_scale) * np.float32(w.quant.single_scale))
    multiplier, shift = quantize_multiplier(product / float(np.float32(y.quant.single_scale)))
    return np.array([multiplier], dtype=np.int32), np.array([shift], dtype=np.int32)


def fc_real_scales(op: Op) -> np.ndarray:
    """LiteRT's reference requantization factors, double, one per weight scale."""
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert x is not None and w is not None and x.quant and w.quant and y.quant
    x_scale = float(np.float32(x.quant.single_scale))
    y_scale = float(np.float32(y.quant.single_scale))
    return np.array(
        [x_scale * float(np.float32(s)) / y_scale for s in w.quant.scale], dtype=np.float64
    )


# --- SOFTMAX -----------------------------------------------------------------------------

SCALED_DIFF_INTEGER_BITS = 5  # the exp input is Q5.26
ACCUMULATION_INTEGER_BITS = 12  # the sum of exps is Q12.19
# The int32 sum of at most this many Q12.19 values below 1.0 cannot overflow.
MAX_ROW_SIZE = (1 << 31) // (1 << (31 - ACCUMULATION_INTEGER_BITS)) - 1


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
    if x.dtype is not DType.INT8 or y.dtype not in (DType.INT8, DType.INT16):
        raise UnsupportedError(f"{op.where()}: softmax supports int8 -> int8/int16, got "
                               f"{x.dtype.short} -> {y.dtype.short}")
    max_real_multiplier = float((1 << 31) - 1)
    real = min(options.beta * x.quant.single_scale * float(1 << (31 - SCALED_DIFF_INTEGER_BITS)),
               max_real_multiplier)
    if not real > 1.0:  # QuantizeMultiplierGreaterThanOne CHECK-fails
        raise UnsupportedError(f"{op.where()}: beta * input scale {real / 2**26:g} is too small")
    multiplier, left_shift = quantize_multiplier(real)
    radius = math.floor(
        ((1 << SCALED_DIFF_INTEGER_BITS) - 1) * float(1 << (31 - SCALED_DIFF_INTEGER_BITS))
        / float(1 << left_shift)
    )
    return SoftmaxParams(multiplier, left_shift, -radius, 8 * y.dtype.itemsize)
