"""CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV, int8 and int16x8, bit-exact with TFLite's
reference kernels; and the requantization the matmul family's reference kernels share.

TFLite (reference_integer_ops::ConvPerChannel / DepthwiseConvPerChannel, identical in TFLM and
LiteRT) accumulates filter * (input + input_offset) over the taps that fall inside the image
(padding taps are skipped, which is the same as a zero-valued offset input), adds the bias,
requantizes per output channel, adds the output zero point and clamps to the fused activation.

int8 accumulates in int32 and rescales with MultiplyByQuantizedMultiplier, which rounds twice
in both runtimes: the LiteRT 2.3.0 wheel's reference conv kernels match TFLM's double-rounding
MultiplyByQuantizedMultiplier exactly (measured on the public models' intermediates and on
power-of-two scales, whose exact ties a single rounding would send up and double rounding
sends away from zero), so the arithmetic does not depend on the Rounding mode.

int16x8 (int16 activations with zero point 0, int8 weights) accumulates in int64 when the bias
is int64 or absent and rescales with the int64 MultiplyByQuantizedMultiplier (a 16-bit reduced
multiplier, one rounding); an int32 bias selects the int32 accumulator and the int8 rescale.
See mcugen.ops.conv.prepare.

TRANSPOSE_CONV's inputs are (output_shape, weights [out_c, kh, kw, in_c], input, optional
bias). TFLite (reference_integer_ops::TransposeConv, the same in TFLM and LiteRT) scatters:
every input pixel (iy, ix) adds (input + input_offset) * weight into the output pixel
(iy * stride - pad + ky, ix * stride - pad + kx) of a zeroed accumulator buffer, skipping
positions outside the output; then each accumulator gets the bias, the per-channel rescale,
the output zero point and the activation clamp. The padding is ComputePaddingHeightWidth
applied to the output size (see mcugen.ops.conv.prepare.transpose_conv_padding). int8
accumulates in int32 (wrapping; addition order does not matter modulo 2^32) and rescales like
CONV_2D; int16 (zero points 0) accumulates in int64 and uses the int64
MultiplyByQuantizedMultiplier. The weights' zero point is never used (they are symmetric).

Vectorised: one int64 tensordot (conv, transpose conv) or broadcast multiply (depthwise) per
filter tap, over all output (or input) pixels at once.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...ir import Conv2DOptions, DepthwiseConv2DOptions, Op, TransposeConvOptions
from ...quantization import Rounding
from ...records import dataclass
from ..base import Setting
from ..fixedpoint import clamp, multiply_by_quantized_multiplier, wrap_int32
from .prepare import ConvParams, Rescale, RescaleKind, prepare_conv, prepare_transpose_conv


def add_bias(acc: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """Exact int64 accumulator (channels last) + optional bias. Wrapping to int32 happens in
    apply_rescale for the int32-accumulator paths (the same result modulo 2^32)."""
    return acc if bias is None else acc + bias.astype(np.int64).reshape(-1)


def multiply_by_quantized_multiplier_wide(
    acc: np.ndarray, reduced: np.ndarray, total_shift: np.ndarray
) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplier(int64_t x, ...): x * reduced multiplier, plus
    half, arithmetic shift right by total_shift (int64 arithmetic), truncated to int32."""
    acc = np.asarray(acc, dtype=np.int64)
    total = np.asarray(total_shift, dtype=np.int64)
    with np.errstate(over="ignore"):
        product = acc * np.asarray(reduced, dtype=np.int64) + (np.int64(1) << (total - 1))
    return wrap_int32(product >> total)


def apply_rescale(acc: np.ndarray, rescale: Rescale) -> np.ndarray:
    """Fixed-point rescale of an exact accumulator (channels last), as int64 values."""
    if rescale.kind is RescaleKind.Q15_WIDE:
        return multiply_by_quantized_multiplier_wide(acc, rescale.multipliers, rescale.shifts)
    assert rescale.kind is RescaleKind.Q31, rescale.kind
    return multiply_by_quantized_multiplier(wrap_int32(acc), rescale.multipliers, rescale.shifts)


def finish_output(op: Op, scaled: np.ndarray, output_offset: int,
                  clamp_range: tuple[int, int]) -> np.ndarray:
    """Rescaled accumulator -> output dtype: + output zero point, clamp to the activation."""
    low, high = clamp_range
    return clamp(wrap_int32(scaled + output_offset), low, high).astype(op.outputs[0].dtype.numpy)


def _padded_input(
    x: np.ndarray, x_zero_point: int, pad: tuple[int, int], need: tuple[int, int]
) -> np.ndarray:
    """input + input_offset as int64, zero-padded (or cropped) to `need` rows and columns.

    A padded tap contributes filter * 0, exactly what skipping it does in TFLite.
    """
    n, h, w, c = x.shape
    shifted = x.astype(np.int64) - x_zero_point
    out = np.zeros((n, need[0], need[1], c), dtype=np.int64)
    top, left = pad
    rows = min(h, need[0] - top)
    cols = min(w, need[1] - left)
    if rows > 0 and cols > 0:
        out[:, top : top + rows, left : left + cols, :] = shifted[:, :rows, :cols, :]
    return out


@dataclass(frozen=True)
class _Geometry:
    """(height, width) pairs of one convolution's sliding window."""

    kernel: tuple[int, int]
    out: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int]  # top, left


def _geometry(op: Op, kernel: tuple[int, int], params: ConvParams) -> _Geometry:
    o = op.options
    assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions))
    y = op.outputs[0]
    out = (y.shape[1], y.shape[2])
    return _Geometry(kernel, out, (o.stride_h, o.stride_w), (o.dilation_h, o.dilation_w),
                     params.padding)


def _taps(x: np.ndarray, x_zero_point: int, g: _Geometry) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield (ky, kx, window): window[n, oy, ox, c] = the offset input under tap (ky, kx)."""
    (kh, kw), (oh, ow), (sh, sw), (dh, dw) = g.kernel, g.out, g.stride, g.dilation
    need = ((oh - 1) * sh + (kh - 1) * dh + 1, (ow - 1) * sw + (kw - 1) * dw + 1)
    padded = _padded_input(x, x_zero_point, g.pad, need)
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            yield (
                ky,
                kx,
                padded[:, y0 : y0 + (oh - 1) * sh + 1 : sh, x0 : x0 + (ow - 1) * sw + 1 : sw, :],
            )


def _bias(inputs: list[np.ndarray | None]) -> np.ndarray | None:
    return inputs[2] if len(inputs) > 2 else None


def _requantize(op: Op, acc: np.ndarray, bias: np.ndarray | None, p: ConvParams) -> np.ndarray:
    return finish_output(op, apply_rescale(add_bias(acc, bias), p.rescale), p.output_offset,
                         p.clamp)


def conv_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    p = prepare_conv(op, Setting(rounding=rounding))
    y_t = op.outputs[0]
    x, w = inputs[0], inputs[1]
    assert x is not None and w is not None
    out_c, kh, kw, group_depth = w.shape
    groups = x.shape[3] // group_depth  # grouped convolution: filter depth divides input depth
    per_group = out_c // groups
    w64 = w.astype(np.int64)
    acc = np.zeros((*y_t.shape[:3], out_c), dtype=np.int64)
    for ky, kx, window in _taps(x, -p.input_offset, _geometry(op, (kh, kw), p)):
        for g in range(groups):
            channels = slice(g * per_group, (g + 1) * per_group)
            piece = window[..., g * group_depth : (g + 1) * group_depth]
            acc[..., channels] += np.tensordot(piece, w64[channels, ky, kx, :], axes=([3], [1]))
    return [_requantize(op, acc, _bias(inputs), p)]


def depthwise_conv_2d(
    op: Op, inputs: list[np.ndarray | None], rounding: Rounding
) -> list[np.ndarray]:
    p = prepare_conv(op, Setting(rounding=rounding))
    y_t = op.outputs[0]
    x, w = inputs[0], inputs[1]
    assert x is not None and w is not None
    _, kh, kw, out_c = w.shape
    # Output channel m + c * multiplier reads input channel c. The multiplier comes from the
    # shapes, as LiteRT computes it (TFLM trusts the option, which must agree).
    multiplier = p.depth_multiplier
    w64 = w.astype(np.int64)
    acc = np.zeros((*y_t.shape[:3], out_c), dtype=np.int64)
    for ky, kx, window in _taps(x, -p.input_offset, _geometry(op, (kh, kw), p)):
        acc += np.repeat(window, multiplier, axis=3) * w64[0, ky, kx, :]
    return [_requantize(op, acc, _bias(inputs), p)]


def transpose_conv_accumulate(
    x: np.ndarray, w: np.ndarray, out_hw: tuple[int, int], stride: tuple[int, int],
    pad: tuple[int, int],
) -> np.ndarray:
    """Exact int64 accumulators [n, out_h, out_w, out_c] of the scatter, x already offset."""
    n, in_h, in_w, _ = x.shape
    out_c, kh, kw, _ = w.shape
    (sh, sw), (top, left) = stride, pad
    # A canvas large enough for every scattered tap; the output is its window at (top, left).
    canvas_h = max((in_h - 1) * sh + kh, top + out_hw[0])
    canvas_w = max((in_w - 1) * sw + kw, left + out_hw[1])
    canvas = np.zeros((n, canvas_h, canvas_w, out_c), dtype=np.int64)
    w64 = w.astype(np.int64)
    for ky in range(kh):
        for kx in range(kw):
            contribution = np.tensordot(x, w64[:, ky, kx, :], axes=([3], [1]))
            canvas[:, ky : ky + (in_h - 1) * sh + 1 : sh, kx : kx + (in_w - 1) * sw + 1 : sw, :] += (
                contribution
            )
    return canvas[:, top : top + out_hw[0], left : left + out_hw[1], :]


def transpose_conv(
    op: Op, inputs: list[np.ndarray | None], rounding: Rounding
) -> list[np.ndarray]:
    p = prepare_transpose_conv(op, Setting(rounding=rounding))
    o = op.options
    assert isinstance(o, TransposeConvOptions)
    y_t = op.outputs[0]
    w, x = inputs[1], inputs[2]
    assert x is not None and w is not None
    bias = inputs[3] if len(inputs) > 3 else None
    out_hw = (y_t.shape[1], y_t.shape[2])
    shifted = x.astype(np.int64) + p.input_offset
    acc = transpose_conv_accumulate(shifted, w, out_hw, (o.stride_h, o.stride_w), p.padding)
    return [finish_output(op, apply_rescale(add_bias(acc, bias), p.rescale), p.output_offset,
                          p.clamp)]
