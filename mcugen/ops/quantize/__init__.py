"""The quantize family: QUANTIZE (float32 -> int8/int16, and integer requantization) and
DEQUANTIZE (int8/uint8/int16 -> float32).

The float conversions run on mcugen_quantize.c; integer requantization is the activation
family's rescale-and-clamp kernel (mcugen_activation.c), whose parameters, emitter and
reference this family reuses, as it reuses that family's dtype and quantization rules.
"""

from __future__ import annotations

import tflite

from ...ir import Op, OpKind
from .. import rules as shared
from ..activation import rules as r
from ..activation.rules import F32, I8, I16, U8
from ..base import OpDef, Traits, no_fast_path_scratch, no_macs, no_scratch
from ..common import RESCALE_SHIFT
from ..tflite_options import read_none
from . import emit, prepare, reference


def integer_quantize_is_identity(op: Op) -> bool:
    """QUANTIZE from a tensor of the same integer dtype, scale and zero point is a copy: TFLite
    requantizes with the multiplier of 1.0 (2^30, shift 1), and MultiplyByQuantizedMultiplier
    of x by it is x exactly. passes/identity.py has checked the same dtype and quantization;
    this adds a signed integer dtype and one scale (TFLite requantizes per tensor)."""
    source = op.inputs[0]
    return (source is not None and source.dtype.numpy.kind == "i" and source.quant is not None
            and not source.quant.per_channel)


FLOAT16_NOTE = (
    "A DEQUANTIZE of a FLOAT16 constant (the converter's float16 weights) folds away at build time "
    "(mcugen/passes/float16.py): float16 widens to float32 exactly; a float16 tensor that is not "
    "constant is refused.")

OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.QUANTIZE, builtin=tflite.BuiltinOperator.QUANTIZE, read_options=read_none,
        rules=(shared.input_arity(1),
               r.dtype_pairs((F32, I8), (F32, I16), (I8, I8), (I8, I16), (I16, I8), (I16, I16),
                             (I8, U8), (U8, I8)),
               r.integer_tensors_per_tensor_quant, r.same_element_count),
        prepare=prepare.prepare_quantize, prepare_rules=(RESCALE_SHIFT,), emit=emit.emit_quantize, scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch, reference=reference.quantize, macs=no_macs,
        # The requantizing QUANTIZE (mcugen_pointwise_rescale_*) computes `output[i] =
        # f(input[i])` and reads nothing else, so it may write over its input (a dtype-changing
        # QUANTIZE is excluded by the planner's same-dtype condition).
        traits=Traits(in_place=True),
        identity=integer_quantize_is_identity, shape_rules=(shared.output_shape_is_input_shape,)),
    OpDef(
        kind=OpKind.DEQUANTIZE, builtin=tflite.BuiltinOperator.DEQUANTIZE, read_options=read_none,
        rules=(shared.input_arity(1), r.dtype_pairs((I8, F32), (U8, F32), (I16, F32)),
               r.integer_tensors_per_tensor_quant, r.same_element_count),
        prepare=prepare.prepare_dequantize, emit=emit.emit_dequantize, scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch, reference=reference.dequantize, macs=no_macs,
        shape_rules=(shared.output_shape_is_input_shape,),
        notes=(FLOAT16_NOTE,)),
]
