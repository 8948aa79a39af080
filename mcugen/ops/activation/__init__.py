"""The activation family: element-wise activations (LOGISTIC, TANH, HARD_SWISH, RELU, RELU6,
LEAKY_RELU, RSQRT, NEG, ABS) and SOFTMAX over the last axis.

Each kind runs on mcugen_activation.c or mcugen_softmax.c, bit-exact with TFLM or LiteRT's
reference kernels: int8 and int16 in fixed point or through the tables TFLite builds at
Prepare (prepare.py), float32 with the reference code's float operations. rules.py says what
both TFLM and the kernels accept; emit.py writes the C and reference.py is the independent
numpy path. The quantize family reuses the rescale-and-clamp kernel and its parameters.
"""

from __future__ import annotations

from typing import Any

import tflite

from ...ir import LeakyReluOptions, OpKind, SoftmaxOptions
from .. import rules as shared
from ..base import (
    Emitter,
    OpDef,
    OptionsReader,
    Prepare,
    PrepareRule,
    ReferenceKernel,
    Rule,
    Traits,
    no_fast_path_scratch,
    no_macs,
    no_scratch,
)
from ..common import RESCALE_SHIFT
from ..tflite_options import options_table, read_none
from . import emit, prepare, reference
from . import rules as r
from .rules import F32, I8, I16


def read_softmax(op: Any, where: str) -> SoftmaxOptions:
    return SoftmaxOptions(beta=float(options_table(op, tflite.SoftmaxOptions).Beta()))


def read_leaky_relu(op: Any, where: str) -> LeakyReluOptions:
    return LeakyReluOptions(alpha=float(options_table(op, tflite.LeakyReluOptions).Alpha()))


# Every element-wise activation may run in place: mcugen_activation.c (RELU, RELU6, LEAKY_RELU,
# LOGISTIC, TANH, HARD_SWISH, ABS, NEG, RSQRT) computes `output[i] = f(input[i])` and reads
# nothing else, so element i of the input is read before element i of the output is written
# and never again. SOFTMAX reads its whole row (the maximum, the sum) before writing it: not
# in place.
IN_PLACE = Traits(in_place=True)

SOFTMAX_PAST_TFLITE = (
    "An int8-output row whose exponentials sum to 512 or more (close logits over many classes), "
    "where TFLM and LiteRT abort, gives each probability rounded to the output's 1/256 step: 0, "
    "since none exceeds 1/512."
)

_INT_AND_FLOAT = r.dtype_pairs((I8, I8), (I16, I16), (F32, F32))


def _activation(kind: OpKind, builtin: int, rules: tuple[Rule, ...], prepare_fn: Prepare,
                emit_fn: Emitter, reference_fn: ReferenceKernel, *,
                read_options: OptionsReader = read_none,
                prepare_rules: tuple[PrepareRule, ...] = ()) -> OpDef:
    """An element-wise activation: one input, no scratch, no weights, in place."""
    return OpDef(
        kind=kind, builtin=builtin, read_options=read_options,
        rules=(shared.input_arity(1), *rules), prepare=prepare_fn, emit=emit_fn,
        scratch=no_scratch, fast_path_scratch=no_fast_path_scratch, reference=reference_fn,
        macs=no_macs, traits=IN_PLACE, prepare_rules=prepare_rules,
        shape_rules=(shared.output_shape_is_input_shape,))


OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.SOFTMAX, builtin=tflite.BuiltinOperator.SOFTMAX, read_options=read_softmax,
        rules=(shared.input_arity(1), r.dtype_pairs((I8, I8), (I8, I16), (I16, I16), (F32, F32)),
               r.integer_tensors_per_tensor_quant, r.same_element_count, r.softmax_int16_input,
               r.softmax_output, r.softmax_beta, r.softmax_row_size),
        prepare=prepare.prepare_softmax, emit=emit.emit_softmax, scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch, reference=reference.softmax, macs=no_macs,
        prepare_rules=(RESCALE_SHIFT,), notes=(SOFTMAX_PAST_TFLITE,), shape_rules=(shared.output_shape_is_input_shape,)),
    _activation(OpKind.LOGISTIC, tflite.BuiltinOperator.LOGISTIC,
                (_INT_AND_FLOAT, *r.ELEMENTWISE, r.logistic_output, r.sigmoid_input_scale),
                prepare.prepare_sigmoid, emit.emit_sigmoid, reference.sigmoid,
                prepare_rules=(prepare.SIGMOID_MULTIPLIER,)),
    _activation(OpKind.TANH, tflite.BuiltinOperator.TANH,
                (_INT_AND_FLOAT, *r.ELEMENTWISE, r.tanh_output, r.sigmoid_input_scale),
                prepare.prepare_sigmoid, emit.emit_sigmoid, reference.sigmoid,
                prepare_rules=(prepare.SIGMOID_MULTIPLIER,)),
    _activation(OpKind.HARD_SWISH, tflite.BuiltinOperator.HARD_SWISH,
                (r.dtype_pairs((I8, I8), (F32, F32)), *r.ELEMENTWISE, r.hard_swish_scales),
                prepare.prepare_hard_swish, emit.emit_hard_swish, reference.hard_swish,
                prepare_rules=(prepare.HARD_SWISH_OUTPUT_EXPONENT,)),
    _activation(OpKind.RELU, tflite.BuiltinOperator.RELU, (_INT_AND_FLOAT, *r.ELEMENTWISE),
                prepare.prepare_relu, emit.emit_relu, reference.relu, prepare_rules=(RESCALE_SHIFT,)),
    _activation(OpKind.RELU6, tflite.BuiltinOperator.RELU6, (_INT_AND_FLOAT, *r.ELEMENTWISE),
                prepare.prepare_relu, emit.emit_relu, reference.relu, prepare_rules=(RESCALE_SHIFT,)),
    _activation(OpKind.LEAKY_RELU, tflite.BuiltinOperator.LEAKY_RELU, (_INT_AND_FLOAT, *r.ELEMENTWISE),
                prepare.prepare_relu, emit.emit_relu, reference.relu, read_options=read_leaky_relu,
                prepare_rules=(RESCALE_SHIFT,)),
    _activation(OpKind.RSQRT, tflite.BuiltinOperator.RSQRT, (_INT_AND_FLOAT, *r.ELEMENTWISE, r.rsqrt_scales),
                prepare.prepare_rsqrt, emit.emit_rsqrt, reference.rsqrt),
    _activation(OpKind.NEG, tflite.BuiltinOperator.NEG, (r.dtype_pairs((F32, F32)), r.same_element_count),
                prepare.prepare_neg, emit.emit_neg, reference.negate),
    _activation(OpKind.ABS, tflite.BuiltinOperator.ABS, (_INT_AND_FLOAT, *r.ELEMENTWISE),
                prepare.prepare_abs, emit.emit_abs, reference.absolute, prepare_rules=(RESCALE_SHIFT,)),
]
