"""Support rules of the float32 weighted and pooling ops, and the wrapper that keeps the
quantized rules off them."""

from __future__ import annotations

import numpy as np

from ...ir import DType, Op, OpKind, Tensor
from ..rules import Constraint, activation_dtypes, int16_zero_points
from . import is_float


def quantized_only(rule: Constraint) -> Constraint:
    """The rule, applied to int8 and int16 ops only (a float32 op has no quantization)."""

    def check(op: Op) -> str | None:
        return None if is_float(op) else rule(op)

    # The rule's own words, so that messages stay as they were; FLOAT_NOTE says in the docs
    # that such rules apply to int8 and int16 ops only.
    check.__doc__ = rule.__doc__
    check.__name__ = f"quantized_{rule.__name__}"
    if getattr(rule, "gate", False):
        check.gate = True  # type: ignore[attr-defined]
    return check


# The dtype rule of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with float32 added.
WEIGHTED_DTYPES = [activation_dtypes(DType.INT8, DType.INT16, DType.FLOAT32), int16_zero_points]


def _weights_and_bias(op: Op) -> tuple[Tensor | None, Tensor | None]:
    bias_index = 3 if op.kind is OpKind.TRANSPOSE_CONV else 2
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    bias = op.inputs[bias_index] if len(op.inputs) > bias_index else None
    return weights, bias


def float_weights(op: Op) -> str | None:
    """float32 ops: the weights are a constant float32 tensor (FLOAT16 weights are widened at build time; int8 weights, TFLite's hybrid ops, are not supported), the bias, if present, a constant float32 tensor with one value per output channel, and the output is float32."""
    if not is_float(op):
        return None
    weights, bias = _weights_and_bias(op)
    y = op.outputs[0]
    if y.dtype is not DType.FLOAT32:
        return f"output '{y.name}' is {y.dtype.short}"
    if weights is None or not weights.is_constant or weights.dtype is not DType.FLOAT32:
        what = "missing" if weights is None else (
            f"{weights.dtype.short}" if weights.is_constant else "not constant")
        return f"weights {'' if weights is None else repr(weights.name) + ' '}{what}"
    if bias is not None:
        if not bias.is_constant or bias.dtype is not DType.FLOAT32:
            return f"bias '{bias.name}' is {'non-constant ' if not bias.is_constant else ''}{bias.dtype.short}"
        if bias.num_elements != y.shape[-1]:
            return f"bias has {bias.num_elements} values for {y.shape[-1]} output channels"
    return None


def finite_float_weights(op: Op) -> str | None:
    """float32 weights and bias hold no infinity or NaN (C99 has no float literal for them)."""
    bad = [f"constant '{t.name}'" for t in _weights_and_bias(op)
           if t is not None and t.is_constant and t.dtype is DType.FLOAT32
           and t.data is not None and not np.all(np.isfinite(t.data))]
    return ", ".join(bad) or None


def float_pool_output(op: Op) -> str | None:
    """float32 pooling: the output is float32 too."""
    x = op.inputs[0] if op.inputs else None
    if x is None or x.dtype is not DType.FLOAT32:
        return None
    y = op.outputs[0]
    return None if y.dtype is DType.FLOAT32 else f"output '{y.name}' is {y.dtype.short}"
