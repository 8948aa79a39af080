"""ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU -> mcugen_elementwise.c.

Every kernel takes the same loop struct: prepare (prepare.broadcast_loop) views both inputs in
the output's shape with element strides (0 along broadcast dimensions), drops dimensions of
extent 1 and merges neighbouring dimensions that both inputs step through contiguously, so the
common cases (same shapes, a per-channel vector, a scalar) become one or two loop levels. The
loop and the build-time quantization constants come from the kind's prepare; this module only
writes them as C.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

import numpy as np

from ...codegen.cnames import c_float
from ...ir import DType, Op, OpKind, Tensor
from ..base import setting_of
from ..emitting import EmitContext, KernelCall
from .prepare import (
    BroadcastLoop,
    PotParams,
    RescaleParams,
    prepare_add_sub,
    prepare_maximum_minimum,
    prepare_mul,
    prepare_prelu,
    prepare_squared_difference,
)

# the int8 ADD/SUB fast paths: interface, one file per instruction set, shared helpers
RUNTIME = {"mcugen_elementwise", "mcugen_elementwise_fast", "mcugen_elementwise_fast_dsp",
           "mcugen_elementwise_fast_mve", "mcugen_fast_common"}
_SUFFIX = {DType.INT8: "s8", DType.INT16: "s16", DType.FLOAT32: "f32"}


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
        """A pointer to an input; float constants get their own exact float literals (the rule
        finite_float_constants has refused infinities and NaNs)."""
        if tensor.is_constant and tensor.dtype is DType.FLOAT32:
            assert tensor.data is not None
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


def _loop_fields(loop: BroadcastLoop) -> dict[str, object]:
    return {"extent": loop.extent, "input1_stride": loop.input1_stride,
            "input2_stride": loop.input2_stride}


def _kernel(op: Op, name: str) -> str:
    """The kernel of the op's dtype; the rules binary_dtypes and prelu_dtypes have refused any
    other dtype."""
    dtype = op.inputs[0].dtype  # type: ignore[union-attr]
    assert dtype in _SUFFIX, f"{op.where()}: no {name} kernel for {dtype.short}"
    return f"mcugen_{name}_{_SUFFIX[dtype]}"


def _quantized_params(call: _Call, loop: BroadcastLoop, low: int, high: int) -> str:
    return call.declare("mcugen_elementwise_params", "elementwise_params",
                        {"loop": _loop_fields(loop), "activation": {"min": low, "max": high}})


def _rescale_fields(q: RescaleParams) -> dict[str, object]:
    fields: dict[str, object] = asdict(q)
    del fields["activation_min"], fields["activation_max"]
    return fields


def _float_params(call: _Call, loop: BroadcastLoop, clamp: tuple[float, float] | None) -> str:
    assert clamp is not None
    low, high = clamp
    return call.declare("mcugen_elementwise_f32_params", "elementwise_params",
                        {"loop": _loop_fields(loop), "activation_min": low,
                         "activation_max": high})


def _loop_only(call: _Call, loop: BroadcastLoop) -> str:
    return call.declare("mcugen_broadcast", "broadcast", _loop_fields(loop))




def emit_add_sub(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    name = "add" if op.kind is OpKind.ADD else "sub"
    p = prepare_add_sub(op, setting_of(ctx))
    q = p.quant
    if q is None:
        return call.finish(_kernel(op, name), [_float_params(call, p.loop, p.float_clamp)])
    if isinstance(q, PotParams):
        quant = call.declare("mcugen_pot_quant_params", "pot_quant",
                             {"input1_shift": q.input1_shift, "input2_shift": q.input2_shift})
        return call.finish(f"mcugen_{name}_pot_s16",
                           [_quantized_params(call, p.loop, q.activation_min, q.activation_max), quant])
    quant = call.declare("mcugen_rescale_quant_params", "rescale_quant", _rescale_fields(q))
    return call.finish(_kernel(op, name),
                       [_quantized_params(call, p.loop, q.activation_min, q.activation_max), quant])


def emit_squared_difference(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    p = prepare_squared_difference(op, setting_of(ctx))
    q = p.quant
    if q is None:
        return call.finish(_kernel(op, "squared_difference"), [_loop_only(call, p.loop)])
    quant = call.declare("mcugen_rescale_quant_params", "rescale_quant", _rescale_fields(q))
    return call.finish(_kernel(op, "squared_difference"),
                       [_quantized_params(call, p.loop, q.activation_min, q.activation_max), quant])


def emit_mul(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    p = prepare_mul(op, setting_of(ctx))
    q = p.quant
    if q is None:
        return call.finish(_kernel(op, "mul"), [_float_params(call, p.loop, p.float_clamp)])
    fields: dict[str, object] = asdict(q)
    del fields["activation_min"], fields["activation_max"]
    quant = call.declare("mcugen_mul_quant_params", "mul_quant", fields)
    return call.finish(_kernel(op, "mul"),
                       [_quantized_params(call, p.loop, q.activation_min, q.activation_max), quant])


def emit_maximum_minimum(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    p = prepare_maximum_minimum(op, setting_of(ctx))
    return call.finish(_kernel(op, op.kind.name.lower()), [_loop_only(call, p.loop)])


def emit_prelu(op: Op, ctx: EmitContext) -> KernelCall:
    call = _Call(op, ctx)
    p = prepare_prelu(op, setting_of(ctx))
    q = p.quant
    if q is None:
        return call.finish(_kernel(op, "prelu"), [_loop_only(call, p.loop)])
    fields: dict[str, object] = asdict(q)
    del fields["activation_min"], fields["activation_max"]
    quant = call.declare("mcugen_prelu_quant_params", "prelu_quant", fields)
    return call.finish(_kernel(op, "prelu"),
                       [_quantized_params(call, p.loop, q.activation_min, q.activation_max), quant])
