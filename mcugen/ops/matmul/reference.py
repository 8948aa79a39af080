"""FULLY_CONNECTED and BATCH_MATMUL, int8 and int16(x8), bit-exact with TFLM and with
LiteRT's reference kernels.

FULLY_CONNECTED: both accumulate (filter + filter_offset) * (input + input_offset) in int32
over the last weight dimension (the input is flattened to [elements / accum_depth,
accum_depth]) and add the bias; per-channel weights are symmetric and their zero point is
ignored. They differ in how the accumulator becomes int8:

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
one rounding; see mcugen.ops.conv.prepare), and LiteRT's int16 FC, in every kernel flavour,
uses the same double-precision rescale as its int8 reference FC, applied to the int64
accumulator.

BATCH_MATMUL: both runtimes (reference_ops::BatchMatMul after transposing for adj_x / adj_y)
compute, for every broadcast batch index, out[m][n] = sum_k (lhs[m][k] + lhs_offset) *
(rhs[k][n] + rhs_offset), where lhs is the first input (transposed when adj_x) and rhs the
second (transposed when adj_y); batch dimensions of rank 2..5 inputs broadcast (equal or 1).
int8 accumulates in int32 (wrapping) and rescales with the double-rounding
MultiplyByQuantizedMultiplier; int16 (zero points 0) accumulates in int64 and rescales with
the int64 overload. The one multiplier comes from GetQuantizedConvolutionMultipler (float32
product of the input scales). There is no fused activation: the output clamps to its dtype's
range.
"""

from __future__ import annotations

import numpy as np

from ...ir import Op
from ...quantization import Rounding
from ..base import Setting
from ..conv.prepare import RescaleKind
from ..conv.reference import add_bias, apply_rescale, finish_output
from ..fixedpoint import INT32_MIN, wrap_int32
from .prepare import BatchMatMulParams, prepare_batch_matmul, prepare_fully_connected


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


def fully_connected(
    op: Op, inputs: list[np.ndarray | None], rounding: Rounding
) -> list[np.ndarray]:
    p = prepare_fully_connected(op, Setting(rounding=rounding))
    y_t = op.outputs[0]
    x, w = inputs[0], inputs[1]
    assert x is not None and w is not None
    rows = x.astype(np.int64).reshape(-1, p.depth) + p.input_offset
    acc = add_bias(
        rows @ (w.astype(np.int64) + p.filter_offset).T, inputs[2] if len(inputs) > 2 else None
    )
    rescale = p.rescale
    if rescale.kind is RescaleKind.DOUBLE:
        acc = wrap_int32(acc) if rescale.accumulator_bits == 32 else acc
        scaled = requantize_real(acc, rescale.scales)
    else:
        scaled = apply_rescale(acc, rescale)
    return [finish_output(op, scaled, p.output_offset, p.clamp).reshape(y_t.shape)]


def matrices(p: BatchMatMulParams, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lhs [..., M, K], rhs [..., K, N]) as offset int64, after adj_x / adj_y."""
    a = lhs.astype(np.int64) + p.lhs_offset
    b = rhs.astype(np.int64) + p.rhs_offset
    return (np.swapaxes(a, -1, -2) if p.adj_x else a), (np.swapaxes(b, -1, -2) if p.adj_y else b)


def batch_matmul(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    p = prepare_batch_matmul(op, Setting(rounding=rounding))
    lhs, rhs = inputs[0], inputs[1]
    assert lhs is not None and rhs is not None
    a, b = matrices(p, lhs, rhs)
    acc = np.matmul(a, b)  # broadcasts the batch dimensions; exact in int64
    y = op.outputs[0]
    out = finish_output(op, apply_rescale(acc, p.rescale), p.output_offset, p.clamp)
    return [out.reshape(y.shape)]
