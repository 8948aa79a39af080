"""numpy reference kernels, bit-exact with TFLite's reference kernels in both modes.

A second, independent path next to the generated C: `mcugen verify` compares the two, and the
tests hold this one to LiteRT and TensorFlow Lite Micro directly. Kernels register themselves
per op kind with @reference; run_graph executes a whole Graph.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ir import Graph, Op, OpKind, Tensor
from ..quantization import Rounding

# A kernel gets the op (tensors carry quantization and options), one array per op input
# (constants included, None for an omitted optional input) and returns one array per output.
ReferenceKernel = Callable[[Op, list[np.ndarray | None], Rounding], list[np.ndarray]]

KERNELS: dict[OpKind, ReferenceKernel] = {}


def reference(kind: OpKind) -> Callable[[ReferenceKernel], ReferenceKernel]:
    def register(function: ReferenceKernel) -> ReferenceKernel:
        KERNELS[kind] = function
        return function

    return register


def run_op(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    from ..ops import registry

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


# Importing the kernel modules registers them.
from . import kernels  # noqa: F401
