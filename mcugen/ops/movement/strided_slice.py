"""STRIDED_SLICE's Prepare: where each output element comes from, per runtime.

LiteRT's BuildStridedSliceParams expands ellipsis_mask and new_axis_mask into an effective input
shape and honours `offset`; TFLM's Prepare clears both masks, never reads `offset` and checks
the model's output shape against the one its own (older) start/stop arithmetic gives. Both then
run the same StartForAxis / EndForAxis loop. What TFLM cannot run breaks one of the two
PrepareRules below in TFLM mode.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ModelError
from ...ir import Op, StridedSliceOptions
from ...quantization import Rounding
from ...records import dataclass
from ..base import PrepareRule, Setting
from .prepare import (
    INT32_MAX,
    INT32_MIN,
    Move,
    SlicePlan,
    check_output_shape,
    clamp,
    constant_ints,
    product,
    required,
    slice_moves,
)

TFLM_ONE_VALUE_PER_DIMENSION = PrepareRule(
    "With --rounding tflm, begin, end and strides hold one value per input dimension (TFLM reads "
    "no more and no fewer).")
TFLM_OUTPUT_SHAPE = PrepareRule(
    "With --rounding tflm, the output shape is the one TFLM computes, which ignores "
    "ellipsis_mask, new_axis_mask and offset (its Prepare fails otherwise).")


@dataclass(frozen=True)
class _SliceSpec:
    """StridedSliceParams after the masks are expanded over the effective input shape."""

    shape: tuple[int, ...]
    begin: tuple[int, ...]
    end: tuple[int, ...]
    stride: tuple[int, ...]
    begin_mask: int
    end_mask: int
    shrink_mask: int
    offset: bool


def _bit(mask: int, axis: int) -> bool:
    return bool(mask & (1 << axis))


def _litert_spec(options: StridedSliceOptions, shape: tuple[int, ...], begin: list[int],
                 end: list[int], stride: list[int]) -> tuple[_SliceSpec, list[int]]:
    """LiteRT's BuildStridedSliceParams: ellipsis and new axes expanded into an effective shape.
    Also returns end_data as ResizeOutputTensor reads it with offset=True (by effective axis)."""
    count = len(begin)
    ellipsis, new_axis = options.ellipsis_mask, options.new_axis_mask
    num_add = sum(1 for i in range(count) if not _bit(ellipsis, i) and _bit(new_axis, i))
    dims = len(shape) + num_add
    effective_ellipsis = effective_new = 0
    ellipsis_start, expanded = dims, 0
    i = 0
    while i < dims:
        if _bit(ellipsis, i):
            ellipsis_start = i
            ellipsis_end = max(i + 1, min(i + 1 + num_add + len(shape) - count, dims))
            expanded = ellipsis_end - ellipsis_start - 1
            while i < ellipsis_end:
                effective_ellipsis |= 1 << i
                i += 1
            continue
        if (i - expanded) >= 0 and _bit(new_axis, i - expanded):
            effective_new |= 1 << i
        i += 1
    starts, stops, strides = [0] * dims, [0] * dims, [1] * dims
    begin_mask = end_mask = shrink = 0
    eff_shape = [0] * dims
    added_ellipsis = added_axes = 0
    for i in range(dims):
        if _bit(effective_ellipsis, i):
            added_ellipsis = max(0, i - ellipsis_start)
            begin_mask |= 1 << i
            end_mask |= 1 << i
            eff_shape[i] = shape[i - added_axes]
        elif _bit(effective_new, i):
            starts[i], stops[i] = 0, 1
            eff_shape[i] = 1
            added_axes += 1
        elif i >= count + expanded:
            begin_mask |= 1 << i
            end_mask |= 1 << i
            eff_shape[i] = shape[i - added_axes]
        else:
            orig = i - added_ellipsis
            starts[i], stops[i], strides[i] = begin[orig], end[orig], stride[orig]
            if _bit(options.begin_mask, orig):
                begin_mask |= 1 << i
            if _bit(options.end_mask, orig):
                end_mask |= 1 << i
            if _bit(options.shrink_axis_mask, orig):
                shrink |= 1 << i
            eff_shape[i] = shape[i - added_axes]
    spec = _SliceSpec(tuple(eff_shape), tuple(starts), tuple(stops), tuple(strides), begin_mask,
                      end_mask, shrink, options.offset)
    return spec, end


def _start_for_axis(spec: _SliceSpec, axis: int) -> int:
    """StridedSliceStartForAxis / reference_ops::StartForAxis (identical in both runtimes)."""
    size, start, stride = spec.shape[axis], spec.begin[axis], spec.stride[axis]
    if start < 0:
        start += size
    start = clamp(start, 0, size) if stride > 0 else clamp(start, -1, size - 1)
    if _bit(spec.begin_mask, axis):
        start = 0 if stride > 0 else size - 1
    return start


def _end_for_axis(spec: _SliceSpec, axis: int, start: int) -> int:
    """StridedSliceEndForAxis / reference_ops::EndForAxis."""
    size = spec.shape[axis]
    if _bit(spec.shrink_mask, axis):
        return start if start >= size else start + 1
    end, stride = spec.end[axis], spec.stride[axis]
    if spec.offset:
        end += start
    if end < 0:
        end += size
    end = clamp(end, 0, size) if stride > 0 else clamp(end, -1, size - 1)
    if _bit(spec.end_mask, axis):
        end = size if stride > 0 else -1
    return end


def _loop_count(start: int, stop: int, stride: int) -> int:
    """How many times `for (i = start; stride > 0 ? i < stop : i > stop; i += stride)` runs."""
    if stride > 0:
        return max(0, -(-(stop - start) // stride))
    return max(0, -(-(start - stop) // -stride))


def _litert_output_shape(spec: _SliceSpec, end_data: list[int]) -> list[int]:
    """LiteRT's ResizeOutputTensor (its offset=True branch reads end_data by effective axis)."""
    shape = []
    for axis in range(len(spec.shape)):
        stride = spec.stride[axis]
        if _bit(spec.shrink_mask, axis):
            continue
        if spec.offset:
            extent = end_data[axis]
        else:
            start = _start_for_axis(spec, axis)
            extent = _end_for_axis(spec, axis, start) - start
        if (extent < 0) != (stride < 0):
            extent = 0
        elif stride < 0:
            extent = int((extent + 1) / stride) + 1  # C++ division truncates toward zero
        else:
            extent = 0 if extent == 0 else (extent - 1) // stride + 1
        shape.append(extent)
    return shape


def _tflm_legacy_bounds(spec: _SliceSpec, axis: int) -> tuple[int, int]:
    """strided_slice::StartForAxis / StopForAxis, which TFLM's Prepare uses for its shape check."""
    size, stride = spec.shape[axis], spec.stride[axis]
    if size == 0:
        return 0, 0
    start = spec.begin[axis]
    if _bit(spec.begin_mask, axis):
        start = INT32_MIN if stride > 0 else INT32_MAX
    if start < 0:
        start += size
    start = clamp(start, 0, size) if stride > 0 else clamp(start, -1, size - 1)
    if _bit(spec.shrink_mask, axis):
        return start, start + 1
    stop = spec.end[axis]
    if _bit(spec.end_mask, axis):
        stop = INT32_MAX if stride > 0 else INT32_MIN
    if stop < 0:
        stop += size
    stop = clamp(stop, 0, size) if stride > 0 else clamp(stop, -1, size - 1)
    return start, stop


def _tflm_output_shape(spec: _SliceSpec) -> list[int]:
    """TFLM's CheckOutputSize: ceil((end - begin) / float(stride)), negative extents become 0."""
    shape = []
    for axis in range(len(spec.shape)):
        start, stop = _tflm_legacy_bounds(spec, axis)
        if _bit(spec.shrink_mask, axis):
            continue
        extent = math.ceil(float(np.float32(stop - start) / np.float32(spec.stride[axis])))
        shape.append(max(extent, 0))
    return shape


def strided_slice_plan(op: Op, rounding: Rounding) -> SlicePlan:
    """Where each output element of STRIDED_SLICE comes from, per runtime.

    LiteRT expands ellipsis_mask and new_axis_mask into an effective input shape and honours
    `offset` (end is relative to begin). TFLM's Prepare sets ellipsis_mask and new_axis_mask to
    0 and never reads `offset`, reads one begin/end/stride value per input dimension (rank at
    most 4), and fails unless the model's output shape is what those params give; mcugen
    reproduces that and reports the failure as unsupported in TFLM mode.
    """
    assert isinstance(op.options, StridedSliceOptions)
    options = op.options
    shape = tuple(required(op, 0).shape)
    begin = constant_ints(op, 1, "begin")
    end = constant_ints(op, 2, "end")
    stride = constant_ints(op, 3, "strides")
    if not len(begin) == len(end) == len(stride):
        raise ModelError(f"{op.where()}: begin, end and strides have {len(begin)}, {len(end)}, "
                         f"{len(stride)} values")
    if any(s == 0 for s in stride):
        raise ModelError(f"{op.where()}: stride 0 in strides {stride}")
    if rounding is Rounding.TFLM:
        TFLM_ONE_VALUE_PER_DIMENSION.require(
            len(begin) == len(shape), op, lambda: f"{len(begin)} values for an input of rank {len(shape)}")
        spec = _SliceSpec(shape, tuple(begin), tuple(end), tuple(stride), options.begin_mask,
                          options.end_mask, options.shrink_axis_mask, False)
        out_shape = _tflm_output_shape(spec)
        TFLM_OUTPUT_SHAPE.require(
            tuple(out_shape) == tuple(op.outputs[0].shape), op,
            lambda: f"TFLM gives {out_shape}, the model's output is {list(op.outputs[0].shape)}")
    else:
        spec, end_data = _litert_spec(options, shape, begin, end, stride)
        out_shape = _litert_output_shape(spec, end_data)
        check_output_shape(op, 0, out_shape)
    starts, counts = [], []
    for axis in range(len(spec.shape)):
        start = _start_for_axis(spec, axis)
        stop = _end_for_axis(spec, axis, start)
        starts.append(start)
        counts.append(_loop_count(start, stop, spec.stride[axis]))
    kept = [c for axis, c in enumerate(counts) if not _bit(spec.shrink_mask, axis)]
    if product(kept) != product(out_shape):
        raise ModelError(f"{op.where()}: the slice has {product(kept)} elements, the output "
                         f"{product(out_shape)}")
    return SlicePlan(spec.shape, tuple(starts), spec.stride, tuple(counts), tuple(out_shape))


def prepare_strided_slice(op: Op, setting: Setting) -> list[Move]:
    """STRIDED_SLICE: one strided copy, from the plan of the build's runtime."""
    return slice_moves(op, strided_slice_plan(op, setting.rounding))
