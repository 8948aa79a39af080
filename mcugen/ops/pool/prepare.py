"""AVERAGE_POOL_2D and MAX_POOL_2D: the build-time geometry both the C and the reference use."""

from __future__ import annotations

from ...ir import Op, Pool2DOptions
from ...records import dataclass
from ..base import Setting
from ..common import activation_limits, conv_padding


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


def pool_geometry(op: Op, setting: Setting | None = None) -> PoolGeometry:
    """Padding as TFLite's ComputePaddingWithOffset (no dilation), clamp from the fused
    activation; the rounding mode and target change nothing here."""
    o = op.options
    assert isinstance(o, Pool2DOptions)
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None and y.quant is not None
    low, high = activation_limits(op, o.activation, y.quant, y.dtype)
    return PoolGeometry(
        stride_h=o.stride_h,
        stride_w=o.stride_w,
        filter_h=o.filter_h,
        filter_w=o.filter_w,
        pad_top=conv_padding(o.padding, x.shape[1], o.filter_h, o.stride_h, 1, y.shape[1]),
        pad_left=conv_padding(o.padding, x.shape[2], o.filter_w, o.stride_w, 1, y.shape[2]),
        activation_min=low,
        activation_max=high,
    )
