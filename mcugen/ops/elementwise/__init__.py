"""The elementwise family: binary ops over two broadcast operands, in int8, int16 and float32.

ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM and PRELU (whose OpKind family says
activation, but whose code is the binary ops': alpha is the second, broadcast operand). Every
kind runs one kernel of runtime/kernels/mcugen_elementwise.c over the same loop nest.

- rules.py: the support rules of the family (binary_dtypes, broadcast_shapes, ...);
- prepare.py: TFLite's Prepare for each kind (multipliers, shifts, clamps, the loop nest) and
  the PrepareRules it can break;
- emit.py: the C call; reference.py: the numpy reference kernels. Both take their parameters
  from prepare.py, and share nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tflite

from ...ir import ArithmeticOptions, OpKind
from .. import rules as shared
from ..base import InputRoles, OpDef, Traits, no_fast_path_scratch, no_macs, no_scratch
from ..common import RESCALE_SHIFT
from ..tflite_options import ACTIVATIONS, enum_value, options_table, read_none
from . import emit, prepare, reference
from . import rules as r


def read_arithmetic(options_class: Any) -> Callable[[Any, str], ArithmeticOptions]:
    """ADD, SUB, MUL options; MulOptions has no pot_scale_int16 (it reads as False)."""

    def read(op: Any, where: str) -> ArithmeticOptions:
        o = options_table(op, options_class)
        # Without a table LiteRT keeps its zero-initialised params (pot_scale_int16 false), not
        # the schema default (true); TFLM ignores the flag.
        has_table = op.BuiltinOptions() is not None
        pot = has_table and hasattr(o, "PotScaleInt16") and bool(o.PotScaleInt16())
        return ArithmeticOptions(enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where), pot)

    return read


# Every kind may write its output over an input of the output's shape and dtype that dies at the
# op (Traits.in_place). mcugen_elementwise.c (s8, s16, f32): broadcast_rows writes the output in
# order, and a row reads x1[i * step1] and x2[i * step2] before writing y[i]; an input of the
# output's own shape has the output's strides, so its element i is read only in iteration i. A
# broadcast input is read again later, which is why only an input of the output's shape may be
# overwritten. The quantized int8 ADD/SUB fast paths (DSP, MVE) read four elements of each input
# before they store the four outputs at the same positions, and copy a broadcast scalar into a
# stack buffer before the first store, so they keep the guarantee.
IN_PLACE = Traits(in_place=True)


# Rules and PrepareRules of ADD and SUB, in the order docs/supported_ops.md lists them.
_ADD_SUB_RULES = (*r.BINARY, shared.clamp_activation, r.finite_float_constants)
_ADD_SUB_PREPARE_RULES = (prepare.RESCALES_BELOW_ONE, prepare.POT_SCALES)

OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.ADD, builtin=tflite.BuiltinOperator.ADD,
        read_options=read_arithmetic(tflite.AddOptions),
        rules=_ADD_SUB_RULES, prepare=prepare.prepare_add_sub,
        prepare_rules=(*_ADD_SUB_PREPARE_RULES, prepare.POT_ADD_SAME_SHAPES),
        emit=emit.emit_add_sub, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
        reference=reference.binary, macs=no_macs, roles=InputRoles(), traits=IN_PLACE,
        shape_rules=(r.broadcast_shapes,),
    ),
    OpDef(
        kind=OpKind.SUB, builtin=tflite.BuiltinOperator.SUB,
        read_options=read_arithmetic(tflite.SubOptions),
        rules=_ADD_SUB_RULES, prepare=prepare.prepare_add_sub,
        prepare_rules=_ADD_SUB_PREPARE_RULES,
        emit=emit.emit_add_sub, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
        reference=reference.binary, macs=no_macs, roles=InputRoles(), traits=IN_PLACE,
        shape_rules=(r.broadcast_shapes,),
    ),
    OpDef(
        kind=OpKind.MUL, builtin=tflite.BuiltinOperator.MUL,
        read_options=read_arithmetic(tflite.MulOptions),
        rules=(*r.BINARY, shared.clamp_activation, r.finite_float_constants),
        prepare=prepare.prepare_mul, prepare_rules=(RESCALE_SHIFT,),
        emit=emit.emit_mul, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
        reference=reference.binary, macs=no_macs, roles=InputRoles(), traits=IN_PLACE,
        shape_rules=(r.broadcast_shapes,),
    ),
    OpDef(
        kind=OpKind.SQUARED_DIFFERENCE, builtin=tflite.BuiltinOperator.SQUARED_DIFFERENCE,
        read_options=read_none,
        rules=(*r.BINARY, r.finite_float_constants), prepare=prepare.prepare_squared_difference,
        prepare_rules=(prepare.NO_INT16_SQUARED_DIFFERENCE_IN_LITERT,
                       prepare.SQUARED_DIFFERENCE_RESCALES_BELOW_ONE),
        emit=emit.emit_squared_difference, scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=reference.binary, macs=no_macs, roles=InputRoles(), traits=IN_PLACE,
        shape_rules=(r.broadcast_shapes,),
    ),
    OpDef(
        kind=OpKind.MAXIMUM, builtin=tflite.BuiltinOperator.MAXIMUM, read_options=read_none,
        rules=(*r.BINARY, r.finite_float_constants), prepare=prepare.prepare_maximum_minimum,
        emit=emit.emit_maximum_minimum, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
        reference=reference.binary, macs=no_macs, roles=InputRoles(), traits=IN_PLACE,
        shape_rules=(r.broadcast_shapes,),
    ),
    OpDef(
        kind=OpKind.MINIMUM, builtin=tflite.BuiltinOperator.MINIMUM, read_options=read_none,
        rules=(*r.BINARY, r.finite_float_constants), prepare=prepare.prepare_maximum_minimum,
        emit=emit.emit_maximum_minimum, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
        reference=reference.binary, macs=no_macs, roles=InputRoles(), traits=IN_PLACE,
        shape_rules=(r.broadcast_shapes,),
    ),
    OpDef(
        kind=OpKind.PRELU, builtin=tflite.BuiltinOperator.PRELU, read_options=read_none,
        rules=(shared.input_arity(2), r.prelu_dtypes, r.binary_quantization, r.broadcast_shapes,
               r.prelu_shapes, r.finite_float_constants),
        prepare=prepare.prepare_prelu, prepare_rules=(RESCALE_SHIFT,),
        emit=emit.emit_prelu, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
        reference=reference.binary, macs=no_macs, roles=InputRoles(), traits=IN_PLACE,
        shape_rules=(r.broadcast_shapes, r.prelu_shapes),
    ),
]
