"""AVERAGE_POOL_2D and MAX_POOL_2D -> mcugen_avgpool_{s8,s16} / mcugen_maxpool_{s8,s16}
(mcugen_pool.c).

The geometry (padding, clamp) comes from the family's prepare, so the C and the numpy
reference share every build-time value.
"""

from __future__ import annotations

import dataclasses

from ...ir import DType, Op, OpKind
from ..emitting import EmitContext, KernelCall, c_dims
from .prepare import PoolGeometry, pool_geometry


def _params_initialiser(g: PoolGeometry) -> str:
    return (
        f"{{ .stride = {{ .w = {g.stride_w}, .h = {g.stride_h} }}, "
        f".padding = {{ .w = {g.pad_left}, .h = {g.pad_top} }}, "
        f".filter = {{ .w = {g.filter_w}, .h = {g.filter_h} }}, "
        f".activation = {{ .min = {g.activation_min}, .max = {g.activation_max} }} }}"
    )


_SUFFIX = {DType.INT8: "s8", DType.INT16: "s16"}


def _emit_pool(op: Op, ctx: EmitContext, kernel: str, pad_top: int | None = None) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    geometry = pool_geometry(op)
    if pad_top is not None:
        geometry = dataclasses.replace(geometry, pad_top=pad_top)
    assert x is not None
    function = f"{kernel}_{_SUFFIX[x.dtype]}"
    i = op.index
    params, in_dims, out_dims = f"pool_params_{i}", f"pool_input_dims_{i}", f"pool_output_dims_{i}"
    return KernelCall(
        declarations=[
            f"static const mcugen_pool_params {params} = {_params_initialiser(geometry)};",
            f"static const mcugen_dims {in_dims} = {c_dims(x.shape)};",
            f"static const mcugen_dims {out_dims} = {c_dims(y.shape)};",
        ],
        calls=[f"{function}(&{params}, &{in_dims}, {ctx.ptr(x)}, &{out_dims}, {ctx.ptr(y)})"],
        runtime={"mcugen_pool", "mcugen_pool_fast", "mcugen_pool_fast_dsp", "mcugen_pool_fast_mve",
                 "mcugen_fast_common"},
    )


def emit_max_pool_2d(op: Op, ctx: EmitContext) -> KernelCall:
    return _emit_pool(op, ctx, "mcugen_maxpool")


def emit_average_pool_2d(op: Op, ctx: EmitContext) -> KernelCall:
    return _emit_pool(op, ctx, "mcugen_avgpool")


def emit_pool_rows(op: Op, ctx: EmitContext, pad_top: int) -> KernelCall:
    """One stripe's call (mcugen.tiling): `op`'s tensors have the stripe's rows, and pad_top
    replaces the whole tensor's top padding."""
    kernel = "mcugen_maxpool" if op.kind is OpKind.MAX_POOL_2D else "mcugen_avgpool"
    return _emit_pool(op, ctx, kernel, pad_top)
