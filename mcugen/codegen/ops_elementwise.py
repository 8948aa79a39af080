"""ADD -> mcugen_add_s8 (mcugen_add.c).

Broadcasting is resolved here: both inputs are viewed in the output's shape with element
strides (0 along broadcast dimensions), dimensions of extent 1 are dropped and neighbouring
dimensions that both inputs step through contiguously are merged, so the common cases (same
shapes, a per-channel vector, a scalar) become one or two loop levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import Op, OpKind
from ..opparams import add_quant_params
from .emit import EmitContext, KernelCall, emitter

MAX_LOOPS = 6  # MCUGEN_ADD_MAX_LOOPS in mcugen_add.h


@dataclass(frozen=True)
class BroadcastLoop:
    """Loop levels, outermost first: output extents and each input's element stride."""

    extent: tuple[int, ...]
    input1_stride: tuple[int, ...]
    input2_stride: tuple[int, ...]


def _strides_in_output(shape: Sequence[int], out_shape: Sequence[int]) -> list[int]:
    """Element strides of `shape` (right-aligned in out_shape); 0 where it is broadcast."""
    padded = [1] * (len(out_shape) - len(shape)) + list(shape)
    strides, step = [0] * len(padded), 1
    for axis in reversed(range(len(padded))):
        strides[axis] = 0 if padded[axis] == 1 else step
        step *= padded[axis]
    return strides


def broadcast_loop(shape1: Sequence[int], shape2: Sequence[int], out_shape: Sequence[int]) -> BroadcastLoop:
    """The smallest loop nest that walks out_shape in order with both inputs' strides."""
    if tuple(np.broadcast_shapes(tuple(shape1), tuple(shape2))) != tuple(out_shape):
        raise UnsupportedError(
            f"input shapes {list(shape1)} and {list(shape2)} do not broadcast to {list(out_shape)}"
        )
    s1, s2 = _strides_in_output(shape1, out_shape), _strides_in_output(shape2, out_shape)
    levels = [(n, a, b) for n, a, b in zip(out_shape, s1, s2) if n != 1]
    merged: list[tuple[int, int, int]] = []
    for n, a, b in levels:
        if merged:
            outer_n, outer_a, outer_b = merged[-1]
            # The outer level continues the inner one exactly when each stride equals the
            # inner stride times the inner extent (both 0 for a broadcast input).
            if outer_a == a * n and outer_b == b * n:
                merged[-1] = (outer_n * n, a, b)
                continue
        merged.append((n, a, b))
    if not merged:
        merged = [(1, 0, 0)]
    if len(merged) > MAX_LOOPS:
        raise UnsupportedError(f"broadcast of {list(shape1)} and {list(shape2)} needs "
                               f"{len(merged)} loop levels (at most {MAX_LOOPS})")
    merged = [(1, 0, 0)] * (MAX_LOOPS - len(merged)) + merged
    return BroadcastLoop(
        extent=tuple(n for n, _, _ in merged),
        input1_stride=tuple(a for _, a, _ in merged),
        input2_stride=tuple(b for _, _, b in merged),
    )


def _initialiser(fields: dict[str, object]) -> str:
    """A C designated initialiser; sequences become brace lists, nested dicts structs."""

    def value(v: object) -> str:
        if isinstance(v, dict):
            return _initialiser(v)
        if isinstance(v, (tuple, list)):
            return "{ " + ", ".join(str(x) for x in v) + " }"
        return str(v)

    return "{ " + ", ".join(f".{name} = {value(v)}" for name, v in fields.items()) + " }"


@emitter(OpKind.ADD)
def emit_add(op: Op, ctx: EmitContext) -> KernelCall:
    a, b, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert a is not None and b is not None
    try:
        loop = broadcast_loop(a.shape, b.shape, y.shape)
    except UnsupportedError as error:
        raise UnsupportedError(f"{op.where()}: {error}") from None
    q = add_quant_params(op)
    params = _initialiser({
        "loop": {"extent": loop.extent, "input1_stride": loop.input1_stride,
                 "input2_stride": loop.input2_stride},
        "activation": {"min": q.activation_min, "max": q.activation_max},
    })
    quant = _initialiser({
        "input1_offset": q.input1_offset, "input1_multiplier": q.input1_multiplier,
        "input1_shift": q.input1_shift, "input2_offset": q.input2_offset,
        "input2_multiplier": q.input2_multiplier, "input2_shift": q.input2_shift,
        "output_offset": q.output_offset, "output_multiplier": q.output_multiplier,
        "output_shift": q.output_shift, "left_shift": q.left_shift,
    })
    params_name, quant_name = f"add_params_{op.index}", f"add_quant_{op.index}"
    return KernelCall(
        declarations=[
            f"static const mcugen_add_params {params_name} = {params};",
            f"static const mcugen_add_quant_params {quant_name} = {quant};",
        ],
        calls=[(f"mcugen_add_s8(&{params_name}, &{quant_name}, {ctx.ptr(a)}, {ctx.ptr(b)}, "
               f"{ctx.ptr(y)})")],
        runtime={"mcugen_add"},
    )
