"""Emitter for TRANSPOSE_CONV, int8 and int16x8 (runtime: mcugen_transpose_conv,
mcugen_rescale).

The kernel scatters into a scratch buffer of one accumulator per output element (int32 for
int8, int64 for int16), which the planner reserves in the arena through @scratch_size, as TFLM
requests it with RequestScratchBufferInArena. Padding, rescale and clamp are computed here
with the functions the numpy reference uses.
"""

from __future__ import annotations

from ..ir import DType, Op, OpKind, TransposeConvOptions
from ..opparams.conv import conv_rescale, data_input, transpose_conv_padding
from ..ops.common import output_clamp
from .emit import EmitContext, KernelCall, c_dims, emitter, scratch_size
from .ops_conv import bias32_args, bias64_args, const_decl, context_decl, rescale_decls


@scratch_size(OpKind.TRANSPOSE_CONV)
def transpose_conv_scratch(op: Op) -> int:
    """mcugen_transpose_conv_s{8,16}_get_buffer_size: one accumulator per output element."""
    element = 8 if data_input(op).dtype is DType.INT16 else 4
    return op.outputs[0].num_elements * element


@emitter(OpKind.TRANSPOSE_CONV)
def emit_transpose_conv(op: Op, ctx: EmitContext) -> KernelCall:
    rescale = conv_rescale(op, ctx.rounding)  # also checks the operand dtypes and int16 zero points
    o = op.options
    assert isinstance(o, TransposeConvOptions)
    x, w, y = data_input(op), op.inputs[1], op.outputs[0]
    bias = op.inputs[3] if len(op.inputs) > 3 else None
    assert w is not None and x.quant is not None and y.quant is not None
    same = o.padding.name == "SAME"
    pad_h = transpose_conv_padding(same, y.shape[1], w.shape[1], o.stride_h)
    pad_w = transpose_conv_padding(same, y.shape[2], w.shape[2], o.stride_w)
    low, high = output_clamp(op)
    i = op.index
    int16 = x.dtype is DType.INT16
    params = const_decl(
        "mcugen_transpose_conv_params",
        f"tconv_params_{i}",
        f"{{ .input_offset = {-x.quant.single_zero_point}, "
        f".output_offset = {y.quant.single_zero_point}, "
        f".stride = {{ .w = {o.stride_w}, .h = {o.stride_h} }}, "
        f".padding = {{ .w = {pad_w}, .h = {pad_h} }}, "
        f".activation = {{ .min = {low}, .max = {high} }} }}",
    )
    if int16:
        bias_decls, bias_args = bias64_args(ctx, op, bias, f"tconv_bias_dims_{i}")
    else:
        bias_decls, bias_args = bias32_args(ctx, bias, f"tconv_bias_dims_{i}")
    declarations = [
        params,
        *rescale_decls(ctx, op, f"tconv_quant_{i}", rescale),
        const_decl("mcugen_dims", f"tconv_input_dims_{i}", c_dims(x.shape)),
        const_decl("mcugen_dims", f"tconv_filter_dims_{i}", c_dims(w.shape)),
        *bias_decls,
        const_decl("mcugen_dims", f"tconv_output_dims_{i}", c_dims(y.shape)),
        context_decl(op, ctx, f"tconv_ctx_{i}"),
    ]
    call = (
        f"mcugen_transpose_conv_s{16 if int16 else 8}(&tconv_ctx_{i}, &tconv_params_{i}, "
        f"&tconv_quant_{i}, &tconv_input_dims_{i}, {ctx.ptr(x)}, &tconv_filter_dims_{i}, "
        f"{ctx.ptr(w)}, {bias_args}, &tconv_output_dims_{i}, {ctx.ptr(y)})"
    )
    return KernelCall(declarations=declarations, calls=[call],
                      runtime={"mcugen_transpose_conv", "mcugen_rescale"})
