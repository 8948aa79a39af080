"""Shape-only ops: RESHAPE, SQUEEZE and EXPAND_DIMS move no data (the same elements in the same
order under the output's shape); SHAPE gives the input's dimensions, known at build time.

The kernels work for any dtype and any constant input: the constant folder runs them.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..ir import DType, Op, OpKind, ShapeOptions, SqueezeOptions
from ..opparams.movement import constant_ints, positive_axis
from ..quantization import Rounding
from . import reference


def _same_elements(op: Op, data: np.ndarray) -> np.ndarray:
    target = op.outputs[0].shape
    if data.size != int(np.prod(target, dtype=np.int64)):
        raise ModelError(f"{op.where()}: {data.size} elements do not fit shape {list(target)}")
    return data.reshape(target)


@reference(OpKind.RESHAPE)
def reshape(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    return [_same_elements(op, data)]


def squeezed_shape(op: Op) -> tuple[int, ...]:
    """SQUEEZE's output shape: the listed dimensions (each of extent 1) removed, or every
    dimension of extent 1 when none is listed."""
    assert isinstance(op.options, SqueezeOptions)
    source = op.inputs[0]
    assert source is not None
    shape = source.shape
    if not op.options.squeeze_dims:
        return tuple(n for n in shape if n != 1)
    axes = {positive_axis(op, a, len(shape), "squeeze dimension") for a in op.options.squeeze_dims}
    if any(shape[a] != 1 for a in axes):
        raise ModelError(f"{op.where()}: squeeze_dims {list(op.options.squeeze_dims)} of shape {list(shape)}")
    return tuple(n for a, n in enumerate(shape) if a not in axes)


@reference(OpKind.SQUEEZE)
def squeeze(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    return [data.reshape(squeezed_shape(op))]


def expanded_shape(op: Op) -> tuple[int, ...]:
    """EXPAND_DIMS: a dimension of extent 1 inserted at `axis` (negative counts from the end of
    the output: axis + rank + 1)."""
    source = op.inputs[0]
    assert source is not None
    values = constant_ints(op, 1, "axis")
    if len(values) != 1:
        raise ModelError(f"{op.where()}: the axis tensor holds {len(values)} values, not 1")
    rank = len(source.shape)
    axis = positive_axis(op, values[0], rank + 1)
    return (*source.shape[:axis], 1, *source.shape[axis:])


@reference(OpKind.EXPAND_DIMS)
def expand_dims(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    return [data.reshape(expanded_shape(op))]


def shape_values(op: Op) -> np.ndarray:
    """SHAPE's output: the input's dimensions in the out_type (int32 or int64)."""
    assert isinstance(op.options, ShapeOptions)
    source = op.inputs[0]
    assert source is not None
    dtype = op.outputs[0].dtype
    if dtype not in (DType.INT32, DType.INT64):
        raise ModelError(f"{op.where()}: SHAPE output is {dtype.short}, not int32/int64")
    return np.array(source.shape, dtype=dtype.numpy)


@reference(OpKind.SHAPE)
def shape(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return [shape_values(op)]
