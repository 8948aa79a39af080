"""CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, SLICE, STRIDED_SLICE, PAD, PADV2, TRANSPOSE,
GATHER -> mcugen_move / mcugen_fill / mcugen_gather (mcugen_movement.c).

Every op becomes one or more byte loop nests computed in mcugen.opparams.movement: one
mcugen_move per input of a concatenation, per output of a split, one for a slice or a
transpose, a fill then a move for a pad. A float32 constant operand is placed in flash as its
raw little-endian bytes (`byte_source`): the generic constant writer prints integers, and a
copy must keep every bit (-0.0, NaN payloads) anyway.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import UnsupportedError
from ..ir import DType, Op, OpKind, Tensor
from ..opparams.movement import (
    Move,
    MoveLoop,
    concat_moves,
    gather_geometry,
    pack_moves,
    pad_moves,
    pad_value,
    required,
    slice_moves,
    slice_plan,
    split_moves,
    strided_slice_plan,
    transpose_moves,
    unpack_moves,
)
from .emit import EmitContext, KernelCall, emitter

RUNTIME = "mcugen_movement"


def byte_source(tensor: Tensor, ctx: EmitContext) -> str:
    """A C expression for the tensor's bytes: arena memory or an integer constant in flash,
    or for a float constant its raw little-endian bytes (the generic constant writer prints
    integers)."""
    if tensor.data is None or tensor.dtype is not DType.FLOAT32:
        return ctx.ptr(tensor)
    raw = np.ascontiguousarray(tensor.data, dtype=tensor.dtype.numpy.newbyteorder("<"))
    return ctx.constant(tensor.name, np.frombuffer(raw.tobytes(), dtype=np.uint8), "uint8_t")


def _initialiser(loop: MoveLoop) -> str:
    def brace(values: tuple[int, ...]) -> str:
        return "{ " + ", ".join(str(v) for v in values) + " }"

    return (f"{{ .extent = {brace(loop.extent)}, .input_stride = {brace(loop.input_stride)}, "
            f".output_stride = {brace(loop.output_stride)}, .input_offset = {loop.input_offset}, "
            f".output_offset = {loop.output_offset}, .run_bytes = {loop.run_bytes} }}")


def emit_moves(op: Op, ctx: EmitContext, moves: list[Move], first: tuple[str, ...] = ()) -> KernelCall:
    """One static const mcugen_move_params and one mcugen_move call per non-empty move, after
    the calls in `first`."""
    call = KernelCall(calls=list(first), runtime={RUNTIME})
    for number, move in enumerate(moves):
        if move.loop.empty:
            continue
        name = f"move_{op.index}_{number}"
        call.declarations.append(f"static const mcugen_move_params {name} = {_initialiser(move.loop)};")
        source = byte_source(required(op, move.source), ctx)
        target = ctx.ptr(op.outputs[move.target])
        call.calls.append(f"mcugen_move(&{name}, {source}, {target})")
    return call


def _checked(op: Op, build: Callable[[Op], list[Move]]) -> list[Move]:
    """The op's moves; a geometry the kernel cannot take (too many loop levels, offsets past
    int32) is reported against the op."""
    try:
        return build(op)
    except UnsupportedError as error:
        if op.where() in str(error):
            raise
        raise UnsupportedError(f"{op.where()}: {error}") from None


@emitter(OpKind.CONCATENATION)
def emit_concatenation(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, _checked(op, concat_moves))


@emitter(OpKind.PACK)
def emit_pack(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, _checked(op, pack_moves))


@emitter(OpKind.UNPACK)
def emit_unpack(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, _checked(op, unpack_moves))


@emitter(OpKind.SPLIT)
@emitter(OpKind.SPLIT_V)
def emit_split(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, _checked(op, split_moves))


@emitter(OpKind.SLICE)
def emit_slice(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, _checked(op, lambda o: slice_moves(o, slice_plan(o))))


@emitter(OpKind.STRIDED_SLICE)
def emit_strided_slice(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, _checked(op, lambda o: slice_moves(o, strided_slice_plan(o, ctx.rounding))))


@emitter(OpKind.TRANSPOSE)
def emit_transpose(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, _checked(op, transpose_moves))


@emitter(OpKind.PAD)
@emitter(OpKind.PADV2)
def emit_pad(op: Op, ctx: EmitContext) -> KernelCall:
    """Fill the whole output with the pad value, then copy the input into its interior."""
    out = op.outputs[0]
    value = pad_value(op, ctx.rounding)
    if value is None:
        fill_from = byte_source(required(op, 2), ctx)
    else:
        fill_from = ctx.constant(f"pad_value_{op.index}", value.astype(value.dtype.newbyteorder("<"))
                                 .view(np.uint8), "uint8_t")
    if out.num_elements == 0:
        return KernelCall()
    fill = f"mcugen_fill({fill_from}, {out.dtype.itemsize}, {out.num_elements}, {ctx.ptr(out)})"
    return emit_moves(op, ctx, _checked(op, pad_moves), first=(fill,))


@emitter(OpKind.GATHER)
def emit_gather(op: Op, ctx: EmitContext) -> KernelCall:
    g = gather_geometry(op)
    params, indices, out = required(op, 0), required(op, 1), op.outputs[0]
    fields = {"batch": g.batch, "outer": g.outer, "coords": g.coords, "axis_size": g.axis_size,
              "row_bytes": g.inner * params.dtype.itemsize, "index_bytes": indices.dtype.itemsize}
    name = f"gather_{op.index}"
    body = ", ".join(f".{k} = {v}" for k, v in fields.items())
    return KernelCall(
        declarations=[f"static const mcugen_gather_params {name} = {{ {body} }};"],
        calls=[(f"mcugen_gather(&{name}, {byte_source(params, ctx)}, {ctx.ptr(indices)}, "
                f"{ctx.ptr(out)})")],
        runtime={RUNTIME},
    )

