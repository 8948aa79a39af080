"""numpy reference kernels, bit-exact with TFLite's reference kernels in both modes.

A second, independent path next to the generated C: `mcugen verify` compares the two, and the
tests hold this one to LiteRT and TensorFlow Lite Micro directly. Each kind's kernel is its
definition's `reference` (mcugen/ops/<family>/reference.py); run_graph executes a whole Graph.
"""

from __future__ import annotations

import numpy as np

from .ir import Graph, Op, Tensor
from .ops import registry
from .quantization import Rounding


def run_op(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return registry.op_def(op.kind).reference(op, inputs, rounding)


def run_graph(
    graph: Graph, inputs: list[np.ndarray], rounding: Rounding
) -> dict[int, np.ndarray]:
    """Run every op in order; returns every tensor's value keyed by tensor index."""
    values: dict[int, np.ndarray] = {}
    for tensor, value in zip(graph.inputs, inputs):
        values[tensor.index] = np.asarray(value, dtype=tensor.dtype.numpy).reshape(tensor.shape)
    for tensor in graph.tensors:
        if tensor.data is not None:
            values[tensor.index] = tensor.data

    def value_of(tensor: Tensor | None) -> np.ndarray | None:
        return None if tensor is None else values[tensor.index]

    for op in graph.ops:
        results = run_op(op, [value_of(t) for t in op.inputs], rounding)
        for tensor, result in zip(op.outputs, results):
            values[tensor.index] = np.asarray(result).astype(tensor.dtype.numpy).reshape(tensor.shape)
    return values


def run_outputs(graph: Graph, inputs: list[np.ndarray], rounding: Rounding) -> list[np.ndarray]:
    values = run_graph(graph, inputs, rounding)
    return [values[t.index] for t in graph.outputs]
