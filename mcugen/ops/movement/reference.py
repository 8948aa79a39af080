"""Data-movement ops: CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, SLICE, STRIDED_SLICE, PAD,
PADV2, TRANSPOSE, GATHER.

Every one copies elements unchanged in both runtimes, so the reference is numpy indexing over
the element-level parameters of the family's prepare (prepare.py, strided_slice.py: TFLite's
Prepare); it never uses the byte loop nests the C path takes, so the two stay independent. The kernels accept any dtype and any constant
inputs: the constant folder runs them at build time.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from ...ir import Op
from ...quantization import Rounding
from .depth_space import SWAP, block_rearrangement, densify_moves
from .prepare import (
    concat_axis,
    gather_geometry,
    pack_axis,
    pad_amounts,
    pad_value,
    slice_plan,
    split_axis,
    split_input,
    split_sizes,
    transpose_perm,
    unpack_axis,
)
from .strided_slice import strided_slice_plan

Inputs = list[np.ndarray | None]


def _present(inputs: Inputs) -> list[np.ndarray]:
    values = [v for v in inputs if v is not None]
    assert len(values) == len(inputs)
    return values


def concatenation(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    values = _present(inputs)
    if all(v.ndim == 0 for v in values):  # LiteRT's all-constant scalar case: a vector
        return [np.stack(values)]
    return [np.concatenate(values, axis=concat_axis(op))]


def pack(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    return [np.stack(_present(inputs), axis=pack_axis(op))]


def unpack(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    (data,) = _present(inputs[:1])
    axis = unpack_axis(op)
    if data.shape[axis] != len(op.outputs):
        raise ModelError(f"{op.where()}: axis of {data.shape[axis]} unpacks into {len(op.outputs)} outputs")
    return [np.take(data, i, axis=axis) for i in range(len(op.outputs))]


def split(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    """SPLIT and SPLIT_V."""
    data = inputs[op.inputs.index(split_input(op))]
    assert data is not None
    cuts = np.cumsum(split_sizes(op))[:-1]
    return list(np.split(data, cuts, axis=split_axis(op)))


def _sliced(data: np.ndarray, input_shape: tuple[int, ...], start: tuple[int, ...],
            stride: tuple[int, ...], count: tuple[int, ...]) -> np.ndarray:
    """Elements start + k * stride (k < count) of every axis, by index arrays (negative strides
    and a stop of -1 need no Python-slice special cases)."""
    grid = [start[a] + stride[a] * np.arange(count[a], dtype=np.int64) for a in range(len(count))]
    return data.reshape(input_shape)[np.ix_(*grid)] if grid else data.reshape(input_shape)


def slice_(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    plan = slice_plan(op)
    return [_sliced(data, plan.input_shape, plan.start, plan.stride, plan.count)]


def strided_slice(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    plan = strided_slice_plan(op, rounding)
    picked = _sliced(data, plan.input_shape, plan.start, plan.stride, plan.count)
    return [picked.reshape(plan.output_shape)]


def pad(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    """PAD and PADV2."""
    data = inputs[0]
    assert data is not None
    fill = pad_value(op, rounding)
    if fill is None:
        given = inputs[2]
        assert given is not None
        fill = np.asarray(given).ravel()[:1]
    amounts = pad_amounts(op)
    out = np.full([n + a + b for n, (a, b) in zip(data.shape, amounts)], fill[0], dtype=data.dtype)
    out[tuple(slice(a, a + n) for n, (a, _) in zip(data.shape, amounts))] = data
    return [out]


def transpose(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    return [np.transpose(data, transpose_perm(op))]


def depth_space(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    """DEPTH_TO_SPACE and SPACE_TO_DEPTH: the input's 6-D view with its block axes swapped."""
    data = inputs[0]
    assert data is not None
    view = block_rearrangement(op).source_view
    return [np.transpose(data.reshape(view), SWAP).reshape(op.outputs[0].shape)]


def densify(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    """DENSIFY: the frontend decoded the sparse constant into its dense values."""
    data = inputs[0]
    assert data is not None
    densify_moves(op)  # the shape check
    return [np.array(data)]


def gather(op: Op, inputs: Inputs, rounding: Rounding) -> list[np.ndarray]:
    """Out-of-range indices are an error (LiteRT's reference fails the op; TFLM only DCHECKs).
    That error depends on the index values at run time, not on the model, so it stays here
    rather than in a rule."""
    data, indices = inputs[0], inputs[1]
    assert data is not None and indices is not None
    g = gather_geometry(op)
    coords = np.asarray(indices, dtype=np.int64).reshape(g.batch, g.coords)
    if coords.size and (coords.min() < 0 or coords.max() >= g.axis_size):
        raise ModelError(f"{op.where()}: index out of range [0, {g.axis_size}): "
                         f"{int(coords.min())}..{int(coords.max())}")
    blocks = data.reshape(g.batch, g.outer, g.axis_size, g.inner)
    picked = np.stack([blocks[b][:, coords[b], :] for b in range(g.batch)]) if g.batch else blocks[:, :, :0]
    return [picked.reshape(op.outputs[0].shape)]
