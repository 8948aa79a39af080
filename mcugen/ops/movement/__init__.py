"""The data-movement family: CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, STRIDED_SLICE, SLICE,
PAD, PADV2, TRANSPOSE, GATHER, DEPTH_TO_SPACE and SPACE_TO_DEPTH (depth_space.py), and DENSIFY,
whose sparse constant the frontend decodes (frontend/sparsity.py) so that the op folds away.

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
    BlockSizeOptions,
    ConcatenationOptions,
    DType,
    GatherOptions,
    Op,
    OpKind,
    PackOptions,
    SplitOptions,
    StridedSliceOptions,
    UnpackOptions,
)
from .. import rules as r
from ..base import (
    DEFAULT_SETTING,
    Emitter,
    Identity,
    OpDef,
    OptionsReader,
    Prepare,
    PrepareRule,
    ReferenceKernel,
    Rule,
    RuleViolation,
    no_fast_path_scratch,
    no_macs,
    no_scratch,
    takes_setting,
)
from ..tflite_options import ACTIVATIONS, enum_value, options_table, read_none
from . import depth_space, emit, prepare, reference, strided_slice
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


def read_block_size(options_class: Any) -> Callable[[Any, str], BlockSizeOptions]:
    """DepthToSpaceOptions and SpaceToDepthOptions both hold block_size."""

    def read(op: Any, where: str) -> BlockSizeOptions:
        return BlockSizeOptions(block_size=options_table(op, options_class).BlockSize())

    return read


# --- definitions ----------------------------------------------------------------------------


def shapes_by_prepare(rules: tuple[Rule, ...], prepare_fn: Prepare) -> Rule:
    """The kind's shape rule: its prepare computes every output's shape, as TFLite's Prepare does,
    and refuses a declared shape that differs (check_output_shape). It runs only when the plain
    rules hold (prepare assumes them); a broken plain rule or PrepareRule is the support stage's
    to report."""

    def check(op: Op) -> str | None:
        if any((rule(op, DEFAULT_SETTING) if takes_setting(rule) else rule(op)) is not None for rule in rules):
            return None
        try:
            prepare_fn(op, DEFAULT_SETTING)
        except RuleViolation:
            return None
        return None

    check.__doc__ = ("Every output has the shape the op gives from its inputs and options (checked as "
                     "TFLite's Prepare computes it).")
    return check



def _move(kind: OpKind, rules: tuple[Rule, ...], prepare_fn: Prepare, emit_fn: Emitter,
          reference_fn: ReferenceKernel, *, read_options: OptionsReader = read_none,
          fits_kernel: bool = True, more_prepare_rules: tuple[PrepareRule, ...] = (),
          identity: Identity | None = None) -> OpDef:
    """A data-movement kind: no scratch, no MACs; its copy must fit the move kernel's loop nest
    (MOVE_FITS_KERNEL) unless it has a kernel of its own (GATHER)."""
    return OpDef(kind=kind, builtin=getattr(tflite.BuiltinOperator, kind.name), read_options=read_options,
                 rules=rules, prepare=prepare_fn, emit=emit_fn, scratch=no_scratch,
                 fast_path_scratch=no_fast_path_scratch, reference=reference_fn, macs=no_macs,
                 prepare_rules=((MOVE_FITS_KERNEL,) if fits_kernel else ()) + more_prepare_rules,
                 identity=identity, shape_rules=(shapes_by_prepare(rules, prepare_fn),))


OPS: list[OpDef] = [
    _move(OpKind.CONCATENATION,
          (r.input_arity(1), m.data_dtypes(*m.MOVE_4, DType.INT64, DType.BOOL, inputs=m.ANY_INPUT),
           m.same_data_dtype, m.no_fused_activation, m.at_most_ten_inputs, m.max_rank(6),
           m.concatenation_quant, m.inputs_present, m.inputs_of_output_rank),
          prepare.prepare_concatenation, emit.emit_concatenation, reference.concatenation,
          read_options=read_concatenation, identity=prepare.single_concatenation),
    _move(OpKind.PACK,
          (r.input_arity(1), m.data_dtypes(*m.MOVE_4, DType.INT64, inputs=m.ANY_INPUT),
           m.same_data_dtype, m.same_quant_everywhere, m.inputs_present),
          prepare.prepare_pack, emit.emit_pack, reference.pack, read_options=read_pack),
    _move(OpKind.UNPACK,
          (r.input_arity(1), m.data_dtypes(*m.MOVE_4), m.same_quant_everywhere),
          prepare.prepare_unpack, emit.emit_unpack, reference.unpack, read_options=read_unpack),
    _move(OpKind.SPLIT,
          (r.input_arity(2), m.data_dtypes(*m.MOVE_4, inputs=(1,)), m.constant_indices(0, what="axis")),
          prepare.prepare_split, emit.emit_split, reference.split,
          read_options=read_split(tflite.SplitOptions)),
    _move(OpKind.SPLIT_V,
          (r.input_arity(3), m.data_dtypes(*m.MOVE_4), m.constant_indices(1, 2, what="size_splits and axis")),
          prepare.prepare_split, emit.emit_split, reference.split,
          read_options=read_split(tflite.SplitVOptions)),
    _move(OpKind.STRIDED_SLICE,
          (r.input_arity(4), m.data_dtypes(*m.MOVE_4, DType.BOOL), m.max_rank(4),
           m.constant_indices(1, 2, 3, what="begin, end and strides")),
          strided_slice.prepare_strided_slice, emit.emit_strided_slice, reference.strided_slice,
          read_options=read_strided_slice,
          more_prepare_rules=(TFLM_ONE_VALUE_PER_DIMENSION, TFLM_OUTPUT_SHAPE)),
    _move(OpKind.SLICE,
          (r.input_arity(3), m.data_dtypes(*m.MOVE_4, DType.BOOL), m.max_rank(5),
           m.constant_indices(1, 2, what="begin and size", dtypes=(DType.INT32, DType.INT64))),
          prepare.prepare_slice, emit.emit_slice, reference.slice_, identity=prepare.whole_slice),
    _move(OpKind.PAD,
          (r.input_arity(2), m.data_dtypes(*m.MOVE_4), m.max_rank(5), m.constant_indices(1, what="paddings")),
          prepare.prepare_pad, emit.emit_pad, reference.pad, identity=prepare.zero_padding),
    _move(OpKind.PADV2,
          (r.input_arity(3), m.data_dtypes(*m.MOVE_4), m.max_rank(5), m.constant_indices(1, what="paddings"),
           m.pad_constant_value),
          prepare.prepare_pad, emit.emit_pad, reference.pad, identity=prepare.zero_padding),
    _move(OpKind.TRANSPOSE,
          (r.input_arity(2), m.data_dtypes(DType.FLOAT32, DType.INT8, DType.INT16), m.max_rank(5),
           m.constant_indices(1, what="perm")),
          prepare.prepare_transpose, emit.emit_transpose, reference.transpose,
          identity=prepare.identity_permutation),
    _move(OpKind.GATHER,
          (r.input_arity(2), m.data_dtypes(DType.FLOAT32, DType.INT8), m.gather_int32_indices),
          prepare.prepare_gather, emit.emit_gather, reference.gather, read_options=read_gather,
          fits_kernel=False),
    *(_move(kind, (r.input_arity(1), m.data_dtypes(DType.FLOAT32, DType.INT8), m.rank_four,
                   m.same_quant_everywhere, m.positive_block_size),
            depth_space.prepare_depth_space, emit.emit_depth_space, reference.depth_space,
            read_options=read_block_size(options))
      for kind, options in ((OpKind.DEPTH_TO_SPACE, tflite.DepthToSpaceOptions),
                            (OpKind.SPACE_TO_DEPTH, tflite.SpaceToDepthOptions))),
    _move(OpKind.DENSIFY, (r.input_arity(1), m.densify_dtypes, m.constant_input),
          depth_space.prepare_densify, emit.emit_densify, reference.densify),
]
