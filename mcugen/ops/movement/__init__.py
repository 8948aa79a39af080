"""The data-movement family: CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, STRIDED_SLICE, SLICE,
PAD, PADV2, TRANSPOSE and GATHER.

None of them computes: each copies elements unchanged, bit for bit, in both runtimes. Prepare
(prepare.py, strided_slice.py) settles which element goes where, as TFLite's Prepare does, and
lowers every copy to a byte loop nest that one C kernel runs for any dtype
(mcugen_move, with mcugen_fill for PAD and mcugen_gather for GATHER, in mcugen_movement.c); the
numpy reference (reference.py) indexes with the same element-level parameters. The rules
(rules.py) hold a model to what TFLite Micro's kernels take. No op of the family multiplies by
weights, keeps its input's bytes or runs in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tflite

from ...ir import (
    ConcatenationOptions,
    DType,
    GatherOptions,
    OpKind,
    PackOptions,
    SplitOptions,
    StridedSliceOptions,
    UnpackOptions,
)
from .. import rules as r
from ..base import OpDef, no_fast_path_scratch, no_macs, no_scratch
from ..tflite_options import ACTIVATIONS, enum_value, options_table, read_none
from . import emit, prepare, reference, strided_slice
from . import rules as m
from .prepare import MOVE_FITS_KERNEL
from .strided_slice import TFLM_ONE_VALUE_PER_DIMENSION, TFLM_OUTPUT_SHAPE

# --- options readers ------------------------------------------------------------------------


def read_concatenation(op: Any, where: str) -> ConcatenationOptions:
    o = options_table(op, tflite.ConcatenationOptions)
    return ConcatenationOptions(
        axis=o.Axis(), activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where)
    )


def read_pack(op: Any, where: str) -> PackOptions:
    o = options_table(op, tflite.PackOptions)
    return PackOptions(values_count=o.ValuesCount(), axis=o.Axis())


def read_unpack(op: Any, where: str) -> UnpackOptions:
    o = options_table(op, tflite.UnpackOptions)
    return UnpackOptions(num=o.Num(), axis=o.Axis())


def read_split(options_class: Any) -> Callable[[Any, str], SplitOptions]:
    """SplitOptions and SplitVOptions both hold num_splits."""

    def read(op: Any, where: str) -> SplitOptions:
        return SplitOptions(num_splits=options_table(op, options_class).NumSplits())

    return read


def read_strided_slice(op: Any, where: str) -> StridedSliceOptions:
    o = options_table(op, tflite.StridedSliceOptions)
    return StridedSliceOptions(
        begin_mask=o.BeginMask(),
        end_mask=o.EndMask(),
        ellipsis_mask=o.EllipsisMask(),
        new_axis_mask=o.NewAxisMask(),
        shrink_axis_mask=o.ShrinkAxisMask(),
        offset=bool(o.Offset()),
    )


def read_gather(op: Any, where: str) -> GatherOptions:
    o = options_table(op, tflite.GatherOptions)
    return GatherOptions(axis=o.Axis(), batch_dims=o.BatchDims())


# --- definitions ----------------------------------------------------------------------------


OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.CONCATENATION,
        builtin=tflite.BuiltinOperator.CONCATENATION,
        read_options=read_concatenation,
        rules=(r.input_arity(1), m.data_dtypes(*m.MOVE_4, DType.INT64, DType.BOOL, inputs=m.ANY_INPUT),
               m.same_data_dtype, m.no_fused_activation, m.at_most_ten_inputs, m.max_rank(6),
               m.concatenation_quant, m.inputs_present),
        prepare=prepare.prepare_concatenation,
        emit=emit.emit_concatenation,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.concatenation,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
        identity=prepare.single_concatenation,
    ),
    OpDef(
        kind=OpKind.PACK,
        builtin=tflite.BuiltinOperator.PACK,
        read_options=read_pack,
        rules=(r.input_arity(1), m.data_dtypes(*m.MOVE_4, DType.INT64, inputs=m.ANY_INPUT),
               m.same_data_dtype, m.same_quant_everywhere, m.inputs_present),
        prepare=prepare.prepare_pack,
        emit=emit.emit_pack,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.pack,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
    ),
    OpDef(
        kind=OpKind.UNPACK,
        builtin=tflite.BuiltinOperator.UNPACK,
        read_options=read_unpack,
        rules=(r.input_arity(1), m.data_dtypes(*m.MOVE_4), m.same_quant_everywhere),
        prepare=prepare.prepare_unpack,
        emit=emit.emit_unpack,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.unpack,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
    ),
    OpDef(
        kind=OpKind.SPLIT,
        builtin=tflite.BuiltinOperator.SPLIT,
        read_options=read_split(tflite.SplitOptions),
        rules=(r.input_arity(2), m.data_dtypes(*m.MOVE_4, inputs=(1,)), m.constant_indices(0, what="axis")),
        prepare=prepare.prepare_split,
        emit=emit.emit_split,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.split,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
    ),
    OpDef(
        kind=OpKind.SPLIT_V,
        builtin=tflite.BuiltinOperator.SPLIT_V,
        read_options=read_split(tflite.SplitVOptions),
        rules=(r.input_arity(3), m.data_dtypes(*m.MOVE_4),
               m.constant_indices(1, 2, what="size_splits and axis")),
        prepare=prepare.prepare_split,
        emit=emit.emit_split,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.split,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
    ),
    OpDef(
        kind=OpKind.STRIDED_SLICE,
        builtin=tflite.BuiltinOperator.STRIDED_SLICE,
        read_options=read_strided_slice,
        rules=(r.input_arity(4), m.data_dtypes(*m.MOVE_4, DType.BOOL), m.max_rank(4),
               m.constant_indices(1, 2, 3, what="begin, end and strides")),
        prepare=strided_slice.prepare_strided_slice,
        emit=emit.emit_strided_slice,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.strided_slice,
        macs=no_macs,
        prepare_rules=(TFLM_ONE_VALUE_PER_DIMENSION, TFLM_OUTPUT_SHAPE, MOVE_FITS_KERNEL),
    ),
    OpDef(
        kind=OpKind.SLICE,
        builtin=tflite.BuiltinOperator.SLICE,
        read_options=read_none,
        rules=(r.input_arity(3), m.data_dtypes(*m.MOVE_4, DType.BOOL), m.max_rank(5),
               m.constant_indices(1, 2, what="begin and size", dtypes=(DType.INT32, DType.INT64))),
        prepare=prepare.prepare_slice,
        emit=emit.emit_slice,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.slice_,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
        identity=prepare.whole_slice,
    ),
    OpDef(
        kind=OpKind.PAD,
        builtin=tflite.BuiltinOperator.PAD,
        read_options=read_none,
        rules=(r.input_arity(2), m.data_dtypes(*m.MOVE_4), m.max_rank(5), m.constant_indices(1, what="paddings")),
        prepare=prepare.prepare_pad,
        emit=emit.emit_pad,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.pad,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
        identity=prepare.zero_padding,
    ),
    OpDef(
        kind=OpKind.PADV2,
        builtin=tflite.BuiltinOperator.PADV2,
        read_options=read_none,
        rules=(r.input_arity(3), m.data_dtypes(*m.MOVE_4), m.max_rank(5), m.constant_indices(1, what="paddings"),
               m.pad_constant_value),
        prepare=prepare.prepare_pad,
        emit=emit.emit_pad,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.pad,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
        identity=prepare.zero_padding,
    ),
    OpDef(
        kind=OpKind.TRANSPOSE,
        builtin=tflite.BuiltinOperator.TRANSPOSE,
        read_options=read_none,
        rules=(r.input_arity(2), m.data_dtypes(DType.FLOAT32, DType.INT8, DType.INT16), m.max_rank(5),
               m.constant_indices(1, what="perm")),
        prepare=prepare.prepare_transpose,
        emit=emit.emit_transpose,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.transpose,
        macs=no_macs,
        prepare_rules=(MOVE_FITS_KERNEL,),
        identity=prepare.identity_permutation,
    ),
    OpDef(
        kind=OpKind.GATHER,
        builtin=tflite.BuiltinOperator.GATHER,
        read_options=read_gather,
        rules=(r.input_arity(2), m.data_dtypes(DType.FLOAT32, DType.INT8), m.gather_int32_indices),
        prepare=prepare.prepare_gather,
        emit=emit.emit_gather,
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.gather,
        macs=no_macs,
    ),
]
