"""numpy references of the float32 weighted and pooling ops, in TFLite's reference order.

Every array is float32 and every product and sum is one float32 operation, taken in the order
the C kernel (and TFLite's reference kernel) takes it for each output element, so the results
are the same to the bit: the loops run over the taps (and channels) in order, each step
vectorised over the output positions it applies to. Taps in the padding are skipped, not added
as zeros (0 * inf would be NaN, and -0.0 + 0.0 is +0.0).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ...ir import Op, OpKind
from ...quantization import Rounding
from .prepare import FloatWindow, float_clamp, prepare_float_fully_connected, prepare_float_window

F32 = np.float32

Kernel = Callable[[Op, list[np.ndarray | None], Rounding], list[np.ndarray]]


def ieee(kernel: Kernel) -> Kernel:
    """The kernel with numpy's floating-point warnings off: overflow to infinity and NaN from
    inf * 0 are the IEEE results the C computes too, not errors."""

    @functools.wraps(kernel)
    def run(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return kernel(op, inputs, rounding)

    return run


def clamp(x: np.ndarray, limits: tuple[float, float]) -> np.ndarray:
    """ActivationFunctionWithMinMax: min(max(x, lo), hi) as std::min/std::max compare (NaN passes)."""
    low, high = F32(limits[0]), F32(limits[1])
    x = np.where(x < low, low, x)
    return np.where(high < x, high, x).astype(F32)


def _span(origin_step: int, origin_offset: int, tap: int, extent: int, count: int) -> slice:
    """The output positions o in [0, count) whose input o * step - offset + tap lies in [0, extent)
    (a contiguous run, as the step is positive)."""
    inside = [o for o in range(count) if 0 <= o * origin_step - origin_offset + tap < extent]
    return slice(inside[0], inside[-1] + 1) if inside else slice(0, 0)


def _input_rows(start: slice, step: int, offset: int, tap: int) -> slice:
    first = start.start * step - offset + tap
    return slice(first, first + (start.stop - start.start - 1) * step + 1, step)


def _taps(x: np.ndarray, g: FloatWindow, out_h: int, out_w: int):  # type: ignore[no-untyped-def]
    """(output rows, output columns, input patch) of every in-image tap, in (fy, fx) order."""
    (pt, pl), (sh, sw), (dh, dw) = g.padding, g.stride, g.dilation
    for fy in range(g.window[0]):
        ys = _span(sh, pt, fy * dh, x.shape[1], out_h)
        if ys.stop <= ys.start:
            continue
        for fx in range(g.window[1]):
            xs = _span(sw, pl, fx * dw, x.shape[2], out_w)
            if xs.stop <= xs.start:
                continue
            patch = x[:, _input_rows(ys, sh, pt, fy * dh), _input_rows(xs, sw, pl, fx * dw), :]
            yield fy, fx, ys, xs, patch


def _bias(inputs: list[np.ndarray | None], index: int, channels: int) -> np.ndarray:
    bias = inputs[index] if len(inputs) > index else None
    return np.zeros(channels, F32) if bias is None else np.asarray(bias, F32).reshape(-1)


@ieee
def conv_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x, w = np.asarray(inputs[0], F32), np.asarray(inputs[1], F32)
    y = op.outputs[0]
    g = prepare_float_window(op)
    total = np.zeros(y.shape, F32)
    for fy, fx, ys, xs, patch in _taps(x, g, y.shape[1], y.shape[2]):
        for c in range(x.shape[3]):
            total[:, ys, xs, :] += patch[..., c:c + 1] * w[:, fy, fx, c]
    return [clamp(total + _bias(inputs, 2, y.shape[3]), g.clamp)]


@ieee
def depthwise_conv_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x, w = np.asarray(inputs[0], F32), np.asarray(inputs[1], F32)
    y = op.outputs[0]
    g = prepare_float_window(op)
    source = np.arange(y.shape[3]) // (y.shape[3] // x.shape[3])  # output channel -> input channel
    total = np.zeros(y.shape, F32)
    for fy, fx, ys, xs, patch in _taps(x, g, y.shape[1], y.shape[2]):
        total[:, ys, xs, :] += patch[..., source] * w[0, fy, fx, :]
    return [clamp(total + _bias(inputs, 2, y.shape[3]), g.clamp)]


@ieee
def transpose_conv(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """The reference's scatter: input elements in (y, x, channel) order each add their products
    to the outputs they meet, so each output sums its terms in that order."""
    x, w = np.asarray(inputs[2], F32), np.asarray(inputs[1], F32)
    y = op.outputs[0]
    g = prepare_float_window(op)
    (pt, pl), (sh, sw) = g.padding, g.stride
    kh, kw = g.window
    rows = max((x.shape[1] - 1) * sh + kh, pt + y.shape[1])
    columns = max((x.shape[2] - 1) * sw + kw, pl + y.shape[2])
    out = np.zeros((y.shape[0], rows, columns, y.shape[3]), F32)  # canvas row r: output row r - pt
    weights = np.transpose(w, (1, 2, 0, 3))  # [kh, kw, out_c, in_c]
    for iy in range(x.shape[1]):
        for ix in range(x.shape[2]):
            for c in range(x.shape[3]):
                region = out[:, iy * sh:iy * sh + kh, ix * sw:ix * sw + kw, :]
                region += x[:, iy, ix, c][:, None, None, None] * weights[None, :, :, :, c]
    acc = out[:, pt:pt + y.shape[1], pl:pl + y.shape[2], :]
    bias = inputs[3] if len(inputs) > 3 else None
    if bias is not None:
        acc = acc + np.asarray(bias, F32).reshape(-1)
    return [clamp(acc, g.clamp)]


@ieee
def fully_connected(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    batches, depth, units = prepare_float_fully_connected(op)
    x = np.asarray(inputs[0], F32).reshape(batches, depth)
    w = np.asarray(inputs[1], F32)
    total = np.zeros((batches, units), F32)
    for d in range(depth):
        total += x[:, d:d + 1] * w[:, d]
    out = clamp(total + _bias(inputs, 2, units), float_clamp(op))
    return [out.reshape(op.outputs[0].shape)]


def _pool(op: Op, x: np.ndarray) -> np.ndarray:
    y = op.outputs[0]
    g = prepare_float_window(op)
    average = op.kind is OpKind.AVERAGE_POOL_2D
    value = np.zeros(y.shape, F32) if average else np.full(y.shape, np.finfo(F32).min, F32)
    count = np.zeros(y.shape[1:3], np.int64)
    for _, _, ys, xs, patch in _taps(x, g, y.shape[1], y.shape[2]):
        if average:
            value[:, ys, xs, :] += patch
            count[ys, xs] += 1
        else:
            current = value[:, ys, xs, :]
            value[:, ys, xs, :] = np.where(current < patch, patch, current)
    if average:
        if not count.all():
            raise ValueError(f"{op.where()}: a window lies wholly in the padding")
        value = (value / count[None, :, :, None].astype(F32)).astype(F32)
    return clamp(value, g.clamp)


@ieee
def pool_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return [_pool(op, np.asarray(inputs[0], F32))]


@ieee
def batch_matmul(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """Each output a sum from +0.0 of the rounded products in k order (TFLite's reference)."""
    adj_x, adj_y = getattr(op.options, "adj_x", False), getattr(op.options, "adj_y", False)
    a, b = np.asarray(inputs[0], F32), np.asarray(inputs[1], F32)
    a = np.swapaxes(a, -1, -2) if adj_x else a
    b = np.swapaxes(b, -1, -2) if adj_y else b
    y = op.outputs[0]
    total = np.zeros(y.shape, F32)
    for k in range(a.shape[-1]):
        total += a[..., :, k:k + 1] * b[..., k:k + 1, :]
    return [total]
