"""CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, SLICE, STRIDED_SLICE, PAD, PADV2, TRANSPOSE,
DEPTH_TO_SPACE, SPACE_TO_DEPTH, GATHER -> mcugen_move / mcugen_fill / mcugen_gather (mcugen_movement.c).

Every op becomes one or more byte loop nests computed by the family's prepare (prepare.py,
strided_slice.py): one mcugen_move per input of a concatenation, per output of a split, one for
a slice or a transpose, a fill then a move for a pad. A float32 constant operand is placed in flash as
its raw little-endian bytes (`byte_source`): the generic constant writer prints integers, and a
copy must keep every bit (-0.0, NaN payloads) anyway.
"""

from __future__ import annotations

import numpy as np

from ...ir import DType, Op, Tensor
from ..base import setting_of
from ..emitting import EmitContext, KernelCall
from .depth_space import prepare_densify, prepare_depth_space
from .prepare import (
    Move,
    MoveLoop,
    prepare_concatenation,
    prepare_gather,
    prepare_pack,
    prepare_pad,
    prepare_slice,
    prepare_split,
    prepare_transpose,
    prepare_unpack,
    required,
)
from .strided_slice import prepare_strided_slice

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




def emit_concatenation(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, prepare_concatenation(op, setting_of(ctx)))


def emit_pack(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, prepare_pack(op, setting_of(ctx)))


def emit_unpack(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, prepare_unpack(op, setting_of(ctx)))


def emit_split(op: Op, ctx: EmitContext) -> KernelCall:
    """SPLIT and SPLIT_V."""
    return emit_moves(op, ctx, prepare_split(op, setting_of(ctx)))


def emit_slice(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, prepare_slice(op, setting_of(ctx)))


def emit_strided_slice(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, prepare_strided_slice(op, setting_of(ctx)))


def emit_transpose(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, prepare_transpose(op, setting_of(ctx)))


def emit_depth_space(op: Op, ctx: EmitContext) -> KernelCall:
    """DEPTH_TO_SPACE and SPACE_TO_DEPTH."""
    return emit_moves(op, ctx, prepare_depth_space(op, setting_of(ctx)))


def emit_densify(op: Op, ctx: EmitContext) -> KernelCall:
    return emit_moves(op, ctx, prepare_densify(op, setting_of(ctx)))


def emit_pad(op: Op, ctx: EmitContext) -> KernelCall:
    """PAD and PADV2: fill the whole output with the pad value, then copy the input into its
    interior."""
    out = op.outputs[0]
    params = prepare_pad(op, setting_of(ctx))
    value = params.value
    if value is None:
        fill_from = byte_source(required(op, 2), ctx)
    else:
        fill_from = ctx.constant(f"pad_value_{op.index}", value.astype(value.dtype.newbyteorder("<"))
                                 .view(np.uint8), "uint8_t")
    if out.num_elements == 0:
        return KernelCall()
    fill = f"mcugen_fill({fill_from}, {out.dtype.itemsize}, {out.num_elements}, {ctx.ptr(out)})"
    return emit_moves(op, ctx, params.moves, first=(fill,))


def emit_gather(op: Op, ctx: EmitContext) -> KernelCall:
    g = prepare_gather(op, setting_of(ctx))
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

