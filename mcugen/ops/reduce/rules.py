"""Support rules of MEAN, SUM, REDUCE_MAX and ARG_MAX beyond the shared ones (ops/rules.py)."""

from __future__ import annotations

import numpy as np

from ...ir import DType, Op, OpKind
from ...quantization import Rounding
from ..base import Setting
from ..rules import (
    INTEGER_DTYPES,
    activation_tensors,
    describe_quant_pair,
    integer_quant_pair,
    required_input,
)


def constant_int32_axis(op: Op) -> str | None:
    """The reduction axes are a constant int32 tensor."""
    axis = op.inputs[1] if len(op.inputs) > 1 else None
    if axis is None or not axis.is_constant or axis.dtype is not DType.INT32:
        return "axes are not a constant integer tensor"
    return None


def integer_per_tensor_quant(op: Op) -> str | None:
    """int8 and int16 activations carry per-tensor quantization (float32 ones need none)."""
    bad = [
        f"'{t.name}' has {'no' if t.quant is None else len(t.quant.scale)} scales"
        for t in activation_tensors(op)
        if t.dtype in INTEGER_DTYPES and (t.quant is None or t.quant.per_channel)
    ]
    return ", ".join(bad) or None


def int16_zero_points_zero(op: Op) -> str | None:
    """int16 inputs and outputs have zero point 0 (LiteRT's Prepare requires it)."""
    bad = [f"'{t.name}' zero point {t.quant.single_zero_point}" for t in activation_tensors(op)
           if t.dtype is DType.INT16 and t.quant is not None and t.quant.single_zero_point != 0]
    return ", ".join(bad) or None


def same_quant_as_input(op: Op) -> str | None:
    """An integer output has exactly the input's scale and zero point (TFLite checks; no
    rescaling happens)."""
    pair = integer_quant_pair(op)
    if pair is None or pair[0].scale[:1] == pair[1].scale[:1] and \
            pair[0].single_zero_point == pair[1].single_zero_point:
        return None
    return describe_quant_pair(*pair)


def _reduced_count(op: Op) -> int:
    x, axis = required_input(op), op.inputs[1]
    if axis is None or axis.data is None or not x.shape:
        return 1
    rank = len(x.shape)
    axes = {int(a) % rank for a in axis.data.reshape(-1).tolist() if -rank <= a < rank}
    count = 1
    for a in axes:
        count *= x.shape[a]
    return count


def reduced_count_fits_int32(op: Op) -> str | None:
    """Quantized MEAN/SUM reduce at most 2^31 / 2^bits - 1 elements per output (8388607 for
    int8, 32767 for int16), so that TFLite's int32 sum cannot overflow."""
    x = required_input(op)
    if x.dtype not in INTEGER_DTYPES:
        return None
    limit = (1 << 31) // (1 << (8 * x.dtype.itemsize)) - 1
    count = _reduced_count(op)
    return None if count <= limit else f"{count} elements per output"


def arg_max_dtypes(op: Op) -> str | None:
    """The input is int8 or float32 and the output int32 (TFLM has no other ARG_MAX kernel)."""
    x, y = required_input(op), op.outputs[0]
    bad = []
    if x.dtype not in (DType.INT8, DType.FLOAT32):
        bad.append(f"input '{x.name}' is {x.dtype.short}")
    if y.dtype is not DType.INT32:
        bad.append(f"output '{y.name}' is {y.dtype.short}")
    return ", ".join(bad) or None


def single_constant_axis(op: Op) -> str | None:
    """The axis is one constant int32 value within the input's rank."""
    x, axis = required_input(op), op.inputs[1] if len(op.inputs) > 1 else None
    if (axis is None or not axis.is_constant or axis.dtype is not DType.INT32
            or axis.num_elements != 1):
        return "axis is not a single constant int32 value"
    value, rank = int(axis.data.reshape(-1)[0]), len(x.shape)  # type: ignore[union-attr]
    return None if -rank <= value < rank else f"axis {value} for rank {rank}"


def reduction_axes_in_range(op: Op) -> str | None:
    """Every reduction axis lies in [-rank, rank) of the input."""
    x, axis = required_input(op), op.inputs[1]
    if axis is None or axis.data is None:
        return None  # constant_int32_axis reports it
    rank = len(x.shape)
    bad = [int(a) for a in np.asarray(axis.data).reshape(-1).tolist() if not -rank <= a < rank]
    return f"axes {bad} for rank {rank}" if bad else None


def nonempty_input(op: Op) -> str | None:
    """The input has at least one element and the reduced dimensions are not empty."""
    x = required_input(op)
    return None if x.num_elements > 0 else f"input shape {list(x.shape)}"


def float_sum_only_in_litert_mode(op: Op, setting: Setting) -> str | None:
    """With --rounding litert, SUM takes float32 only: LiteRT 2.3.0's reference SUM reads int8
    and int16 data as uint8 (a LiteRT defect), which mcugen does not reproduce."""
    x = required_input(op)
    if setting.rounding is Rounding.LITERT and op.kind is OpKind.SUM and x.dtype is not DType.FLOAT32:
        return f"{x.dtype.short} SUM with --rounding litert"
    return None


def _constant_axes(op: Op) -> list[int] | None:
    """The axis input's values when it is a constant integer tensor, else None."""
    axis = op.inputs[1] if len(op.inputs) > 1 else None
    if axis is None or axis.data is None or axis.dtype not in (DType.INT32, DType.INT64):
        return None
    return [int(a) for a in np.asarray(axis.data).reshape(-1).tolist()]


def reduced_output_shape(op: Op) -> str | None:
    """The output is the input's shape without the reduced axes, or with extent 1 there when keep_dims is set (no axes: the input's shape)."""
    x, axes = op.inputs[0] if op.inputs else None, _constant_axes(op)
    if x is None or axes is None or any(not -len(x.shape) <= a < len(x.shape) for a in axes):
        return None  # constant_int32_axis and reduction_axes_in_range report these
    reduced = {a % len(x.shape) for a in axes}
    keep = getattr(op.options, "keep_dims", False)
    expected = [1 if a in reduced else n for a, n in enumerate(x.shape) if keep or a not in reduced]
    y = op.outputs[0]
    return None if list(y.shape) == expected else f"output {list(y.shape)}, expected {expected}"


def arg_max_output_shape(op: Op) -> str | None:
    """The output is the input's shape without the axis."""
    x, axes = op.inputs[0] if op.inputs else None, _constant_axes(op)
    if x is None or axes is None or len(axes) != 1 or not -len(x.shape) <= axes[0] < len(x.shape):
        return None  # single_constant_axis reports it
    axis = axes[0] % len(x.shape)
    expected = [n for a, n in enumerate(x.shape) if a != axis]
    y = op.outputs[0]
    return None if list(y.shape) == expected else f"output {list(y.shape)}, expected {expected}"
