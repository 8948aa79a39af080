"""TRANSPOSE_CONV, int8 and int16x8, bit-exact with TFLite's reference integer kernels.

Inputs are (output_shape, weights [out_c, kh, kw, in_c], input, optional bias). TFLite
(reference_integer_ops::TransposeConv, the same in TFLM and LiteRT) scatters: every input pixel
(iy, ix) adds (input + input_offset) * weight into the output pixel (iy * stride - pad + ky,
ix * stride - pad + kx) of a zeroed accumulator buffer, skipping positions outside the output;
then each accumulator gets the bias, the per-channel rescale, the output zero point and the
activation clamp. The padding is ComputePaddingHeightWidth applied to the output size (see
mcugen.opparams.conv.transpose_conv_padding). int8 accumulates in int32 (wrapping; addition
order does not matter modulo 2^32) and rescales like CONV_2D; int16 (zero points 0) accumulates
in int64 and uses the int64 MultiplyByQuantizedMultiplier. The weights' zero point is never
used (they are symmetric).
"""

from __future__ import annotations

import numpy as np

from ..ir import Op, OpKind, TransposeConvOptions
from ..opparams.conv import conv_rescale, data_input, transpose_conv_padding
from ..quantization import Rounding
from . import reference
from .conv import add_bias, apply_rescale, finish_output


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


@reference(OpKind.TRANSPOSE_CONV)
def transpose_conv(
    op: Op, inputs: list[np.ndarray | None], rounding: Rounding
) -> list[np.ndarray]:
    rescale = conv_rescale(op, rounding)
    o = op.options
    assert isinstance(o, TransposeConvOptions)
    x_t, y_t = data_input(op), op.outputs[0]
    w, x = inputs[1], inputs[2]
    assert x is not None and w is not None and x_t.quant is not None
    bias = inputs[3] if len(inputs) > 3 else None
    _, kh, kw, _ = w.shape
    out_hw = (y_t.shape[1], y_t.shape[2])
    same = o.padding.name == "SAME"
    pad = (
        transpose_conv_padding(same, out_hw[0], kh, o.stride_h),
        transpose_conv_padding(same, out_hw[1], kw, o.stride_w),
    )
    shifted = x.astype(np.int64) - x_t.quant.single_zero_point
    acc = transpose_conv_accumulate(shifted, w, out_hw, (o.stride_h, o.stride_w), pad)
    return [finish_output(op, apply_rescale(add_bias(acc, bias), rescale))]
