"""Shape-only ops: RESHAPE, SQUEEZE and EXPAND_DIMS move no data (the same elements in the same
order under the output's shape); SHAPE gives the input's dimensions, known at build time.

These are their build-time facts (TFLite's Prepare), shared by the numpy reference
(reference.py) and the C emitters (emit.py): the output shape of each view, and SHAPE's values.
`same_shape_view` tells the passes when a view changes nothing at all.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from ...ir import DType, Op, ShapeOptions, SqueezeOptions
from ..base import Setting
from ..movement.prepare import constant_ints, positive_axis


def reshaped_shape(op: Op) -> tuple[int, ...]:
    """RESHAPE's output shape, which must hold exactly the input's elements. (The shape input
    is optional; the output tensor's shape is the one TFLite allocates.)"""
    source = op.inputs[0]
    assert source is not None
    target = tuple(op.outputs[0].shape)
    if source.num_elements != int(np.prod(target, dtype=np.int64)):
        raise ModelError(f"{op.where()}: {source.num_elements} elements do not fit shape {list(target)}")
    return target


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


def shape_values(op: Op) -> np.ndarray:
    """SHAPE's output: the input's dimensions in the out_type (int32 or int64)."""
    assert isinstance(op.options, ShapeOptions)
    source = op.inputs[0]
    assert source is not None
    dtype = op.outputs[0].dtype
    if dtype not in (DType.INT32, DType.INT64):
        raise ModelError(f"{op.where()}: SHAPE output is {dtype.short}, not int32/int64")
    return np.array(source.shape, dtype=dtype.numpy)


# --- prepare, per kind ------------------------------------------------------------------


def prepare_reshape(op: Op, setting: Setting) -> tuple[int, ...]:
    return reshaped_shape(op)


def prepare_squeeze(op: Op, setting: Setting) -> tuple[int, ...]:
    return squeezed_shape(op)


def prepare_expand_dims(op: Op, setting: Setting) -> tuple[int, ...]:
    return expanded_shape(op)


def prepare_shape(op: Op, setting: Setting) -> np.ndarray:
    return shape_values(op)


# --- identity (mcugen.passes.identity) ---------------------------------------------------


def same_shape_view(op: Op) -> bool:
    """RESHAPE, SQUEEZE or EXPAND_DIMS to the input's own shape (and dtype): a view that
    changes nothing."""
    source = op.inputs[0] if op.inputs else None
    return (source is not None and len(op.outputs) == 1 and source.dtype is op.outputs[0].dtype
            and tuple(source.shape) == tuple(op.outputs[0].shape))
