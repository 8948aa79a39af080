"""Support rules of the shape ops (RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE); EXPAND_DIMS also uses
the movement family's dtype and constant-operand rules.

Each rule returns None when the op satisfies it, else the offending value; its docstring is
the rule shown to users. They follow TensorFlow Lite Micro's Prepare: the views keep their
input's bytes (TFLite reuses them whatever the quantization, except EXPAND_DIMS, whose LiteRT
kernel checks it), and SHAPE writes int32.
"""

from __future__ import annotations

from collections.abc import Callable

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


def shape_output_shape(op: Op) -> str | None:
    """SHAPE: the output is a vector of the input's rank."""
    x, y = op.inputs[0] if op.inputs else None, op.outputs[0]
    if x is None:
        return None  # input_arity reports it
    return None if list(y.shape) == [len(x.shape)] else f"output {list(y.shape)} for input rank {len(x.shape)}"


def view_shape_rule(shape_of: Callable[[Op], tuple[int, ...]], doc: str,
                    constant_input: int | None = None) -> Callable[[Op], str | None]:
    """A shape rule from a view's shape function (shape/prepare.py), which refuses an op it cannot
    shape (a squeezed extent other than 1, an axis out of range) with a ModelError itself.
    `constant_input`: the input the function reads as a constant integer tensor."""

    def check(op: Op) -> str | None:
        if not op.inputs or op.inputs[0] is None:
            return None  # input_arity reports it
        if constant_input is not None:
            operand = op.inputs[constant_input] if len(op.inputs) > constant_input else None
            if operand is None or operand.data is None or operand.dtype not in (DType.INT32, DType.INT64):
                return None  # constant_indices reports it
        expected = list(shape_of(op))
        y = op.outputs[0]
        return None if list(y.shape) == expected else f"output {list(y.shape)}, expected {expected}"

    check.__doc__ = doc
    return check
