"""Resource variables and the init subgraph, as the TFLite converter emits stateful models.

A streaming model keeps state between invokes in resource variables. The converter writes:

- in the main subgraph (0): CALL_ONCE(init_subgraph_index) first; VAR_HANDLE(container,
  shared_name) ops whose outputs are RESOURCE handles; READ_VARIABLE(handle) -> value and
  ASSIGN_VARIABLE(handle, value), which read and write the variable;
- in the init subgraph: VAR_HANDLE ops for the same (container, shared_name) and
  ASSIGN_VARIABLE(handle, constant): the first value of each variable.

TFLite identifies a variable by (container, shared_name) in every subgraph. mcugen resolves it
all at build time (`resolve`): each variable becomes one state tensor (ir.Variable: its name and
its initial value, from the init subgraph's constants), which stands for every handle of it in
the main subgraph; CALL_ONCE and VAR_HANDLE disappear. What cannot be resolved is refused in one
line: an init subgraph that does anything but assign constants, a variable read but never given
a first value, values whose shape or dtype disagree, handles used other than by READ/ASSIGN,
and control flow (WHILE, IF) anywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any

import numpy as np
import tflite

from ..errors import ModelError, UnsupportedError
from ..ir import Tensor, Variable
from ..ops.tflite_options import options_table
from ..records import dataclass

B = tflite.BuiltinOperator
# Ops the reader handles here and drops from the graph.
DROPPED = (B.CALL_ONCE, B.VAR_HANDLE)
CONTROL_FLOW = {B.WHILE: "WHILE", B.IF: "IF"}


@dataclass
class MainState:
    """What the main subgraph's variables resolve to."""

    by_handle: dict[int, Tensor] = field(default_factory=dict)  # handle tensor index -> state
    dropped: set[int] = field(default_factory=set)  # op indices of CALL_ONCE and VAR_HANDLE


# (flatbuffer Operator, op index) -> builtin code; (flatbuffer SubGraph, tensor index) -> Tensor
CodeOf = Callable[[Any, int], int]
ReadTensor = Callable[[Any, int], Tensor]


def _ints(values: Any) -> list[int]:
    return [] if isinstance(values, int) else [int(v) for v in values]


def _key(op: Any, where: str) -> str:
    """A VAR_HANDLE's variable: 'container/shared_name' (no container: the shared name)."""
    o = options_table(op, tflite.VarHandleOptions)
    container = (o.Container() or b"").decode("utf-8", "replace")
    shared = (o.SharedName() or b"").decode("utf-8", "replace")
    if not shared:
        raise ModelError(f"{where}: VAR_HANDLE without a shared_name; the rule: a variable is named")
    return f"{container}/{shared}" if container else shared


def _handles(subgraph: Any, code_of: CodeOf, label: str, what: str) -> tuple[dict[int, str], list[int]]:
    """(handle tensor index -> variable key, VAR_HANDLE op indices) of one subgraph."""
    handles: dict[int, str] = {}
    ops = []
    for index in range(subgraph.OperatorsLength()):
        op = subgraph.Operators(index)
        if code_of(op, index) != B.VAR_HANDLE:
            continue
        outputs = _ints(op.OutputsAsNumpy())
        if len(outputs) != 1:
            raise ModelError(f"{label}: {what} op {index} VAR_HANDLE has {len(outputs)} outputs; the rule: one")
        handles[outputs[0]] = _key(op, f"{label}: {what} op {index} VAR_HANDLE")
        ops.append(index)
    return handles, ops


def _refuse_control_flow(model: Any, code_of: CodeOf, label: str) -> None:
    for s in range(model.SubgraphsLength()):
        subgraph = model.Subgraphs(s)
        for index in range(subgraph.OperatorsLength()):
            code = code_of(subgraph.Operators(index), index)
            if code in CONTROL_FLOW:
                raise UnsupportedError(
                    f"{label}: subgraph {s} op {index} {CONTROL_FLOW[code]}: control flow is not supported "
                    "(mcugen compiles straight-line models; CALL_ONCE of an init subgraph is the only call)")


def _initial_values(model: Any, init_index: int, code_of: CodeOf, read_tensor: ReadTensor,
                    label: str) -> dict[str, np.ndarray]:
    """Each variable's first value: the constants the init subgraph assigns, run at build time."""
    if not 0 < init_index < model.SubgraphsLength():
        raise ModelError(f"{label}: CALL_ONCE calls subgraph {init_index}, but the model has "
                         f"{model.SubgraphsLength()}; the rule: an init subgraph other than the main one")
    subgraph = model.Subgraphs(init_index)
    what = f"init subgraph {init_index}"
    handles, handle_ops = _handles(subgraph, code_of, label, what)
    values: dict[str, np.ndarray] = {}
    for index in range(subgraph.OperatorsLength()):
        if index in handle_ops:
            continue
        op = subgraph.Operators(index)
        code = code_of(op, index)
        inputs = _ints(op.InputsAsNumpy())
        where = f"{label}: {what} op {index}"
        if code != B.ASSIGN_VARIABLE:
            raise UnsupportedError(
                f"{where} {tflite_name(code)}: mcugen resolves the init subgraph at build time and takes only "
                "VAR_HANDLE and ASSIGN_VARIABLE of constants there (the value would be computed on the device)")
        if len(inputs) != 2 or inputs[0] not in handles:
            raise ModelError(f"{where} ASSIGN_VARIABLE: inputs {inputs}; the rule: a VAR_HANDLE's handle and a value")
        value = read_tensor(subgraph, inputs[1])
        if value.data is None:
            raise UnsupportedError(
                f"{where} ASSIGN_VARIABLE of '{value.name}': not a constant; mcugen resolves the init subgraph "
                "at build time and takes only constants as first values")
        values[handles[inputs[0]]] = value.data
    return values


_NAMES = {value: name for name, value in vars(B).items() if not name.startswith("_")}


def tflite_name(code: int) -> str:
    return _NAMES.get(code, f"builtin {code}")


def _value_tensor(subgraph: Any, handles: dict[int, str], code_of: CodeOf, read_tensor: ReadTensor,
                  label: str) -> dict[str, Tensor]:
    """For each variable the main subgraph uses, a tensor of its value (a READ_VARIABLE's output,
    else an ASSIGN_VARIABLE's value): its shape, dtype and quantization. Checks every handle is
    used only by READ_VARIABLE and ASSIGN_VARIABLE and that their values agree."""
    found: dict[str, Tensor] = {}
    for index in range(subgraph.OperatorsLength()):
        op = subgraph.Operators(index)
        code = code_of(op, index)
        inputs = _ints(op.InputsAsNumpy())
        where = f"{label}: op {index} {tflite_name(code)}"
        used = [i for i in inputs if i in handles]
        if not used:
            continue
        if code == B.READ_VARIABLE and inputs == used:
            outputs = _ints(op.OutputsAsNumpy())
            if len(outputs) != 1:
                raise ModelError(f"{where}: {len(outputs)} outputs; the rule: READ_VARIABLE gives the variable's value")
            value = read_tensor(subgraph, outputs[0])
        elif code == B.ASSIGN_VARIABLE and len(inputs) == 2 and inputs[0] in handles and inputs[1] not in handles:
            value = read_tensor(subgraph, inputs[1])
        else:
            raise UnsupportedError(f"{where}: takes a variable's handle; mcugen takes handles only as "
                                   "READ_VARIABLE's input and ASSIGN_VARIABLE's first input")
        key = handles[inputs[0]]
        known = found.setdefault(key, value)
        if (known.shape, known.dtype) != (value.shape, value.dtype):
            raise ModelError(f"{where}: variable '{key}' is {value.dtype.short}{list(value.shape)} here but "
                             f"{known.dtype.short}{list(known.shape)} elsewhere; the rule: one shape and dtype")
    return found


def resolve(model: Any, code_of: CodeOf, read_tensor: ReadTensor, label: str) -> MainState:
    """The main subgraph's variables as state tensors (see the module docstring)."""
    _refuse_control_flow(model, code_of, label)
    main = model.Subgraphs(0)
    handles, handle_ops = _handles(main, code_of, label, "op")
    boundary = set(_ints(main.InputsAsNumpy())) | set(_ints(main.OutputsAsNumpy()))
    if boundary & set(handles):
        raise UnsupportedError(f"{label}: a variable's handle is a graph input or output; mcugen keeps "
                               "variables inside the model")
    state = MainState(dropped=set(handle_ops))
    init_indices = []
    for index in range(main.OperatorsLength()):
        op = main.Operators(index)
        if code_of(op, index) == B.CALL_ONCE:
            state.dropped.add(index)
            init_indices.append(int(options_table(op, tflite.CallOnceOptions).InitSubgraphIndex()))
    initial: dict[str, np.ndarray] = {}
    for init_index in init_indices:
        initial.update(_initial_values(model, init_index, code_of, read_tensor, label))
    values = _value_tensor(main, handles, code_of, read_tensor, label)
    states: dict[str, Tensor] = {}
    for handle, key in sorted(handles.items()):
        if key not in values:
            continue  # a handle no op uses
        value = values[key]
        first = initial.get(key)
        if first is None:
            raise UnsupportedError(f"{label}: variable '{key}' is used but no init subgraph (CALL_ONCE) assigns "
                                   "it a first value; mcugen needs it at build time")
        if first.shape != value.shape or first.dtype != value.dtype.numpy:
            raise ModelError(f"{label}: variable '{key}' starts as {first.dtype}{list(first.shape)} but is used as "
                             f"{value.dtype.short}{list(value.shape)}; the rule: one shape and dtype")
        if key not in states:
            states[key] = Tensor(index=handle, name=key, shape=value.shape, dtype=value.dtype, quant=value.quant,
                                 variable=Variable(key, np.ascontiguousarray(first)))
        state.by_handle[handle] = states[key]
    return state
