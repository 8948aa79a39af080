"""ADD, int8, bit-exact with TFLite's reference integer kernel in both modes (TFLM, LiteRT).

reference_integer_ops::AddFunc (integer_ops/add.h, identical in TFLM and LiteRT): each input
gets its offset (-zero_point), is shifted left by 20 bits, and is rescaled by its own
multiplier (MultiplyByQuantizedMultiplierSmallerThanOneExp); the int32 sum is rescaled by the
output multiplier, offset by the output zero point and clamped to the fused activation. The
Prepare-time parameters (CalculateOpDataAdd in TFLM, add.cc Prepare in LiteRT) are the same
formulas in both.

Rounding: the LiteRT 2.3.0 wheel's ADD measurably rounds twice (doubling high multiply, then
rounding shift), exactly like TFLM: every element where a single rounding of the 64-bit
product would differ, over exhaustive 256 x 256 input grids, matches double rounding. So the
arithmetic is the same in both modes.

Broadcasting follows numpy (shapes aligned on the right, size-1 dimensions stretched), which
is what TFLite's BroadcastAdd6DSlow computes after extending both shapes on the left.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import AddOptions, Op, OpKind
from ..quantization import Rounding, activation_range, quantize_multiplier
from . import reference
from .fixedpoint import clamp, multiply_by_quantized_multiplier

# int8 inputs: 255 << 20 stays far from int32 overflow (int16 would use 15).
ADD_LEFT_SHIFT_INT8 = 20


@dataclass(frozen=True)
class AddQuantParams:
    """Build-time requantization of an int8 ADD; shifts are <= 0 (right shifts)."""

    input1_offset: int
    input1_multiplier: int
    input1_shift: int
    input2_offset: int
    input2_multiplier: int
    input2_shift: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    left_shift: int
    activation_min: int
    activation_max: int


def _smaller_than_one(real: float, what: str, op: Op) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: TFLite CHECK-fails outside (0, 1)."""
    if not 0.0 < real < 1.0:
        raise UnsupportedError(f"{op.where()}: {what} rescale {real:g} is outside (0, 1)")
    return quantize_multiplier(real)


def add_quant_params(op: Op) -> AddQuantParams:
    a, b, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert a is not None and b is not None and a.quant and b.quant and y.quant
    options = op.options
    assert isinstance(options, AddOptions)
    scale_a, scale_b, scale_y = a.quant.single_scale, b.quant.single_scale, y.quant.single_scale
    # The scales are float32 values; TFLite forms these ratios in double.
    twice_max_input_scale = 2.0 * max(scale_a, scale_b)
    left_shift = ADD_LEFT_SHIFT_INT8
    m1, s1 = _smaller_than_one(scale_a / twice_max_input_scale, "input 1", op)
    m2, s2 = _smaller_than_one(scale_b / twice_max_input_scale, "input 2", op)
    mo, so = _smaller_than_one(twice_max_input_scale / ((1 << left_shift) * scale_y), "output", op)
    try:
        low, high = activation_range(options.activation, y.quant, y.dtype)
    except ValueError:
        raise UnsupportedError(
            f"{op.where()}: fused activation {options.activation.name} is not supported"
        ) from None
    return AddQuantParams(
        input1_offset=-a.quant.single_zero_point,
        input1_multiplier=m1,
        input1_shift=s1,
        input2_offset=-b.quant.single_zero_point,
        input2_multiplier=m2,
        input2_shift=s2,
        output_offset=y.quant.single_zero_point,
        output_multiplier=mo,
        output_shift=so,
        left_shift=left_shift,
        activation_min=low,
        activation_max=high,
    )


def add_int8(a: np.ndarray, b: np.ndarray, q: AddQuantParams) -> np.ndarray:
    """AddFunc on broadcast int64 arrays; returns the clamped int64 result."""
    shifted_a = (a.astype(np.int64) + q.input1_offset) << q.left_shift
    shifted_b = (b.astype(np.int64) + q.input2_offset) << q.left_shift
    scaled_a = multiply_by_quantized_multiplier(shifted_a, q.input1_multiplier, q.input1_shift)
    scaled_b = multiply_by_quantized_multiplier(shifted_b, q.input2_multiplier, q.input2_shift)
    raw = multiply_by_quantized_multiplier(scaled_a + scaled_b, q.output_multiplier, q.output_shift)
    return clamp(raw + q.output_offset, q.activation_min, q.activation_max)


@reference(OpKind.ADD)
def add(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    a, b = inputs[0], inputs[1]
    assert a is not None and b is not None
    result = add_int8(a, b, add_quant_params(op))
    return [np.broadcast_to(result, op.outputs[0].shape).astype(np.int8)]
