"""numpy reference kernels, bit-exact with TFLite's reference kernels in both modes.

A second, independent path next to the generated C: `mcugen verify` compares the two, and the
tests hold this one to LiteRT and TensorFlow Lite Micro directly. Each kind's kernel is its
definition's `reference` (mcugen/ops/<family>/reference.py); run_graph executes a whole Graph.

Stateful models carry their variables' states the way the generated C does: a `States` dict
(state tensor index -> value) starts from the init subgraph's values (`initial_states`, like
`<prefix>_init()` and `<prefix>_reset_state()`), READ_VARIABLE reads it, ASSIGN_VARIABLE
replaces it, and run_graph leaves the new values in the dict for the next invoke.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .ir import Graph, Op, Tensor
from .ops import registry
from .quantization import Rounding
from .state import assigned_state, state_tensors

States = dict[int, np.ndarray]


def run_op(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return registry.op_def(op.kind).reference(op, inputs, rounding)


def initial_states(graph: Graph) -> States:
    """Each variable's first value, by state tensor index (empty for a stateless model)."""
    return {t.index: np.array(t.variable.initial, copy=True) for t in state_tensors(graph) if t.variable}


def run_graph(
    graph: Graph, inputs: list[np.ndarray], rounding: Rounding, states: States | None = None
) -> dict[int, np.ndarray]:
    """Run every op in order; returns every tensor's value keyed by tensor index. `states`
    (default: the initial ones) is read and updated in place by the variables' ops."""
    states = initial_states(graph) if states is None else states
    values: dict[int, np.ndarray] = {}
    for tensor, value in zip(graph.inputs, inputs):
        values[tensor.index] = np.asarray(value, dtype=tensor.dtype.numpy).reshape(tensor.shape)
    for tensor in graph.tensors:
        if tensor.data is not None:
            values[tensor.index] = tensor.data
    values.update(states)

    def value_of(tensor: Tensor | None) -> np.ndarray | None:
        return None if tensor is None else values[tensor.index]

    for op in graph.ops:
        inputs_now = [value_of(t) for t in op.inputs]
        results = run_op(op, inputs_now, rounding)
        for tensor, result in zip(op.outputs, results):
            values[tensor.index] = np.asarray(result).astype(tensor.dtype.numpy).reshape(tensor.shape)
        state = assigned_state(op)
        if state is not None:
            new = inputs_now[1]
            assert new is not None
            values[state.index] = np.array(new, dtype=state.dtype.numpy, copy=True).reshape(state.shape)
    for index in states:
        states[index] = values[index]
    return values


def run_outputs(graph: Graph, inputs: list[np.ndarray], rounding: Rounding,
                states: States | None = None) -> list[np.ndarray]:
    values = run_graph(graph, inputs, rounding, states)
    return [values[t.index] for t in graph.outputs]


def run_sequence(graph: Graph, steps: Sequence[Sequence[np.ndarray]], rounding: Rounding) -> list[list[np.ndarray]]:
    """Successive invokes of one model instance from its initial state: outputs per step."""
    states = initial_states(graph)
    return [run_outputs(graph, list(step), rounding, states) for step in steps]
