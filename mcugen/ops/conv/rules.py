"""Support rules of the conv family (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV).

The weighted-op rules the matmul family shares (weights, bias, int16 zero points) stay in
mcugen.ops.rules; int8_zero_points_in_range is shared the other way, from here.
"""

from __future__ import annotations

from ...ir import Conv2DOptions, DepthwiseConv2DOptions, DType, Op, OpKind
from ..rules import required_input, weighted_input, weights_of, window_output_shape


def symmetric_conv_weights(op: Op) -> str | None:
    """Convolution weights have zero point 0."""
    w = weights_of(op)
    if w is not None and w.quant is not None and any(z != 0 for z in w.quant.zero_point):
        return f"weights zero point {w.quant.zero_point[0]}"
    return None


def depthwise_channels(op: Op) -> str | None:
    """Depthwise output channels equal input channels times the depth multiplier."""
    assert isinstance(op.options, DepthwiseConv2DOptions)
    in_c, out_c = required_input(op).shape[-1], op.outputs[0].shape[-1]
    w = weights_of(op)
    if w is not None and w.shape[-1] != out_c:
        return f"weights have {w.shape[-1]} channels, output {out_c}"
    if in_c * op.options.depth_multiplier != out_c and out_c % in_c != 0:
        return f"{in_c} input channels x multiplier {op.options.depth_multiplier} != {out_c}"
    return None


# TFLite keeps dilations in int16 (ConvParams, DepthwiseParams): TFLM wraps a larger one (and
# computes another convolution), LiteRT refuses it; there is no reference answer past it.
MAX_DILATION = 32767


def dilations_fit_int16(op: Op) -> str | None:
    """Dilations are at most 32767 (TFLite holds them in int16)."""
    bad = [f"{n} {getattr(op.options, n)}" for n in ("dilation_h", "dilation_w")
           if getattr(op.options, n) > MAX_DILATION]
    return ", ".join(bad) or None


def conv_channels(op: Op) -> str | None:
    """Convolution weights are [out_c, kh, kw, in_c] matching the input channels (no grouped conv)."""
    assert isinstance(op.options, Conv2DOptions)
    w = weights_of(op)
    if w is None or len(w.shape) != 4:
        return f"weights shape {list(w.shape) if w is not None else None}"
    if w.shape[3] != required_input(op).shape[3]:
        return f"weights take {w.shape[3]} input channels, input has {required_input(op).shape[3]}"
    return None


def conv_output_shape(op: Op) -> str | None:
    """CONV_2D and DEPTHWISE_CONV_2D: the output is [batch, out_h, out_w, channels] with out_h and out_w from the input, the filter, strides, dilations and padding (TFLite's ComputeOutSize: SAME ceil(in / stride), VALID ceil((in - (k - 1) * dilation) / stride)) and channels the filter's output channels."""
    w = weights_of(op)
    if w is None or len(w.shape) != 4:
        return None  # conv_channels and depthwise_channels report it
    channels = w.shape[3] if op.kind is OpKind.DEPTHWISE_CONV_2D else w.shape[0]
    return window_output_shape(op, (w.shape[1], w.shape[2]), channels)


def transpose_conv_shapes(op: Op) -> str | None:
    """TRANSPOSE_CONV: output_shape is a constant int32 [4] equal to the output's shape; weights are [out_c, kh, kw, in_c] matching the input and output channels."""
    shape, w = required_input(op, 0), weights_of(op)
    if not shape.is_constant or shape.dtype is not DType.INT32 or shape.num_elements != 4:
        return f"output_shape '{shape.name}' is not a constant int32 [4]"
    out = op.outputs[0]
    if [int(v) for v in shape.data.reshape(-1)] != list(out.shape):  # type: ignore[union-attr]
        return f"output_shape {shape.data.reshape(-1).tolist()} != output {list(out.shape)}"  # type: ignore[union-attr]
    x = weighted_input(op)
    if w is None or len(w.shape) != 4 or w.shape[3] != x.shape[-1] or w.shape[0] != out.shape[-1]:
        return f"weights {list(w.shape) if w is not None else None} for input {list(x.shape)}, output {list(out.shape)}"
    if x.shape[0] != out.shape[0]:
        return f"batch {x.shape[0]} -> {out.shape[0]}"
    return None


def transpose_conv_output_shape(op: Op) -> str | None:
    """TRANSPOSE_CONV: the output's shape is the output_shape input's values, with the input's batch and the filter's output channels."""
    shape = op.inputs[0] if op.inputs else None
    x = op.inputs[2] if len(op.inputs) > 2 else None
    w = weights_of(op)
    if (shape is None or shape.data is None or x is None or w is None or len(x.shape) != 4
            or len(w.shape) != 4 or shape.dtype is not DType.INT32 or shape.num_elements != 4):
        return None  # transpose_conv_shapes reports these (after folding)
    return transpose_conv_shapes(op)


def transpose_conv_activations(op: Op) -> str | None:
    """TRANSPOSE_CONV: the input and output are int8, int16 (with int8 weights) or float32, 4-D."""
    x, y = weighted_input(op), op.outputs[0]
    if x.dtype not in (DType.INT8, DType.INT16, DType.FLOAT32) or y.dtype is not x.dtype:
        return f"{x.dtype.short} -> {y.dtype.short}"
    if len(x.shape) != 4 or len(y.shape) != 4:
        return f"input {list(x.shape)}, output {list(y.shape)}"
    if x.dtype is DType.FLOAT32:
        return None
    if x.quant is None or y.quant is None or x.quant.per_channel or y.quant.per_channel:
        return "input or output without per-tensor quantization"
    return None


def int8_zero_points_in_range(op: Op) -> str | None:
    """int8 activations and int8 per-tensor weights have zero points in [-128, 127]."""
    w = weights_of(op)
    tensors = [weighted_input(op), op.outputs[0]]
    if w is not None and w.quant is not None and not w.quant.per_channel:
        tensors.append(w)
    bad = [f"'{t.name}' zero point {t.quant.single_zero_point}" for t in tensors
           if t.dtype is DType.INT8 and t.quant is not None
           and not -128 <= t.quant.single_zero_point <= 127]
    return ", ".join(bad) or None
