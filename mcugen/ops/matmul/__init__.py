"""The matmul family: FULLY_CONNECTED (int8 and int16x8, TFLM's fixed-point or LiteRT's
double rescale) and BATCH_MATMUL (int8 and int16), bit-exact with TFLite's reference kernels.

rules.py holds the family's own support rules, prepare.py TFLite's Prepare (the rescale and
accumulator choice are the conv family's, mcugen.ops.conv.prepare), emit.py the C emitters,
reference.py the numpy kernels.
"""

from __future__ import annotations

from typing import Any

import tflite

from ...ir import BatchMatMulOptions, DType, FullyConnectedOptions, Op, OpKind
from .. import rules as r
from ..base import InputRoles, OpDef, Setting, no_fast_path_scratch, no_scratch
from ..conv.prepare import LITERT_INT32_BIAS, SHIFT_RULE
from ..conv.rules import int8_zero_points_in_range
from ..float32 import FLOAT_NOTE, by_dtype
from ..float32 import no_scratch as no_float_scratch
from ..float32.emit import emit_float_fully_connected
from ..float32.prepare import prepare_float_fully_connected
from ..float32.reference import batch_matmul as float_batch_matmul
from ..float32.reference import fully_connected as float_fully_connected
from ..float32.rules import WEIGHTED_DTYPES, finite_float_weights, float_weights, quantized_only
from ..tflite_options import ACTIVATIONS, enum_value, options_table, quantized_bias_type
from . import emit, reference
from . import rules as matmul_rules
from .prepare import BATCH_MATMUL_SHIFT_RULE, prepare_batch_matmul, prepare_fully_connected

# --- options --------------------------------------------------------------------------------


def read_fully_connected(op: Any, where: str) -> FullyConnectedOptions:
    o = options_table(op, tflite.FullyConnectedOptions)
    return FullyConnectedOptions(
        activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
        keep_num_dims=bool(o.KeepNumDims()),
        shuffled_weights=o.WeightsFormat() != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT,
        quantized_bias_type=quantized_bias_type(o),
    )


def read_batch_matmul(op: Any, where: str) -> BatchMatMulOptions:
    o = options_table(op, tflite.BatchMatMulOptions)
    return BatchMatMulOptions(adj_x=bool(o.AdjX()), adj_y=bool(o.AdjY()))


# --- multiply-accumulates (as TFLite-based tools count them) ---------------------------------


def fully_connected_macs(op: Op) -> int:
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    if weights is None:
        return 0
    return op.outputs[0].num_elements * weights.shape[1]


def batch_matmul_macs(op: Op) -> int:
    """Each output element is a dot product over the contracted dimension (K): the lhs's
    last dimension, or its second-to-last with adj_x."""
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    if weights is None:
        return 0
    lhs = op.inputs[0]
    if lhs is None or len(lhs.shape) < 2:
        return 0
    depth = lhs.shape[-2] if getattr(op.options, "adj_x", False) else lhs.shape[-1]
    return op.outputs[0].num_elements * depth


def _no_float_parameters(op: Op, setting: Setting) -> None:
    """float32 BATCH_MATMUL has no build-time parameters beyond its options."""


# --- definitions ------------------------------------------------------------------------------

OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.FULLY_CONNECTED, builtin=tflite.BuiltinOperator.FULLY_CONNECTED,
        read_options=read_fully_connected,
        rules=(r.input_arity(2), *WEIGHTED_DTYPES, r.same_input_output_dtype,
               quantized_only(r.per_tensor_activation_quant), quantized_only(r.constant_int8_weights),
               r.symmetric_per_channel_weights(0), r.clamp_activation,
               quantized_only(r.weighted_bias(DType.INT64, DType.INT32)), matmul_rules.fully_connected_shapes,
               matmul_rules.fully_connected_output_size, int8_zero_points_in_range, float_weights,
               finite_float_weights),
        prepare=by_dtype(prepare_fully_connected, prepare_float_fully_connected),
        prepare_rules=(SHIFT_RULE, LITERT_INT32_BIAS),
        emit=by_dtype(emit.emit_fully_connected, emit_float_fully_connected), scratch=no_scratch,
        fast_path_scratch=by_dtype(emit.fc_scratch_bytes, no_float_scratch),
        reference=by_dtype(reference.fully_connected, float_fully_connected), macs=fully_connected_macs,
        notes=(FLOAT_NOTE,),
        roles=InputRoles(weights=1, bias=2, weights_channel_axis=0),
        shape_rules=(matmul_rules.fully_connected_output_size,),
    ),
    OpDef(
        kind=OpKind.BATCH_MATMUL, builtin=tflite.BuiltinOperator.BATCH_MATMUL,
        read_options=read_batch_matmul,
        rules=(r.input_arity(2), matmul_rules.batch_matmul_operands, r.int16_zero_points,
               matmul_rules.batch_matmul_shapes, matmul_rules.batch_matmul_output_rank, finite_float_weights),
        prepare=by_dtype(prepare_batch_matmul, _no_float_parameters), prepare_rules=(BATCH_MATMUL_SHIFT_RULE,),
        emit=by_dtype(emit.emit_batch_matmul, emit.emit_float_batch_matmul), scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=by_dtype(reference.batch_matmul, float_batch_matmul), macs=batch_matmul_macs,
        notes=(FLOAT_NOTE,),
        shape_rules=(matmul_rules.batch_matmul_output_shape,),
    ),
]
