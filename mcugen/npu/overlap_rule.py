"""When an NPU operation may write its OFM over its own IFM, and which OFM blocks keep that safe.

The device works through the OFM block by block and writes a block's outputs after reading the
IFM that block needs. An OFM placed `lag` bytes before its IFM (NHWC, the same row bytes)
overwrites, with output row r, IFM row r - lag / row bytes. Two operations allow that without
a stripe (mcugen/npu/overlap.py plans them):

- DEPTHWISE_CONV_2D, stride 1 along the height, OFM and IFM of one shape and element size:
  OFM channel c reads IFM channel c only, so the order of depth blocks does not matter; the
  rows of blocks go top to bottom. A band of OFM blocks of height H starting at OFM row y
  reads IFM rows from y - pad_top on, and writes OFM rows up to y + H - 1, which overwrite IFM
  rows up to y + H - 1 - lag_rows. With lag_rows >= H + pad_top every row a band overwrites
  lies above the first IFM row that band (or any later one) reads, whatever the order of the
  blocks inside a band. So the block height is capped at lag_rows - pad_top.
- CONV_2D 1x1, stride 1, OFM and IFM of one shape and element size, in place (lag 0): an OFM
  block reads exactly the IFM positions it writes (all channels). With the whole OFM depth in
  one block, no other block reads a position a block wrote; with several depth blocks a later
  one would read IFM channels that the first overwrote, so the block takes the whole depth.

The simulated device (mcugen_npu_engine_conv.c) goes through depth blocks, then OFM positions in
row-major passes, reading a pass's taps before writing it, which both rules cover.
"""

from __future__ import annotations

from ..records import dataclass
from .config import Block


@dataclass(frozen=True)
class BlockLimit:
    """Which OFM blocks an operation that overwrites its IFM may take."""

    max_height: int | None = None  # rows of an OFM block at most (None: any)
    whole_depth: bool = False  # one block takes the OFM's whole depth

    def allows(self, block: Block, ofm_depth: int) -> bool:
        if self.max_height is not None and block.height > self.max_height:
            return False
        return not self.whole_depth or block.depth >= ofm_depth


@dataclass(frozen=True)
class Shape:
    """What the rule needs of an operation: its kind ("depthwise", "conv"), kernel and stride
    along the height, kernel width and stride along the width, the top padding, and whether
    OFM and IFM have one shape and element size."""

    kind: str
    kernel_h: int
    kernel_w: int
    stride_y: int
    stride_x: int
    pad_top: int
    same_shape: bool


def overlap_kind(shape: Shape) -> str | None:
    """"lag" (a depthwise whose OFM may start rows before its IFM), "in_place" (a 1x1 CONV whose
    OFM may take its IFM's bytes), or None (the OFM must not overlap the IFM)."""
    if not shape.same_shape or shape.stride_y != 1:
        return None
    if shape.kind == "depthwise":
        return "lag"
    if shape.kind == "conv" and shape.kernel_h == shape.kernel_w == 1 and shape.stride_x == 1:
        return "in_place"
    return None


def limit_for(shape: Shape, lag_bytes: int, row_bytes: int) -> BlockLimit | None:
    """The blocks that keep an OFM `lag_bytes` before the IFM safe (None: no block does)."""
    kind = overlap_kind(shape)
    if kind == "in_place":
        return BlockLimit(whole_depth=True) if lag_bytes == 0 else None
    if kind == "lag" and lag_bytes > 0 and row_bytes > 0:
        rows = lag_bytes // row_bytes - shape.pad_top
        return BlockLimit(max_height=rows) if rows >= 1 else None
    return None


def lag_rows(shape: Shape, block_height: int) -> int:
    """The rows a depthwise's OFM must start before its IFM for blocks `block_height` high."""
    return block_height + shape.pad_top


__all__ = ["BlockLimit", "Shape", "lag_rows", "limit_for", "overlap_kind"]
