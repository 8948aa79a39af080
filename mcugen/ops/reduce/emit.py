"""MEAN, SUM, REDUCE_MAX and ARG_MAX -> the kernels of mcugen_reduce.c.

The axes are resolved at build time (prepare.py) into two loop nests over the
input: the kept dimensions (in output order, so outputs are written in sequence) and the
reduced ones. The usual NHWC mean over H and W becomes one outer loop over channels and one
inner loop of H * W taps. Each output's accumulator stays in a register: the kernels need no
scratch buffer. Which kernel, and the two mode-dependent details (LiteRT's first-element seed
for all-axes SUM/MAX, LiteRT's NaN-aware ARG_MAX), follow reference.py, whose docstring
records why.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ir import DType, Op, OpKind
from ..emitting import EmitContext, KernelCall
from .prepare import (
    MAX_LOOPS,
    ReduceGeometry,
    arg_max_geometry,
    arg_max_skips_nan,
    quant_reduce_params,
    reduce_geometry,
    seeds_with_first,
)

_SUFFIX = {DType.INT8: "s8", DType.INT16: "s16", DType.FLOAT32: "f32"}


def _nest_initialiser(levels: Sequence[tuple[int, int]]) -> str:
    """An mcugen_loop_nest initialiser, padded with unit levels on the outside."""
    padded = [(1, 0)] * (MAX_LOOPS - len(levels)) + list(levels)
    extents = ", ".join(str(n) for n, _ in padded)
    strides = ", ".join(str(s) for _, s in padded)
    return f"{{ .extent = {{ {extents} }}, .stride = {{ {strides} }} }}"


def _params(op: Op, g: ReduceGeometry, seed_with_first: bool) -> tuple[str, str]:
    name = f"reduce_params_{op.index}"
    return name, (f"static const mcugen_reduce_params {name} = {{ .outer = "
                  f"{_nest_initialiser(g.outer)}, .inner = {_nest_initialiser(g.inner)}, "
                  f".seed_with_first = {int(seed_with_first)} }};")


def emit_sum_or_mean(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    if x.dtype is DType.FLOAT32:
        name, declaration = _params(op, reduce_geometry(op), seeds_with_first(op, ctx.rounding))
        mean = int(op.kind is OpKind.MEAN)
        call = f"mcugen_reduce_sum_f32(&{name}, {mean}, {ctx.ptr(x)}, {ctx.ptr(y)})"
        return KernelCall(declarations=[declaration], calls=[call], runtime={"mcugen_reduce"})
    p = quant_reduce_params(op)
    name, declaration = _params(op, p.geometry, False)
    quant_name = f"reduce_quant_{op.index}"
    quant = (f"{{ .sum_offset = {-p.input_zero_point * p.geometry.count}, "
             f".multiplier = {p.multiplier}, .shift = {p.shift}, "
             f".output_offset = {p.output_zero_point}, .output_min = {p.output_min}, "
             f".output_max = {p.output_max} }}")
    function = f"mcugen_reduce_sum_requant_{_SUFFIX[x.dtype]}"
    return KernelCall(
        declarations=[declaration,
                      f"static const mcugen_reduce_quant_params {quant_name} = {quant};"],
        calls=[f"{function}(&{name}, &{quant_name}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime={"mcugen_reduce"},
    )


def emit_reduce_max(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    name, declaration = _params(op, reduce_geometry(op), seeds_with_first(op, ctx.rounding))
    function = f"mcugen_reduce_max_{_SUFFIX[x.dtype]}"
    return KernelCall(declarations=[declaration],
                      calls=[f"{function}(&{name}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
                      runtime={"mcugen_reduce"})


def emit_arg_max(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    g = arg_max_geometry(op)
    nan_aware = int(arg_max_skips_nan(op, ctx.rounding))
    name = f"arg_max_params_{op.index}"
    declaration = (f"static const mcugen_arg_max_params {name} = {{ .outer = {g.outer}, "
                   f".axis_size = {g.axis_size}, .inner = {g.inner}, .nan_aware = {nan_aware} }};")
    return KernelCall(
        declarations=[declaration],
        calls=[f"mcugen_arg_max_{_SUFFIX[x.dtype]}(&{name}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime={"mcugen_reduce"},
    )
