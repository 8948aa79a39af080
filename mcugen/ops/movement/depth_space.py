"""DEPTH_TO_SPACE and SPACE_TO_DEPTH (and DENSIFY, at the end): TFLite's Prepare (shapes, divisibility) and the one
rearrangement both are, shared by the numpy reference and the C emitter.

TFLite's reference kernels (NHWC, block size b):

- DEPTH_TO_SPACE: output[n, h, w, d] = input[n, h / b, w / b, ((h % b) * b + w % b) * D + d]
  for an output depth D = input depth / (b * b);
- SPACE_TO_DEPTH: output[n, h, w, ((y * b) + x) * C + c] = input[n, h * b + y, w * b + x, c]
  for an input depth C: the inverse.

Both are one six-axis transpose: the "space" side seen as [N, H, b, W, b, C] and the "depth"
side as [N, H, W, b, b, C] (C the small depth) swap axes 2 and 3. SPACE_TO_DEPTH goes from the
space view to the depth view, DEPTH_TO_SPACE back. The C path is one mcugen_move loop nest
(the innermost run is C contiguous elements); the reference is numpy's transpose of the views.
"""

from __future__ import annotations

from ...errors import ModelError
from ...ir import BlockSizeOptions, Op, OpKind
from ...records import dataclass
from ..base import Setting
from .prepare import Move, check_output_shape, element_strides, move_loop, required

SWAP = (0, 1, 3, 2, 4, 5)  # [N, H, b, W, b, C] <-> [N, H, W, b, b, C]


@dataclass(frozen=True)
class BlockRearrangement:
    """The input seen as `source_view` (6-D), transposed by SWAP, is the output."""

    source_view: tuple[int, ...]


def block_size(op: Op) -> int:
    assert isinstance(op.options, BlockSizeOptions)
    return op.options.block_size


def block_rearrangement(op: Op) -> BlockRearrangement:
    """The view of the input that SWAP turns into the output, after TFLite's Prepare checks."""
    b = block_size(op)
    shape = list(required(op, 0).shape)
    if b < 1:
        raise ModelError(f"{op.where()}: block_size {b} (must be at least 1)")
    batch, height, width, depth = shape
    if op.kind is OpKind.DEPTH_TO_SPACE:
        if depth % (b * b):
            raise ModelError(f"{op.where()}: input depth {depth} is not a multiple of block_size^2 = {b * b}")
        small = depth // (b * b)
        check_output_shape(op, 0, [batch, height * b, width * b, small])
        return BlockRearrangement((batch, height, width, b, b, small))
    if height % b or width % b:
        raise ModelError(f"{op.where()}: input height {height} and width {width} are not multiples of "
                         f"block_size {b}")
    check_output_shape(op, 0, [batch, height // b, width // b, depth * b * b])
    return BlockRearrangement((batch, height // b, b, width // b, b, depth))


def block_moves(op: Op) -> list[Move]:
    view = block_rearrangement(op).source_view
    source_strides = element_strides(view)
    extents = [view[axis] for axis in SWAP]
    loop = move_loop(op, extents, [source_strides[axis] for axis in SWAP], element_strides(extents), 0, 0,
                     op.outputs[0].dtype.itemsize)
    return [Move(0, 0, loop)]


def prepare_depth_space(op: Op, setting: Setting) -> list[Move]:
    """DEPTH_TO_SPACE and SPACE_TO_DEPTH: one copy whose input strides swap the block axes."""
    return block_moves(op)


def densify_moves(op: Op) -> list[Move]:
    """DENSIFY: the frontend has decoded the sparse constant (frontend/sparsity.py), so the op
    copies it whole; the constant folder runs this at build time and the copy never reaches C
    unless folding is off."""
    source = required(op, 0)
    check_output_shape(op, 0, source.shape)
    count = source.num_elements
    return [Move(0, 0, move_loop(op, [count], [1], [1], 0, 0, source.dtype.itemsize))]


def prepare_densify(op: Op, setting: Setting) -> list[Move]:
    """DENSIFY: one contiguous copy of the decoded constant."""
    return densify_moves(op)
