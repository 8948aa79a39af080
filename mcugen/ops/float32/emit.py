"""C calls of the float32 weighted and pooling kernels (runtime: mcugen_float)."""

from __future__ import annotations

import dataclasses

from ...codegen.cnames import c_float
from ...ir import Op, OpKind
from ..emitting import EmitContext, KernelCall, c_dims
from .prepare import FloatWindow, float_clamp, prepare_float_fully_connected, prepare_float_window

RUNTIME = {"mcugen_float"}


def _const(ctype: str, name: str, initialiser: str) -> str:
    return f"static const {ctype} {name} = {initialiser};"


def _tile(pair: tuple[int, int]) -> str:
    return f"{{ .w = {pair[1]}, .h = {pair[0]} }}"


def _activation(clamp: tuple[float, float]) -> str:
    return f"{{ .min = {c_float(clamp[0])}, .max = {c_float(clamp[1])} }}"


def _conv_params(op: Op, g: FloatWindow) -> str:
    multiplier = 1
    if op.kind is OpKind.DEPTHWISE_CONV_2D:  # TFLite derives it from the channels
        x, y = op.inputs[0], op.outputs[0]
        assert x is not None
        multiplier = y.shape[3] // x.shape[3]
    return (f"{{ .stride = {_tile(g.stride)}, .padding = {_tile(g.padding)}, "
            f".dilation = {_tile(g.dilation)}, .ch_mult = {multiplier}, "
            f".activation = {_activation(g.clamp)} }}")


_CONV_FUNCTIONS = {
    OpKind.CONV_2D: "mcugen_convolve_f32",
    OpKind.DEPTHWISE_CONV_2D: "mcugen_depthwise_conv_f32",
    OpKind.TRANSPOSE_CONV: "mcugen_transpose_conv_f32",
}


def _stripe(g: FloatWindow, pad_top: int | None) -> FloatWindow:
    """A tiling stripe's geometry: its own top padding (mcugen.tiling), the rest unchanged."""
    return g if pad_top is None else dataclasses.replace(g, padding=(pad_top, g.padding[1]))


def emit_float_convolution(op: Op, ctx: EmitContext, pad_top: int | None = None) -> KernelCall:
    """CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV in float32; pad_top: a stripe's own top
    padding (tiling; not TRANSPOSE_CONV, which is no window op)."""
    g = _stripe(prepare_float_window(op), pad_top)
    transpose = op.kind is OpKind.TRANSPOSE_CONV
    x, w, y = op.inputs[2 if transpose else 0], op.inputs[1], op.outputs[0]
    bias_index = 3 if transpose else 2
    bias = op.inputs[bias_index] if len(op.inputs) > bias_index else None
    assert x is not None and w is not None
    i = op.index
    declarations = [
        _const("mcugen_conv_f32_params", f"fconv_params_{i}", _conv_params(op, g)),
        _const("mcugen_dims", f"fconv_input_dims_{i}", c_dims(x.shape)),
        _const("mcugen_dims", f"fconv_filter_dims_{i}", c_dims(w.shape)),
        _const("mcugen_dims", f"fconv_output_dims_{i}", c_dims(y.shape)),
    ]
    call = (f"{_CONV_FUNCTIONS[op.kind]}(&fconv_params_{i}, &fconv_input_dims_{i}, {ctx.ptr(x)}, "
            f"&fconv_filter_dims_{i}, {ctx.ptr(w)}, {'NULL' if bias is None else ctx.ptr(bias)}, "
            f"&fconv_output_dims_{i}, {ctx.ptr(y)})")
    return KernelCall(declarations=declarations, calls=[call], runtime=set(RUNTIME))


def emit_float_fully_connected(op: Op, ctx: EmitContext) -> KernelCall:
    batches, depth, units = prepare_float_fully_connected(op)
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    assert x is not None and w is not None
    i = op.index
    declarations = [_const("mcugen_float_activation", f"ffc_activation_{i}", _activation(float_clamp(op)))]
    call = (f"mcugen_fully_connected_f32(&ffc_activation_{i}, {batches}, {depth}, {units}, "
            f"{ctx.ptr(x)}, {ctx.ptr(w)}, {'NULL' if bias is None else ctx.ptr(bias)}, {ctx.ptr(y)})")
    return KernelCall(declarations=declarations, calls=[call], runtime=set(RUNTIME))


def emit_float_pool(op: Op, ctx: EmitContext, pad_top: int | None = None) -> KernelCall:
    """AVERAGE_POOL_2D and MAX_POOL_2D in float32; pad_top as for emit_float_convolution."""
    g = _stripe(prepare_float_window(op), pad_top)
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    i = op.index
    params = (f"{{ .stride = {_tile(g.stride)}, .padding = {_tile(g.padding)}, "
              f".filter = {_tile(g.window)}, .activation = {_activation(g.clamp)} }}")
    declarations = [
        _const("mcugen_pool_f32_params", f"fpool_params_{i}", params),
        _const("mcugen_dims", f"fpool_input_dims_{i}", c_dims(x.shape)),
        _const("mcugen_dims", f"fpool_output_dims_{i}", c_dims(y.shape)),
    ]
    function = "mcugen_avgpool_f32" if op.kind is OpKind.AVERAGE_POOL_2D else "mcugen_maxpool_f32"
    call = (f"{function}(&fpool_params_{i}, &fpool_input_dims_{i}, {ctx.ptr(x)}, "
            f"&fpool_output_dims_{i}, {ctx.ptr(y)})")
    return KernelCall(declarations=declarations, calls=[call], runtime=set(RUNTIME))
