"""AVERAGE_POOL_2D and MAX_POOL_2D, int8 and int16 (mcugen_pool.c).

Window ops: tiling runs them in stripes of output rows (emit_rows). Neither rescales: TFLite
requires the output quantization to equal the input's.
"""

from __future__ import annotations

from typing import Any

import tflite

from ...ir import DType, Op, OpKind, Pool2DOptions
from ..base import (
    Emitter,
    MacCount,
    OpDef,
    ReferenceKernel,
    Setting,
    Traits,
    no_fast_path_scratch,
    no_macs,
    no_scratch,
)
from ..rules import (
    activation_dtypes,
    clamp_activation,
    input_arity,
    input_rank_4,
    per_tensor_activation_quant,
    positive_strides_and_dilations,
    same_input_output_dtype,
)
from ..tflite_options import ACTIVATIONS, PADDINGS, enum_value, options_table
from .emit import emit_average_pool_2d, emit_max_pool_2d, emit_pool_rows
from .prepare import PoolGeometry, pool_geometry
from .reference import average_pool_2d, max_pool_2d
from .rules import int16_sum_may_wrap, pool_output_shape, pool_quant_matches_input, pool_shapes


def read_pool(op: Any, where: str) -> Pool2DOptions:
    o = options_table(op, tflite.Pool2DOptions)
    return Pool2DOptions(
        padding=enum_value(PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        filter_h=o.FilterHeight(),
        filter_w=o.FilterWidth(),
        activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
    )


def prepare(op: Op, setting: Setting) -> PoolGeometry:
    return pool_geometry(op)


def average_pool_macs(op: Op) -> int:
    """One multiply-accumulate per tap of every output element's window."""
    options = op.options
    assert isinstance(options, Pool2DOptions)
    return op.outputs[0].num_elements * options.filter_h * options.filter_w


RULES = (
    input_arity(1), activation_dtypes(DType.INT8, DType.INT16), same_input_output_dtype,
    per_tensor_activation_quant, pool_quant_matches_input, input_rank_4, clamp_activation,
    pool_shapes, positive_strides_and_dilations,
)


def _pool(kind: OpKind, emit: Emitter, reference: ReferenceKernel, macs: MacCount) -> OpDef:
    return OpDef(kind=kind, builtin=getattr(tflite.BuiltinOperator, kind.name), read_options=read_pool,
                 rules=RULES, prepare=prepare, emit=emit, scratch=no_scratch,
                 fast_path_scratch=no_fast_path_scratch, reference=reference, macs=macs,
                 traits=Traits(window=True), emit_rows=emit_pool_rows, notices=(int16_sum_may_wrap,),
                 shape_rules=(pool_output_shape,))


OPS = [
    _pool(OpKind.AVERAGE_POOL_2D, emit_average_pool_2d, average_pool_2d, average_pool_macs),
    _pool(OpKind.MAX_POOL_2D, emit_max_pool_2d, max_pool_2d, no_macs),
]
