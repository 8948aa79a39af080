"""C emitters of FULLY_CONNECTED (runtime: mcugen_fully_connected, mcugen_rescale, the conv
fast paths) and BATCH_MATMUL (runtime: mcugen_batch_matmul, mcugen_rescale), int8 and int16.

Every build-time value comes from the family's prepare step (mcugen.ops.matmul.prepare),
which the numpy reference uses too; the declaration helpers are the conv family's.

FULLY_CONNECTED in LiteRT mode rescales in double (the DOUBLE rescale): int8 calls its own
entry point, without quant, so that TFLM-mode firmware links no double code.

BATCH_MATMUL's shapes become mcugen_matrix_dims: the leading (batch) dimensions right-aligned
into three, and the stored rows and columns; the output's batch dimensions are the broadcast
ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ir import BatchMatMulOptions, DType, Op
from ...targets import Target
from ..base import setting_of
from ..conv.emit import (
    RUNTIME_FAST,
    bias32_args,
    bias64_args,
    c_doubles,
    const_decl,
    context_decl,
    helium,
    quant_decl,
    rescale_decls,
    round_up4,
)
from ..conv.prepare import RescaleKind, is_int16
from ..emitting import EmitContext, KernelCall
from .prepare import FullyConnectedParams, prepare_batch_matmul, prepare_fully_connected
from .rules import MAX_BATCH_DIMS
from .sparse import RUNTIME as SPARSE_RUNTIME
from .sparse import choose as choose_sparse
from .sparse import sparse_filter_arg

RUNTIME_FC = {"mcugen_fully_connected", "mcugen_rescale"} | RUNTIME_FAST


# --- FULLY_CONNECTED --------------------------------------------------------------------------


def fc_scratch_bytes(op: Op, target: Target) -> int:
    """int8 only, mirrors mcugen_fully_connected_fast_s8_buffer_size: DSP, the input row as int16
    (2 * round_up4(accum_depth)); the MVE path needs none."""
    if is_int16(op) or op.inputs[1] is None or len(op.inputs[1].shape) != 2 or helium(target):
        return 0
    return 2 * round_up4(op.inputs[1].shape[1])


def _fc_kernel_sums(op: Op, ctx: EmitContext, p: FullyConnectedParams) -> str:
    """mcugen_fc_params.kernel_sums in flash for the Helium path (int8, fixed-point rescale,
    filter_offset 0, constant weights): per unit, bias + input_offset * sum(w) modulo 2^32,
    which the kernel would otherwise sum on every call. Returns the initialiser field, or ""
    (NULL: the kernel sums them itself)."""
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if (not helium(ctx.target) or p.int16 or p.rescale.kind is RescaleKind.DOUBLE
            or p.filter_offset != 0 or w is None or w.data is None
            or (bias is not None and bias.data is None)):
        return ""
    assert x is not None
    sums = w.data.reshape(p.units, p.depth).astype(np.int64).sum(axis=1) * p.input_offset
    if bias is not None:
        assert bias.data is not None
        sums += bias.data.astype(np.int64).reshape(-1)
    wrapped = (sums + 2**31) % 2**32 - 2**31
    name = ctx.constant(f"op{op.index} fully_connected kernel sums", wrapped.astype(np.int32),
                        "int32_t")
    return f", .kernel_sums = {name}"


def pairs4_weights(weights: np.ndarray) -> np.ndarray:
    """[units][depth] int8 weights (depth % 4 == 0) in MCUGEN_FC_LAYOUT_PAIRS4 order: the units
    in blocks of four, each block group by group of four depth values (16 bytes); a group's
    words 0, 1 hold the block's units 0 (A) and 1 (B), words 2, 3 its units 2 and 3, word j
    of a pair the depths d = 4g + j and d + 2 as [B(d) ^ 0x80, A(d), B(d+2) ^ 0x80, A(d+2)]
    (the DSP path's SMLAD of the raw word then adds 256 A x + (B + 128) x). The units % 4 last
    units as plain rows. As many bytes."""
    units, depth = weights.shape
    full = units & ~3
    # [block][pair][unit in pair][group][k] with depth = 4 group + k, k = j + 2 h
    w = weights[:full].reshape(full // 4, 2, 2, depth // 4, 2, 2)  # ..., group, h, j
    a = w[:, :, 0]
    b = (w[:, :, 1].view(np.uint8) ^ 0x80).view(np.int8)
    # bytes of word (pair, j) in group: [B(h=0), A(h=0), B(h=1), A(h=1)]
    words = np.stack([b, a], axis=-1)  # block, pair, group, h, j, (B, A)
    ordered = words.transpose(0, 2, 1, 4, 3, 5)  # block, group, pair, j, h, (B, A)
    return np.concatenate([ordered.reshape(-1), weights[full:].reshape(-1)])


def _fc_pairs4_filter(op: Op, ctx: EmitContext, p: FullyConnectedParams) -> str | None:
    """The C name of the weights re-ordered for the Cortex-M4/M7 fast path (one LDM brings a
    group of four units, one SXTB16 per four MACs), or None where the weights stay in TFLite's
    rows: other cores, int16, the double rescale, a filter zero point, computed weights, a
    depth that is not a multiple of 4, fewer than four units."""
    w = op.inputs[1]
    if (ctx.target.fast_path != "dsp" or p.int16 or p.rescale.kind is RescaleKind.DOUBLE
            or p.filter_offset != 0 or w is None or w.data is None or len(w.shape) != 2
            or p.depth % 4 != 0 or p.units < 4):
        return None
    data = np.asarray(w.data, dtype=np.int8).reshape(p.units, p.depth)
    return ctx.constant(f"{w.name} pairs4", pairs4_weights(data), "int8_t")


def rq_checked(p: FullyConnectedParams, bias: np.ndarray | None) -> bool:
    """Whether every unit takes the DSP path's check-free requantization (fc_quick in
    mcugen_conv_fast_dsp.c, checked there on every call otherwise): shifts in [-22, -1], no
    negative multiplier (so no INT32_MIN), output zero point in [-128, 128], the int8 clamp, and
    |bias| + depth * (the largest |w (x + input_offset)|) < 2^30."""
    x_off = p.input_offset
    max_sum = p.depth * 128 * max(abs(x_off - 128), abs(x_off + 127))
    shifts, mults = p.rescale.shifts.astype(np.int64), p.rescale.multipliers.astype(np.int64)
    limit = 2**30 - max_sum
    return (p.clamp == (-128, 127) and -128 <= p.output_offset <= 128 and limit > 0
            and bool(np.all((shifts >= -22) & (shifts <= -1))) and bool(np.all(mults >= 0))
            and (bias is None or bool(np.all(np.abs(bias.astype(np.int64)) < limit))))


def _fc_rq_checked(op: Op, ctx: EmitContext, p: FullyConnectedParams) -> str:
    """mcugen_fc_params.rq_checked for the Cortex-M4/M7 fast path (int8, fixed-point rescale,
    filter_offset 0, constant bias): the initialiser field, or "" (0: the kernel checks)."""
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if (ctx.target.fast_path != "dsp" or p.int16 or p.rescale.kind is RescaleKind.DOUBLE
            or p.filter_offset != 0 or (bias is not None and bias.data is None)):
        return ""
    values = None if bias is None else np.asarray(bias.data).reshape(-1)
    return ", .rq_checked = 1" if rq_checked(p, values) else ""


def _flat_dims(n: int, c: int) -> str:
    return f"{{ .n = {n}, .h = 1, .w = 1, .c = {c} }}"


def emit_fully_connected(op: Op, ctx: EmitContext) -> KernelCall:
    p = prepare_fully_connected(op, setting_of(ctx))
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    assert x is not None and w is not None
    i = op.index
    low, high = p.clamp
    declarations: list[str] = []
    sparse = ctx.sparse_weights and choose_sparse(op).sparse  # --sparse: mask-and-values weights
    pairs4 = None if sparse else _fc_pairs4_filter(op, ctx, p)
    if p.int16:
        declarations += rescale_decls(ctx, op, f"fc_quant_{i}", p.rescale)
        function, real_scale, quant_arg = "mcugen_fully_connected_s16", "NULL", f"&fc_quant_{i}, "
    elif p.rescale.kind is RescaleKind.DOUBLE:
        # LiteRT's reference FC rescales in double (see fc_real_scales in the family's prepare).
        scales = p.rescale.scales
        declarations.append(
            const_decl("double", f"fc_scale_{i}[{scales.size}]", f"{{ {c_doubles(scales)} }}")
        )
        # its own entry point, without quant, so that TFLM-mode firmware links no double code
        function, real_scale, quant_arg = "mcugen_fully_connected_s8_real_scale", f"fc_scale_{i}", ""
    else:
        declarations.append(quant_decl(ctx, op, f"fc_quant_{i}", p.rescale))
        function, real_scale, quant_arg = "mcugen_fully_connected_s8", "NULL", f"&fc_quant_{i}, "
    params = (
        f"static const mcugen_fc_params fc_params_{i} = {{ "
        f".input_offset = {p.input_offset}, .filter_offset = {p.filter_offset}, "
        f".output_offset = {p.output_offset}, "
        f".activation = {{ .min = {low}, .max = {high} }}, "
        f".per_channel = {int(p.per_channel)}, .real_scale = {real_scale}"
        f"{_fc_kernel_sums(op, ctx, p)}"
        f"{', .filter_layout = 2 /* MCUGEN_FC_LAYOUT_PAIRS4 */' if pairs4 else ''}"
        f"{_fc_rq_checked(op, ctx, p)} }};"
    )
    if p.int16:
        bias_decls, bias_args = bias64_args(ctx, op, bias, f"fc_bias_dims_{i}")
    else:
        bias_decls, bias_args = bias32_args(ctx, bias, f"fc_bias_dims_{i}")
    batch, depth, units = p.batch, p.depth, p.units
    declarations += [
        params,
        const_decl("mcugen_dims", f"fc_input_dims_{i}", _flat_dims(batch, depth)),
        # CMSIS-NN's convention: filter dims n = accumulation depth, c = output units.
        const_decl("mcugen_dims", f"fc_filter_dims_{i}", _flat_dims(depth, units)),
        *bias_decls,
        const_decl("mcugen_dims", f"fc_output_dims_{i}", _flat_dims(batch, units)),
        context_decl(op, ctx, f"fc_ctx_{i}"),
    ]
    runtime = set(RUNTIME_FC)
    if sparse:
        sparse_decls, filter_arg = sparse_filter_arg(op, ctx)
        declarations += sparse_decls
        function = function.replace("fully_connected_s8", "fully_connected_sparse_s8")
        runtime.add(SPARSE_RUNTIME)
    else:
        filter_arg = pairs4 or ctx.ptr(w)
    call = (
        f"{function}(&fc_ctx_{i}, &fc_params_{i}, {quant_arg}"
        f"&fc_input_dims_{i}, {ctx.ptr(x)}, &fc_filter_dims_{i}, {filter_arg}, {bias_args}, "
        f"&fc_output_dims_{i}, {ctx.ptr(y)})"
    )
    return KernelCall(declarations=declarations, calls=[call], runtime=runtime)


# --- BATCH_MATMUL -----------------------------------------------------------------------------


def matrix_dims(shape: Sequence[int]) -> str:
    """The C initialiser of an mcugen_matrix_dims for a rank 2..5 shape."""
    batch = list(shape[:-2])
    if len(batch) > MAX_BATCH_DIMS or len(shape) < 2:
        raise ValueError(f"shape {list(shape)} is not a matrix stack of rank 2..5")
    batch = [1] * (MAX_BATCH_DIMS - len(batch)) + batch
    return (
        f"{{ .batch = {{ {batch[0]}, {batch[1]}, {batch[2]} }}, .rows = {shape[-2]}, "
        f".cols = {shape[-1]} }}"
    )


def emit_batch_matmul(op: Op, ctx: EmitContext) -> KernelCall:
    p = prepare_batch_matmul(op, setting_of(ctx))
    lhs, rhs, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert lhs is not None and rhs is not None
    low, high = p.clamp
    i = op.index
    params = const_decl(
        "mcugen_bmm_params",
        f"bmm_params_{i}",
        f"{{ .lhs_offset = {p.lhs_offset}, "
        f".rhs_offset = {p.rhs_offset}, "
        f".output_offset = {p.output_offset}, .adj_x = {int(p.adj_x)}, "
        f".adj_y = {int(p.adj_y)}, .activation = {{ .min = {low}, .max = {high} }} }}",
    )
    declarations = [
        params,
        *rescale_decls(ctx, op, f"bmm_quant_{i}", p.rescale),
        const_decl("mcugen_matrix_dims", f"bmm_lhs_dims_{i}", matrix_dims(lhs.shape)),
        const_decl("mcugen_matrix_dims", f"bmm_rhs_dims_{i}", matrix_dims(rhs.shape)),
        const_decl("mcugen_matrix_dims", f"bmm_output_dims_{i}", matrix_dims(y.shape)),
        context_decl(op, ctx, f"bmm_ctx_{i}"),
    ]
    bits = 16 if y.dtype is DType.INT16 else 8
    call = (
        f"mcugen_batch_matmul_s{bits}(&bmm_ctx_{i}, &bmm_params_{i}, &bmm_quant_{i}, "
        f"&bmm_lhs_dims_{i}, {ctx.ptr(lhs)}, &bmm_rhs_dims_{i}, {ctx.ptr(rhs)}, "
        f"&bmm_output_dims_{i}, {ctx.ptr(y)})"
    )
    return KernelCall(declarations=declarations, calls=[call],
                      runtime={"mcugen_batch_matmul", "mcugen_rescale"})


def emit_float_batch_matmul(op: Op, ctx: EmitContext) -> KernelCall:
    """float32 BATCH_MATMUL: no rescale, no clamp (mcugen_batch_matmul_f32)."""
    o = op.options
    assert isinstance(o, BatchMatMulOptions)
    lhs, rhs, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert lhs is not None and rhs is not None
    i = op.index
    declarations = [
        const_decl("mcugen_bmm_params", f"fbmm_params_{i}",
                   f"{{ .lhs_offset = 0, .rhs_offset = 0, .output_offset = 0, .adj_x = {int(o.adj_x)}, "
                   f".adj_y = {int(o.adj_y)}, .activation = {{ .min = 0, .max = 0 }} }}"),
        const_decl("mcugen_matrix_dims", f"fbmm_lhs_dims_{i}", matrix_dims(lhs.shape)),
        const_decl("mcugen_matrix_dims", f"fbmm_rhs_dims_{i}", matrix_dims(rhs.shape)),
        const_decl("mcugen_matrix_dims", f"fbmm_output_dims_{i}", matrix_dims(y.shape)),
    ]
    call = (f"mcugen_batch_matmul_f32(&fbmm_params_{i}, &fbmm_lhs_dims_{i}, {ctx.ptr(lhs)}, "
            f"&fbmm_rhs_dims_{i}, {ctx.ptr(rhs)}, &fbmm_output_dims_{i}, {ctx.ptr(y)})")
    return KernelCall(declarations=declarations, calls=[call],
                      runtime={"mcugen_batch_matmul", "mcugen_rescale"})
