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

import numpy as np

from ..ir import Op, OpKind
from ..opparams import AddQuantParams, add_quant_params
from ..quantization import Rounding
from . import reference
from .fixedpoint import clamp, multiply_by_quantized_multiplier


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
