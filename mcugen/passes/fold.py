"""Constant folding: ops whose inputs are all constant become constants at build time.

Values come from the numpy reference kernels (mcugen.reference.run_op), which are bit-exact
with TFLite in the build's rounding mode, so a folded value is the value the device would
have computed. SHAPE of a tensor whose shape is static (every shape is, once a dynamic batch
is fixed at 1) is a constant too: the SHAPE -> STRIDED_SLICE -> PACK chain that a dynamic
batch leaves in front of a RESHAPE costs nothing on the device.

An op is left in place, to be checked by the support rules and run by its C kernel, when no
reference kernel can evaluate it (none registered, or the kernel rejects the op) or when the
kernel's result does not fit the output tensor (element count, dtype).
"""

from __future__ import annotations

import numpy as np

from ..errors import McugenError
from ..ir import DType, Graph, Op, OpKind, Tensor
from ..quantization import Rounding
from .alias import is_alias
from .report import PassReport, Rewrite

SHAPE_DTYPES = (DType.INT32, DType.INT64)
# What a reference kernel raises for an op outside its rules (or with no kernel registered).
NOT_FOLDABLE = (McugenError, ArithmeticError, AssertionError, IndexError, KeyError, TypeError, ValueError)


def fold_constants(graph: Graph, rounding: Rounding, report: PassReport) -> None:
    """One sweep in execution order folds whole chains: a folded output is constant for the
    ops after it."""
    kept = []
    for op in graph.ops:
        values = constant_outputs(op, rounding)
        if values is None:
            kept.append(op)
            continue
        for tensor, value in zip(op.outputs, values):
            value.setflags(write=False)
            tensor.data = value
        report.record(op, Rewrite.FOLDED)
    graph.ops = kept
    graph.link()


def constant_outputs(op: Op, rounding: Rounding) -> list[np.ndarray] | None:
    """The op's outputs if they are known at build time, else None."""
    if any(t.pin is not None for t in op.outputs):  # Vela fixed it in the NPU's scratch: computed there
        return None
    if op.kind is OpKind.CUSTOM:  # the user's kernel computes it, on the device
        return None
    if op.kind is OpKind.SHAPE:
        return _static_shape(op)
    present = [t for t in op.inputs if t is not None]
    if not present or not all(t.is_constant for t in present):
        return None
    if is_alias(op):
        source = op.inputs[0]
        assert source is not None and source.data is not None
        return [np.array(source.data).reshape(op.outputs[0].shape)]
    results = _evaluate(op, rounding)
    if results is None or len(results) != len(op.outputs):
        return None
    fitted = [_fit(result, tensor) for result, tensor in zip(results, op.outputs)]
    return None if any(f is None for f in fitted) else fitted  # type: ignore[return-value]


def _static_shape(op: Op) -> list[np.ndarray] | None:
    source = op.inputs[0] if op.inputs else None
    target = op.outputs[0]
    if source is None or target.dtype not in SHAPE_DTYPES or target.num_elements != len(source.shape):
        return None
    return [np.array(source.shape, dtype=target.dtype.numpy).reshape(target.shape)]


def _evaluate(op: Op, rounding: Rounding) -> list[np.ndarray] | None:
    """The reference kernel's outputs, or None when it cannot evaluate this op.

    Such an exception means "not foldable here", not "bad model": the op stays in the graph and
    the support rules, which run after the passes, report what is wrong with it.
    """
    from ..reference import run_op

    try:
        return [np.asarray(r) for r in run_op(op, [None if t is None else t.data for t in op.inputs], rounding)]
    except NOT_FOLDABLE:
        return None


def _fit(result: np.ndarray, tensor: Tensor) -> np.ndarray | None:
    """The result in the tensor's dtype and shape, or None if converting would change a value."""
    if result.size != tensor.num_elements:
        return None
    dtype = tensor.dtype.numpy
    if result.dtype == dtype:
        return np.array(result).reshape(tensor.shape)
    if dtype.kind == "f" or result.dtype.kind == "f":
        return None  # a float result of another width, or a float/int mismatch: not ours to round
    converted = result.astype(dtype)
    if not np.array_equal(converted.astype(result.dtype), result):
        return None
    return converted.reshape(tensor.shape)
