"""Build-time tables of RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (TFLite's Prepare), shared
by the C emitters (emit.py) and the numpy reference (reference.py).

TFLite computes, for every output row y (and column x), the source coordinate from a scale
and the flags, in float32 (nearest, float bilinear) or in 10-bit fixed point (integer
bilinear). These depend only on the output index, so they are computed here once per row and
column, with numpy float32 arithmetic that repeats TFLite's float operations one by one; the
C then only gathers and, for bilinear, blends.
"""

from __future__ import annotations

import numpy as np

from ...ir import DType, Op, ResizeOptions
from ...records import dataclass
from ..base import Setting

F32 = np.float32


@dataclass(frozen=True)
class ResizeShape:
    batches: int
    in_h: int
    in_w: int
    out_h: int
    out_w: int
    depth: int


def resize_shape(op: Op) -> ResizeShape:
    """The geometry; the support rules (input_rank_4, constant_resize_size,
    resize_keeps_batch_and_channels) guarantee what is asserted here. The constant folder runs
    the reference before the rules, and an AssertionError there means "not foldable"."""
    x, size, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert x is not None and len(x.shape) == 4 and len(y.shape) == 4, op.where()
    assert size is not None and size.data is not None and size.num_elements == 2, op.where()
    out_h, out_w = (int(v) for v in np.asarray(size.data).reshape(-1))
    assert (y.shape[0], out_h, out_w, y.shape[3]) == (x.shape[0], y.shape[1], y.shape[2], x.shape[3]), \
        op.where()
    return ResizeShape(x.shape[0], x.shape[1], x.shape[2], out_h, out_w, x.shape[3])


def _options(op: Op) -> ResizeOptions:
    assert isinstance(op.options, ResizeOptions)
    return op.options


# --- RESIZE_NEAREST_NEIGHBOR --------------------------------------------------------------

def _round_half_away(values: np.ndarray) -> np.ndarray:
    """TfLiteRound (std::round) on float32 values: halves go away from zero. The + 0.5 is done
    in float64, where it is exact (in float32, 0.49999997f + 0.5f would round up to 1)."""
    wide = values.astype(np.float64)
    return np.sign(wide) * np.floor(np.abs(wide) + 0.5)


def nearest_indices(in_size: int, out_size: int, align_corners: bool,
                    half_pixel_centers: bool) -> np.ndarray:
    """GetNearestNeighbor for every output index, in float32 as TFLite computes it."""
    if align_corners and out_size > 1:
        scale = F32(in_size - 1) / F32(out_size - 1)
    else:
        scale = F32(in_size) / F32(out_size)
    offset = F32(0.5) if half_pixel_centers else F32(0.0)
    scaled = (np.arange(out_size).astype(F32) + offset) * scale
    picked = _round_half_away(scaled) if align_corners else np.floor(scaled)
    index = np.minimum(picked.astype(np.int64), in_size - 1)
    if half_pixel_centers:
        index = np.maximum(index, 0)
    return index.astype(np.int32)


@dataclass(frozen=True)
class NearestTables:
    shape: ResizeShape
    rows: np.ndarray  # source row per output row
    cols: np.ndarray  # source column per output column


def prepare_nearest(op: Op, setting: Setting) -> NearestTables:
    """RESIZE_NEAREST_NEIGHBOR's parameters: the source row and column of every output row and
    column (the same in both modes)."""
    return nearest_tables(op)


def nearest_tables(op: Op) -> NearestTables:
    s, o = resize_shape(op), _options(op)
    return NearestTables(
        s,
        nearest_indices(s.in_h, s.out_h, o.align_corners, o.half_pixel_centers),
        nearest_indices(s.in_w, s.out_w, o.align_corners, o.half_pixel_centers),
    )


# --- RESIZE_BILINEAR ----------------------------------------------------------------------

def _check_flags(op: Op) -> ResizeOptions:
    """The options; the rule bilinear_flags has refused align_corners with half_pixel_centers."""
    o = _options(op)
    assert not (o.align_corners and o.half_pixel_centers), op.where()
    return o


@dataclass(frozen=True)
class BilinearAxis:
    """Per output index along one axis: the two source indices and the position between them.

    Integer path: `position` is the source coordinate in 1/1024 units (int32).
    Float path: `low_weight` = 1 - (coord - lower), `high_weight` = coord - lower (float32).
    """

    lower: np.ndarray
    upper: np.ndarray
    position: np.ndarray
    low_weight: np.ndarray
    high_weight: np.ndarray


def _float_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return F32(in_size - 1) / F32(out_size - 1)
    return F32(in_size) / F32(out_size)


def bilinear_float_axis(in_size: int, out_size: int, o: ResizeOptions) -> BilinearAxis:
    """ComputeInterpolationValues (float) for every output index, in float32."""
    scale = _float_scale(in_size, out_size, o.align_corners)
    index = np.arange(out_size).astype(F32)
    coord = (index + F32(0.5)) * scale - F32(0.5) if o.half_pixel_centers else index * scale
    lower = np.maximum(np.floor(coord).astype(np.int64), 0)
    upper = np.minimum(np.ceil(coord).astype(np.int64), in_size - 1)
    offset = coord - lower.astype(F32)
    unused = np.zeros(out_size, np.int32)
    return BilinearAxis(lower.astype(np.int32), upper.astype(np.int32), unused,
                        (F32(1) - offset).astype(F32), offset.astype(F32))


def _scale_10(in_size: int, out_size: int, align_corners: bool) -> int:
    """The integer path's scale in 1/1024 units, rounded half up."""
    if align_corners and out_size > 1:
        return ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    return ((1 << 10) * in_size + out_size // 2) // out_size


def _trunc_div(a: np.ndarray, b: int) -> np.ndarray:
    """C's truncating integer division by a positive constant."""
    return np.sign(a) * (np.abs(a) // b)


def bilinear_integer_axis(in_size: int, out_size: int, o: ResizeOptions) -> BilinearAxis:
    """ComputeInterpolationValuesInteger for every output index."""
    scale = _scale_10(in_size, out_size, o.align_corners)
    index = np.arange(out_size, dtype=np.int64)
    coord = index * scale + scale // 2 - (1 << 9) if o.half_pixel_centers else index * scale
    lower = np.maximum(_trunc_div(coord, 1 << 10), 0)
    upper = np.minimum(_trunc_div(coord + (1 << 10) - 1, 1 << 10), in_size - 1)
    zeros = np.zeros(out_size, F32)
    return BilinearAxis(lower.astype(np.int32), upper.astype(np.int32), coord.astype(np.int32),
                        zeros, zeros)


@dataclass(frozen=True)
class BilinearTables:
    shape: ResizeShape
    rows: BilinearAxis
    cols: BilinearAxis


def bilinear_tables(op: Op, integer: bool) -> BilinearTables:
    s, o = resize_shape(op), _check_flags(op)
    axis = bilinear_integer_axis if integer else bilinear_float_axis
    return BilinearTables(s, axis(s.in_h, s.out_h, o), axis(s.in_w, s.out_w, o))


def prepare_bilinear(op: Op, setting: Setting) -> BilinearTables:
    """RESIZE_BILINEAR's parameters: the integer tables for int8, the float32 weights for
    float32 (the same in both modes)."""
    x = op.inputs[0]
    assert x is not None
    return bilinear_tables(op, integer=x.dtype is not DType.FLOAT32)
