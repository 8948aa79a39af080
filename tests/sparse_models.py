"""Sparse constants as the TFLite converter writes them (tensor SparsityParameters, values in
traversal order), and small models whose weights come through DENSIFY, for the DENSIFY and
--sparse tests and the memory benchmark.

The encoder follows TFLite's FormatConverter in the dense-to-sparse direction: the dense
tensor is split into blocks (block_map, block sizes), seen in traversal order, and walked level
by level; a DENSE level keeps every index, a SPARSE_CSR level keeps the indices whose sub-tensor
holds a non-zero (array_segments per parent, array_indices). It is test code; mcugen's decoder
(mcugen/frontend/sparsity.py) is the other direction and LiteRT's DENSIFY the oracle.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from modelbuilder import ModelBuilder, Sparsity


def encode(dense: np.ndarray, formats: Sequence[str], block_map: Sequence[int] = (),
           block_sizes: Sequence[int] = (), traversal_order: Sequence[int] | None = None,
           index_type: str = "int32") -> tuple[np.ndarray, Sparsity]:
    """(stored values, sparsity) of `dense`; formats[level] is "DENSE" or "SPARSE_CSR" for each
    of the rank + len(block_map) traversal levels."""
    n, k = dense.ndim, len(block_map)
    split_shape: list[int] = []
    position: dict[int, int] = {}  # original dim -> its axis in the split shape
    block_axis: dict[int, int] = {}  # original dim -> the axis of its in-block index
    for d in range(n):
        position[d] = len(split_shape)
        if d in block_map:
            size = block_sizes[list(block_map).index(d)]
            split_shape += [dense.shape[d] // size, size]
            block_axis[d] = len(split_shape) - 1
        else:
            split_shape.append(dense.shape[d])
    expanded = dense.reshape(split_shape).transpose([position[d] for d in range(n)]
                                                    + [block_axis[d] for d in block_map])
    order = list(traversal_order) if traversal_order is not None else list(range(n + k))
    walked = expanded.transpose(order)
    nodes: list[np.ndarray] = [walked]
    levels: list[tuple] = []
    for fmt in formats:
        size = walked.shape[len(levels)]
        if fmt == "DENSE":
            nodes = [node[i] for node in nodes for i in range(size)]
            levels.append(("DENSE", size))
            continue
        segments, indices, children = [0], [], []
        for node in nodes:
            kept = [i for i in range(size) if np.any(node[i] != 0)]
            indices += kept
            children += [node[i] for i in kept]
            segments.append(len(indices))
        nodes = children
        levels.append(("SPARSE_CSR", segments, indices))
    values = np.array([np.asarray(v).item() for v in nodes], dtype=dense.dtype)
    return values, Sparsity(order, list(block_map), levels, index_type)


def sparse_weights(rng: np.random.Generator, shape: Sequence[int], dtype: str, zeros: float) -> np.ndarray:
    """Random weights with a fraction `zeros` of exact zeros, none of the rest zero."""
    if dtype == "float32":
        values = rng.normal(0.0, 0.5, size=shape).astype(np.float32)
        values[values == 0] = 0.25
    else:
        values = rng.integers(1, 128, size=shape) * rng.choice([-1, 1], size=shape)
        values = values.astype(dtype)
    values[rng.random(shape) < zeros] = 0
    return values


def _weights(b: ModelBuilder, name: str, dense: np.ndarray, quant: dict, sparse: dict | None) -> int:
    """The weights tensor: a plain constant, or a sparse constant behind DENSIFY."""
    dtype = dense.dtype.name
    if sparse is None:
        return b.add_tensor(name, dense.shape, dtype, data=dense, **quant)
    values, sparsity = encode(dense, **sparse)
    stored = b.add_tensor(f"{name}_sparse", dense.shape, dtype, data=values, sparsity=sparsity, **quant)
    out = b.add_tensor(name, dense.shape, dtype, **quant)
    b.add_op("DENSIFY", [stored], [out])
    return out


def fully_connected(rng: np.random.Generator, batch: int, inputs: int, units: int, zeros: float,
                    sparse: dict | None, dtype: str = "int8") -> bytes:
    """x[batch, inputs] -> FULLY_CONNECTED(weights[units, inputs], bias) -> y[batch, units];
    int8 with per-tensor weight scale, or float32."""
    b = ModelBuilder("sparse fc")
    dense = sparse_weights(rng, (units, inputs), dtype, zeros)
    if dtype == "int8":
        x = b.add_tensor("x", [batch, inputs], "int8", scale=0.04, zero_point=-5)
        w = _weights(b, "w", dense, {"scale": 0.003, "zero_point": 0}, sparse)
        bias = b.add_tensor("b", [units], "int32", scale=0.04 * 0.003, zero_point=0,
                            data=rng.integers(-2000, 2000, size=units).astype(np.int32))
        y = b.add_tensor("y", [batch, units], "int8", scale=0.09, zero_point=3)
    else:
        x = b.add_tensor("x", [batch, inputs], "float32")
        w = _weights(b, "w", dense, {}, sparse)
        bias = b.add_tensor("b", [units], "float32", data=rng.normal(0, 1, size=units).astype(np.float32))
        y = b.add_tensor("y", [batch, units], "float32")
    b.add_op("FULLY_CONNECTED", [x, w, bias], [y])
    b.set_io([x], [y])
    return b.build()


def conv(rng: np.random.Generator, zeros: float, sparse: dict | None) -> bytes:
    """int8 x[1, 6, 6, 8] -> CONV_2D(weights[12, 3, 3, 8] per-channel, SAME) -> y[1, 6, 6, 12]."""
    b = ModelBuilder("sparse conv")
    dense = sparse_weights(rng, (12, 3, 3, 8), "int8", zeros)
    scales = list(rng.uniform(0.002, 0.006, size=12))
    x = b.add_tensor("x", [1, 6, 6, 8], "int8", scale=0.05, zero_point=2)
    w = _weights(b, "w", dense, {"scale": scales, "zero_point": 0, "quantized_dimension": 0}, sparse)
    bias = b.add_tensor("b", [12], "int32", scale=[0.05 * s for s in scales], zero_point=0,
                        data=rng.integers(-500, 500, size=12).astype(np.int32))
    y = b.add_tensor("y", [1, 6, 6, 12], "int8", scale=0.12, zero_point=-4)
    b.add_op("CONV_2D", [x, w, bias], [y], {"padding": "SAME"})
    b.set_io([x], [y])
    return b.build()


CSR_ROWS = {"formats": ["DENSE", "SPARSE_CSR"]}  # a 2-D weight matrix as CSR of rows
BLOCK_1X4 = {"formats": ["DENSE", "SPARSE_CSR", "DENSE"], "block_map": [1], "block_sizes": [4]}
CONV_CSR = {"formats": ["DENSE", "DENSE", "DENSE", "SPARSE_CSR"]}
