"""Support rules of the elementwise binary ops: ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM,
MINIMUM and PRELU.

A rule returns None when the op satisfies it, else a short description of the offending value;
its docstring is the rule users read (mcugen inspect, docs/supported_ops.md). The rules shared
with other families (input_arity, clamp_activation) stay in mcugen/ops/rules.py.
"""

from __future__ import annotations

import numpy as np

from ...ir import DType, Op, Tensor
from ..rules import input_arity, required_input

_BINARY_DTYPES = (DType.INT8, DType.INT16, DType.FLOAT32)
MAX_BROADCAST_RANK = 6  # BroadcastAdd6DSlow and friends; also mcugen's loop nest (prepare.MAX_LOOPS)


def _binary_tensors(op: Op) -> list[Tensor]:
    """Both inputs, constants included, and the output."""
    return [t for t in op.inputs[:2] if t is not None] + list(op.outputs)


def binary_dtypes(op: Op) -> str | None:
    """Both inputs (constants included) and the output are all int8, all int16 or all float32."""
    tensors = _binary_tensors(op)
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) == 1 and dtypes <= set(_BINARY_DTYPES):
        return None
    return ", ".join(f"'{t.name}' is {t.dtype.short}" for t in tensors)


def prelu_dtypes(op: Op) -> str | None:
    """Input and output are both int8, int16 or float32; alpha is int8 for int8 and int16
    inputs (TFLM's int16 PRELU takes int8 alpha) and float32 for float32."""
    x, alpha, y = required_input(op, 0), required_input(op, 1), op.outputs[0]
    expected = DType.FLOAT32 if x.dtype is DType.FLOAT32 else DType.INT8
    if x.dtype in _BINARY_DTYPES and y.dtype is x.dtype and alpha.dtype is expected:
        return None
    return f"input {x.dtype.short}, alpha {alpha.dtype.short}, output {y.dtype.short}"


def binary_quantization(op: Op) -> str | None:
    """int8 and int16 tensors (constants included) carry per-tensor quantization, and int16
    ones have zero point 0 (TFLite's int16 kernels require symmetric quantization)."""
    bad = []
    for t in _binary_tensors(op):
        if t.dtype not in (DType.INT8, DType.INT16):
            continue
        if t.quant is None or t.quant.per_channel:
            bad.append(f"'{t.name}' has {'no' if t.quant is None else len(t.quant.scale)} scales")
        elif t.dtype is DType.INT16 and t.quant.single_zero_point != 0:
            bad.append(f"'{t.name}' zero point {t.quant.single_zero_point}")
    return ", ".join(bad) or None


def broadcast_shapes(op: Op) -> str | None:
    """The two input shapes broadcast (numpy rules) to the output shape, of rank at most 6."""
    a, b, y = required_input(op, 0), required_input(op, 1), op.outputs[0]
    if max(len(a.shape), len(b.shape), len(y.shape)) > MAX_BROADCAST_RANK:
        return f"rank {max(len(a.shape), len(b.shape), len(y.shape))}"
    rank = max(len(a.shape), len(b.shape))
    padded = [(1,) * (rank - len(t.shape)) + tuple(t.shape) for t in (a, b)]
    if any(m != n and 1 not in (m, n) for m, n in zip(*padded)):
        return f"{list(a.shape)} and {list(b.shape)} do not broadcast"
    shape = tuple(max(m, n) if 0 not in (m, n) else 0 for m, n in zip(*padded))
    return None if shape == tuple(y.shape) else f"{list(a.shape)} and {list(b.shape)} -> {list(y.shape)}"


def prelu_shapes(op: Op) -> str | None:
    """alpha broadcasts into the input's shape and the output has the input's shape (LiteRT
    requires it); float32 PRELU has at most 4 dimensions (TFLM's float kernel is 4-D)."""
    x, y = required_input(op, 0), op.outputs[0]
    if tuple(x.shape) != tuple(y.shape):
        return f"input {list(x.shape)}, output {list(y.shape)}"
    if x.dtype is DType.FLOAT32 and len(x.shape) > 4:
        return f"float32 input of rank {len(x.shape)}"
    return None


def finite_float_constants(op: Op) -> str | None:
    """float32 constant inputs hold no infinity or NaN (C99 has no float literal for them)."""
    bad = [f"constant '{t.name}'" for t in op.inputs[:2]
           if t is not None and t.is_constant and t.dtype is DType.FLOAT32
           and t.data is not None and not np.all(np.isfinite(t.data))]
    return ", ".join(bad) or None


BINARY = (input_arity(2), binary_dtypes, binary_quantization, broadcast_shapes)
