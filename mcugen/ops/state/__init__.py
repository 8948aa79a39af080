"""The state family: READ_VARIABLE and ASSIGN_VARIABLE of stateful (streaming) models.

Input 0 of both is a variable's state tensor (ir.Variable; the reader resolves the file's
VAR_HANDLE handles to it, frontend/variables.py), a buffer of its own that the planner keeps
for the whole invoke and across invokes (memory/liveness.py). READ_VARIABLE copies the state
into its output (passes/state.py lets its readers read the state in place where that is safe);
ASSIGN_VARIABLE copies its value into the state; both are byte copies (mcugen_copy), as
TFLite's kernels are, so any dtype and quantization goes: the value's bytes are the state's.
The scheduler keeps reads before the assignments that follow them in the file (mcugen/state.py).
"""

from __future__ import annotations

import numpy as np
import tflite

from ...ir import Op, OpKind
from ...quantization import Rounding
from .. import rules as r
from ..base import OpDef, Setting, no_fast_path_scratch, no_macs, no_scratch
from ..emitting import EmitContext, KernelCall
from ..movement.emit import byte_source
from ..tflite_options import read_none


def state_input(op: Op) -> str | None:
    """Input 0 is a resource variable (a VAR_HANDLE's handle)."""
    state = op.inputs[0]
    return None if state is not None and state.variable is not None else "not a variable"


def same_as_state(op: Op) -> str | None:
    """The value (READ_VARIABLE's output, ASSIGN_VARIABLE's input 1) has the variable's shape
    and dtype."""
    state = op.inputs[0] if op.inputs else None
    values = op.outputs[:1] if op.kind is OpKind.READ_VARIABLE else op.inputs[1:2]
    value = values[0] if values else None
    if state is None or value is None:
        return None
    if (value.shape, value.dtype) == (state.shape, state.dtype):
        return None
    return (f"{value.dtype.short}{list(value.shape)} for variable '{state.name}' of "
            f"{state.dtype.short}{list(state.shape)}")


def _prepare(op: Op, setting: Setting) -> None:
    return None


def emit_read(op: Op, ctx: EmitContext) -> KernelCall:
    state, value = op.inputs[0], op.outputs[0]
    assert state is not None
    return KernelCall(calls=[f"mcugen_copy({ctx.ptr(value)}, {ctx.ptr(state)}, {value.nbytes})"],
                      runtime={"mcugen_copy"})


def emit_assign(op: Op, ctx: EmitContext) -> KernelCall:
    state, value = op.inputs
    assert state is not None and value is not None
    return KernelCall(calls=[f"mcugen_copy({ctx.ptr(state)}, {byte_source(value, ctx)}, {state.nbytes})"],
                      runtime={"mcugen_copy"})


def reference_read(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    (state,) = inputs
    assert state is not None
    return [np.array(state, copy=True)]


def reference_assign(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """No outputs: the new state is input 1, which mcugen.reference stores (run_graph)."""
    return []


NOTES = (("VAR_HANDLE and CALL_ONCE (the init subgraph, which may only assign constants) are resolved at build "
         "time: each variable is a state buffer in the pools, kept across invokes, set by init() and "
         "reset_state() (README: Stateful (streaming) models). WHILE and IF are refused."),)

OPS: list[OpDef] = [
    OpDef(kind=OpKind.READ_VARIABLE, builtin=tflite.BuiltinOperator.READ_VARIABLE, read_options=read_none,
          rules=(r.input_arity(1), state_input, same_as_state), prepare=_prepare, emit=emit_read,
          scratch=no_scratch, fast_path_scratch=no_fast_path_scratch, reference=reference_read, macs=no_macs,
          shape_rules=(same_as_state,), notes=NOTES),
    OpDef(kind=OpKind.ASSIGN_VARIABLE, builtin=tflite.BuiltinOperator.ASSIGN_VARIABLE, read_options=read_none,
          rules=(r.input_arity(2), state_input, same_as_state), prepare=_prepare, emit=emit_assign,
          scratch=no_scratch, fast_path_scratch=no_fast_path_scratch, reference=reference_assign, macs=no_macs,
          shape_rules=(same_as_state,), notes=NOTES),
]
