"""AVERAGE_POOL_2D and MAX_POOL_2D, int8 and int16 (mcugen_pool.c), and float32 (mcugen.ops.float32).

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
from ..float32 import FLOAT_NOTE, by_dtype
from ..float32.emit import emit_float_pool
from ..float32.prepare import prepare_float_window
from ..float32.reference import pool_2d as float_pool_2d
from ..float32.rules import quantized_only
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
    input_arity(1), activation_dtypes(DType.INT8, DType.INT16, DType.FLOAT32), same_input_output_dtype,
    quantized_only(per_tensor_activation_quant), pool_quant_matches_input, input_rank_4, clamp_activation,
    pool_shapes, positive_strides_and_dilations,
)


def _pool(kind: OpKind, emit: Emitter, reference: ReferenceKernel, macs: MacCount) -> OpDef:
    return OpDef(kind=kind, builtin=getattr(tflite.BuiltinOperator, kind.name), read_options=read_pool,
                 rules=RULES, prepare=by_dtype(prepare, prepare_float_window),
                 emit=by_dtype(emit, emit_float_pool), scratch=no_scratch,
                 fast_path_scratch=no_fast_path_scratch, reference=by_dtype(reference, float_pool_2d),
                 macs=macs, notes=(FLOAT_NOTE,),
                 traits=Traits(window=True), emit_rows=by_dtype(emit_pool_rows, emit_float_pool), notices=(int16_sum_may_wrap,),
                 shape_rules=(pool_output_shape,))


OPS = [
    _pool(OpKind.AVERAGE_POOL_2D, emit_average_pool_2d, average_pool_2d, average_pool_macs),
    _pool(OpKind.MAX_POOL_2D, emit_max_pool_2d, max_pool_2d, no_macs),
]
