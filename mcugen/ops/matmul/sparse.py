"""`--sparse`: int8 FULLY_CONNECTED weights kept sparse in flash where that is smaller.

The format (mcugen_fully_connected_sparse.h): per output unit, a row of ceil(depth / 8) mask
bytes whose bit d % 8 of byte d / 8 says that weight d is stored; then every stored (non-zero)
weight, row after row, in depth order. It costs depth / 8 bytes per row plus one byte per
non-zero, so it saves flash below about 7/8 density, and it is exact: TFLite's accumulator is
sum_d w[d] * (x[d] + input_offset) modulo 2^32 with filter offset 0, to which a zero weight adds
nothing, so summing only the stored weights gives the same int32 before the rescale.

Which ops stay dense, and why (`SparseChoice.reason`): any op kind without a sparse kernel
(convolutions, BATCH_MATMUL), int16x8 FULLY_CONNECTED, weights with a zero point (their zeros
are not zero products), and weights whose sparse form would not be smaller. The emitter
(emit.py) and report.json's "sparse_weights" read the same choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ir import DType, Op, OpKind, Tensor
from ...records import dataclass
from ..common import filter_offset
from ..emitting import EmitContext

RUNTIME = "mcugen_fully_connected_sparse"


@dataclass(frozen=True)
class SparseChoice:
    """Whether an op's weights are built sparse, their flash both ways, and why."""

    op: Op
    dense_bytes: int
    sparse_bytes: int | None  # None: no sparse form for this op
    reason: str

    @property
    def sparse(self) -> bool:
        return self.sparse_bytes is not None and self.sparse_bytes < self.dense_bytes


@dataclass(frozen=True)
class SparseRows:
    """The weights [units, depth] as mask rows and stored values."""

    mask: np.ndarray  # uint8 [units, mask_bytes]
    values: np.ndarray  # int8, the non-zero weights in row-major order


# The kinds whose input 1 is a weights (or, for BATCH_MATMUL, right-hand) operand, constant or not.
WEIGHTED = (OpKind.FULLY_CONNECTED, OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.TRANSPOSE_CONV,
            OpKind.BATCH_MATMUL)


def constant_weights(op: Op) -> Tensor | None:
    """The op's weights if it has constant ones (the ones --sparse could store sparse)."""
    weights = op.inputs[1] if op.kind in WEIGHTED and len(op.inputs) > 1 else None
    return weights if weights is not None and weights.is_constant else None


def sparse_rows(weights: np.ndarray) -> SparseRows:
    stored = weights != 0
    mask = np.packbits(stored, axis=1, bitorder="little")
    return SparseRows(mask=mask, values=weights[stored].astype(np.int8))


def sparse_size(weights: np.ndarray) -> int:
    units, depth = weights.shape
    return units * ((depth + 7) // 8) + int(np.count_nonzero(weights))


def choose(op: Op) -> SparseChoice:
    """The --sparse decision for one op with constant weights."""
    weights = op.inputs[1]
    assert weights is not None and weights.data is not None
    dense = weights.nbytes
    if op.kind is not OpKind.FULLY_CONNECTED:
        return SparseChoice(op, dense, None, f"dense: no sparse kernel for {op.kind.name}")
    if op.outputs[0].dtype is not DType.INT8 or weights.dtype is not DType.INT8 or len(weights.shape) != 2:
        return SparseChoice(op, dense, None, "dense: the sparse kernel is int8 with 2-D weights")
    if filter_offset(weights) != 0:
        return SparseChoice(op, dense, None, "dense: weights with a zero point (a zero weight still adds)")
    size = sparse_size(np.asarray(weights.data))
    if size >= dense:
        return SparseChoice(op, dense, size, f"dense: the sparse form would take {size} bytes")
    return SparseChoice(op, dense, size, f"sparse: {np.count_nonzero(weights.data)} of "
                                         f"{weights.num_elements} weights stored")


def choices(order: Sequence[Op]) -> list[SparseChoice]:
    """The decision for every op with constant weights, in execution order."""
    return [choose(op) for op in order if constant_weights(op) is not None]


def report(order: Sequence[Op]) -> dict[str, Any]:
    """report.json's "sparse_weights": the weights' flash dense and as built, per op."""
    picked = choices(order)
    dense = sum(c.dense_bytes for c in picked)
    built = sum(c.sparse_bytes if c.sparse and c.sparse_bytes is not None else c.dense_bytes for c in picked)
    return {
        "dense_bytes": dense,
        "built_bytes": built,
        "saved_bytes": dense - built,
        "ops": [{"index": c.op.index, "kind": c.op.kind.name, "name": c.op.name, "dense_bytes": c.dense_bytes,
                 "sparse_bytes": c.sparse_bytes, "built": "sparse" if c.sparse else "dense", "reason": c.reason}
                for c in picked],
    }


def sparse_filter_arg(op: Op, ctx: EmitContext) -> tuple[list[str], str]:
    """(declarations, C expression) of the op's sparse weights struct."""
    weights = op.inputs[1]
    assert weights is not None and weights.data is not None
    rows = sparse_rows(np.asarray(weights.data))
    mask = ctx.constant(f"{weights.name}_mask", rows.mask.ravel(), "uint8_t")
    values = ctx.constant(f"{weights.name}_values", rows.values, "int8_t") if rows.values.size else "NULL"
    name = f"fc_sparse_{op.index}"
    declaration = (f"static const mcugen_sparse_weights {name} = {{ .mask = {mask}, .values = {values}, "
                   f".mask_bytes = {rows.mask.shape[1]}, .stored = {rows.values.size} }};")
    return [declaration], f"&{name}"
