"""C emitters of CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV (runtime: mcugen_conv,
mcugen_transpose_conv, mcugen_rescale), int8 and int16x8, their scratch per target, and the
declaration helpers the matmul family's emitters share.

Every build-time value comes from the family's prepare step (mcugen.ops.conv.prepare), which
the numpy reference uses too, so that the two paths differ only in the per-element arithmetic:
multipliers and shifts per output channel, the activation clamp, the top/left padding. The
int16x8 kernels take an mcugen_rescale_params (see mcugen.ops.conv.prepare for the three
rescales) and an int64 bias; an int32 bias is widened to int64 here, at build time.

TRANSPOSE_CONV needs no scratch: where TFLM scatters into one accumulator per output element
(RequestScratchBufferInArena), the C kernel gathers each output's taps (mcugen_transpose_conv.c).
"""

from __future__ import annotations

import numpy as np

from ...ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    Op,
    OpKind,
    Tensor,
    TransposeConvOptions,
)
from ...targets import Target
from ..base import setting_of
from ..emitting import EmitContext, KernelCall, c_dims
from .dsp_table import dsp_conv_table, dsp_dw_table, dsp_rq_table, max_product
from .mve_table import mve_dw_table
from .prepare import ConvParams, Rescale, data_input, is_int16, prepare_conv, prepare_transpose_conv

# the fast paths: entry points, one file per instruction set, and their shared helpers
RUNTIME_FAST = {"mcugen_conv_fast", "mcugen_conv_fast_dsp", "mcugen_conv_fast_mve", "mcugen_fast_common"}
RUNTIME_CONV = {"mcugen_conv", "mcugen_rescale"} | RUNTIME_FAST


def helium(target: Target) -> bool:
    """cortex-m55 compiles the MVE paths; cortex-m4/m7 the DSP ones (mcugen_conv_fast.h). The
    one place the weighted ops ask the target."""
    return target.fast_path == "mve"




def round_up4(n: int) -> int:
    return (n + 3) // 4 * 4


# --- scratch ------------------------------------------------------------------------------


def conv_scratch_bytes(op: Op, target: Target) -> int:
    """int8 only, mirrors mcugen_convolve_fast_s8_buffer_size: DSP, five int16 im2col columns
    (four when round_up4(kh * kw * depth) > 256), a 16-byte requantization entry per output
    channel and an int8 staging column ((2 * columns + 1) * round_up4(kh * kw * depth) +
    16 * out_c); MVE, two int8 columns and three int32 sums
    per output channel (2 * round_up4(kh * kw * depth) + 12 * out_c). Without it the C runs
    its portable loops."""
    if is_int16(op) or op.inputs[1] is None:
        return 0
    out_c, kh, kw, depth = op.inputs[1].shape
    taps = round_up4(kh * kw * depth)
    if helium(target):
        return 2 * taps + 12 * out_c
    columns = 5 if taps <= 256 else 4
    return (2 * columns + 1) * taps + 16 * out_c


def depthwise_scratch_bytes(op: Op, target: Target) -> int:
    """int8 only, mirrors mcugen_depthwise_conv_fast_s8_buffer_size: MVE, the bias, multiplier
    and shift of each eight-channel block (96 * ceil(out_c / 8)); DSP, a chunk of `quads`
    four-channel groups (as many as fit 1280 bytes, at least one), each with 16-byte
    requantization entries, starting sums, zero points and int16 weights
    (84 + 8 * kh * kw bytes), and two input offsets per tap. None where the fast path declines
    (channel multiplier > 1; MVE under 8 channels; DSP channels not a multiple of 4)."""
    if is_int16(op) or op.inputs[1] is None:
        return 0
    _, kh, kw, out_c = op.inputs[1].shape
    x = op.inputs[0]
    if x is not None and x.shape[-1] != out_c:
        return 0  # channel multiplier > 1: both fast paths decline
    if helium(target):
        return 96 * ((out_c + 7) // 8) if out_c >= 8 else 0
    if out_c % 4:
        return 0  # the DSP path takes whole four-channel groups only
    per_quad = 84 + 8 * kh * kw
    quads = max(1, min(1280 // per_quad, (out_c + 3) // 4))
    return quads * per_quad + 8 * kh * kw


# --- declarations the weighted ops share ---------------------------------------------------


def const_decl(ctype: str, name: str, initialiser: str) -> str:
    """One block-scope constant: `static const <ctype> <name> = <initialiser>;`."""
    return f"static const {ctype} {name} = {initialiser};"


def c_doubles(values: np.ndarray) -> str:
    """Exact double literals (C99 hexadecimal floating constants)."""
    return ", ".join(float(v).hex() for v in values)


def rescale_decls(ctx: EmitContext, op: Op, name: str, rescale: Rescale) -> list[str]:
    """A static const mcugen_rescale_params `name`: fixed-point arrays in flash, or the
    double scales (exact hexadecimal literals) in a block-scope array."""
    hint = f"op{op.index} {op.kind.name.lower()}"
    fields = [
        f".kind = {rescale.kind.value}",
        f".accumulator_bits = {rescale.accumulator_bits}",
        f".per_channel = {int(rescale.per_channel)}",
    ]
    if rescale.multipliers.size:
        mult = ctx.constant(f"{hint} multipliers", rescale.multipliers.astype(np.int32), "int32_t")
        shift = ctx.constant(f"{hint} shifts", rescale.shifts.astype(np.int32), "int32_t")
        fields += [f".multiplier = {mult}", f".shift = {shift}", ".scale = NULL"]
    else:
        scales = c_doubles(rescale.scales)
        declaration = const_decl("double", f"{name}_scale[{rescale.scales.size}]", f"{{ {scales} }}")
        fields += [".multiplier = NULL", ".shift = NULL", f".scale = {name}_scale"]
        return [declaration, const_decl("mcugen_rescale_params", name, f"{{ {', '.join(fields)} }}")]
    return [const_decl("mcugen_rescale_params", name, f"{{ {', '.join(fields)} }}")]


def quant_decl(ctx: EmitContext, op: Op, name: str, rescale: Rescale) -> str:
    """The int8 kernels' mcugen_per_channel_quant_params of a Q31 rescale (prepare has checked
    its shifts)."""
    # Hints name the op by index: no model-supplied name in these comments.
    hint = f"op{op.index} {op.kind.name.lower()}"
    mult = ctx.constant(f"{hint} multipliers", rescale.multipliers.astype(np.int32), "int32_t")
    shift = ctx.constant(f"{hint} shifts", rescale.shifts.astype(np.int32), "int32_t")
    fields = f"{{ .multiplier = {mult}, .shift = {shift} }}"
    return const_decl("mcugen_per_channel_quant_params", name, fields)


def bias32_args(ctx: EmitContext, bias: Tensor | None, name: str) -> tuple[list[str], str]:
    """(declarations, 'dims pointer, data pointer' call arguments) for an optional bias."""
    if bias is None:
        return [], "NULL, NULL"
    return [const_decl("mcugen_dims", name, c_dims(bias.shape))], f"&{name}, {ctx.ptr(bias)}"


def bias64_args(ctx: EmitContext, op: Op, bias: Tensor | None, name: str) -> tuple[list[str], str]:
    """Like bias32_args for the int16x8 kernels, whose bias is int64: an int32 bias becomes an
    int64 constant (the kernel's rescale says to wrap the sum to int32)."""
    if bias is None:
        return [], "NULL, NULL"
    dims = [const_decl("mcugen_dims", name, c_dims(bias.shape))]
    if bias.dtype is DType.INT64:
        return dims, f"&{name}, {ctx.ptr(bias)}"
    assert bias.data is not None
    wide = ctx.constant(f"op{op.index} bias int64", bias.data.astype(np.int64).reshape(-1),
                        "int64_t")
    return dims, f"&{name}, {wide}"


def context_decl(op: Op, ctx: EmitContext, name: str) -> str:
    scratch, scratch_bytes = ctx.scratch(op)
    return f"const mcugen_context {name} = {{ .buf = {scratch}, .size = {scratch_bytes} }};"


# --- CONV_2D, DEPTHWISE_CONV_2D -------------------------------------------------------------


def _operands(op: Op) -> tuple[Tensor, Tensor, Tensor | None, Tensor]:
    """(input, weights, bias or None, output)."""
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    assert x is not None and w is not None
    return x, w, bias, op.outputs[0]


def _window_fields(op: Op, padding: tuple[int, int], clamp: tuple[int, int],
                   offsets: tuple[int, int]) -> str:
    """The C initialiser fields the conv and depthwise params structs share."""
    o = op.options
    assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions))
    (pad_h, pad_w), (low, high) = padding, clamp
    return (
        f".input_offset = {offsets[0]}, "
        f".output_offset = {offsets[1]}, "
        f".stride = {{ .w = {o.stride_w}, .h = {o.stride_h} }}, "
        f".padding = {{ .w = {pad_w}, .h = {pad_h} }}, "
        f".dilation = {{ .w = {o.dilation_w}, .h = {o.dilation_h} }}, "
        f".activation = {{ .min = {low}, .max = {high} }}"
    )


def _kernel_sums(op: Op, ctx: EmitContext, x: Tensor, w: Tensor, bias: Tensor | None) -> str:
    """mcugen_conv_params.kernel_sums in flash: per output channel, bias + input_offset * sum(w)
    modulo 2^32, which the Helium conv path would otherwise compute on every call (under tiling,
    on every stripe)."""
    assert w.data is not None and x.quant is not None
    sums = w.data.reshape(w.shape[0], -1).astype(np.int64).sum(axis=1) * -x.quant.single_zero_point
    if bias is not None:
        assert bias.data is not None
        sums += bias.data.astype(np.int64).reshape(-1)
    wrapped = (sums + 2**31) % 2**32 - 2**31
    return ctx.constant(f"op{op.index} conv_2d kernel sums", wrapped.astype(np.int32), "int32_t")


def _stripe_rq_table(op: Op, ctx: EmitContext, p: ConvParams, depthwise: bool) -> str:
    """`, .rq_table = ...` for a stripe's call on a DSP target (Cortex-M4/M7) where the DSP
    path runs (conv: one group; depthwise: channel multiplier 1, channels % 4 == 0): the
    requantization table it would rebuild on every stripe (mcugen.ops.conv.dsp_table; the
    depthwise's also holds its starting sums and widened weights), shared by the chain's
    stripes; else "" (and when the plan gives the op no scratch: it runs portable)."""
    x, w, bias, y = _operands(op)
    channels, depth = y.shape[-1], x.shape[-1]
    taps = w.shape[1] * w.shape[2]
    fast = (p.depth_multiplier == 1 and channels % 4 == 0) if depthwise else w.shape[3] == depth
    if ctx.target.fast_path != "dsp" or p.int16 or not fast or (bias is not None and bias.data is None):
        return ""
    if ctx.scratch(op)[1] == 0:  # the plan runs its portable C (memory/kernel_variants.py)
        return ""
    max_sum = (taps if depthwise else taps * w.shape[3]) * max_product(p.input_offset)
    table = dsp_rq_table(None if bias is None else bias.data, p.rescale.multipliers,
                         p.rescale.shifts, channels, p.output_offset, max_sum)
    if depthwise:  # and the starting sums and widened weights (dsp_dw_table)
        if w.data is None:
            return ""
        table = dsp_dw_table(table, w.data, p.input_offset)
    else:  # and whether every channel is fast
        table = dsp_conv_table(table)
    name = ctx.constant(f"op{op.index} dsp requantization", table.reshape(-1), "int32_t")
    return f", .rq_table = {name}"


def _stripe_mve_table(op: Op, ctx: EmitContext, p: ConvParams) -> str:
    """`, .mve_table = ...` for a depthwise stripe's call on Helium (Cortex-M55) where the
    Helium path runs (int8, channel multiplier 1, channels >= 8): the constants of its
    eight-channel blocks, which it would rebuild on every stripe (mcugen.ops.conv.mve_table),
    shared by the chain's stripes; else ""."""
    _, _, bias, y = _operands(op)
    channels = y.shape[-1]
    if (not helium(ctx.target) or p.int16 or p.depth_multiplier != 1 or channels < 8
            or (bias is not None and bias.data is None)):
        return ""
    table = mve_dw_table(None if bias is None else bias.data, p.rescale.multipliers,
                         p.rescale.shifts, channels)
    return f", .mve_table = {ctx.constant(f'op{op.index} mve dw table', table, 'int32_t')}"


def _convolution(op: Op, ctx: EmitContext, depthwise: bool, pad_top: int | None = None) -> KernelCall:
    """pad_top: a stripe's own top padding (see mcugen.tiling), else the whole tensor's."""
    p = prepare_conv(op, setting_of(ctx))
    x, w, bias, y = _operands(op)
    i = op.index
    stem = "dw" if depthwise else "conv"
    padding = p.padding if pad_top is None else (pad_top, p.padding[1])
    fields = _window_fields(op, padding, p.clamp, (p.input_offset, p.output_offset))
    if pad_top is not None:  # a stripe of a tiled chain
        fields += _stripe_rq_table(op, ctx, p, depthwise)
        if depthwise:
            fields += _stripe_mve_table(op, ctx, p)
    if depthwise:
        params = const_decl(
            "mcugen_dw_conv_params",
            f"{stem}_params_{i}",
            f"{{ {fields}, .ch_mult = {p.depth_multiplier} }}",
        )
    else:
        if helium(ctx.target) and not p.int16:
            fields += f", .kernel_sums = {_kernel_sums(op, ctx, x, w, bias)}"
        params = const_decl("mcugen_conv_params", f"{stem}_params_{i}", f"{{ {fields} }}")
    if p.int16:
        quant = rescale_decls(ctx, op, f"{stem}_quant_{i}", p.rescale)
        bias_decls, bias_args = bias64_args(ctx, op, bias, f"{stem}_bias_dims_{i}")
    else:
        quant = [quant_decl(ctx, op, f"{stem}_quant_{i}", p.rescale)]
        bias_decls, bias_args = bias32_args(ctx, bias, f"{stem}_bias_dims_{i}")
    declarations = [
        params,
        *quant,
        const_decl("mcugen_dims", f"{stem}_input_dims_{i}", c_dims(x.shape)),
        const_decl("mcugen_dims", f"{stem}_filter_dims_{i}", c_dims(w.shape)),
        *bias_decls,
        const_decl("mcugen_dims", f"{stem}_output_dims_{i}", c_dims(y.shape)),
        context_decl(op, ctx, f"{stem}_ctx_{i}"),
    ]
    function = "mcugen_depthwise_conv_s" if depthwise else "mcugen_convolve_s"
    function += "16" if p.int16 else "8"
    call = (
        f"{function}(&{stem}_ctx_{i}, &{stem}_params_{i}, &{stem}_quant_{i}, "
        f"&{stem}_input_dims_{i}, {ctx.ptr(x)}, &{stem}_filter_dims_{i}, {ctx.ptr(w)}, "
        f"{bias_args}, &{stem}_output_dims_{i}, {ctx.ptr(y)})"
    )
    return KernelCall(declarations=declarations, calls=[call], runtime=set(RUNTIME_CONV))


def emit_conv_2d(op: Op, ctx: EmitContext) -> KernelCall:
    return _convolution(op, ctx, depthwise=False)


def emit_depthwise_conv_2d(op: Op, ctx: EmitContext) -> KernelCall:
    return _convolution(op, ctx, depthwise=True)


def emit_convolution_rows(op: Op, ctx: EmitContext, pad_top: int) -> KernelCall:
    """One stripe's call (mcugen.tiling): `op`'s tensors have the stripe's rows, and pad_top
    replaces the whole tensor's top padding."""
    return _convolution(op, ctx, op.kind is OpKind.DEPTHWISE_CONV_2D, pad_top)


# --- TRANSPOSE_CONV -------------------------------------------------------------------------


def emit_transpose_conv(op: Op, ctx: EmitContext) -> KernelCall:
    p = prepare_transpose_conv(op, setting_of(ctx))
    o = op.options
    assert isinstance(o, TransposeConvOptions)
    x, w, y = data_input(op), op.inputs[1], op.outputs[0]
    bias = op.inputs[3] if len(op.inputs) > 3 else None
    assert w is not None
    (pad_h, pad_w), (low, high) = p.padding, p.clamp
    i = op.index
    params = const_decl(
        "mcugen_transpose_conv_params",
        f"tconv_params_{i}",
        f"{{ .input_offset = {p.input_offset}, "
        f".output_offset = {p.output_offset}, "
        f".stride = {{ .w = {o.stride_w}, .h = {o.stride_h} }}, "
        f".padding = {{ .w = {pad_w}, .h = {pad_h} }}, "
        f".activation = {{ .min = {low}, .max = {high} }} }}",
    )
    if p.int16:
        bias_decls, bias_args = bias64_args(ctx, op, bias, f"tconv_bias_dims_{i}")
    else:
        bias_decls, bias_args = bias32_args(ctx, bias, f"tconv_bias_dims_{i}")
    declarations = [
        params,
        *rescale_decls(ctx, op, f"tconv_quant_{i}", p.rescale),
        const_decl("mcugen_dims", f"tconv_input_dims_{i}", c_dims(x.shape)),
        const_decl("mcugen_dims", f"tconv_filter_dims_{i}", c_dims(w.shape)),
        *bias_decls,
        const_decl("mcugen_dims", f"tconv_output_dims_{i}", c_dims(y.shape)),
        context_decl(op, ctx, f"tconv_ctx_{i}"),
    ]
    call = (
        f"mcugen_transpose_conv_s{16 if p.int16 else 8}(&tconv_ctx_{i}, &tconv_params_{i}, "
        f"&tconv_quant_{i}, &tconv_input_dims_{i}, {ctx.ptr(x)}, &tconv_filter_dims_{i}, "
        f"{ctx.ptr(w)}, {bias_args}, &tconv_output_dims_{i}, {ctx.ptr(y)})"
    )
    return KernelCall(declarations=declarations, calls=[call],
                      runtime={"mcugen_transpose_conv", "mcugen_rescale"})
