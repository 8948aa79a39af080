"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR, bit-exact with TFLite's reference kernels.

Nearest neighbour (int8, int16, float32) copies, for every output pixel, the source pixel that
reference_ops::GetNearestNeighbor picks (float32 scale, floor, or TfLiteRound with
align_corners; clamped to the input); both runtimes run that same code, and values are copied
unchanged (no requantization), so the two modes agree.

Bilinear, int8: reference_ops::ResizeBilinearInteger (TFLM, and LiteRT's kReference int8 path)
works in 1/1024 units: the source coordinate of each output row/column is index * scale_10
(+ scale_10/2 - 512 with half_pixel_centers), the four taps are weighted by products of
10-bit fractions (a 20-bit result) and the sum is divided by 2^20 rounding half away from zero
(the build of both runtimes does not define TFLITE_SINGLE_ROUNDING; measured by the tie tests).

Bilinear, float32: reference_ops::ResizeBilinear in float32, term by term
(v00 * (1 - dy) * (1 - dx) + v10 * dy * (1 - dx) + v01 * (1 - dy) * dx + v11 * dy * dx + 0.0f),
left to right; the per-row/column factors come from the family's prepare (prepare.py).
"""

from __future__ import annotations

import numpy as np

from ...ir import DType, Op
from ...quantization import Rounding
from ..base import Setting
from .prepare import bilinear_tables, prepare_nearest

F32 = np.float32


def resize_nearest(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    t = prepare_nearest(op, Setting(rounding))
    return [x[:, t.rows][:, :, t.cols]]


def _taps(x: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return x[:, rows][:, :, cols]


def bilinear_sum_20(x: np.ndarray, op: Op) -> np.ndarray:
    """The four weighted taps of every output, in 1/2^20 units (int64)."""
    t = bilinear_tables(op, integer=True)
    r, c = t.rows, t.cols
    one = 1 << 10
    # [1, H, 1, 1] and [1, 1, W, 1] fractions in 1/1024 units.
    dy = (r.position.astype(np.int64) - one * r.lower)[None, :, None, None]
    dx = (c.position.astype(np.int64) - one * c.lower)[None, None, :, None]
    v = x.astype(np.int64)
    return (_taps(v, r.lower, c.lower) * (one - dy) * (one - dx)
            + _taps(v, r.upper, c.lower) * dy * (one - dx)
            + _taps(v, r.lower, c.upper) * (one - dy) * dx
            + _taps(v, r.upper, c.upper) * dy * dx)


def bilinear_integer(x: np.ndarray, op: Op) -> np.ndarray:
    total = bilinear_sum_20(x, op)
    half = np.where(total > 0, 1 << 19, -(1 << 19))
    shifted = total + half
    # C's truncating division by 2^20.
    return np.sign(shifted) * (np.abs(shifted) >> 20)


def bilinear_float(x: np.ndarray, op: Op) -> np.ndarray:
    t = bilinear_tables(op, integer=False)
    r, c = t.rows, t.cols
    wy0, wy1 = r.low_weight[None, :, None, None], r.high_weight[None, :, None, None]
    wx0, wx1 = c.low_weight[None, None, :, None], c.high_weight[None, None, :, None]
    v = x.astype(F32)
    total = _taps(v, r.lower, c.lower) * wy0 * wx0
    total = total + _taps(v, r.upper, c.lower) * wy1 * wx0
    total = total + _taps(v, r.lower, c.upper) * wy0 * wx1
    total = total + _taps(v, r.upper, c.upper) * wy1 * wx1
    return (total + F32(0.0)).astype(F32)


def resize_bilinear(op: Op, inputs: list[np.ndarray | None],
                    rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if op.outputs[0].dtype is DType.FLOAT32:
        return [bilinear_float(x, op)]
    return [bilinear_integer(x, op).astype(op.outputs[0].dtype.numpy)]
