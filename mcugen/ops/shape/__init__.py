"""The shape family: RESHAPE, SQUEEZE and EXPAND_DIMS (views) and SHAPE.

The three views keep their input's elements in the same order under another shape: they are
aliases (traits.alias), so the planner gives the output the input's bytes and no code runs; a
view the planner cannot alias (of a constant, say) becomes a byte copy (emit.py). SHAPE's output
is known at build time and usually folded; one left in the graph is written from a constant.
Prepare (prepare.py) computes the output shapes and SHAPE's values for the numpy reference
(reference.py) and the emitters. Nothing here multiplies by weights or runs in place.
"""

from __future__ import annotations

from typing import Any

import tflite

from ...ir import DType, OpKind, ShapeOptions, SqueezeOptions
from .. import rules as r
from ..base import (
    OpDef,
    OptionsReader,
    Prepare,
    ReferenceKernel,
    Rule,
    Traits,
    no_fast_path_scratch,
    no_macs,
    no_scratch,
)
from ..movement import rules as m
from ..tflite_options import DTYPES, enum_value, options_table, read_none
from . import emit, prepare, reference
from .rules import (
    at_most_8_dims,
    int32_shape_output,
    same_bytes,
    same_quantized_elements,
    shape_output_shape,
    view_shape_rule,
)

SQUEEZED_SHAPE = view_shape_rule(
    prepare.squeezed_shape, "SQUEEZE: the output is the input's shape without the squeezed "
    "dimensions (each of extent 1; without squeeze_dims, every dimension of extent 1).")
EXPANDED_SHAPE = view_shape_rule(
    prepare.expanded_shape, "EXPAND_DIMS: the output is the input's shape with a dimension of "
    "extent 1 inserted at the axis.", constant_input=1)


def read_squeeze(op: Any, where: str) -> SqueezeOptions:
    o = options_table(op, tflite.SqueezeOptions)
    dims = () if o.SqueezeDimsIsNone() else tuple(int(d) for d in o.SqueezeDimsAsNumpy())
    return SqueezeOptions(squeeze_dims=dims)


def read_shape(op: Any, where: str) -> ShapeOptions:
    o = options_table(op, tflite.ShapeOptions)
    return ShapeOptions(out_type=enum_value(DTYPES, o.OutType(), "output type", where))


# The output is the input's bytes under another shape (mcugen.passes.alias keeps chains of
# views collapsed); the copy emitter runs only where the planner cannot alias.
VIEW = Traits(alias=True)

def _view(kind: OpKind, rules: tuple[Rule, ...], prepare_fn: Prepare, reference_fn: ReferenceKernel,
          read_options: OptionsReader = read_none, shape_rules: tuple[Rule, ...] = (same_bytes,)) -> OpDef:
    """A view: an alias of its input, copied by emit_reshape where the planner cannot alias."""
    return OpDef(kind=kind, builtin=getattr(tflite.BuiltinOperator, kind.name), read_options=read_options,
                 rules=rules, prepare=prepare_fn, emit=emit.emit_reshape, scratch=no_scratch,
                 fast_path_scratch=no_fast_path_scratch, reference=reference_fn, macs=no_macs,
                 traits=VIEW, identity=prepare.same_shape_view, shape_rules=shape_rules)


OPS: list[OpDef] = [
    _view(OpKind.RESHAPE, (r.input_arity(1), same_bytes), prepare.prepare_reshape, reference.reshape),
    _view(OpKind.SQUEEZE, (r.input_arity(1), same_bytes, at_most_8_dims), prepare.prepare_squeeze,
          reference.squeeze, read_options=read_squeeze, shape_rules=(same_bytes, SQUEEZED_SHAPE)),
    _view(OpKind.EXPAND_DIMS,
          (r.input_arity(2), same_quantized_elements, m.data_dtypes(DType.FLOAT32, DType.INT8, DType.INT16),
           m.constant_indices(1, what="axis")),
          prepare.prepare_expand_dims, reference.expand_dims, shape_rules=(EXPANDED_SHAPE,)),
    OpDef(kind=OpKind.SHAPE, builtin=tflite.BuiltinOperator.SHAPE, read_options=read_shape,
          rules=(r.input_arity(1), int32_shape_output), prepare=prepare.prepare_shape,
          emit=emit.emit_shape, scratch=no_scratch, fast_path_scratch=no_fast_path_scratch,
          reference=reference.shape, macs=no_macs, shape_rules=(shape_output_shape,)),
]
