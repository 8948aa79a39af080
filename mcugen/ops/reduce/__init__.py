"""The reductions MEAN, SUM and REDUCE_MAX, and ARG_MAX (mcugen_reduce.c).

Each output's accumulator stays in a register: no kind here needs scratch. MEAN counts one
multiply-accumulate per input element (as TFLite-based tools count it); the others count none.
"""

from __future__ import annotations

from typing import Any

import tflite

from ...ir import ArgMaxOptions, DType, Op, OpKind, ReducerOptions
from ..base import OpDef, PrepareRule, no_fast_path_scratch, no_macs, no_scratch
from ..common import RESCALE_SHIFT
from ..rules import activation_dtypes, input_arity, rank_at_most_4, same_input_output_dtype
from ..tflite_options import DTYPES, enum_value, options_table
from .emit import emit_arg_max, emit_reduce_max, emit_sum_or_mean
from .prepare import LOOP_LEVELS, prepare_arg_max, prepare_reduce_max, prepare_sum_or_mean
from .reference import arg_max, reduce_max, sum_or_mean
from .rules import (
    arg_max_dtypes,
    arg_max_output_shape,
    constant_int32_axis,
    float_sum_only_in_litert_mode,
    int16_zero_points_zero,
    integer_per_tensor_quant,
    nonempty_input,
    reduced_count_fits_int32,
    reduced_output_shape,
    reduction_axes_in_range,
    same_quant_as_input,
    single_constant_axis,
)


def read_reducer(op: Any, where: str) -> ReducerOptions:
    return ReducerOptions(keep_dims=bool(options_table(op, tflite.ReducerOptions).KeepDims()))


def read_arg_max(op: Any, where: str) -> ArgMaxOptions:
    o = options_table(op, tflite.ArgMaxOptions)
    return ArgMaxOptions(output_type=enum_value(DTYPES, o.OutputType(), "output type", where))


def mean_macs(op: Op) -> int:
    """One per input element."""
    x = op.inputs[0]
    return x.num_elements if x is not None else 0


_AXES = (constant_int32_axis, reduction_axes_in_range, nonempty_input)
_SUM_RULES = (input_arity(2), activation_dtypes(DType.INT8, DType.INT16, DType.FLOAT32),
              same_input_output_dtype, integer_per_tensor_quant, int16_zero_points_zero,
              rank_at_most_4, *_AXES, reduced_count_fits_int32)


def _reduction(kind: OpKind, rules: tuple[Any, ...], more_prepare_rules: tuple[PrepareRule, ...] = (),
               **parts: Any) -> OpDef:
    return OpDef(kind=kind, builtin=getattr(tflite.BuiltinOperator, kind.name), read_options=read_reducer,
                 rules=rules, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
                 prepare_rules=(LOOP_LEVELS, *more_prepare_rules), shape_rules=(reduced_output_shape,), **parts)


OPS = [
    _reduction(OpKind.MEAN, _SUM_RULES, prepare=prepare_sum_or_mean, emit=emit_sum_or_mean,
               reference=sum_or_mean, macs=mean_macs, more_prepare_rules=(RESCALE_SHIFT,)),
    _reduction(OpKind.SUM, (*_SUM_RULES, float_sum_only_in_litert_mode), prepare=prepare_sum_or_mean,
               emit=emit_sum_or_mean, reference=sum_or_mean, macs=no_macs, more_prepare_rules=(RESCALE_SHIFT,)),
    _reduction(OpKind.REDUCE_MAX,
               (input_arity(2), activation_dtypes(DType.INT8, DType.FLOAT32), same_input_output_dtype,
                integer_per_tensor_quant, same_quant_as_input, rank_at_most_4, *_AXES),
               prepare=prepare_reduce_max, emit=emit_reduce_max, reference=reduce_max, macs=no_macs),
    OpDef(kind=OpKind.ARG_MAX, builtin=tflite.BuiltinOperator.ARG_MAX, read_options=read_arg_max,
          rules=(input_arity(2), arg_max_dtypes, single_constant_axis), prepare=prepare_arg_max,
          emit=emit_arg_max, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
          reference=arg_max, macs=no_macs, shape_rules=(arg_max_output_shape,)),
]
