"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR -> the kernels of mcugen_resize.c.

The per-row and per-column source indices (and bilinear positions or float weights) come from
the family's prepare (prepare.py), the same tables the numpy reference uses; integer tables go to flash
through ctx.constant, float weights are written as exact float32 literals.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...codegen.cnames import c_float
from ...ir import DType, Op, OpKind
from ..base import Setting, setting_of
from ..emitting import EmitContext, KernelCall, c_dims
from .prepare import BilinearAxis, BilinearTables, NearestTables, prepare_bilinear, prepare_nearest

RUNTIME = "mcugen_resize"


def _table(ctx: EmitContext, op: Op, what: str, values: np.ndarray) -> str:
    return ctx.constant(f"resize_{what}_{op.index}", values.astype(np.int32), "int32_t")


def _float_table(op: Op, what: str, values: np.ndarray) -> tuple[str, str]:
    """(name, declaration) of a static const float array holding exactly these float32 values."""
    name = f"resize_{what}_{op.index}"
    body = ", ".join(c_float(float(v)) for v in values)
    return name, f"static const float {name}[{values.size}] = {{ {body} }};"


def _dims(op: Op) -> tuple[list[str], str, str]:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    in_dims, out_dims = f"resize_input_dims_{op.index}", f"resize_output_dims_{op.index}"
    return ([f"static const mcugen_dims {in_dims} = {c_dims(x.shape)};",
             f"static const mcugen_dims {out_dims} = {c_dims(y.shape)};"], in_dims, out_dims)


def emit_resize_nearest(op: Op, ctx: EmitContext) -> KernelCall:
    return _emit_nearest(op, ctx, prepare_nearest(op, setting_of(ctx)))


def _emit_nearest(op: Op, ctx: EmitContext, t: NearestTables) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    rows, cols = _table(ctx, op, "rows", t.rows), _table(ctx, op, "cols", t.cols)
    dims, in_dims, out_dims = _dims(op)
    name = f"resize_params_{op.index}"
    params = (f"static const mcugen_resize_nearest_params {name} = {{ .rows = {rows}, "
              f".cols = {cols}, .element_bytes = {x.dtype.itemsize} }};")
    call = f"mcugen_resize_nearest(&{name}, &{in_dims}, {ctx.ptr(x)}, &{out_dims}, {ctx.ptr(y)})"
    return KernelCall(declarations=[*dims, params], calls=[call], runtime={RUNTIME})


def _int_axis(ctx: EmitContext, op: Op, axis: str, a: BilinearAxis) -> str:
    lower = _table(ctx, op, f"{axis}_lower", a.lower)
    upper = _table(ctx, op, f"{axis}_upper", a.upper)
    position = _table(ctx, op, f"{axis}_position", a.position)
    return f".{axis}_lower = {lower}, .{axis}_upper = {upper}, .{axis}_position = {position}"


def _float_axis(ctx: EmitContext, op: Op, axis: str, a: BilinearAxis) -> tuple[list[str], str]:
    lower = _table(ctx, op, f"{axis}_lower", a.lower)
    upper = _table(ctx, op, f"{axis}_upper", a.upper)
    low_name, low = _float_table(op, f"{axis}_low_weight", a.low_weight)
    high_name, high = _float_table(op, f"{axis}_high_weight", a.high_weight)
    fields = (f".{axis}_lower = {lower}, .{axis}_upper = {upper}, "
              f".{axis}_low_weight = {low_name}, .{axis}_high_weight = {high_name}")
    return [low, high], fields


def emit_resize_bilinear(op: Op, ctx: EmitContext) -> KernelCall:
    return _emit_bilinear(op, ctx, prepare_bilinear(op, setting_of(ctx)))


def _emit_bilinear(op: Op, ctx: EmitContext, t: BilinearTables) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    dims, in_dims, out_dims = _dims(op)
    name = f"resize_params_{op.index}"
    if x.dtype is DType.FLOAT32:
        row_arrays, rows = _float_axis(ctx, op, "row", t.rows)
        col_arrays, cols = _float_axis(ctx, op, "col", t.cols)
        params = f"static const mcugen_resize_bilinear_f32_params {name} = {{ {rows}, {cols} }};"
        declarations = [*dims, *row_arrays, *col_arrays, params]
        function = "mcugen_resize_bilinear_f32"
    else:
        rows, cols = _int_axis(ctx, op, "row", t.rows), _int_axis(ctx, op, "col", t.cols)
        params = f"static const mcugen_resize_bilinear_int_params {name} = {{ {rows}, {cols} }};"
        declarations = [*dims, params]
        function = "mcugen_resize_bilinear_s8"
    return KernelCall(
        declarations=declarations,
        calls=[f"{function}(&{name}, &{in_dims}, {ctx.ptr(x)}, &{out_dims}, {ctx.ptr(y)})"],
        runtime={RUNTIME},
    )


# --- stripes of a tiled chain (memory/tiling.py, codegen/stripes.py) ---------------------------

RowTables = NearestTables | BilinearTables


def stripe_tables(op: Op, out_start: int, out_stop: int, in_start: int, setting: Setting) -> RowTables:
    """`op`'s tables for output rows [out_start, out_stop) of a sub-tensor whose input starts at
    row `in_start`: the whole op's rows, each source row (and integer position) moved up by
    in_start; the columns unchanged. The kernel then reads the same pixels with the same weights."""
    if op.kind is OpKind.RESIZE_NEAREST_NEIGHBOR:
        t = prepare_nearest(op, setting)
        return dataclasses.replace(t, rows=t.rows[out_start:out_stop] - in_start)
    b = prepare_bilinear(op, setting)
    r, part = b.rows, slice(out_start, out_stop)
    integer = op.outputs[0].dtype is not DType.FLOAT32
    rows = BilinearAxis(r.lower[part] - in_start, r.upper[part] - in_start,
                        r.position[part] - (in_start << 10) if integer else r.position[part],
                        r.low_weight[part], r.high_weight[part])
    return dataclasses.replace(b, rows=rows)


def tables_key(t: RowTables) -> bytes:
    """What tells two stripes' tables apart (equal keys: one set of constants, one loop)."""
    arrays = [t.rows, t.cols] if isinstance(t, NearestTables) else [
        getattr(axis, f) for axis in (t.rows, t.cols) for f in ("lower", "upper", "position", "low_weight",
                                                                 "high_weight")]
    return b"|".join(np.ascontiguousarray(a).tobytes() for a in arrays)


def emit_resize_stripe(stand_in: Op, ctx: EmitContext, t: RowTables) -> KernelCall:
    """The call of a resize on one stripe: `stand_in` has the stripe's shapes, `t` its tables."""
    if isinstance(t, NearestTables):
        return _emit_nearest(stand_in, ctx, t)
    return _emit_bilinear(stand_in, ctx, t)
