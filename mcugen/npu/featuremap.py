"""Feature maps as the NPU addresses them, and the commands that describe them.

A feature map is NHWC in one region at a byte address: one tile (HEIGHT0 = h - 1, WIDTH0 =
w - 1), strides STRIDE_X = c x bytes, STRIDE_Y = w x c x bytes, STRIDE_C = bytes. A placement
that wraps (a rolling stripe slot, mcugen/npu/stripes.py) is two tiles: its first `rows0` rows
at the address (tile 0, HEIGHT0 = rows0 - 1), the rest from `wrap_address` on (tile 2, BASE2),
as Vela addresses its rolling buffers. WIDTH0 is always the whole width, so the right-hand
tiles 1 and 3 (BASE1, BASE3, and HEIGHT1, which splits them) are never read: they get one
constant each (0), which the stream writes once; BASE2 is written only where tile 2 is read
(a wrapped map), other maps leave the value the register holds. Operations in striped chains
and weight-stream slices change their feature maps' bases and heights from one operation to
the next; the registers that would change with them and that no tile reads stay unwritten. mcugen hands the NPU batch-1 tensors; a tensor of rank below 4 is seen as
1 x ... x c (FULLY_CONNECTED's rows become the height).
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import DType, Tensor
from ..records import dataclass
from .registers import Cmd0, Cmd1, Rounding, ifm_precision, ofm_precision
from .stream import CommandStream

_BITS = {DType.INT8: (8, True), DType.UINT8: (8, False), DType.INT16: (16, True), DType.INT32: (32, True)}


class LoweringError(ValueError):
    """Why an op does not lower to NPU commands, in words for a one-line message."""


@dataclass(frozen=True)
class Placement:
    """Where a tensor lives for the NPU: a region (base-address register) and a byte offset."""

    region: int
    address: int
    rows0: int = 0  # > 0: only this many rows at `address`, the rest at `wrap_address`
    wrap_address: int = 0


Place = Callable[[Tensor], Placement]


def apart(region: int = 1) -> Place:
    """Placements for a trial lowering: each tensor its own 1 MiB in `region`, so that no OFM
    overlaps its IFM (an overlap narrows the blocks an operation may take: overlap_rule.py)."""
    seen: dict[int, Placement] = {}

    def place(tensor: Tensor) -> Placement:
        return seen.setdefault(id(tensor), Placement(region, len(seen) << 20))

    return place


@dataclass(frozen=True)
class FeatureMap:
    """One NHWC feature map: placement, height, width, depth, element bits, signedness, zero point."""

    placement: Placement
    height: int
    width: int
    depth: int
    bits: int
    signed: bool
    zero_point: int
    # Bytes between rows and between columns; 0: packed (width x depth, depth elements). A
    # concatenation's copy writes its input into a slice of the output with the output's strides.
    row_stride: int = 0
    column_stride: int = 0

    @property
    def elem_bytes(self) -> int:
        return self.bits // 8

    @property
    def stride_y(self) -> int:
        return self.row_stride or self.width * self.depth * self.elem_bytes

    @property
    def stride_x(self) -> int:
        return self.column_stride or self.depth * self.elem_bytes


def hwc(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(h, w, c) of a batch-1 shape: rank 4 NHWC, rank 3 HWC, rank 2 (rows, c), rank 1 (c)."""
    if len(shape) == 4:
        if shape[0] != 1:
            raise LoweringError(f"batch {shape[0]}: the NPU runs batch 1")
        return shape[1], shape[2], shape[3]
    if len(shape) == 3:
        return shape[0], shape[1], shape[2]
    if len(shape) == 2:
        return shape[0], 1, shape[1]
    if len(shape) == 1:
        return 1, 1, shape[0]
    if len(shape) == 0:
        return 1, 1, 1
    raise LoweringError(f"rank {len(shape)}: the NPU takes at most 4 dimensions")


def feature_map(tensor: Tensor, place: Place, shape: tuple[int, int, int] | None = None) -> FeatureMap:
    """`tensor` as a feature map (shape overrides its h, w, c)."""
    if tensor.dtype not in _BITS:
        raise LoweringError(f"'{tensor.name}' is {tensor.dtype.short}: the NPU takes int8, uint8, int16, int32")
    bits, signed = _BITS[tensor.dtype]
    h, w, c = shape or hwc(tensor.shape)
    zero_point = tensor.quant.single_zero_point if tensor.quant else 0
    if tensor.quant is not None and tensor.quant.per_channel:
        raise LoweringError(f"'{tensor.name}' is quantized per channel")
    return FeatureMap(place(tensor), h, w, c, bits, signed, zero_point)


def _tiles(fm: FeatureMap) -> tuple[int, int | None]:
    """(HEIGHT0, BASE2): the rows of tile 0 and where tile 2 (the rows below them) starts (None:
    there are none, the map is one tile)."""
    p = fm.placement
    if 0 < p.rows0 < fm.height:
        return p.rows0, p.wrap_address
    return fm.height, None


def emit_ifm(stream: CommandStream, fm: FeatureMap, scale_mode: int = 0, rounding: Rounding = Rounding.TFL) -> None:
    """IFM region, base, tile sizes, depth, strides, zero point, precision, no upscale."""
    stream.cmd0(Cmd0.IFM_REGION, fm.placement.region)
    rows0, base2 = _tiles(fm)
    stream.cmd1(Cmd1.IFM_BASE0, fm.placement.address)
    stream.cmd1(Cmd1.IFM_BASE1, 0)
    if base2 is not None:
        stream.cmd1(Cmd1.IFM_BASE2, base2)
    stream.cmd1(Cmd1.IFM_BASE3, 0)
    stream.cmd0(Cmd0.IFM_HEIGHT0_M1, rows0 - 1)
    stream.cmd0(Cmd0.IFM_HEIGHT1_M1, 0)
    stream.cmd0(Cmd0.IFM_WIDTH0_M1, fm.width - 1)
    stream.cmd0(Cmd0.IFM_DEPTH_M1, fm.depth - 1)
    stream.cmd1(Cmd1.IFM_STRIDE_Y, fm.stride_y)
    stream.cmd1(Cmd1.IFM_STRIDE_X, fm.stride_x)
    stream.cmd1(Cmd1.IFM_STRIDE_C, fm.elem_bytes)
    stream.cmd0(Cmd0.IFM_ZERO_POINT, fm.zero_point)
    stream.cmd0(Cmd0.IFM_PRECISION, ifm_precision(fm.bits, fm.signed, scale_mode, rounding))
    stream.cmd0(Cmd0.IFM_UPSCALE, 0)


def emit_ifm2(stream: CommandStream, fm: FeatureMap, scale_mode: int = 0) -> None:
    """IFM2 region, base, tile sizes, strides, zero point, precision (its depth is the IFM's)."""
    stream.cmd0(Cmd0.IFM2_REGION, fm.placement.region)
    rows0, base2 = _tiles(fm)
    stream.cmd1(Cmd1.IFM2_BASE0, fm.placement.address)
    stream.cmd1(Cmd1.IFM2_BASE1, 0)
    stream.cmd1(Cmd1.IFM2_BASE2, base2 or 0)
    stream.cmd1(Cmd1.IFM2_BASE3, 0)
    stream.cmd0(Cmd0.IFM2_HEIGHT0_M1, rows0 - 1)
    stream.cmd0(Cmd0.IFM2_HEIGHT1_M1, 0)
    stream.cmd0(Cmd0.IFM2_WIDTH0_M1, fm.width - 1)
    stream.cmd1(Cmd1.IFM2_STRIDE_Y, fm.stride_y)
    stream.cmd1(Cmd1.IFM2_STRIDE_X, fm.stride_x)
    stream.cmd1(Cmd1.IFM2_STRIDE_C, fm.elem_bytes)
    stream.cmd0(Cmd0.IFM2_ZERO_POINT, fm.zero_point)
    stream.cmd0(Cmd0.IFM2_PRECISION, ifm_precision(fm.bits, fm.signed, scale_mode))


def emit_ofm(stream: CommandStream, fm: FeatureMap, global_scale: bool, rounding: Rounding = Rounding.TFL) -> None:
    """OFM region, base, sizes and tile sizes, strides, zero point, precision."""
    stream.cmd0(Cmd0.OFM_REGION, fm.placement.region)
    rows0, base2 = _tiles(fm)
    stream.cmd1(Cmd1.OFM_BASE0, fm.placement.address)
    stream.cmd1(Cmd1.OFM_BASE1, 0)
    if base2 is not None:
        stream.cmd1(Cmd1.OFM_BASE2, base2)
    stream.cmd1(Cmd1.OFM_BASE3, 0)
    stream.cmd0(Cmd0.OFM_HEIGHT_M1, fm.height - 1)
    stream.cmd0(Cmd0.OFM_WIDTH_M1, fm.width - 1)
    stream.cmd0(Cmd0.OFM_HEIGHT0_M1, rows0 - 1)
    stream.cmd0(Cmd0.OFM_HEIGHT1_M1, 0)
    stream.cmd0(Cmd0.OFM_WIDTH0_M1, fm.width - 1)
    stream.cmd0(Cmd0.OFM_DEPTH_M1, fm.depth - 1)
    stream.cmd1(Cmd1.OFM_STRIDE_Y, fm.stride_y)
    stream.cmd1(Cmd1.OFM_STRIDE_X, fm.stride_x)
    stream.cmd1(Cmd1.OFM_STRIDE_C, fm.elem_bytes)
    stream.cmd0(Cmd0.OFM_ZERO_POINT, fm.zero_point)
    stream.cmd0(Cmd0.OFM_PRECISION, ofm_precision(fm.bits, fm.signed, global_scale, rounding))
