"""AVERAGE_POOL_2D and MAX_POOL_2D, int8 and int16, bit-exact with TFLite's reference kernels.

reference_integer_ops::AveragePool / MaxPool (integer_ops/pooling.h) are the same code in TFLM
and LiteRT, and neither involves a requantization, so the two roundings give the same result.
Only the taps inside the image take part: the average divides the int32 sum by the number of
in-bounds taps, rounding half away from zero ((acc +- count/2) / count with C's truncating
division); the maximum starts from the dtype's minimum (-128 or -32768). int16 runs the same
arithmetic in both runtimes (tests/test_ref_pool.py). Both then clamp to the fused activation
range.
TFLite requires the output quantization to equal the input's, so no rescale happens.

Vectorised: one strided slice per filter tap over every output pixel at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from ...errors import ModelError
from ...ir import Op
from ...quantization import Rounding
from ..fixedpoint import clamp, wrap_int32
from .prepare import PoolGeometry, pool_geometry

PoolFunction = Callable[[np.ndarray, PoolGeometry, int, int], np.ndarray]


def _windows(padded: np.ndarray, g: PoolGeometry, out_h: int, out_w: int) -> Iterator[np.ndarray]:
    """Yield, per filter tap, the [.., out_h, out_w, ..] slice of `padded` (H and W on axes 1, 2)."""
    for fy in range(g.filter_h):
        for fx in range(g.filter_w):
            yield padded[:, fy : fy + (out_h - 1) * g.stride_h + 1 : g.stride_h,
                         fx : fx + (out_w - 1) * g.stride_w + 1 : g.stride_w]


def _pad(x: np.ndarray, g: PoolGeometry, out_h: int, out_w: int, fill: int) -> np.ndarray:
    """Place x in a canvas large enough for every window; taps outside x read `fill`."""
    n, h, w, c = x.shape
    height = max((out_h - 1) * g.stride_h + g.filter_h, g.pad_top + h)
    width = max((out_w - 1) * g.stride_w + g.filter_w, g.pad_left + w)
    canvas = np.full((n, height, width, c), fill, dtype=np.int64)
    canvas[:, g.pad_top : g.pad_top + h, g.pad_left : g.pad_left + w, :] = x
    return canvas


def average_pool(x: np.ndarray, g: PoolGeometry, out_h: int, out_w: int) -> np.ndarray:
    values = _pad(x.astype(np.int64), g, out_h, out_w, 0)
    inside = _pad(np.ones((1,) + x.shape[1:3] + (1,), dtype=np.int64), g, out_h, out_w, 0)
    acc = sum(_windows(values, g, out_h, out_w))
    count = sum(_windows(inside, g, out_h, out_w))
    if np.any(count == 0):
        # TFLite's AveragePool returns false here and the interpreter reports an error.
        raise ModelError("AVERAGE_POOL_2D: a window lies entirely in the padding")
    # TFLite sums in int32 and wraps (int16 windows of more than 65,536 taps), then divides
    # (acc > 0 ? acc + count/2 : acc - count/2) / count, truncating: round half away from zero,
    # the biased sum wrapping again.
    acc = wrap_int32(np.asarray(acc))
    biased = wrap_int32(np.where(acc > 0, acc + count // 2, acc - count // 2))
    rounded = np.sign(biased) * (np.abs(biased) // count)
    return clamp(rounded, g.activation_min, g.activation_max)


def max_pool(x: np.ndarray, g: PoolGeometry, out_h: int, out_w: int) -> np.ndarray:
    # TFLite starts each window's maximum at the dtype's minimum, so padding with it is neutral.
    values = _pad(x.astype(np.int64), g, out_h, out_w, int(np.iinfo(x.dtype).min))
    result = np.maximum.reduce(list(_windows(values, g, out_h, out_w)))
    return clamp(result, g.activation_min, g.activation_max)


def _run(op: Op, inputs: list[np.ndarray | None], pool: PoolFunction) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    out_shape = op.outputs[0].shape
    result = pool(x, pool_geometry(op), out_shape[1], out_shape[2])
    return [result.astype(op.outputs[0].dtype.numpy)]


def max_pool_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return _run(op, inputs, max_pool)


def average_pool_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return _run(op, inputs, average_pool)
