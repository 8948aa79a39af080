"""Support rules of AVERAGE_POOL_2D and MAX_POOL_2D beyond the shared ones (ops/rules.py)."""

from __future__ import annotations

import numpy as np

from ...ir import DType, Op, OpKind
from ..rules import describe_quant_pair, integer_quant_pair, required_input, window_output_shape


def pool_shapes(op: Op) -> str | None:
    """Input and output are 4-D NHWC tensors with the same number of channels."""
    x, y = required_input(op), op.outputs[0]
    if len(x.shape) != 4 or len(y.shape) != 4:
        return f"input {list(x.shape)}, output {list(y.shape)}"
    if x.shape[-1] != y.shape[-1]:
        return f"channels {x.shape[-1]} -> {y.shape[-1]}"
    return None


def pool_output_shape(op: Op) -> str | None:
    """The output is [batch, out_h, out_w, channels] of the input's batch and channels, with out_h and out_w from the input, the filter size, the strides and the padding (TFLite's ComputeOutSize)."""
    x, o = op.inputs[0] if op.inputs else None, op.options
    if x is None or len(x.shape) != 4:
        return None  # input_rank_4 reports it
    return window_output_shape(op, (getattr(o, "filter_h", 0), getattr(o, "filter_w", 0)), x.shape[3])


def int16_sum_may_wrap(op: Op) -> str | None:
    """An int16 AVERAGE_POOL_2D window of more than 65,536 taps can overflow TFLite's int32
    window sum; mcugen wraps it as TFLM and LiteRT do (two's complement), so results stay
    bit-exact but may be far from the true average."""
    x, options = required_input(op), op.options
    if op.kind is not OpKind.AVERAGE_POOL_2D or x.dtype is not DType.INT16:
        return None
    taps = getattr(options, "filter_h", 1) * getattr(options, "filter_w", 1)
    return f"{taps} taps" if taps * 32768 > (1 << 31) else None


def pool_quant_matches_input(op: Op) -> str | None:
    """The output scale is within 1e-6 of the input's and the zero points are equal (TFLM's
    pooling Prepare check; the output is not rescaled)."""
    pair = integer_quant_pair(op)
    if pair is None:
        return None
    src, dst = pair
    scale_diff = abs(float(np.float32(src.single_scale) - np.float32(dst.single_scale)))
    if scale_diff <= 1.0e-6 and src.single_zero_point == dst.single_zero_point:
        return None
    return describe_quant_pair(src, dst)
