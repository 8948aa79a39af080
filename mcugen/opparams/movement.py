"""Build-time parameters of the data-movement ops: TFLite's Prepare step for CONCATENATION,
PACK, UNPACK, SPLIT, SPLIT_V, SLICE, STRIDED_SLICE, PAD, PADV2, TRANSPOSE and GATHER, shared by
the numpy reference (mcugen.reference.movement) and the C emitters (mcugen.codegen.ops_movement).

None of these ops does arithmetic: both runtimes copy elements bit for bit (CONCATENATION of
int16 inputs with different scales included: TFLM and LiteRT copy the raw values). What has to
match TFLite is which elements go where, and that is settled here, per mode where the two
runtimes differ (STRIDED_SLICE's masks, PAD's int16 pad value).

The C side gets each copy as a loop nest over bytes (`MoveLoop`): up to MAX_LOOPS levels, each
with an extent and a signed byte stride on either side, and a contiguous run of bytes copied at
every innermost point. One kernel then serves every dtype and every op of the family.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, UnsupportedError
from ..ir import (
    ConcatenationOptions,
    DType,
    GatherOptions,
    Op,
    OpKind,
    PackOptions,
    StridedSliceOptions,
    Tensor,
    UnpackOptions,
)
from ..quantization import Rounding

MAX_LOOPS = 6  # MCUGEN_MOVE_MAX_LOOPS in mcugen_movement.h
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


# --- shared -----------------------------------------------------------------------------


def required(op: Op, index: int) -> Tensor:
    tensor = op.inputs[index] if index < len(op.inputs) else None
    if tensor is None:
        raise UnsupportedError(f"{op.where()}: input {index} is missing")
    return tensor


def constant_ints(op: Op, index: int, what: str) -> list[int]:
    """The values of a constant integer input (an axis, begin, perm, ...), flattened."""
    tensor = required(op, index)
    if tensor.data is None:
        raise UnsupportedError(f"{op.where()}: {what} '{tensor.name}' is not a constant tensor")
    if tensor.dtype not in (DType.INT32, DType.INT64):
        raise UnsupportedError(f"{op.where()}: {what} '{tensor.name}' is {tensor.dtype.short}, not int32/int64")
    return [int(v) for v in np.asarray(tensor.data).ravel()]


def positive_axis(op: Op, axis: int, rank: int, what: str = "axis") -> int:
    """A possibly negative axis made positive, checked against the rank."""
    resolved = axis + rank if axis < 0 else axis
    if not 0 <= resolved < rank:
        raise ModelError(f"{op.where()}: {what} {axis} is out of range for rank {rank}")
    return resolved


def _product(values: Sequence[int]) -> int:
    return int(math.prod(values))


def _element_strides(shape: Sequence[int]) -> list[int]:
    strides, step = [0] * len(shape), 1
    for axis in reversed(range(len(shape))):
        strides[axis] = step
        step *= shape[axis]
    return strides


def check_output_shape(op: Op, index: int, shape: Sequence[int]) -> None:
    declared = tuple(op.outputs[index].shape)
    if declared != tuple(shape):
        raise ModelError(
            f"{op.where()}: output {index} '{op.outputs[index].name}' has shape {list(declared)}, "
            f"the op gives {list(shape)}"
        )


# --- the byte loop nest -------------------------------------------------------------------


@dataclass(frozen=True)
class MoveLoop:
    """One strided copy: output bytes at output_offset + sum(i_l * output_stride[l]) get the run
    of run_bytes bytes at input_offset + sum(i_l * input_stride[l]), for every i_l < extent[l]
    (levels outermost first, padded with extent 1 to MAX_LOOPS)."""

    extent: tuple[int, ...]
    input_stride: tuple[int, ...]
    output_stride: tuple[int, ...]
    input_offset: int
    output_offset: int
    run_bytes: int

    @property
    def empty(self) -> bool:
        return self.run_bytes == 0 or any(e == 0 for e in self.extent)


def move_loop(extents: Sequence[int], input_strides: Sequence[int], output_strides: Sequence[int],
              input_offset: int, output_offset: int, itemsize: int) -> MoveLoop:
    """The smallest byte loop nest for an element loop nest (strides and offsets in elements).

    Levels of extent 1 are dropped, a level that continues its inner neighbour on both sides is
    merged into it, and an innermost level that is contiguous on both sides becomes the run.
    """
    if any(e == 0 for e in extents):
        return MoveLoop((1,) * MAX_LOOPS, (0,) * MAX_LOOPS, (0,) * MAX_LOOPS, 0, 0, 0)
    levels = [(n, a, b) for n, a, b in zip(extents, input_strides, output_strides) if n != 1]
    merged: list[tuple[int, int, int]] = []
    for n, a, b in levels:
        if merged:
            outer_n, outer_a, outer_b = merged[-1]
            if outer_a == a * n and outer_b == b * n:
                merged[-1] = (outer_n * n, a, b)
                continue
        merged.append((n, a, b))
    run = 1
    if merged and merged[-1][1] == 1 and merged[-1][2] == 1:
        run = merged.pop()[0]
    if len(merged) > MAX_LOOPS:
        raise UnsupportedError(f"a copy needs {len(merged)} loop levels (at most {MAX_LOOPS})")
    pad = MAX_LOOPS - len(merged)
    merged = [(1, 0, 0)] * pad + merged
    loop = MoveLoop(
        extent=tuple(n for n, _, _ in merged),
        input_stride=tuple(a * itemsize for _, a, _ in merged),
        output_stride=tuple(b * itemsize for _, _, b in merged),
        input_offset=input_offset * itemsize,
        output_offset=output_offset * itemsize,
        run_bytes=run * itemsize,
    )
    for value in (*loop.input_stride, *loop.output_stride, loop.input_offset, loop.output_offset):
        if not INT32_MIN <= value <= INT32_MAX:
            raise UnsupportedError(f"a copy offset of {value} bytes does not fit int32")
    return loop


@dataclass(frozen=True)
class Move:
    """A MoveLoop from one op input to one op output (indices into op.inputs / op.outputs)."""

    source: int
    target: int
    loop: MoveLoop


def _block_moves(op: Op, shape: Sequence[int], axis: int, pieces: Sequence[int], gather: bool,
                 itemsize: int, source: int = 0) -> list[Move]:
    """Concatenation (gather=True: pieces are inputs written into one output) or split
    (gather=False: pieces are outputs cut from input `source`) along `axis` of `shape`."""
    outer = _product(shape[:axis])
    inner = _product(shape[axis + 1 :])
    total = shape[axis]
    moves, start = [], 0
    for index, size in enumerate(pieces):
        block = size * inner
        whole, part = total * inner, block
        if gather:
            loop = move_loop([outer, block], [part, 1], [whole, 1], 0, start * inner, itemsize)
            moves.append(Move(index, 0, loop))
        else:
            loop = move_loop([outer, block], [whole, 1], [part, 1], start * inner, 0, itemsize)
            moves.append(Move(source, index, loop))
        start += size
    return moves


# --- CONCATENATION, PACK ------------------------------------------------------------------


def concat_axis(op: Op) -> int:
    """CONCATENATION's axis made positive (CalculatePositiveAxis on the output's rank)."""
    assert isinstance(op.options, ConcatenationOptions)
    return positive_axis(op, op.options.axis, len(op.outputs[0].shape))


def concat_moves(op: Op) -> list[Move]:
    axis = concat_axis(op)
    out = op.outputs[0]
    pieces = [required(op, i).shape[axis] for i in range(len(op.inputs))]
    return _block_moves(op, out.shape, axis, pieces, True, out.dtype.itemsize)


def pack_axis(op: Op) -> int:
    """PACK's axis made positive on the output's rank (inputs have one dimension less)."""
    assert isinstance(op.options, PackOptions)
    return positive_axis(op, op.options.axis, len(op.outputs[0].shape))


def pack_moves(op: Op) -> list[Move]:
    out = op.outputs[0]
    return _block_moves(op, out.shape, pack_axis(op), [1] * len(op.inputs), True, out.dtype.itemsize)


# --- UNPACK, SPLIT, SPLIT_V -------------------------------------------------------------


def unpack_axis(op: Op) -> int:
    assert isinstance(op.options, UnpackOptions)
    return positive_axis(op, op.options.axis, len(required(op, 0).shape))


def unpack_moves(op: Op) -> list[Move]:
    source = required(op, 0)
    return _block_moves(op, source.shape, unpack_axis(op), [1] * len(op.outputs), False,
                        source.dtype.itemsize)


def split_input(op: Op) -> Tensor:
    """SPLIT takes (axis, input); SPLIT_V takes (input, size_splits, axis)."""
    return required(op, 1 if op.kind is OpKind.SPLIT else 0)


def split_axis(op: Op) -> int:
    index = 0 if op.kind is OpKind.SPLIT else 2
    values = constant_ints(op, index, "axis")
    if len(values) != 1:
        raise ModelError(f"{op.where()}: the axis tensor holds {len(values)} values, not 1")
    return positive_axis(op, values[0], len(split_input(op).shape))


def split_sizes(op: Op) -> list[int]:
    """The extent of each output along the axis. SPLIT: equal parts; SPLIT_V: size_splits, one
    of which may be -1 (the rest of the axis)."""
    axis = split_axis(op)
    extent = split_input(op).shape[axis]
    count = len(op.outputs)
    if op.kind is OpKind.SPLIT:
        if count == 0 or extent % count:
            raise ModelError(f"{op.where()}: axis of {extent} does not split into {count} equal parts")
        return [extent // count] * count
    sizes = constant_ints(op, 1, "size_splits")
    if len(sizes) != count:
        raise ModelError(f"{op.where()}: {len(sizes)} size_splits for {count} outputs")
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in sizes):
        raise ModelError(f"{op.where()}: size_splits {sizes} (at most one -1, the rest >= 0)")
    if unknown:
        sizes[unknown[0]] = extent - sum(s for s in sizes if s != -1)
    if sum(sizes) != extent or any(s < 0 for s in sizes):
        raise ModelError(f"{op.where()}: size_splits {sizes} do not add up to the axis of {extent}")
    return sizes


def split_moves(op: Op) -> list[Move]:
    source = split_input(op)
    axis = split_axis(op)
    sizes = split_sizes(op)
    for index, size in enumerate(sizes):
        shape = list(source.shape)
        shape[axis] = size
        check_output_shape(op, index, shape)
    return _block_moves(op, source.shape, axis, sizes, False, source.dtype.itemsize,
                        op.inputs.index(source))


# --- SLICE, STRIDED_SLICE -------------------------------------------------------------


@dataclass(frozen=True)
class SlicePlan:
    """Per axis of the (effective) input shape: first index, signed step, element count.
    `output_shape` drops shrunk axes; `input_shape` has new axes inserted as extent 1."""

    input_shape: tuple[int, ...]
    start: tuple[int, ...]
    stride: tuple[int, ...]
    count: tuple[int, ...]
    output_shape: tuple[int, ...]


def _clamp(value: int, low: int, high: int) -> int:
    return high if value > high else max(value, low)


def slice_plan(op: Op) -> SlicePlan:
    """SLICE: begin and size per axis; size -1 takes the rest of the axis."""
    shape = required(op, 0).shape
    begin = constant_ints(op, 1, "begin")
    size = constant_ints(op, 2, "size")
    if len(begin) != len(shape) or len(size) != len(shape):
        raise ModelError(f"{op.where()}: begin {begin} and size {size} need {len(shape)} values")
    counts = []
    for axis, (b, s, n) in enumerate(zip(begin, size, shape)):
        count = n - b if s == -1 else s
        if b < 0 or count < 0 or b + count > n:
            raise ModelError(f"{op.where()}: begin {b} size {s} is outside axis {axis} of {n}")
        counts.append(count)
    check_output_shape(op, 0, counts)
    return SlicePlan(tuple(shape), tuple(begin), (1,) * len(shape), tuple(counts), tuple(counts))


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
    start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
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
    end = _clamp(end, 0, size) if stride > 0 else _clamp(end, -1, size - 1)
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
    start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
    if _bit(spec.shrink_mask, axis):
        return start, start + 1
    stop = spec.end[axis]
    if _bit(spec.end_mask, axis):
        stop = INT32_MAX if stride > 0 else INT32_MIN
    if stop < 0:
        stop += size
    stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
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
        if len(begin) != len(shape):
            raise UnsupportedError(f"{op.where()}: TFLM reads one begin/end/stride value per input "
                                   f"dimension ({len(shape)}), the op has {len(begin)}")
        spec = _SliceSpec(shape, tuple(begin), tuple(end), tuple(stride), options.begin_mask,
                          options.end_mask, options.shrink_axis_mask, False)
        out_shape = _tflm_output_shape(spec)
        if tuple(out_shape) != tuple(op.outputs[0].shape):
            raise UnsupportedError(
                f"{op.where()}: TFLM (which ignores ellipsis_mask, new_axis_mask and offset) gives "
                f"shape {out_shape}, the model's output is {list(op.outputs[0].shape)}")
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
    if _product(kept) != _product(out_shape):
        raise ModelError(f"{op.where()}: the slice has {_product(kept)} elements, the output "
                         f"{_product(out_shape)}")
    return SlicePlan(spec.shape, tuple(starts), spec.stride, tuple(counts), tuple(out_shape))


def slice_moves(op: Op, plan: SlicePlan) -> list[Move]:
    strides = _element_strides(plan.input_shape)
    offset = sum(s * e for s, e in zip(plan.start, strides))
    loop = move_loop(plan.count, [st * e for st, e in zip(plan.stride, strides)],
                     _element_strides(plan.count), offset, 0, op.outputs[0].dtype.itemsize)
    return [Move(0, 0, loop)]


# --- PAD, PADV2 -----------------------------------------------------------------------


def pad_amounts(op: Op) -> list[tuple[int, int]]:
    """(before, after) per input dimension from the constant paddings tensor [rank, 2]."""
    shape = required(op, 0).shape
    values = constant_ints(op, 1, "paddings")
    if len(values) != 2 * len(shape):
        raise ModelError(f"{op.where()}: {len(values)} paddings for rank {len(shape)}")
    amounts = [(values[2 * i], values[2 * i + 1]) for i in range(len(shape))]
    if any(a < 0 or b < 0 for a, b in amounts):
        raise ModelError(f"{op.where()}: negative paddings {amounts}")
    check_output_shape(op, 0, [n + a + b for n, (a, b) in zip(shape, amounts)])
    return amounts


def pad_value(op: Op, rounding: Rounding) -> np.ndarray | None:
    """PAD's fill value as a one-element array of the output dtype; None for PADV2, which
    reads its constant_values input (whose quantization equals the output's, support.py).

    int8: the output zero point in both runtimes. int16: TFLM pads with 0, whatever the zero
    point; LiteRT pads a quantized int16 tensor with its output zero point (EvalInt). Other
    dtypes pad with 0.
    """
    if op.kind is OpKind.PADV2:
        return None
    out = op.outputs[0]
    value = 0
    quantized = out.quant is not None and required(op, 0).quant is not None
    if out.dtype is DType.INT8 and out.quant is not None:
        value = out.quant.single_zero_point
    elif out.dtype is DType.INT16 and quantized and rounding is Rounding.LITERT:
        assert out.quant is not None
        value = out.quant.single_zero_point
    return np.array([value], dtype=out.dtype.numpy)


def pad_moves(op: Op) -> list[Move]:
    source, out = required(op, 0), op.outputs[0]
    amounts = pad_amounts(op)
    out_strides = _element_strides(out.shape)
    offset = sum(a * s for (a, _), s in zip(amounts, out_strides))
    loop = move_loop(source.shape, _element_strides(source.shape), out_strides, 0, offset,
                     out.dtype.itemsize)
    return [Move(0, 0, loop)]


# --- TRANSPOSE ----------------------------------------------------------------------


def transpose_perm(op: Op) -> list[int]:
    rank = len(required(op, 0).shape)
    perm = constant_ints(op, 1, "perm")
    if sorted(perm) != list(range(rank)):
        raise ModelError(f"{op.where()}: perm {perm} is not a permutation of {rank} axes")
    check_output_shape(op, 0, [required(op, 0).shape[p] for p in perm])
    return perm


def transpose_moves(op: Op) -> list[Move]:
    source, out = required(op, 0), op.outputs[0]
    perm = transpose_perm(op)
    in_strides = _element_strides(source.shape)
    loop = move_loop(out.shape, [in_strides[p] for p in perm], _element_strides(out.shape), 0, 0,
                     out.dtype.itemsize)
    return [Move(0, 0, loop)]


# --- GATHER -------------------------------------------------------------------------


@dataclass(frozen=True)
class GatherGeometry:
    """TFLite's Gather loop: for batch, outer, coord: copy `inner` elements from row
    coords[batch * coords + coord] of the [batch, outer, axis_size, inner] input."""

    axis: int
    batch_dims: int
    batch: int
    outer: int
    coords: int
    axis_size: int
    inner: int


def gather_geometry(op: Op) -> GatherGeometry:
    assert isinstance(op.options, GatherOptions)
    params, indices = required(op, 0), required(op, 1)
    rank, index_rank = len(params.shape), len(indices.shape)
    axis = positive_axis(op, op.options.axis, rank)
    batch_dims = op.options.batch_dims + index_rank if op.options.batch_dims < 0 else op.options.batch_dims
    if not (0 <= batch_dims <= axis and batch_dims < rank and batch_dims <= index_rank):
        raise ModelError(f"{op.where()}: batch_dims {op.options.batch_dims} with axis {axis}, "
                         f"input rank {rank}, indices rank {index_rank}")
    if tuple(params.shape[:batch_dims]) != tuple(indices.shape[:batch_dims]):
        raise ModelError(f"{op.where()}: the first {batch_dims} dimensions of input "
                         f"{list(params.shape)} and indices {list(indices.shape)} differ")
    check_output_shape(op, 0, [*params.shape[:axis], *indices.shape[batch_dims:], *params.shape[axis + 1 :]])
    if indices.data is not None and indices.data.size:
        low, high = int(indices.data.min()), int(indices.data.max())
        if low < 0 or high >= params.shape[axis]:
            raise ModelError(f"{op.where()}: constant indices {low}..{high} are outside the axis of "
                             f"{params.shape[axis]}")
    return GatherGeometry(
        axis=axis, batch_dims=batch_dims,
        batch=_product(params.shape[:batch_dims]),
        outer=_product(params.shape[batch_dims:axis]),
        coords=_product(indices.shape[batch_dims:]),
        axis_size=params.shape[axis],
        inner=_product(params.shape[axis + 1 :]),
    )
