"""The resize family: RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR over 4-D NHWC tensors.

Both compute, per output row and column, where in the input to read (prepare.py: TFLite's float32
or 10-bit fixed-point coordinates, repeated operation by operation); the C kernels of
mcugen_resize.c then gather (and, for bilinear, blend) and the numpy reference indexes with the
same tables. No op of the family multiplies by weights, keeps its input's bytes or runs in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tflite

from ...ir import DType, OpKind, ResizeOptions
from .. import rules as r
from ..base import OpDef, no_fast_path_scratch, no_macs, no_scratch
from ..tflite_options import options_table
from . import emit, prepare, reference
from .rules import (
    bilinear_flags,
    constant_resize_size,
    resize_keeps_batch_and_channels,
    resize_output_shape,
)


def read_resize(options_class: Any) -> Callable[[Any, str], ResizeOptions]:
    """ResizeNearestNeighborOptions and ResizeBilinearOptions have the same two flags."""

    def read(op: Any, where: str) -> ResizeOptions:
        o = options_table(op, options_class)
        return ResizeOptions(align_corners=bool(o.AlignCorners()), half_pixel_centers=bool(o.HalfPixelCenters()))

    return read


OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.RESIZE_NEAREST_NEIGHBOR,
        builtin=tflite.BuiltinOperator.RESIZE_NEAREST_NEIGHBOR,
        read_options=read_resize(tflite.ResizeNearestNeighborOptions),
        rules=(r.input_arity(2), r.activation_dtypes(DType.INT8, DType.INT16, DType.FLOAT32),
               r.same_input_output_dtype, r.input_rank_4, constant_resize_size,
               resize_keeps_batch_and_channels),
        prepare=prepare.prepare_nearest,
        emit=emit.emit_resize_nearest,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.resize_nearest,
        macs=no_macs,
        shape_rules=(resize_output_shape,),
    ),
    OpDef(
        kind=OpKind.RESIZE_BILINEAR,
        builtin=tflite.BuiltinOperator.RESIZE_BILINEAR,
        read_options=read_resize(tflite.ResizeBilinearOptions),
        rules=(r.input_arity(2), r.activation_dtypes(DType.INT8, DType.FLOAT32),
               r.same_input_output_dtype, r.input_rank_4, constant_resize_size, bilinear_flags,
               resize_keeps_batch_and_channels),
        prepare=prepare.prepare_bilinear,
        emit=emit.emit_resize_bilinear,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.resize_bilinear,
        macs=no_macs,
        shape_rules=(resize_output_shape,),
    ),
]
