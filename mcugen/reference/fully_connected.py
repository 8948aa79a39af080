"""FULLY_CONNECTED, int8 and int16x8, bit-exact with TFLM and with LiteRT's reference kernel.

Both accumulate (filter + filter_offset) * (input + input_offset) in int32 over the last
weight dimension (the input is flattened to [elements / accum_depth, accum_depth]) and add the
bias; per-channel weights are symmetric and their zero point is ignored. They differ in how the
accumulator becomes int8:

- TFLM (reference_integer_ops::FullyConnected / FullyConnectedPerChannel with multipliers):
  MultiplyByQuantizedMultiplier, double rounding. The per-tensor multiplier comes from
  GetQuantizedConvolutionMultipler, whose input_scale * filter_scale is a float32 product;
  the per-channel one (CalculateOpDataFullyConnected) multiplies in double.
- LiteRT 2.3 with BUILTIN_REF (tflite/kernels/fully_connected.cc, FullyConnectedInt8 and
  FullyConnectedPerChannelInt8 with kReference): the overloads that take the float scales,
  round(double(acc) * (double(input_scale) * double(filter_scale) / double(output_scale))),
  round half away from zero, no integer multiplier at all.

int16x8 (int16 input and output with zero point 0, int8 weights) is the same with an int64
accumulator when the bias is int64 or absent (an int32 bias keeps the int32 accumulator):
TFLM then rescales with the int64 MultiplyByQuantizedMultiplier (16-bit reduced multiplier,
one rounding; see mcugen.opparams.conv), and LiteRT's int16 FC, in every kernel flavour, uses
the same double-precision rescale as its int8 reference FC, applied to the int64 accumulator.
"""

from __future__ import annotations

import numpy as np

from ..ir import Op, OpKind
from ..opparams.conv import RescaleKind, fc_rescale
from ..ops.common import filter_offset
from ..ops.fixedpoint import INT32_MIN, wrap_int32
from ..quantization import Rounding
from . import reference
from .conv import add_bias, apply_rescale, finish_output


def round_half_away(x: np.ndarray) -> np.ndarray:
    """C's round() on doubles, exactly (x - trunc(x) is exact, unlike floor(x + 0.5))."""
    whole = np.trunc(x)
    fraction = x - whole
    return whole + (fraction >= 0.5) - (fraction <= -0.5)


def double_to_int32(x: np.ndarray) -> np.ndarray:
    """static_cast<int32_t>(double) as x86-64 does it: out of range gives INT32_MIN."""
    inside = (x >= -2147483648.0) & (x <= 2147483647.0)
    return np.where(inside, np.where(inside, x, 0).astype(np.int64), INT32_MIN)


def requantize_real(acc: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """LiteRT's float requantization of an int32 accumulator."""
    return double_to_int32(round_half_away(acc.astype(np.float64) * scales))


@reference(OpKind.FULLY_CONNECTED)
def fully_connected(
    op: Op, inputs: list[np.ndarray | None], rounding: Rounding
) -> list[np.ndarray]:
    rescale = fc_rescale(op, rounding)
    x_t, w_t, y_t = op.inputs[0], op.inputs[1], op.outputs[0]
    x, w = inputs[0], inputs[1]
    assert x_t is not None and w_t is not None and x_t.quant is not None
    assert x is not None and w is not None
    depth = w.shape[1]
    rows = x.astype(np.int64).reshape(-1, depth) - x_t.quant.single_zero_point
    acc = add_bias(
        rows @ (w.astype(np.int64) + filter_offset(w_t)).T, inputs[2] if len(inputs) > 2 else None
    )
    if rescale.kind is RescaleKind.DOUBLE:
        acc = wrap_int32(acc) if rescale.accumulator_bits == 32 else acc
        scaled = requantize_real(acc, rescale.scales)
    else:
        scaled = apply_rescale(acc, rescale)
    return [finish_output(op, scaled).reshape(y_t.shape)]
