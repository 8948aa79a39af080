"""Multiply-accumulate counts per op, as TFLite-based tools count them."""

from __future__ import annotations

from ..ir import Op, OpKind


def op_macs(op: Op) -> int:
    """MACs of one inference of `op`; ops without multiplies by weights count 0."""
    out = op.outputs[0]
    if op.kind is OpKind.AVERAGE_POOL_2D:
        return out.num_elements * op.options.filter_h * op.options.filter_w  # type: ignore[union-attr]
    if op.kind is OpKind.MEAN and op.inputs[0] is not None:
        return op.inputs[0].num_elements
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    if weights is None:
        return 0
    if op.kind is OpKind.CONV_2D:
        _, kh, kw, in_c = weights.shape
        return out.num_elements * kh * kw * in_c
    if op.kind is OpKind.DEPTHWISE_CONV_2D:
        _, kh, kw, _ = weights.shape
        return out.num_elements * kh * kw
    if op.kind is OpKind.FULLY_CONNECTED:
        return out.num_elements * weights.shape[1]
    return 0
