"""Sparse constants: TFLite's SparsityParameters decoded into a dense array at read time.

A sparse tensor (what the converter writes for pruned weights, in front of a DENSIFY op) stores
only some of its values, in traversal order, and says where they go:

- the dense shape (rank n) is split into blocks: `block_map[i]` names the dimension that block
  dimension i divides, by the block size in `dim_metadata[n + i].dense_size`; the "expanded"
  shape is the blocked shape (each mapped dimension divided by its block size) followed by
  the k block sizes;
- `traversal_order` (n + k entries) is the order in which the expanded dimensions are walked,
  outermost first; as in TFLite's FormatConverter, the first n entries are the original
  dimensions and the block dimensions follow in order;
- `dim_metadata[level]` describes the level-th walked dimension: DENSE (every index 0 ..
  dense_size - 1 present) or SPARSE_CSR (for the p-th node of the level above, the indices
  array_indices[array_segments[p] .. array_segments[p + 1]]).

The stored values are the leaves of that walk, in order. Decoding repeats the walk level by
level (numpy, one array of coordinates per level) and scatters the values into zeros. Every
count, index and segment is checked first against the shape and the number of stored values,
with no allocation larger than the file's own vectors or the dense result; a malformed tensor
is refused in one line that names it. The densified array then flows through the reader as if
the file had stored it dense.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import tflite

from ..errors import ModelError
from ..ir import DType
from ..records import dataclass
from .validate import DEFAULT_MAX_TENSOR_BYTES

_INDEX_VECTORS: dict[int, Any] = {
    tflite.SparseIndexVector.Int32Vector: tflite.Int32Vector,
    tflite.SparseIndexVector.Uint16Vector: tflite.Uint16Vector,
    tflite.SparseIndexVector.Uint8Vector: tflite.Uint8Vector,
}


@dataclass(frozen=True)
class Level:
    """One traversal level: dense (segments and indices None) of `size`, or CSR."""

    size: int
    segments: np.ndarray | None = None
    indices: np.ndarray | None = None


@dataclass(frozen=True)
class SparseLayout:
    """A tensor's SparsityParameters as plain values."""

    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    levels: tuple[Level, ...]


def read_layout(sparsity: Any, where: str) -> SparseLayout:
    """The flatbuffer's SparsityParameters table as a SparseLayout (structure only)."""
    order = tuple(int(v) for v in sparsity.TraversalOrderAsNumpy()) if sparsity.TraversalOrderLength() else ()
    blocks = tuple(int(v) for v in sparsity.BlockMapAsNumpy()) if sparsity.BlockMapLength() else ()
    levels = []
    for i in range(sparsity.DimMetadataLength()):
        dim = sparsity.DimMetadata(i)
        if dim.Format() == tflite.DimensionType.DENSE:
            levels.append(Level(int(dim.DenseSize())))
        elif dim.Format() == tflite.DimensionType.SPARSE_CSR:
            segments = _index_vector(dim.ArraySegmentsType(), dim.ArraySegments(), where, i, "array_segments")
            indices = _index_vector(dim.ArrayIndicesType(), dim.ArrayIndices(), where, i, "array_indices")
            levels.append(Level(0, segments, indices))
        else:
            raise ModelError(f"{where}: sparsity level {i} has format {dim.Format()} (DENSE or SPARSE_CSR)")
    return SparseLayout(order, blocks, tuple(levels))


def _index_vector(kind: int, table: Any, where: str, level: int, what: str) -> np.ndarray:
    vector_class = _INDEX_VECTORS.get(kind)
    if vector_class is None or table is None:
        raise ModelError(f"{where}: sparsity level {level} is SPARSE_CSR without {what}")
    vector = vector_class()
    vector.Init(table.Bytes, table.Pos)
    if vector.ValuesLength() == 0:
        return np.zeros(0, dtype=np.int64)
    return vector.ValuesAsNumpy().astype(np.int64)


def densify(layout: SparseLayout, raw: bytes, shape: tuple[int, ...], dtype: DType, where: str) -> np.ndarray:
    """The dense array that `raw` (the stored values) and `layout` describe, or ModelError."""
    if len(raw) % dtype.itemsize:
        raise ModelError(f"{where}: sparse buffer of {len(raw)} bytes is not whole {dtype.short} values")
    count = math.prod(shape)
    if count * dtype.itemsize > DEFAULT_MAX_TENSOR_BYTES:
        raise ModelError(f"{where}: dense shape {list(shape)} of a sparse tensor is over "
                         f"{DEFAULT_MAX_TENSOR_BYTES} bytes")
    expanded = expanded_shape(layout, shape, where)
    stored = len(raw) // dtype.itemsize
    leaves = count_leaves(layout, expanded, where)
    if leaves != stored:
        raise ModelError(f"{where}: the sparsity walk reaches {leaves} values but the buffer stores {stored}")
    values = np.frombuffer(raw, dtype=dtype.numpy.newbyteorder("<")).astype(dtype.numpy)
    coordinates = walk(layout)
    flat = dense_positions(layout, coordinates, shape)
    dense = np.zeros(count, dtype=dtype.numpy)
    dense[flat] = values
    return dense.reshape(shape)


def expanded_shape(layout: SparseLayout, shape: tuple[int, ...], where: str) -> list[int]:
    """The extent of each traversal level, after checking the order, the block map and the
    dense levels' sizes."""
    n, k = len(shape), len(layout.block_map)
    order, levels = list(layout.traversal_order), layout.levels
    if len(order) != n + k or len(levels) != n + k:
        raise ModelError(f"{where}: sparsity of rank {n} with {k} block dimension(s) needs {n + k} traversal "
                         f"levels; traversal_order has {len(order)}, dim_metadata {len(levels)}")
    if sorted(order[:n]) != list(range(n)) or order[n:] != list(range(n, n + k)):
        raise ModelError(f"{where}: traversal_order {order} is not a permutation of the {n} dimensions "
                         f"followed by the block dimensions {list(range(n, n + k))}")
    if sorted(set(layout.block_map)) != sorted(layout.block_map) or any(not 0 <= d < n for d in layout.block_map):
        raise ModelError(f"{where}: block_map {list(layout.block_map)} does not name distinct dimensions of {n}")
    blocked = list(shape)
    sizes = []
    for i, d in enumerate(layout.block_map):
        level = levels[n + i]
        if level.segments is not None or level.size < 1 or shape[d] % level.size:
            raise ModelError(f"{where}: block dimension {i} (level {n + i}) must be DENSE with a size that "
                             f"divides dimension {d} of {shape[d]}")
        blocked[d] //= level.size
        sizes.append(level.size)
    full = blocked + sizes
    extents = [full[axis] for axis in order]
    for number, (level, extent) in enumerate(zip(levels, extents)):
        if level.segments is None and level.size != extent:
            raise ModelError(f"{where}: dense sparsity level {number} has size {level.size}, the dimension "
                             f"it walks has {extent}")
    return extents


def count_leaves(layout: SparseLayout, extents: list[int], where: str) -> int:
    """The number of values the walk reaches, after checking every CSR level's segments and
    indices: segments one longer than the nodes of the level above, from 0, non-decreasing,
    ending at the number of indices; indices within the level's extent and increasing within
    a segment (each position stored once)."""
    nodes = 1
    for number, (level, extent) in enumerate(zip(layout.levels, extents)):
        if level.segments is None or level.indices is None:
            nodes *= extent
            continue
        segments, indices = level.segments, level.indices
        name = f"sparsity level {number}"
        if len(segments) != nodes + 1:
            raise ModelError(f"{where}: {name} has {len(segments)} array_segments for {nodes} parent "
                             f"node(s) (needs {nodes + 1})")
        if segments[0] != 0 or np.any(np.diff(segments) < 0) or segments[-1] != len(indices):
            raise ModelError(f"{where}: {name} array_segments are not monotonic from 0 to the "
                             f"{len(indices)} array_indices")
        if len(indices) and (indices.min() < 0 or indices.max() >= extent):
            raise ModelError(f"{where}: {name} array_indices {int(indices.min())}..{int(indices.max())} are "
                             f"outside the dimension of {extent}")
        steps = np.diff(indices)
        starts = np.zeros(len(indices), dtype=bool)
        starts[segments[:-1][segments[:-1] < len(indices)]] = True
        if len(indices) > 1 and np.any((steps <= 0) & ~starts[1:]):
            raise ModelError(f"{where}: {name} array_indices are not increasing within a segment")
        nodes = len(indices)
    return nodes


def walk(layout: SparseLayout) -> np.ndarray:
    """The coordinates, one row per stored value and one column per traversal level, of every
    leaf in storage order (the levels were checked by count_leaves)."""
    coordinates = np.zeros((1, 0), dtype=np.int64)
    for level in layout.levels:
        parents = len(coordinates)
        if level.segments is None or level.indices is None:
            child_parent = np.repeat(np.arange(parents), level.size)
            child_index = np.tile(np.arange(level.size, dtype=np.int64), parents)
        else:
            child_parent = np.repeat(np.arange(parents), np.diff(level.segments))
            child_index = level.indices
        coordinates = np.column_stack([coordinates[child_parent], child_index])
    return coordinates


def dense_positions(layout: SparseLayout, coordinates: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Flat positions in the dense tensor of leaves at `coordinates` (traversal levels)."""
    n = len(shape)
    original = np.zeros((len(coordinates), n), dtype=np.int64)
    for level, axis in enumerate(layout.traversal_order[:n]):
        original[:, axis] = coordinates[:, level]
    for i, d in enumerate(layout.block_map):
        original[:, d] = original[:, d] * layout.levels[n + i].size + coordinates[:, n + i]
    strides = np.array([math.prod(shape[a + 1:]) for a in range(n)], dtype=np.int64)
    return original @ strides if n else np.zeros(len(coordinates), dtype=np.int64)
