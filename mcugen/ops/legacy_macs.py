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
    if op.kind is OpKind.TRANSPOSE_CONV:
        return _transpose_conv_macs(op)
    if op.kind is OpKind.BATCH_MATMUL:
        return _batch_matmul_macs(op)
    return 0


def _transpose_conv_macs(op: Op) -> int:
    """Every input element meets kh * kw * out_c weights (weights [out_c, kh, kw, in_c]),
    taps later cropped by the padding included: the multiplies the scatter performs."""
    weights, x = op.inputs[1], op.inputs[2] if len(op.inputs) > 2 else None
    if weights is None or x is None or len(weights.shape) != 4:
        return 0
    out_c, kh, kw, _ = weights.shape
    return x.num_elements * kh * kw * out_c


def _batch_matmul_macs(op: Op) -> int:
    """Each output element is a dot product over the contracted dimension (K): the lhs's
    last dimension, or its second-to-last with adj_x."""
    lhs = op.inputs[0]
    if lhs is None or len(lhs.shape) < 2:
        return 0
    depth = lhs.shape[-2] if getattr(op.options, "adj_x", False) else lhs.shape[-1]
    return op.outputs[0].num_elements * depth
