"""Build-time parameters of the data-movement ops: TFLite's Prepare step for CONCATENATION,
PACK, UNPACK, SPLIT, SPLIT_V, SLICE, PAD, PADV2, TRANSPOSE and GATHER (STRIDED_SLICE's is in
strided_slice.py), shared by the numpy reference (reference.py) and the C emitters (emit.py).

None of these ops does arithmetic: both runtimes copy elements bit for bit (CONCATENATION of
int16 inputs with different scales included: TFLM and LiteRT copy the raw values). What has to
match TFLite is which elements go where, and that is settled here, per mode where the two
runtimes differ (STRIDED_SLICE's masks, PAD's int16 pad value).

The C side gets each copy as a loop nest over bytes (`MoveLoop`): up to MAX_LOOPS levels, each
with an extent and a signed byte stride on either side, and a contiguous run of bytes copied at
every innermost point. One kernel (mcugen_move in mcugen_movement.c) then serves every dtype and
every op of the family; a copy it cannot take breaks the PrepareRule MOVE_FITS_KERNEL.

Each kind's `prepare_*` returns what its C emitter needs: the loop nests (one per input of a
concatenation, per output of a split, one for a slice, a transpose or a pad's interior), the pad
value, GATHER's geometry. The reference reads the element-level parameters below them (axes,
sizes, plans) and never the loop nests, so the two paths stay independent. The identity
predicates at the end tell the passes when an op of the family copies its input unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...errors import ModelError
from ...ir import (
    Activation,
    ConcatenationOptions,
    DType,
    GatherOptions,
    Op,
    OpKind,
    PackOptions,
    Tensor,
    UnpackOptions,
)
from ...quantization import Rounding
from ...records import dataclass
from ..base import PrepareRule, Setting
from ..common import merge_loop_levels

MAX_LOOPS = 6  # MCUGEN_MOVE_MAX_LOOPS in mcugen_movement.h
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

MOVE_FITS_KERNEL = PrepareRule(
    f"Every copy fits the mcugen_move kernel: at most {MAX_LOOPS} loop levels once contiguous "
    "dimensions are merged, and byte offsets and strides within int32.")


# --- shared -----------------------------------------------------------------------------


def required(op: Op, index: int) -> Tensor:
    """Input `index`. The rules (input_arity, inputs_present) have checked that it is there;
    the constant folder runs the reference before the rules, and an AssertionError there
    means "not foldable"."""
    tensor = op.inputs[index] if index < len(op.inputs) else None
    assert tensor is not None, f"{op.where()}: input {index} is missing"
    return tensor


def constant_ints(op: Op, index: int, what: str) -> list[int]:
    """The values of a constant integer input (an axis, begin, perm, ...), flattened. Each
    kind's constant_indices rule has checked that it is a constant int32 (or int64) tensor."""
    tensor = required(op, index)
    assert tensor.data is not None and tensor.dtype in (DType.INT32, DType.INT64), \
        f"{op.where()}: {what} '{tensor.name}' is not a constant integer tensor"
    return [int(v) for v in np.asarray(tensor.data).ravel()]


def positive_axis(op: Op, axis: int, rank: int, what: str = "axis") -> int:
    """A possibly negative axis made positive, checked against the rank."""
    resolved = axis + rank if axis < 0 else axis
    if not 0 <= resolved < rank:
        raise ModelError(f"{op.where()}: {what} {axis} is out of range for rank {rank}")
    return resolved


def product(values: Sequence[int]) -> int:
    return int(math.prod(values))


def element_strides(shape: Sequence[int]) -> list[int]:
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


def move_loop(op: Op, extents: Sequence[int], input_strides: Sequence[int],
              output_strides: Sequence[int], input_offset: int, output_offset: int,
              itemsize: int) -> MoveLoop:
    """The smallest byte loop nest for an element loop nest (strides and offsets in elements).

    Levels of extent 1 are dropped, a level that continues its inner neighbour on both sides is
    merged into it, and an innermost level that is contiguous on both sides becomes the run.
    """
    if any(e == 0 for e in extents):
        return MoveLoop((1,) * MAX_LOOPS, (0,) * MAX_LOOPS, (0,) * MAX_LOOPS, 0, 0, 0)
    merged = merge_loop_levels(extents, input_strides, output_strides)
    run = 1
    if merged and merged[-1][1] == 1 and merged[-1][2] == 1:
        run = merged.pop()[0]
    MOVE_FITS_KERNEL.require(len(merged) <= MAX_LOOPS, op, lambda: f"a copy of {len(merged)} loop levels")
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
        MOVE_FITS_KERNEL.require(INT32_MIN <= value <= INT32_MAX, op, f"a copy offset of {value} bytes")
    return loop


@dataclass(frozen=True)
class Move:
    """A MoveLoop from one op input to one op output (indices into op.inputs / op.outputs)."""

    source: int
    target: int
    loop: MoveLoop


def block_moves(op: Op, shape: Sequence[int], axis: int, pieces: Sequence[int], gather: bool,
                 itemsize: int, source: int = 0) -> list[Move]:
    """Concatenation (gather=True: pieces are inputs written into one output) or split
    (gather=False: pieces are outputs cut from input `source`) along `axis` of `shape`."""
    outer = product(shape[:axis])
    inner = product(shape[axis + 1 :])
    total = shape[axis]
    moves, start = [], 0
    for index, size in enumerate(pieces):
        block = size * inner
        whole, part = total * inner, block
        if gather:
            loop = move_loop(op, [outer, block], [part, 1], [whole, 1], 0, start * inner, itemsize)
            moves.append(Move(index, 0, loop))
        else:
            loop = move_loop(op, [outer, block], [whole, 1], [part, 1], start * inner, 0, itemsize)
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
    # Every input is the output's shape but for the axis, whose extents add up to the output's.
    first = list(required(op, 0).shape)
    for i in range(len(op.inputs)):
        shape = list(required(op, i).shape)
        if shape[:axis] + shape[axis + 1:] != first[:axis] + first[axis + 1:]:
            raise ModelError(f"{op.where()}: input {i} has shape {shape}, input 0 {first}: they differ "
                             f"outside the axis {axis}")
    check_output_shape(op, 0, [*first[:axis], sum(pieces), *first[axis + 1:]])
    return block_moves(op, out.shape, axis, pieces, True, out.dtype.itemsize)


def pack_axis(op: Op) -> int:
    """PACK's axis made positive on the output's rank (inputs have one dimension less)."""
    assert isinstance(op.options, PackOptions)
    return positive_axis(op, op.options.axis, len(op.outputs[0].shape))


def pack_moves(op: Op) -> list[Move]:
    out = op.outputs[0]
    axis, first = pack_axis(op), list(required(op, 0).shape)
    for i in range(len(op.inputs)):
        if list(required(op, i).shape) != first:
            raise ModelError(f"{op.where()}: input {i} has shape {list(required(op, i).shape)}, input 0 {first}: "
                             "PACK stacks inputs of one shape")
    check_output_shape(op, 0, [*first[:axis], len(op.inputs), *first[axis:]])
    return block_moves(op, out.shape, pack_axis(op), [1] * len(op.inputs), True, out.dtype.itemsize)


# --- UNPACK, SPLIT, SPLIT_V -------------------------------------------------------------


def unpack_axis(op: Op) -> int:
    assert isinstance(op.options, UnpackOptions)
    return positive_axis(op, op.options.axis, len(required(op, 0).shape))


def unpack_moves(op: Op) -> list[Move]:
    source = required(op, 0)
    axis, shape = unpack_axis(op), list(source.shape)
    if shape[axis] != len(op.outputs):
        raise ModelError(f"{op.where()}: {len(op.outputs)} outputs for an axis of {shape[axis]}: UNPACK gives "
                         "one output per index of the axis")
    for index in range(len(op.outputs)):
        check_output_shape(op, index, shape[:axis] + shape[axis + 1:])
    return block_moves(op, source.shape, unpack_axis(op), [1] * len(op.outputs), False,
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
    return block_moves(op, source.shape, axis, sizes, False, source.dtype.itemsize,
                       op.inputs.index(source))


# --- SLICE (STRIDED_SLICE: strided_slice.py) ------------------------------------------


@dataclass(frozen=True)
class SlicePlan:
    """Per axis of the (effective) input shape: first index, signed step, element count.
    `output_shape` drops shrunk axes; `input_shape` has new axes inserted as extent 1."""

    input_shape: tuple[int, ...]
    start: tuple[int, ...]
    stride: tuple[int, ...]
    count: tuple[int, ...]
    output_shape: tuple[int, ...]


def clamp(value: int, low: int, high: int) -> int:
    return high if value > high else max(value, low)



def slice_moves(op: Op, plan: SlicePlan) -> list[Move]:
    strides = element_strides(plan.input_shape)
    offset = sum(s * e for s, e in zip(plan.start, strides))
    loop = move_loop(op, plan.count, [st * e for st, e in zip(plan.stride, strides)],
                     element_strides(plan.count), offset, 0, op.outputs[0].dtype.itemsize)
    return [Move(0, 0, loop)]


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
    reads its constant_values input (whose quantization equals the output's: rule pad_constant_value).

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
    out_strides = element_strides(out.shape)
    offset = sum(a * s for (a, _), s in zip(amounts, out_strides))
    loop = move_loop(op, source.shape, element_strides(source.shape), out_strides, 0, offset,
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
    in_strides = element_strides(source.shape)
    loop = move_loop(op, out.shape, [in_strides[p] for p in perm], element_strides(out.shape), 0, 0,
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
        batch=product(params.shape[:batch_dims]),
        outer=product(params.shape[batch_dims:axis]),
        coords=product(indices.shape[batch_dims:]),
        axis_size=params.shape[axis],
        inner=product(params.shape[axis + 1 :]),
    )


# --- prepare, per kind ------------------------------------------------------------------


def prepare_concatenation(op: Op, setting: Setting) -> list[Move]:
    """CONCATENATION: one copy per input, into its block of the output."""
    return concat_moves(op)


def prepare_pack(op: Op, setting: Setting) -> list[Move]:
    """PACK: one copy per input, into its slot along the new axis."""
    return pack_moves(op)


def prepare_unpack(op: Op, setting: Setting) -> list[Move]:
    """UNPACK: one copy per output, from its slot along the axis."""
    return unpack_moves(op)


def prepare_split(op: Op, setting: Setting) -> list[Move]:
    """SPLIT and SPLIT_V: one copy per output, from its block of the input."""
    return split_moves(op)


def prepare_slice(op: Op, setting: Setting) -> list[Move]:
    """SLICE: one strided copy of the sliced block."""
    return slice_moves(op, slice_plan(op))


def prepare_transpose(op: Op, setting: Setting) -> list[Move]:
    """TRANSPOSE: one copy whose input strides follow the permutation."""
    return transpose_moves(op)


@dataclass(frozen=True)
class PadParams:
    """PAD and PADV2: the fill value (None for PADV2, which fills from its constant_values
    input) and the copy of the input into the output's interior."""

    value: np.ndarray | None
    moves: list[Move]


def prepare_pad(op: Op, setting: Setting) -> PadParams:
    return PadParams(pad_value(op, setting.rounding), pad_moves(op))


def prepare_gather(op: Op, setting: Setting) -> GatherGeometry:
    """GATHER: TFLite's loop bounds; the indices are read at run time."""
    return gather_geometry(op)


# --- identity: when an op copies its input unchanged (mcugen.passes.identity) -------------
# identity_source has already checked that the output has the input's shape, dtype and
# quantization.


def _constant_values(op: Op, index: int) -> np.ndarray | None:
    tensor = op.inputs[index] if index < len(op.inputs) else None
    if tensor is None or tensor.data is None or tensor.data.dtype.kind not in "iu":
        return None
    return np.asarray(tensor.data)


def zero_padding(op: Op) -> bool:
    """PAD and PADV2 by zero on every side."""
    pads = _constant_values(op, 1)
    return pads is not None and not np.any(pads)


def whole_slice(op: Op) -> bool:
    """SLICE from 0 (of an output as large as the input: the whole tensor)."""
    begin = _constant_values(op, 1)
    return begin is not None and not np.any(begin)


def identity_permutation(op: Op) -> bool:
    """TRANSPOSE by the identity permutation."""
    perm = _constant_values(op, 1)
    return perm is not None and np.array_equal(perm.ravel(), np.arange(len(op.outputs[0].shape)))


def single_concatenation(op: Op) -> bool:
    """CONCATENATION of a single tensor with no fused activation."""
    options = op.options
    present = [t for t in op.inputs if t is not None]
    return (len(present) == 1 and isinstance(options, ConcatenationOptions)
            and options.activation is Activation.NONE)
