"""ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU -> mcugen_elementwise.c.

Broadcasting is resolved here: both inputs are viewed in the output's shape with element
strides (0 along broadcast dimensions), dimensions of extent 1 are dropped and neighbouring
dimensions that both inputs step through contiguously are merged, so the common cases (same
shapes, a per-channel vector, a scalar) become one or two loop levels. Every kernel takes the
same loop struct; the build-time quantization constants come from prepare.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ...codegen.cnames import c_float
from ...errors import UnsupportedError
from ...ir import DType, Op, OpKind, Tensor
from ..emitting import EmitContext, KernelCall
from .prepare import (
    MulParams,
    PotParams,
    PreluParams,
    RescaleParams,
    add_sub_params,
    float_clamp,
    mul_params,
    prelu_params,
    squared_difference_params,
)

MAX_LOOPS = 6  # MCUGEN_BROADCAST_MAX_LOOPS in mcugen_elementwise.h
RUNTIME = {"mcugen_elementwise", "mcugen_fast_common"}  # the ADD/SUB rows share fast helpers
_SUFFIX = {DType.INT8: "s8", DType.INT16: "s16", DType.FLOAT32: "f32"}


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
        if isinstance(v, float):
            return c_float(v)
        return str(v)

    return "{ " + ", ".join(f".{name} = {value(v)}" for name, v in fields.items()) + " }"


class _Call:
    """Collects one op's declarations and builds its single kernel call."""

    def __init__(self, op: Op, ctx: EmitContext) -> None:
        self.op, self.ctx = op, ctx
        self.declarations: list[str] = []

    def declare(self, ctype: str, stem: str, fields: dict[str, object]) -> str:
        name = f"{stem}_{self.op.index}"
        self.declarations.append(f"static const {ctype} {name} = {_initialiser(fields)};")
        return f"&{name}"

    def operand(self, tensor: Tensor) -> str:
        """A pointer to an input; float constants get their own exact float literals."""
        if tensor.is_constant and tensor.dtype is DType.FLOAT32:
            assert tensor.data is not None
            if not np.all(np.isfinite(tensor.data)):
                raise UnsupportedError(f"{self.op.where()}: constant '{tensor.name}' holds an "
                                       "infinity or NaN, which C99 has no float literal for")
            name = f"float_operand_{self.op.index}_{tensor.index}"
            values = ", ".join(c_float(float(v)) for v in np.asarray(tensor.data).ravel())
            self.declarations.append(
                f"static const float {name}[{max(tensor.num_elements, 1)}] = {{ {values} }};")
            return name
        return self.ctx.ptr(tensor)

    def finish(self, function: str, args: Sequence[str]) -> KernelCall:
        a, b, y = _operands(self.op)
        pointers = [self.operand(a), self.operand(b), self.ctx.ptr(y)]
        return KernelCall(declarations=self.declarations,
                          calls=[f"{function}({', '.join([*args, *pointers])})"],
                          runtime=set(RUNTIME))


def _operands(op: Op) -> tuple[Tensor, Tensor, Tensor]:
    a, b = op.inputs[0], op.inputs[1]
    assert a is not None and b is not None
    return a, b, op.outputs[0]


def _loop_fields(op: Op) -> dict[str, object]:
    a, b, y = _operands(op)
    try:
        loop = broadcast_loop(a.shape, b.shape, y.shape)
    except UnsupportedError as error:
        raise UnsupportedError(f"{op.where()}: {error}") from None
    return {"extent": loop.extent, "input1_stride": loop.input1_stride,
            "input2_stride": loop.input2_stride}


def _kernel(op: Op, name: str) -> str:
    dtype = op.inputs[0].dtype  # type: ignore[union-attr]
    if dtype not in _SUFFIX:
        raise UnsupportedError(f"{op.where()}: no {name} kernel for {dtype.short}")
    return f"mcugen_{name}_{_SUFFIX[dtype]}"


def _quantized_params(call: _Call, low: int, high: int) -> str:
    return call.declare("mcugen_elementwise_params", "elementwise_params",
                        {"loop": _loop_fields(call.op), "activation": {"min": low, "max": high}})


def _rescale_fields(q: RescaleParams) -> dict[str, object]:
    fields: dict[str, object] = asdict(q)
    del fields["activation_min"], fields["activation_max"]
    return fields


def _float_params(call: _Call) -> str:
    low, high = float_clamp(call.op)
    return call.declare("mcugen_elementwise_f32_params", "elementwise_params",
                        {"loop": _loop_fields(call.op), "activation_min": low,
                         "activation_max": high})


def _loop_only(call: _Call) -> str:
    return call.declare("mcugen_broadcast", "broadcast", _loop_fields(call.op))


def _is_float(op: Op) -> bool:
    return op.outputs[0].dtype is DType.FLOAT32


def emit_add_sub(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    name = "add" if op.kind is OpKind.ADD else "sub"
    if _is_float(op):
        return call.finish(_kernel(op, name), [_float_params(call)])
    q = add_sub_params(op, ctx.rounding)
    if isinstance(q, PotParams):
        quant = call.declare("mcugen_pot_quant_params", "pot_quant",
                             {"input1_shift": q.input1_shift, "input2_shift": q.input2_shift})
        return call.finish(f"mcugen_{name}_pot_s16",
                           [_quantized_params(call, q.activation_min, q.activation_max), quant])
    quant = call.declare("mcugen_rescale_quant_params", "rescale_quant", _rescale_fields(q))
    return call.finish(_kernel(op, name),
                       [_quantized_params(call, q.activation_min, q.activation_max), quant])


def emit_squared_difference(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    if _is_float(op):
        return call.finish(_kernel(op, "squared_difference"), [_loop_only(call)])
    q = squared_difference_params(op, ctx.rounding)
    quant = call.declare("mcugen_rescale_quant_params", "rescale_quant", _rescale_fields(q))
    return call.finish(_kernel(op, "squared_difference"),
                       [_quantized_params(call, q.activation_min, q.activation_max), quant])


def emit_mul(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    if _is_float(op):
        return call.finish(_kernel(op, "mul"), [_float_params(call)])
    q: MulParams = mul_params(op, ctx.rounding)
    fields: dict[str, object] = asdict(q)
    del fields["activation_min"], fields["activation_max"]
    quant = call.declare("mcugen_mul_quant_params", "mul_quant", fields)
    return call.finish(_kernel(op, "mul"),
                       [_quantized_params(call, q.activation_min, q.activation_max), quant])


def emit_maximum_minimum(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    return call.finish(_kernel(op, op.kind.name.lower()), [_loop_only(call)])


def emit_prelu(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    if _is_float(op):
        return call.finish(_kernel(op, "prelu"), [_loop_only(call)])
    q: PreluParams = prelu_params(op, ctx.rounding)
    fields: dict[str, object] = asdict(q)
    del fields["activation_min"], fields["activation_max"]
    quant = call.declare("mcugen_prelu_quant_params", "prelu_quant", fields)
    return call.finish(_kernel(op, "prelu"),
                       [_quantized_params(call, q.activation_min, q.activation_max), quant])
