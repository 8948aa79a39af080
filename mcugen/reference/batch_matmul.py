"""BATCH_MATMUL, int8 and int16, bit-exact with TFLM and LiteRT's reference kernels.

Both runtimes (reference_ops::BatchMatMul after transposing for adj_x / adj_y) compute, for
every broadcast batch index, out[m][n] = sum_k (lhs[m][k] + lhs_offset) * (rhs[k][n] +
rhs_offset), where lhs is the first input (transposed when adj_x) and rhs the second (transposed
when adj_y); batch dimensions of rank 2..5 inputs broadcast (equal or 1). int8 accumulates in
int32 (wrapping) and rescales with the double-rounding MultiplyByQuantizedMultiplier; int16
(zero points 0) accumulates in int64 and rescales with the int64 overload. The one multiplier
comes from GetQuantizedConvolutionMultipler (float32 product of the input scales). There is
no fused activation: the output clamps to its dtype's range.
"""

from __future__ import annotations

import numpy as np

from ..ir import BatchMatMulOptions, Op, OpKind
from ..opparams.conv import batch_matmul_rescale
from ..ops.fixedpoint import clamp, wrap_int32
from ..quantization import Rounding, dtype_range
from . import reference
from .conv import apply_rescale


def matrices(op: Op, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lhs [..., M, K], rhs [..., K, N]) as offset int64, after adj_x / adj_y."""
    o = op.options
    assert isinstance(o, BatchMatMulOptions)
    lhs_t, rhs_t = op.inputs[0], op.inputs[1]
    assert lhs_t is not None and rhs_t is not None and lhs_t.quant and rhs_t.quant
    a = lhs.astype(np.int64) - lhs_t.quant.single_zero_point
    b = rhs.astype(np.int64) - rhs_t.quant.single_zero_point
    return (np.swapaxes(a, -1, -2) if o.adj_x else a), (np.swapaxes(b, -1, -2) if o.adj_y else b)


@reference(OpKind.BATCH_MATMUL)
def batch_matmul(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    rescale = batch_matmul_rescale(op)
    lhs, rhs = inputs[0], inputs[1]
    assert lhs is not None and rhs is not None
    a, b = matrices(op, lhs, rhs)
    acc = np.matmul(a, b)  # broadcasts the batch dimensions; exact in int64
    y = op.outputs[0]
    assert y.quant is not None
    scaled = apply_rescale(acc, rescale)
    low, high = dtype_range(y.dtype)
    out = clamp(wrap_int32(scaled + y.quant.single_zero_point), low, high)
    return [out.astype(y.dtype.numpy).reshape(y.shape)]
