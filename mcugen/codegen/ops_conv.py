"""Emitters for CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (runtime: mcugen_conv,
mcugen_fully_connected, mcugen_rescale), int8 and int16x8.

Every build-time value is computed here, with the same functions the numpy reference uses
(mcugen.opparams), so that the two paths differ only in the
per-element arithmetic: multipliers and shifts per output channel, the activation clamp, the
top/left padding, and for LiteRT's FULLY_CONNECTED the double-precision rescale factors.
The int16x8 kernels take an mcugen_rescale_params (see mcugen.opparams.conv for the three
rescales) and an int64 bias; an int32 bias is widened to int64 here, at build time.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Conv2DOptions, DepthwiseConv2DOptions, DType, Op, OpKind, Tensor
from ..opparams import (
    check_int8_operands,
    conv_multipliers,
    conv_padding,
    fc_multipliers,
    fc_real_scales,
    filter_offset,
    output_clamp,
)
from ..opparams.conv import Rescale, check_weighted_operands, conv_rescale, fc_rescale
from ..quantization import Rounding
from .emit import EmitContext, KernelCall, c_dims, emitter, fast_path_scratch

SHIFT_RANGE = (-31, 30)  # TFLite's QuantizeMultiplier range, which the C kernels check


# the fast paths: entry points, one file per instruction set, and their shared helpers
RUNTIME_FAST = {"mcugen_conv_fast", "mcugen_conv_fast_dsp", "mcugen_conv_fast_mve", "mcugen_fast_common"}
RUNTIME_CONV = {"mcugen_conv", "mcugen_rescale"} | RUNTIME_FAST
RUNTIME_FC = {"mcugen_fully_connected", "mcugen_rescale"} | RUNTIME_FAST


def _round_up4(n: int) -> int:
    return (n + 3) // 4 * 4


def _helium(target: str) -> bool:
    """cortex-m55 compiles the MVE paths; cortex-m4/m7 the DSP ones (mcugen_conv_fast.h)."""
    return target == "cortex-m55"


@fast_path_scratch(OpKind.CONV_2D)
def conv_scratch_bytes(op: Op, target: str) -> int:
    """int8 only, mirrors mcugen_convolve_fast_s8_buffer_size: DSP, five int16 im2col columns
    (four when round_up4(kh * kw * depth) > 256), a 16-byte requantization entry per output
    channel and an int8 staging column ((2 * columns + 1) * round_up4(kh * kw * depth) +
    16 * out_c); MVE, two int8 columns and three int32 sums
    per output channel (2 * round_up4(kh * kw * depth) + 12 * out_c). Without it the C runs
    its portable loops."""
    if is_int16(op) or op.inputs[1] is None:
        return 0
    out_c, kh, kw, depth = op.inputs[1].shape
    taps = _round_up4(kh * kw * depth)
    if _helium(target):
        return 2 * taps + 12 * out_c
    columns = 5 if taps <= 256 else 4
    return (2 * columns + 1) * taps + 16 * out_c


@fast_path_scratch(OpKind.DEPTHWISE_CONV_2D)
def depthwise_scratch_bytes(op: Op, target: str) -> int:
    """int8 only, mirrors mcugen_depthwise_conv_fast_s8_buffer_size: MVE, the bias, multiplier
    and shift of each eight-channel block (96 * ceil(out_c / 8)); DSP, a chunk of `quads`
    four-channel groups (as many as fit 1280 bytes, at least one), each with 16-byte
    requantization entries, starting sums, zero points and int16 weights
    (84 + 8 * kh * kw bytes), and two input offsets per tap."""
    if is_int16(op) or op.inputs[1] is None:
        return 0
    _, kh, kw, out_c = op.inputs[1].shape
    if _helium(target):
        return 96 * ((out_c + 7) // 8)
    per_quad = 84 + 8 * kh * kw
    quads = max(1, min(1280 // per_quad, (out_c + 3) // 4))
    return quads * per_quad + 8 * kh * kw


@fast_path_scratch(OpKind.FULLY_CONNECTED)
def fc_scratch_bytes(op: Op, target: str) -> int:
    """int8 only, mirrors mcugen_fully_connected_fast_s8_buffer_size: DSP, the input row as int16
    (2 * round_up4(accum_depth)); the MVE path needs none."""
    if is_int16(op) or op.inputs[1] is None or len(op.inputs[1].shape) != 2 or _helium(target):
        return 0
    return 2 * _round_up4(op.inputs[1].shape[1])


def is_int16(op: Op) -> bool:
    """int16x8 (checked: int8 weights, int32/int64 bias, zero points 0) or int8."""
    return check_weighted_operands(op) is DType.INT16


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
        scales = _c_doubles(rescale.scales)
        declaration = const_decl("double", f"{name}_scale[{rescale.scales.size}]", f"{{ {scales} }}")
        fields += [".multiplier = NULL", ".shift = NULL", f".scale = {name}_scale"]
        return [declaration, const_decl("mcugen_rescale_params", name, f"{{ {', '.join(fields)} }}")]
    return [const_decl("mcugen_rescale_params", name, f"{{ {', '.join(fields)} }}")]


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


def _operands(op: Op) -> tuple[Tensor, Tensor, Tensor | None, Tensor]:
    """(input, weights, bias or None, output), with the quantization the kernels need."""
    if not is_int16(op):
        check_int8_operands(op)
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    assert x is not None and w is not None
    for tensor in (x, w, y):
        if tensor.quant is None:
            raise UnsupportedError(f"{op.where()}: tensor '{tensor.name}' is not quantized")
    for tensor in (x, y):
        zero_point = tensor.quant.single_zero_point  # type: ignore[union-attr]
        if tensor.dtype is DType.INT8 and not -128 <= zero_point <= 127:
            raise UnsupportedError(
                f"{op.where()}: int8 tensor '{tensor.name}' has zero point {zero_point}, "
                "outside [-128, 127]"
            )
    return x, w, bias, y


def _check_shifts(op: Op, shifts: np.ndarray) -> None:
    low, high = SHIFT_RANGE
    if shifts.size and (shifts.min() < low or shifts.max() > high):
        raise UnsupportedError(
            f"{op.where()}: rescale factor input_scale * weight_scale / output_scale needs a "
            f"shift in [{low}, {high}], got {int(shifts.min())}..{int(shifts.max())}"
        )


def const_decl(ctype: str, name: str, initialiser: str) -> str:
    """One block-scope constant: `static const <ctype> <name> = <initialiser>;`."""
    return f"static const {ctype} {name} = {initialiser};"


def _flat_dims(n: int, c: int) -> str:
    return f"{{ .n = {n}, .h = 1, .w = 1, .c = {c} }}"


def context_decl(op: Op, ctx: EmitContext, name: str) -> str:
    scratch, scratch_bytes = ctx.scratch(op)
    return f"const mcugen_context {name} = {{ .buf = {scratch}, .size = {scratch_bytes} }};"


def bias32_args(ctx: EmitContext, bias: Tensor | None, name: str) -> tuple[list[str], str]:
    """(declarations, 'dims pointer, data pointer' call arguments) for an optional bias."""
    if bias is None:
        return [], "NULL, NULL"
    return [const_decl("mcugen_dims", name, c_dims(bias.shape))], f"&{name}, {ctx.ptr(bias)}"


def _quant_decl(
    ctx: EmitContext, op: Op, name: str, multipliers: np.ndarray, shifts: np.ndarray
) -> str:
    _check_shifts(op, shifts)
    # Hints name the op by index: no model-supplied name in these comments.
    hint = f"op{op.index} {op.kind.name.lower()}"
    mult = ctx.constant(f"{hint} multipliers", multipliers.astype(np.int32), "int32_t")
    shift = ctx.constant(f"{hint} shifts", shifts.astype(np.int32), "int32_t")
    fields = f"{{ .multiplier = {mult}, .shift = {shift} }}"
    return const_decl("mcugen_per_channel_quant_params", name, fields)


def _window_fields(op: Op, x: Tensor, w_hw: tuple[int, int], y: Tensor, ctx: EmitContext,
                   pad_top: int | None = None) -> str:
    """The C initialiser fields the conv and depthwise params structs share (pad_top: a stripe's
    own top padding, see mcugen.tiling)."""
    o = op.options
    assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions))
    pad_h = conv_padding(o.padding, x.shape[1], w_hw[0], o.stride_h, o.dilation_h, y.shape[1])
    pad_h = pad_h if pad_top is None else pad_top
    pad_w = conv_padding(o.padding, x.shape[2], w_hw[1], o.stride_w, o.dilation_w, y.shape[2])
    assert x.quant is not None and y.quant is not None
    low, high = output_clamp(op)
    return (
        f".input_offset = {-x.quant.single_zero_point}, "
        f".output_offset = {y.quant.single_zero_point}, "
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


def _convolution(op: Op, ctx: EmitContext, depthwise: bool, pad_top: int | None = None) -> KernelCall:
    x, w, bias, y = _operands(op)
    i = op.index
    stem = "dw" if depthwise else "conv"
    fields = _window_fields(op, x, (w.shape[1], w.shape[2]), y, ctx, pad_top)
    if depthwise:
        if w.shape[3] % x.shape[3] != 0:
            raise UnsupportedError(
                f"{op.where()}: {w.shape[3]} output channels are not a multiple of "
                f"{x.shape[3]} input channels"
            )
        multiplier = w.shape[3] // x.shape[3]
        params = const_decl(
            "mcugen_dw_conv_params",
            f"{stem}_params_{i}",
            f"{{ {fields}, .ch_mult = {multiplier} }}",
        )
    else:
        if _helium(ctx.target) and not is_int16(op):
            fields += f", .kernel_sums = {_kernel_sums(op, ctx, x, w, bias)}"
        params = const_decl("mcugen_conv_params", f"{stem}_params_{i}", f"{{ {fields} }}")
    wide = is_int16(op)
    if wide:
        quant = rescale_decls(ctx, op, f"{stem}_quant_{i}", conv_rescale(op, ctx.rounding))
        bias_decls, bias_args = bias64_args(ctx, op, bias, f"{stem}_bias_dims_{i}")
    else:
        multipliers, shifts = conv_multipliers(op)
        quant = [_quant_decl(ctx, op, f"{stem}_quant_{i}", multipliers, shifts)]
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
    function += "16" if wide else "8"
    call = (
        f"{function}(&{stem}_ctx_{i}, &{stem}_params_{i}, &{stem}_quant_{i}, "
        f"&{stem}_input_dims_{i}, {ctx.ptr(x)}, &{stem}_filter_dims_{i}, {ctx.ptr(w)}, "
        f"{bias_args}, &{stem}_output_dims_{i}, {ctx.ptr(y)})"
    )
    return KernelCall(declarations=declarations, calls=[call], runtime=set(RUNTIME_CONV))


@emitter(OpKind.CONV_2D)
def emit_conv_2d(op: Op, ctx: EmitContext) -> KernelCall:
    return _convolution(op, ctx, depthwise=False)


@emitter(OpKind.DEPTHWISE_CONV_2D)
def emit_depthwise_conv_2d(op: Op, ctx: EmitContext) -> KernelCall:
    return _convolution(op, ctx, depthwise=True)


def emit_convolution_rows(op: Op, ctx: EmitContext, pad_top: int) -> KernelCall:
    """One stripe's call (mcugen.tiling): `op`'s tensors have the stripe's rows, and pad_top
    replaces the whole tensor's top padding."""
    return _convolution(op, ctx, op.kind is OpKind.DEPTHWISE_CONV_2D, pad_top)


def _c_doubles(values: np.ndarray) -> str:
    """Exact double literals (C99 hexadecimal floating constants)."""
    return ", ".join(float(v).hex() for v in values)


@emitter(OpKind.FULLY_CONNECTED)
def emit_fully_connected(op: Op, ctx: EmitContext) -> KernelCall:
    x, w, bias, y = _operands(op)
    i = op.index
    if len(w.shape) != 2 or x.num_elements % w.shape[1] != 0:
        raise UnsupportedError(
            f"{op.where()}: input of {x.num_elements} elements does not flatten onto weights "
            f"{list(w.shape)}"
        )
    units, depth = w.shape
    batch = x.num_elements // depth
    if y.num_elements != batch * units:
        raise UnsupportedError(
            f"{op.where()}: output has {y.num_elements} elements, expected {batch} x {units}"
        )
    offset = filter_offset(w)
    if not -127 <= offset <= 128:
        raise UnsupportedError(f"{op.where()}: weight zero point {-offset} is outside [-128, 127]")
    assert y.quant is not None and x.quant is not None and w.quant is not None
    low, high = output_clamp(op)
    declarations: list[str] = []
    wide = is_int16(op)
    if wide:
        declarations += rescale_decls(ctx, op, f"fc_quant_{i}", fc_rescale(op, ctx.rounding))
        function, real_scale, quant_arg = "mcugen_fully_connected_s16", "NULL", f"&fc_quant_{i}, "
    elif ctx.rounding is Rounding.LITERT:
        # LiteRT's reference FC rescales in double (see fc_real_scales in mcugen.opparams).
        scales = fc_real_scales(op)
        declarations.append(
            const_decl("double", f"fc_scale_{i}[{scales.size}]", f"{{ {_c_doubles(scales)} }}")
        )
        # its own entry point, without quant, so that TFLM-mode firmware links no double code
        function, real_scale, quant_arg = "mcugen_fully_connected_s8_real_scale", f"fc_scale_{i}", ""
    else:
        multipliers, shifts = fc_multipliers(op)
        declarations.append(_quant_decl(ctx, op, f"fc_quant_{i}", multipliers, shifts))
        function, real_scale, quant_arg = "mcugen_fully_connected_s8", "NULL", f"&fc_quant_{i}, "
    params = (
        f"static const mcugen_fc_params fc_params_{i} = {{ "
        f".input_offset = {-x.quant.single_zero_point}, .filter_offset = {offset}, "
        f".output_offset = {y.quant.single_zero_point}, "
        f".activation = {{ .min = {low}, .max = {high} }}, "
        f".per_channel = {int(w.quant.per_channel)}, .real_scale = {real_scale} }};"
    )
    if wide:
        bias_decls, bias_args = bias64_args(ctx, op, bias, f"fc_bias_dims_{i}")
    else:
        bias_decls, bias_args = bias32_args(ctx, bias, f"fc_bias_dims_{i}")
    declarations += [
        params,
        const_decl("mcugen_dims", f"fc_input_dims_{i}", _flat_dims(batch, depth)),
        # CMSIS-NN's convention: filter dims n = accumulation depth, c = output units.
        const_decl("mcugen_dims", f"fc_filter_dims_{i}", _flat_dims(depth, units)),
        *bias_decls,
        const_decl("mcugen_dims", f"fc_output_dims_{i}", _flat_dims(batch, units)),
        context_decl(op, ctx, f"fc_ctx_{i}"),
    ]
    call = (
        f"{function}(&fc_ctx_{i}, &fc_params_{i}, {quant_arg}"
        f"&fc_input_dims_{i}, {ctx.ptr(x)}, &fc_filter_dims_{i}, {ctx.ptr(w)}, {bias_args}, "
        f"&fc_output_dims_{i}, {ctx.ptr(y)})"
    )
    return KernelCall(declarations=declarations, calls=[call], runtime=set(RUNTIME_FC))
