"""AVERAGE_POOL_2D and MAX_POOL_2D, int8, bit-exact with TFLite's reference integer kernels.

reference_integer_ops::AveragePool / MaxPool (integer_ops/pooling.h) are the same code in TFLM
and LiteRT, and neither involves a requantization, so the two roundings give the same result.
Only the taps inside the image take part: the average divides the int32 sum by the number of
in-bounds taps, rounding half away from zero ((acc +- count/2) / count with C's truncating
division); the maximum starts from -128. Both then clamp to the fused activation range.
TFLite requires the output quantization to equal the input's, so no rescale happens.

Vectorised: one strided slice per filter tap over every output pixel at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, UnsupportedError
from ..ir import Op, OpKind, Padding, Pool2DOptions
from ..quantization import Rounding, activation_range
from . import reference
from .fixedpoint import clamp

INT8_MIN = -128
PoolFunction = Callable[[np.ndarray, "PoolGeometry", int, int], np.ndarray]


@dataclass(frozen=True)
class PoolGeometry:
    """Build-time facts of one pooling op, shared by the reference and the C emitter."""

    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    activation_min: int
    activation_max: int


def _padding_before(padding: Padding, in_size: int, filter_size: int, stride: int, out_size: int) -> int:
    """TFLite's ComputePaddingWithOffset (pooling has no dilation); VALID always yields 0."""
    if padding is Padding.VALID:
        return 0
    total = max((out_size - 1) * stride + filter_size - in_size, 0)
    return total // 2


def pool_geometry(op: Op) -> PoolGeometry:
    options = op.options
    assert isinstance(options, Pool2DOptions)
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None and y.quant is not None
    if len(x.shape) != 4 or len(y.shape) != 4:
        raise UnsupportedError(f"{op.where()}: pooling needs 4-D NHWC tensors, got {list(x.shape)}")
    try:
        low, high = activation_range(options.activation, y.quant, y.dtype)
    except ValueError:
        raise UnsupportedError(
            f"{op.where()}: fused activation {options.activation.name} is not supported"
        ) from None
    return PoolGeometry(
        stride_h=options.stride_h,
        stride_w=options.stride_w,
        filter_h=options.filter_h,
        filter_w=options.filter_w,
        pad_top=_padding_before(options.padding, x.shape[1], options.filter_h, options.stride_h, y.shape[1]),
        pad_left=_padding_before(options.padding, x.shape[2], options.filter_w, options.stride_w, y.shape[2]),
        activation_min=low,
        activation_max=high,
    )


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
    # (acc > 0 ? acc + count/2 : acc - count/2) / count, truncating: round half away from zero.
    rounded = np.sign(acc) * ((np.abs(acc) + count // 2) // count)
    return clamp(rounded, g.activation_min, g.activation_max)


def max_pool(x: np.ndarray, g: PoolGeometry, out_h: int, out_w: int) -> np.ndarray:
    # TFLite starts each window's maximum at the int8 minimum, so padding with it is neutral.
    values = _pad(x.astype(np.int64), g, out_h, out_w, INT8_MIN)
    result = np.maximum.reduce(list(_windows(values, g, out_h, out_w)))
    return clamp(result, g.activation_min, g.activation_max)


def _run(op: Op, inputs: list[np.ndarray | None], pool: PoolFunction) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    out_shape = op.outputs[0].shape
    result = pool(x, pool_geometry(op), out_shape[1], out_shape[2])
    return [result.astype(np.int8)]


@reference(OpKind.MAX_POOL_2D)
def max_pool_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return _run(op, inputs, max_pool)


@reference(OpKind.AVERAGE_POOL_2D)
def average_pool_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return _run(op, inputs, average_pool)
