"""float32 forms of the weighted and pooling ops: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV,
FULLY_CONNECTED, AVERAGE_POOL_2D and MAX_POOL_2D (runtime/kernels/mcugen_float.c).

Not a family of its own: each kind keeps one definition in its family (conv, matmul, pool),
whose rules, prepare, emitter and reference dispatch here when the op's activations are
float32 (`by_dtype`). The quantized rules that cannot apply to a float op are wrapped in
`quantized_only`, and the float ones here apply only to float ops.

The C and the numpy reference both follow TFLite's reference float kernels in the same order
(see mcugen_float.h), so they are bit-exact with LiteRT's BUILTIN_REF kernels, and with each
other. Tiling stripes the float window ops as it does the quantized ones (emit_rows: a stripe's
own top padding).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ...ir import DType, Op, OpKind

T = TypeVar("T")

FLOAT_NOTE = (
    "float32: bit-exact with LiteRT's and TFLM's reference float kernels (TFLite's reference loop "
    "order, compiled with -ffp-contract=off; 0 ULP in the tests, infinities, NaN and signed zeros "
    "included). The rules above about quantization, int8 weights and integer bias apply to int8 "
    "and int16 ops only."
)


def is_float(op: Op) -> bool:
    """Whether the op's activation input (input 2 of TRANSPOSE_CONV, else input 0) is float32."""
    index = 2 if op.kind is OpKind.TRANSPOSE_CONV else 0
    tensor = op.inputs[index] if len(op.inputs) > index else None
    return tensor is not None and tensor.dtype is DType.FLOAT32


def by_dtype(quantized: Callable[..., T], floating: Callable[..., T]) -> Callable[..., T]:
    """One of a kind's functions (prepare, emit, reference) that runs `floating` for a float32
    op and `quantized` otherwise."""

    def run(op: Op, *args: Any) -> T:
        return floating(op, *args) if is_float(op) else quantized(op, *args)

    run.__doc__ = quantized.__doc__
    return run


def no_scratch(op: Op, *args: Any) -> int:
    """The float kernels need no scratch, on any target (they have no fast paths)."""
    return 0
