"""Support rules of the matmul family (FULLY_CONNECTED, BATCH_MATMUL).

The weighted-op rules FULLY_CONNECTED shares with the conv family (weights, bias, int16 zero
points) stay in mcugen.ops.rules.
"""

from __future__ import annotations

from ...ir import DType, FullyConnectedOptions, Op
from ..rules import required_input, weights_of

MAX_BATCH_DIMS = 3  # mcugen_matrix_dims: rank 2..5


def fully_connected_shapes(op: Op) -> str | None:
    """Weights are 2-D [units, depth] in the default layout, and depth divides the input size."""
    assert isinstance(op.options, FullyConnectedOptions)
    w = weights_of(op)
    if w is None or len(w.shape) != 2:
        return f"weights shape {list(w.shape) if w is not None else None}"
    if op.options.shuffled_weights:
        return "shuffled weights format"
    if required_input(op).num_elements % w.shape[1] != 0:
        return f"input of {required_input(op).num_elements} elements is not a multiple of depth {w.shape[1]}"
    return None


def fully_connected_output_size(op: Op) -> str | None:
    """The output has (input elements / depth) x units elements."""
    w, y = weights_of(op), op.outputs[0]
    if w is None or len(w.shape) != 2 or not w.shape[1]:
        return None  # fully_connected_shapes reports it
    units, depth = w.shape
    batch = required_input(op).num_elements // depth
    if y.num_elements != batch * units:
        return f"output has {y.num_elements} elements, expected {batch} x {units}"
    return None


def batch_matmul_operands(op: Op) -> str | None:
    """BATCH_MATMUL: both inputs and the output are int8, or all int16 (TFLM has no mixed kernel), each with per-tensor quantization, or all float32."""
    tensors = [required_input(op, 0), required_input(op, 1), op.outputs[0]]
    dtype = tensors[0].dtype
    if dtype not in (DType.INT8, DType.INT16, DType.FLOAT32) or any(t.dtype is not dtype for t in tensors):
        return " -> ".join(t.dtype.short for t in tensors)
    if dtype is DType.FLOAT32:
        return None
    bad = [t.name for t in tensors if t.quant is None or t.quant.per_channel]
    return f"no per-tensor quantization on {', '.join(bad)}" if bad else None


def batch_matmul_shapes(op: Op) -> str | None:
    """BATCH_MATMUL: inputs have rank 2 to 5, batch dimensions that broadcast (equal or 1) and contracted dimensions (after adj_x / adj_y) that agree."""
    lhs, rhs = required_input(op, 0), required_input(op, 1)
    if not (2 <= len(lhs.shape) <= 5 and 2 <= len(rhs.shape) <= 5):
        return f"ranks {len(lhs.shape)} and {len(rhs.shape)}"
    rank = max(len(lhs.shape), len(rhs.shape))
    a = (1,) * (rank - len(lhs.shape)) + tuple(lhs.shape)
    b = (1,) * (rank - len(rhs.shape)) + tuple(rhs.shape)
    if any(x != y and 1 not in (x, y) for x, y in zip(a[:-2], b[:-2])):
        return f"batch dimensions {list(lhs.shape[:-2])} and {list(rhs.shape[:-2])} do not broadcast"
    adj_x, adj_y = getattr(op.options, "adj_x", False), getattr(op.options, "adj_y", False)
    depth_lhs = a[-2] if adj_x else a[-1]
    depth_rhs = b[-1] if adj_y else b[-2]
    if depth_lhs != depth_rhs:
        return f"contracted dimensions {depth_lhs} and {depth_rhs}"
    return None


def batch_matmul_output_rank(op: Op) -> str | None:
    """BATCH_MATMUL: the output has rank 2 to 5."""
    y = op.outputs[0]
    return None if 2 <= len(y.shape) <= 2 + MAX_BATCH_DIMS else f"output shape {list(y.shape)}"


def batch_matmul_output_shape(op: Op) -> str | None:
    """BATCH_MATMUL: the output is the broadcast batch dimensions followed by [rows, columns]: the lhs's rows (its columns with adj_x) and the rhs's columns (its rows with adj_y)."""
    lhs = op.inputs[0] if op.inputs else None
    rhs = op.inputs[1] if len(op.inputs) > 1 else None
    if lhs is None or rhs is None or len(lhs.shape) < 2 or len(rhs.shape) < 2:
        return None  # input_arity and batch_matmul_shapes report these
    rank = max(len(lhs.shape), len(rhs.shape))
    a = (1,) * (rank - len(lhs.shape)) + tuple(lhs.shape)
    b = (1,) * (rank - len(rhs.shape)) + tuple(rhs.shape)
    adj_x, adj_y = getattr(op.options, "adj_x", False), getattr(op.options, "adj_y", False)
    batch = [max(m, n) if 1 in (m, n) else m for m, n in zip(a[:-2], b[:-2])]
    expected = [*batch, a[-1] if adj_x else a[-2], b[-2] if adj_y else b[-1]]
    y = op.outputs[0]
    return None if list(y.shape) == expected else f"output {list(y.shape)}, expected {expected}"
