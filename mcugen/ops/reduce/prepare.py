"""Build-time parameters of the reductions (MEAN, SUM, REDUCE_MAX) and ARG_MAX, shared by the
C emitters (emit.py) and the numpy reference (reference.py): TFLite's Prepare for these kinds.

A reduction is described by its resolved axes and two loop nests over the input: `outer` walks
the kept dimensions in output order (one output element per step) and `inner` walks the reduced
dimensions in the input's row-major order, which is the order TFLite's reference Reduce visits
(and, for float, adds) the elements of one output. Extent-1 dimensions are dropped and
neighbours that are contiguous in the input merge.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ir import DType, Op, OpKind
from ...quantization import Rounding, dtype_range
from ...records import dataclass
from ..base import PrepareRule, Setting
from ..common import checked_multiplier

MAX_LOOPS = 4  # MCUGEN_REDUCE_MAX_LOOPS in mcugen_reduce.h

LOOP_LEVELS = PrepareRule(
    f"The kept dimensions and the reduced dimensions each merge into at most {MAX_LOOPS} loop "
    "levels (dimensions of extent 1 drop out, neighbours contiguous in the input merge).")


def resolve_axes(op: Op) -> tuple[int, ...]:
    """TFLite's ResolveAxis: negative axes count from the end, duplicates are dropped. The
    rules have checked that the axes are constant and in range."""
    x, axis = op.inputs[0], op.inputs[1]
    assert x is not None and axis is not None and axis.data is not None
    rank = len(x.shape)
    return tuple(sorted({int(value) % rank for value in np.asarray(axis.data).reshape(-1).tolist()}))


def fold_count(multiplier: int, shift: int, count: int) -> tuple[int, int]:
    """QuantizedMeanOrSum's rescale of (multiplier, shift) by 1/count, integer-exact."""
    s = min(count.bit_length() - 1, 32, 31 + shift)
    return (multiplier << s) // count, shift - s


Level = tuple[int, int]  # (extent, input stride in elements)


def _contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides, step = [0] * len(shape), 1
    for axis in reversed(range(len(shape))):
        strides[axis] = step
        step *= shape[axis]
    return strides


def loop_nest(shape: Sequence[int], axes: Sequence[int]) -> list[Level]:
    """(extent, input stride) levels, outermost first, over the given axes of `shape`."""
    strides = _contiguous_strides(shape)
    levels: list[Level] = []
    for axis in axes:
        extent, stride = shape[axis], strides[axis]
        if extent == 1:
            continue
        if levels and levels[-1][1] == stride * extent:
            levels[-1] = (levels[-1][0] * extent, stride)  # contiguous with the level above
        else:
            levels.append((extent, stride))
    return levels


@dataclass(frozen=True)
class ReduceGeometry:
    """Resolved axes, elements per output, and the two loop nests (at most MAX_LOOPS levels)."""

    axes: tuple[int, ...]  # resolved (non-negative), unique, sorted
    count: int
    outer: tuple[Level, ...]
    inner: tuple[Level, ...]


def reduce_geometry(op: Op) -> ReduceGeometry:
    x = op.inputs[0]
    assert x is not None
    axes = resolve_axes(op)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64)) if axes else 1
    kept = [axis for axis in range(len(x.shape)) if axis not in axes]
    outer, inner = loop_nest(x.shape, kept), loop_nest(x.shape, axes)
    for what, levels in (("kept", outer), ("reduced", inner)):
        LOOP_LEVELS.require(len(levels) <= MAX_LOOPS, op, f"the {what} dimensions need {len(levels)} levels")
    return ReduceGeometry(axes, count, tuple(outer), tuple(inner))


def seeds_with_first(op: Op, rounding: Rounding) -> bool:
    """LiteRT's ReduceAllDims path: SUM/REDUCE_MAX over every dimension start from element 0."""
    x = op.inputs[0]
    assert x is not None
    return (rounding is Rounding.LITERT and op.kind in (OpKind.SUM, OpKind.REDUCE_MAX)
            and len(reduce_geometry(op).axes) == len(x.shape))


def arg_max_skips_nan(op: Op, rounding: Rounding) -> bool:
    """LiteRT's float ArgMax skips NaNs; TFLM's plain '>' does not (reference.py)."""
    x = op.inputs[0]
    assert x is not None
    return rounding is Rounding.LITERT and x.dtype is DType.FLOAT32


# --- quantized MEAN and SUM ----------------------------------------------------------------

def max_reduced_elements(dtype: DType) -> int:
    """Elements per output for which the int32 sum, and the sum centred by the zero point
    (|.| <= (2^bits - 1) * count), stay inside int32 as TFLite's accumulator assumes."""
    low, high = dtype_range(dtype)
    return (1 << 31) // (high - low + 1) - 1


@dataclass(frozen=True)
class QuantReduceParams:
    """MEAN or SUM of int8/int16 values: TFLite's QuantizedMeanOrSum.

    out = clamp(MultiplyByQuantizedMultiplier(sum - input_zp * count) + output_zp, qmin, qmax);
    for MEAN the multiplier and shift already fold in 1/count, for SUM they do not.
    """

    geometry: ReduceGeometry
    input_zero_point: int
    output_zero_point: int
    multiplier: int
    shift: int
    output_min: int
    output_max: int


def quant_reduce_params(op: Op) -> QuantReduceParams:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None and x.quant and y.quant
    g = reduce_geometry(op)
    assert g.count <= max_reduced_elements(x.dtype)  # the rule reduced_count_fits_int32
    multiplier, shift = checked_multiplier(op, x.quant.single_scale / y.quant.single_scale)
    if op.kind is OpKind.MEAN:
        multiplier, shift = fold_count(multiplier, shift, g.count)
    low, high = dtype_range(y.dtype)
    return QuantReduceParams(g, x.quant.single_zero_point, y.quant.single_zero_point,
                             multiplier, shift, low, high)


# --- ARG_MAX -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ArgMaxGeometry:
    """The input seen as [outer, axis_size, inner] (TFLite's ArgMinMax)."""

    outer: int
    axis_size: int
    inner: int


def arg_max_geometry(op: Op) -> ArgMaxGeometry:
    """The rule single_constant_axis has checked the axis."""
    x, axis = op.inputs[0], op.inputs[1]
    assert x is not None and axis is not None and axis.data is not None
    resolved = int(np.asarray(axis.data).reshape(-1)[0]) % len(x.shape)
    outer = int(np.prod(x.shape[:resolved], dtype=np.int64))
    inner = int(np.prod(x.shape[resolved + 1:], dtype=np.int64))
    return ArgMaxGeometry(outer, x.shape[resolved], inner)


# --- prepare, per kind ---------------------------------------------------------------------

def prepare_sum_or_mean(op: Op, setting: Setting) -> ReduceGeometry | QuantReduceParams:
    x = op.inputs[0]
    assert x is not None
    return reduce_geometry(op) if x.dtype is DType.FLOAT32 else quant_reduce_params(op)


def prepare_reduce_max(op: Op, setting: Setting) -> ReduceGeometry:
    return reduce_geometry(op)


def prepare_arg_max(op: Op, setting: Setting) -> ArgMaxGeometry:
    return arg_max_geometry(op)
