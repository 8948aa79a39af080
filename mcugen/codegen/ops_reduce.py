"""MEAN -> mcugen_mean_s8 (mcugen_reduce.c).

The axes are resolved here into two loop nests over the input: the kept dimensions (in
output order, so outputs are written in sequence) and the reduced ones. Dimensions of extent 1
are dropped and neighbours that are contiguous in the input merge, so the usual NHWC mean over
H and W becomes one outer loop over channels and one inner loop of H * W taps. Each output's
sum stays in a register: the kernel needs no scratch buffer (no @scratch_size).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UnsupportedError
from ..ir import Op, OpKind
from ..opparams import mean_params
from .emit import EmitContext, KernelCall, emitter

MAX_LOOPS = 4  # MCUGEN_REDUCE_MAX_LOOPS in mcugen_reduce.h


def _contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides, step = [0] * len(shape), 1
    for axis in reversed(range(len(shape))):
        strides[axis] = step
        step *= shape[axis]
    return strides


def loop_nest(shape: Sequence[int], axes: Sequence[int]) -> list[tuple[int, int]]:
    """(extent, input stride) levels, outermost first, over the given axes of `shape`."""
    strides = _contiguous_strides(shape)
    levels: list[tuple[int, int]] = []
    for axis in axes:
        extent, stride = shape[axis], strides[axis]
        if extent == 1:
            continue
        if levels and levels[-1][1] == stride * extent:
            levels[-1] = (levels[-1][0] * extent, stride)  # contiguous with the level above
        else:
            levels.append((extent, stride))
    return levels


def _nest_initialiser(levels: list[tuple[int, int]], what: str, op: Op) -> str:
    """An mcugen_loop_nest initialiser, padded with unit levels on the outside."""
    if len(levels) > MAX_LOOPS:
        raise UnsupportedError(f"{op.where()}: the {what} dimensions need {len(levels)} loop "
                               f"levels (at most {MAX_LOOPS})")
    padded = [(1, 0)] * (MAX_LOOPS - len(levels)) + levels
    extents = ", ".join(str(n) for n, _ in padded)
    strides = ", ".join(str(s) for _, s in padded)
    return f"{{ .extent = {{ {extents} }}, .stride = {{ {strides} }} }}"


@emitter(OpKind.MEAN)
def emit_mean(op: Op, ctx: EmitContext) -> KernelCall:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    p = mean_params(op)
    kept = [axis for axis in range(len(x.shape)) if axis not in p.axes]
    outer = _nest_initialiser(loop_nest(x.shape, kept), "kept", op)
    inner = _nest_initialiser(loop_nest(x.shape, p.axes), "reduced", op)
    quant = (f"{{ .sum_offset = {-p.input_zero_point * p.count}, .multiplier = {p.multiplier}, "
             f".shift = {p.shift}, .output_offset = {p.output_zero_point} }}")
    params_name, quant_name = f"mean_params_{op.index}", f"mean_quant_{op.index}"
    return KernelCall(
        declarations=[
            f"static const mcugen_mean_params {params_name} = {{ .outer = {outer}, .inner = {inner} }};",
            f"static const mcugen_mean_quant_params {quant_name} = {quant};",
        ],
        calls=[f"mcugen_mean_s8(&{params_name}, &{quant_name}, {ctx.ptr(x)}, {ctx.ptr(y)})"],
        runtime={"mcugen_reduce"},
    )
