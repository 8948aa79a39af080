"""Support rules of the shape ops (RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE); EXPAND_DIMS also uses
the movement family's dtype and constant-operand rules.

Each rule returns None when the op satisfies it, else the offending value; its docstring is
the rule shown to users. They follow TensorFlow Lite Micro's Prepare: the views keep their
input's bytes (TFLite reuses them whatever the quantization, except EXPAND_DIMS, whose LiteRT
kernel checks it), and SHAPE writes int32.
"""

from __future__ import annotations

from ...ir import DType, Op


def same_bytes(op: Op) -> str | None:
    """The output has as many elements as the input and the same dtype (its bytes are the
    input's, reused whatever the quantization, as TFLite does)."""
    src, dst = op.inputs[0] if op.inputs else None, op.outputs[0]
    if src is None:
        return "input 0 is missing"
    if src.num_elements != dst.num_elements or src.dtype is not dst.dtype:
        return f"{src.num_elements} {src.dtype.short} -> {dst.num_elements} {dst.dtype.short}"
    return None


def same_quantized_elements(op: Op) -> str | None:
    """The output has as many elements as the input, with the same dtype and quantization
    (LiteRT's EXPAND_DIMS checks the quantization)."""
    src, dst = op.inputs[0] if op.inputs else None, op.outputs[0]
    if src is None:
        return "input 0 is missing"
    if src.num_elements != dst.num_elements or src.dtype is not dst.dtype:
        return f"{src.num_elements} {src.dtype.short} -> {dst.num_elements} {dst.dtype.short}"
    return None if src.quant == dst.quant else "the quantization changes"


def at_most_8_dims(op: Op) -> str | None:
    """The input has at most 8 dimensions (TFLM's SQUEEZE limit)."""
    src = op.inputs[0] if op.inputs else None
    if src is None:
        return None  # input_arity and same_bytes report it
    return None if len(src.shape) <= 8 else f"input shape {list(src.shape)}"


def int32_shape_output(op: Op) -> str | None:
    """The output is int32 (TFLM's SHAPE writes no other type; a static SHAPE is folded first)."""
    out = op.outputs[0]
    return None if out.dtype is DType.INT32 else f"output '{out.name}' is {out.dtype.short}"
