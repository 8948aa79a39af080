"""Build-time parameters of FULLY_CONNECTED and BATCH_MATMUL (TFLite's Prepare), shared by
the C emitters and the numpy reference kernels of the family.

The rescale kinds and the int16x8 accumulator choice are the conv family's
(mcugen.ops.conv.prepare); what differs here is where the multipliers come from:

- FULLY_CONNECTED in TFLM: per-channel multipliers from a double product of the scales
  (CalculateOpDataFullyConnected), or one per-tensor multiplier from
  GetQuantizedConvolutionMultipler, a float32 product; in LiteRT: the double-precision scales
  themselves (`DOUBLE`).
- BATCH_MATMUL: one per-tensor multiplier from GetQuantizedConvolutionMultipler in both
  runtimes; int8 rescales an int32 accumulator (Q31), int16 an int64 one (Q15_WIDE).
"""

from __future__ import annotations

import numpy as np

from ...ir import BatchMatMulOptions, DType, Op
from ...quantization import Rounding, dtype_range, per_channel_multipliers, quantize_multiplier
from ...records import dataclass
from ..base import PrepareRule, Setting
from ..common import filter_offset, output_clamp
from ..conv.prepare import (
    Q31_SHIFT_RANGE,
    WIDE_SHIFT_RANGE,
    Rescale,
    RescaleKind,
    activation_dtype,
    fixed_point,
    is_int16,
    weights_of,
    wide_accumulator,
)

BATCH_MATMUL_SHIFT_RULE = PrepareRule(
    "The rescale factor lhs_scale * rhs_scale / output_scale needs a shift in "
    f"[{Q31_SHIFT_RANGE[0]}, {Q31_SHIFT_RANGE[1]}] for int8, in "
    f"[{WIDE_SHIFT_RANGE[0]}, {WIDE_SHIFT_RANGE[1]}] for int16."
)


# --- FULLY_CONNECTED ------------------------------------------------------------------------


def fc_multipliers(op: Op) -> tuple[np.ndarray, np.ndarray]:
    """TFLM's (multiplier, shift) per output unit (per-tensor: one pair, broadcast by numpy)."""
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert x is not None and w is not None and x.quant and w.quant and y.quant
    if w.quant.per_channel:
        return per_channel_multipliers(x.quant.single_scale, w.quant.scale, y.quant.single_scale)
    # GetQuantizedConvolutionMultipler: static_cast<double>(input_scale * filter_scale), a
    # float32 product, unlike the double product of the per-channel path.
    product = float(np.float32(x.quant.single_scale) * np.float32(w.quant.single_scale))
    multiplier, shift = quantize_multiplier(product / float(np.float32(y.quant.single_scale)))
    return np.array([multiplier], dtype=np.int32), np.array([shift], dtype=np.int32)


def fc_real_scales(op: Op) -> np.ndarray:
    """LiteRT's reference requantization factors, double, one per weight scale."""
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert x is not None and w is not None and x.quant and w.quant and y.quant
    x_scale = float(np.float32(x.quant.single_scale))
    y_scale = float(np.float32(y.quant.single_scale))
    return np.array(
        [x_scale * float(np.float32(s)) / y_scale for s in w.quant.scale], dtype=np.float64
    )


def fc_rescale(op: Op, rounding: Rounding) -> Rescale:
    """FULLY_CONNECTED: TFLM's fixed point, or LiteRT's double-precision rescale."""
    w = weights_of(op)
    assert w.quant is not None
    wide = wide_accumulator(op, rounding)
    if rounding is Rounding.LITERT:
        empty = np.zeros(0, dtype=np.int32)
        return Rescale(RescaleKind.DOUBLE, 64 if wide else 32, empty, empty, fc_real_scales(op),
                       w.quant.per_channel)
    multipliers, shifts = fc_multipliers(op)
    return fixed_point(op, multipliers, shifts, wide, w.quant.per_channel)


@dataclass(frozen=True)
class FullyConnectedParams:
    """The input flattens to [batch, depth]; the weights are [units, depth]."""

    int16: bool
    rescale: Rescale
    batch: int
    depth: int
    units: int
    input_offset: int
    filter_offset: int  # -weights zero point (per-tensor weights), else 0
    output_offset: int
    clamp: tuple[int, int]
    per_channel: bool


def prepare_fully_connected(op: Op, setting: Setting) -> FullyConnectedParams:
    """The rules fully_connected_shapes and fully_connected_output_size have checked the
    flattening."""
    x, w, y = op.inputs[0], weights_of(op), op.outputs[0]
    assert x is not None and x.quant is not None and y.quant is not None and w.quant is not None
    units, depth = w.shape
    return FullyConnectedParams(
        int16=is_int16(op),
        rescale=fc_rescale(op, setting.rounding),
        batch=x.num_elements // depth,
        depth=depth,
        units=units,
        input_offset=-x.quant.single_zero_point,
        filter_offset=filter_offset(w),
        output_offset=y.quant.single_zero_point,
        clamp=output_clamp(op),
        per_channel=w.quant.per_channel,
    )


# --- BATCH_MATMUL ---------------------------------------------------------------------------


def batch_matmul_rescale(op: Op) -> Rescale:
    """BATCH_MATMUL: GetQuantizedConvolutionMultipler's float32 product of the two input
    scales, over the output scale; the same in TFLM and LiteRT. The rule batch_matmul_operands
    has checked the dtypes and the per-tensor quantization."""
    dtype = activation_dtype(op)
    lhs, rhs, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert lhs is not None and rhs is not None and lhs.quant and rhs.quant and y.quant
    product = float(np.float32(lhs.quant.single_scale) * np.float32(rhs.quant.single_scale))
    multiplier, shift = quantize_multiplier(product / float(np.float32(y.quant.single_scale)))
    return fixed_point(op, np.array([multiplier]), np.array([shift]), dtype is DType.INT16,
                       per_channel=False, rule=BATCH_MATMUL_SHIFT_RULE)


@dataclass(frozen=True)
class BatchMatMulParams:
    rescale: Rescale
    lhs_offset: int
    rhs_offset: int
    output_offset: int
    clamp: tuple[int, int]  # no fused activation: the output dtype's range
    adj_x: bool
    adj_y: bool


def prepare_batch_matmul(op: Op, setting: Setting) -> BatchMatMulParams:
    o = op.options
    assert isinstance(o, BatchMatMulOptions)
    lhs, rhs, y = op.inputs[0], op.inputs[1], op.outputs[0]
    assert lhs is not None and rhs is not None and lhs.quant and rhs.quant and y.quant
    return BatchMatMulParams(
        rescale=batch_matmul_rescale(op),
        lhs_offset=-lhs.quant.single_zero_point,
        rhs_offset=-rhs.quant.single_zero_point,
        output_offset=y.quant.single_zero_point,
        clamp=dtype_range(y.dtype),
        adj_x=o.adj_x,
        adj_y=o.adj_y,
    )
