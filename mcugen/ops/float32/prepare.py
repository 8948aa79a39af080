"""Build-time parameters of the float32 weighted and pooling ops: padding and the float clamp
(TFLite's Prepare; nothing is rescaled), shared by the C emitter and the numpy reference."""

from __future__ import annotations

import numpy as np

from ...ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    Op,
    OpKind,
    Pool2DOptions,
    TransposeConvOptions,
)
from ...records import dataclass
from ..base import Setting
from ..common import conv_padding

FLOAT32_MAX = float(np.finfo(np.float32).max)

# CalculateActivationRange<float>: no activation clamps to [lowest, max], so an infinite
# result becomes +-FLT_MAX as TFLite's ActivationFunctionWithMinMax makes it.
FLOAT_RANGES = {
    Activation.NONE: (-FLOAT32_MAX, FLOAT32_MAX),
    Activation.RELU: (0.0, FLOAT32_MAX),
    Activation.RELU6: (0.0, 6.0),
    Activation.RELU_N1_TO_1: (-1.0, 1.0),
}


@dataclass(frozen=True)
class FloatWindow:
    """One float op's geometry: (top, left) padding, strides, dilations (1 for pooling and
    TRANSPOSE_CONV), the window (kh, kw) and the clamp (low, high)."""

    padding: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    window: tuple[int, int]
    clamp: tuple[float, float]


def float_clamp(op: Op) -> tuple[float, float]:
    """The fused activation's float range; the rule clamp_activation refused the others."""
    activation = getattr(op.options, "activation", Activation.NONE)
    assert activation in FLOAT_RANGES, f"{op.where()}: clamp_activation lets {activation.name} by"
    return FLOAT_RANGES[activation]


WindowOptions = Conv2DOptions | DepthwiseConv2DOptions | TransposeConvOptions | Pool2DOptions


def _window(op: Op, o: WindowOptions) -> tuple[int, int]:
    if isinstance(o, Pool2DOptions):
        return o.filter_h, o.filter_w
    w = op.inputs[1]
    assert w is not None
    return w.shape[1], w.shape[2]


def prepare_float_window(op: Op, setting: Setting | None = None) -> FloatWindow:
    """CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV and the pools: padding as TFLite computes
    it for the kind (TRANSPOSE_CONV from the output size), clamp from the fused activation."""
    o = op.options
    assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions, TransposeConvOptions, Pool2DOptions))
    stride = (o.stride_h, o.stride_w)
    dilation = (o.dilation_h, o.dilation_w) if isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions)) else (1, 1)
    window = _window(op, o)
    y = op.outputs[0]
    if op.kind is OpKind.TRANSPOSE_CONV:
        # ComputePaddingHeightWidth on the output, as if it were a conv's input: the conv of
        # an out-size input gives ceil(out / stride) (SAME); VALID pads 0.
        padding = tuple(conv_padding(o.padding, y.shape[1 + a], window[a], stride[a], 1,
                                     -(-y.shape[1 + a] // stride[a])) for a in (0, 1))
    else:
        x = op.inputs[0]
        assert x is not None
        padding = tuple(conv_padding(o.padding, x.shape[1 + a], window[a], stride[a], dilation[a],
                                     y.shape[1 + a]) for a in (0, 1))
    return FloatWindow(padding=(padding[0], padding[1]), stride=stride, dilation=dilation, window=window,
                       clamp=float_clamp(op))


def prepare_float_fully_connected(op: Op, setting: Setting | None = None) -> tuple[int, int, int]:
    """(batches, depth, units) of a float FULLY_CONNECTED: the input is read as [batches, depth]."""
    x, w = op.inputs[0], op.inputs[1]
    assert x is not None and w is not None
    units, depth = w.shape
    return x.num_elements // depth, depth, units
