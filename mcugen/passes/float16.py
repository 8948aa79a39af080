"""FLOAT16 constants become FLOAT32 at build time.

The TFLite converter's float16 quantization stores weights as FLOAT16 constants, each read
through a DEQUANTIZE to float32 that runs at every invoke. Widening float16 to float32 is exact,
so the DEQUANTIZE of a constant folds into a float32 constant here, as LiteRT computes it. A
float16 constant that another op reads directly is widened in place when the op works in
float32 (its outputs are float32); otherwise it stays float16 and the op's support rules refuse
it in one line. A float16 tensor that is not constant is refused the same way.
"""

from __future__ import annotations

import numpy as np

from ..ir import DType, Graph, Op, OpKind, Tensor
from .report import PassReport, Rewrite


def _widened(tensor: Tensor) -> np.ndarray:
    assert tensor.data is not None
    value = np.asarray(tensor.data, dtype=np.float16).astype(np.float32)
    value.setflags(write=False)
    return value


def _is_float16_constant(tensor: Tensor | None) -> bool:
    return tensor is not None and tensor.dtype is DType.FLOAT16 and tensor.is_constant


def _folds(op: Op) -> bool:
    """A DEQUANTIZE of a float16 constant to float32."""
    return (op.kind is OpKind.DEQUANTIZE and len(op.inputs) == 1 and _is_float16_constant(op.inputs[0])
            and len(op.outputs) == 1 and op.outputs[0].dtype is DType.FLOAT32
            and op.outputs[0].num_elements == op.inputs[0].num_elements  # type: ignore[union-attr]
            and all(t.pin is None for t in op.outputs))


def widen_float16(graph: Graph, report: PassReport) -> None:
    kept = []
    for op in graph.ops:
        if _folds(op):
            source, target = op.inputs[0], op.outputs[0]
            assert source is not None
            target.data = _widened(source).reshape(target.shape)
            report.record(op, Rewrite.FOLDED)
        else:
            kept.append(op)
    graph.ops = kept
    for op in graph.ops:
        if not all(t.dtype is DType.FLOAT32 for t in op.outputs):
            continue
        for tensor in op.inputs:
            if tensor is not None and _is_float16_constant(tensor):
                tensor.data = _widened(tensor)
                tensor.dtype = DType.FLOAT32
    graph.link()
