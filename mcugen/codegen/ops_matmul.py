"""Emitter for BATCH_MATMUL, int8 and int16 (runtime: mcugen_batch_matmul, mcugen_rescale).

Shapes become mcugen_matrix_dims: the leading (batch) dimensions right-aligned into three, and
the stored rows and columns; the output's batch dimensions are the broadcast ones. The one
per-tensor multiplier comes from mcugen.opparams.conv.batch_matmul_rescale, as the reference's.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UnsupportedError
from ..ir import BatchMatMulOptions, DType, Op, OpKind
from ..opparams.conv import batch_matmul_rescale
from ..quantization import dtype_range
from .emit import EmitContext, KernelCall, emitter
from .ops_conv import const_decl, context_decl, rescale_decls

MAX_BATCH_DIMS = 3


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


@emitter(OpKind.BATCH_MATMUL)
def emit_batch_matmul(op: Op, ctx: EmitContext) -> KernelCall:
    rescale = batch_matmul_rescale(op)  # checks dtypes, quantization and int16 zero points
    o = op.options
    assert isinstance(o, BatchMatMulOptions)
    lhs, rhs, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert lhs is not None and rhs is not None and lhs.quant and rhs.quant and y.quant
    for tensor in (lhs, rhs, y):
        if not 2 <= len(tensor.shape) <= 2 + MAX_BATCH_DIMS:
            raise UnsupportedError(f"{op.where()}: '{tensor.name}' has rank {len(tensor.shape)}, "
                                   "BATCH_MATMUL takes 2..5")
    low, high = dtype_range(y.dtype)
    i = op.index
    params = const_decl(
        "mcugen_bmm_params",
        f"bmm_params_{i}",
        f"{{ .lhs_offset = {-lhs.quant.single_zero_point}, "
        f".rhs_offset = {-rhs.quant.single_zero_point}, "
        f".output_offset = {y.quant.single_zero_point}, .adj_x = {int(o.adj_x)}, "
        f".adj_y = {int(o.adj_y)}, .activation = {{ .min = {low}, .max = {high} }} }}",
    )
    declarations = [
        params,
        *rescale_decls(ctx, op, f"bmm_quant_{i}", rescale),
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
