"""CONV_2D and DEPTHWISE_CONV_2D, int8 and int16x8, bit-exact with TFLite's reference kernels.

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
See mcugen.opparams.conv.

Vectorised: one int64 tensordot (conv) or broadcast multiply (depthwise) per filter tap, over
all output pixels at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..ir import Conv2DOptions, DepthwiseConv2DOptions, Op, OpKind, Tensor
from ..opparams.conv import Rescale, RescaleKind, conv_rescale
from ..ops.common import conv_padding, output_clamp
from ..ops.fixedpoint import clamp, multiply_by_quantized_multiplier, wrap_int32
from ..quantization import Rounding
from . import reference


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


def finish_output(op: Op, scaled: np.ndarray) -> np.ndarray:
    """Rescaled accumulator -> output dtype: + output zero point, clamp to the activation."""
    y = op.outputs[0]
    assert y.quant is not None
    low, high = output_clamp(op)
    return clamp(wrap_int32(scaled + y.quant.single_zero_point), low, high).astype(y.dtype.numpy)


def _requantize(
    op: Op, acc: np.ndarray, bias: np.ndarray | None, rounding: Rounding
) -> np.ndarray:
    return finish_output(op, apply_rescale(add_bias(acc, bias), conv_rescale(op, rounding)))


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


def _geometry(op: Op, x: Tensor, kernel: tuple[int, int]) -> _Geometry:
    o = op.options
    assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions))
    y = op.outputs[0]
    out = (y.shape[1], y.shape[2])
    pad = (
        conv_padding(o.padding, x.shape[1], kernel[0], o.stride_h, o.dilation_h, out[0]),
        conv_padding(o.padding, x.shape[2], kernel[1], o.stride_w, o.dilation_w, out[1]),
    )
    return _Geometry(kernel, out, (o.stride_h, o.stride_w), (o.dilation_h, o.dilation_w), pad)


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


@reference(OpKind.CONV_2D)
def conv_2d(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x_t, y_t = op.inputs[0], op.outputs[0]
    x, w = inputs[0], inputs[1]
    assert x_t is not None and x_t.quant and y_t.quant and x is not None and w is not None
    out_c, kh, kw, group_depth = w.shape
    groups = x.shape[3] // group_depth  # grouped convolution: filter depth divides input depth
    per_group = out_c // groups
    w64 = w.astype(np.int64)
    acc = np.zeros((*y_t.shape[:3], out_c), dtype=np.int64)
    for ky, kx, window in _taps(x, x_t.quant.single_zero_point, _geometry(op, x_t, (kh, kw))):
        for g in range(groups):
            channels = slice(g * per_group, (g + 1) * per_group)
            piece = window[..., g * group_depth : (g + 1) * group_depth]
            acc[..., channels] += np.tensordot(piece, w64[channels, ky, kx, :], axes=([3], [1]))
    return [_requantize(op, acc, _bias(inputs), rounding)]


@reference(OpKind.DEPTHWISE_CONV_2D)
def depthwise_conv_2d(
    op: Op, inputs: list[np.ndarray | None], rounding: Rounding
) -> list[np.ndarray]:
    x_t, y_t = op.inputs[0], op.outputs[0]
    x, w = inputs[0], inputs[1]
    assert x_t is not None and x_t.quant and y_t.quant and x is not None and w is not None
    _, kh, kw, out_c = w.shape
    # Output channel m + c * multiplier reads input channel c. The multiplier comes from the
    # shapes, as LiteRT computes it (TFLM trusts the option, which must agree).
    multiplier = out_c // x.shape[3]
    w64 = w.astype(np.int64)
    acc = np.zeros((*y_t.shape[:3], out_c), dtype=np.int64)
    for ky, kx, window in _taps(x, x_t.quant.single_zero_point, _geometry(op, x_t, (kh, kw))):
        acc += np.repeat(window, multiplier, axis=3) * w64[0, ky, kx, :]
    return [_requantize(op, acc, _bias(inputs), rounding)]
