"""Lowering of MEAN (int8, int16) into one NPU DEPTHWISE operation.

TFLite's quantized MEAN (mcugen/ops/reduce: QuantizedMeanOrSum) is

  out = clamp(MultiplyByQuantizedMultiplier(sum(x - zp_in), m', s') + zp_out)

with (m', s') TFLite's multiplier of input_scale / output_scale with 1/count folded in. That is
a depthwise convolution whose kernel covers the reduced extent, every weight 1, no bias: the
engine subtracts the IFM zero point per tap and accumulates in 32 bits, and the output stage
applies the bias/scale entry (m', shift 31 - s') with TFL rounding (TFLite's double rounding),
adds zp_out and clamps, as for a convolution. Vela 5.2 runs the same sum as a DEPTHWISE into an
int32 feature map and the rescale as a second operation (a MUL by the multiplier); here one
operation does both, so nothing 32-bit is ever written.

The NPU sees the input as (h, w, c). The reduced axes (extent-1 axes ignored) must be height
and/or width of that view, or, when depth is reduced, a trailing block of the input's axes:
then the input is read as (kept elements, reduced elements, 1) and its width reduced. The kernel
is at most 64 x 64 (mcugen does not split a larger reduction into several operations, as Vela
does).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import McugenError
from ..ir import Op, OpKind
from ..ops.reduce.prepare import quant_reduce_params, resolve_axes
from .blocks import FLASH_WEIGHT_COST, BlockConfig, Kernel, OpShape, choose_block
from .config import Block, NpuConfig
from .featuremap import LoweringError, Place, feature_map, hwc
from .lower import Flash, KernelOp, emit_kernel_op, npu_scale_shift
from .registers import Cmd0
from .stream import CommandStream
from .weights import WeightOrder, encode_bias_scale, encode_weights

MAX_KERNEL_SIDE = 64  # mcugen's kernel limit per side (lower._check_kernel)

View = tuple[int, int, int]  # (h, w, c)


def mean_views(op: Op) -> tuple[View, View, Kernel]:
    """(IFM view, OFM view, kernel) of a MEAN, or LoweringError naming the axes it cannot take."""
    x = op.inputs[0]
    assert x is not None
    shape = tuple(x.shape)
    axes = resolve_axes(op)
    if len(shape) == 4 and 0 in axes and shape[0] != 1:
        raise LoweringError(f"reduces the batch of {list(shape)}")
    h, w, c = hwc(shape)
    # which of the view's axes each input axis is (rank 2 [rows, c]: rows are the height)
    view_axis = {4: {1: 0, 2: 1, 3: 2}, 3: {0: 0, 1: 1, 2: 2}, 2: {0: 0, 1: 2}, 1: {0: 2}}[len(shape)]
    reduced = {view_axis[a] for a in axes if shape[a] > 1 and a in view_axis}
    if 2 not in reduced:
        kernel = Kernel(h if 0 in reduced else 1, w if 1 in reduced else 1)
        ofm = (1 if 0 in reduced else h, 1 if 1 in reduced else w, c)
        return (h, w, c), ofm, kernel
    # depth reduced: the reduced axes (extent > 1) must come after every kept one
    sizes = [(size, a in axes) for a, size in enumerate(shape) if size > 1]
    flags = [r for _, r in sizes]
    if flags != sorted(flags):
        raise LoweringError(f"reduces axes {list(axes)} of {list(shape)}: the depth with a kept axis after a "
                            "reduced one")
    kept = int(np.prod([s for s, r in sizes if not r], dtype=np.int64))
    count = int(np.prod([s for s, r in sizes if r], dtype=np.int64))
    return (kept, count, 1), (kept, 1, 1), Kernel(1, count)


def lower_mean(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """MEAN, int8 or int16, output of the input's dtype: one DEPTHWISE with all-one weights
    over the reduced extent (at most 64 x 64) and TFLite's MEAN rescale."""
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    if x.dtype is not y.dtype or x.dtype.short not in ("int8", "int16"):
        raise LoweringError(f"input {x.dtype.short}, output {y.dtype.short}: both int8 or both int16")
    ifm_view, ofm_view, kernel = mean_views(op)
    if max(kernel.height, kernel.width) > MAX_KERNEL_SIDE:
        raise LoweringError(f"reduces {kernel.height}x{kernel.width} elements: a kernel above "
                            f"{MAX_KERNEL_SIDE}x{MAX_KERNEL_SIDE}")
    try:
        params = quant_reduce_params(op)
    except (McugenError, AssertionError) as e:
        raise LoweringError(f"no TFLite rescale: {e}") from None
    ifm, ofm = feature_map(x, place, ifm_view), feature_map(y, place, ofm_view)
    k = KernelOp(Cmd0.OP_DEPTHWISE, 0, ifm, ofm, kernel, (0, 0, 0, 0), (params.output_min, params.output_max))
    _emit_sum(k, npu_scale_shift(params.multiplier, params.shift), config, flash, stream)


def _emit_sum(k: KernelOp, scale: tuple[int, int], config: NpuConfig, flash: Flash, stream: CommandStream) -> None:
    """A DEPTHWISE of all-one weights with one bias/scale entry per channel (bias 0)."""
    block = _block(config, k, stream.lut_busy)
    channels = k.ofm.depth
    order = WeightOrder(block.ofm.depth, True, False, k.ifm.bits, config.ofm_ublock.depth, config.ifm_ublock.depth)
    ones = np.ones((channels, k.kernel.height, k.kernel.width, 1), np.int16)
    weights = encode_weights(ones, order)
    scales = encode_bias_scale(np.zeros(channels, np.int64), np.full(channels, scale[0]), np.full(channels, scale[1]))
    emit_kernel_op(stream, _with_streams(k, (flash.add(weights), len(weights)), (flash.add(scales), len(scales))),
                   block)


def _with_streams(k: KernelOp, weights: tuple[int, int], scales: tuple[int, int]) -> KernelOp:
    return replace(k, weights=weights, scales=scales)


def _block(config: NpuConfig, k: KernelOp, lut: bool) -> BlockConfig:
    shape = OpShape("depthwise", Block(k.ofm.width, k.ofm.height, k.ofm.depth),
                    Block(k.ifm.width, k.ifm.height, k.ifm.depth), k.kernel, k.ifm.bits, lut=lut,
                    weight_cost=FLASH_WEIGHT_COST)
    try:
        return choose_block(config, shape)
    except ValueError as e:
        raise LoweringError(str(e)) from None


REDUCE_LOWERINGS = {OpKind.MEAN: lower_mean}

__all__ = ["REDUCE_LOWERINGS", "mean_views"]
