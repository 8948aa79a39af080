"""Lowering of one IR op into Ethos-U55 commands: the kernel operations (CONV_2D,
DEPTHWISE_CONV_2D, FULLY_CONNECTED, MAX_POOL_2D, AVERAGE_POOL_2D).

Every operation writes all the registers it depends on (no state is assumed from an earlier
operation), then its NPU_OP_*. Weights and bias/scale entries go to the read-only image (region
0, `Flash`); feature maps are where `place` says. The rules per op are in the lowering
functions' docstrings; anything else raises LoweringError, which is the caller's signal to run
the op on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import numpy as np

from ..ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    Op,
    OpKind,
    Padding,
    Pool2DOptions,
    Tensor,
)
from ..quantization import activation_range, per_channel_multipliers, quantize_multiplier
from ..records import dataclass
from .block_cycles import cycle_block
from .blocks import (
    FLASH_WEIGHT_COST,
    SRAM_WEIGHT_COST,
    BlockConfig,
    Kernel,
    OpShape,
    is_part_kernel_first,
)
from .config import Block, NpuConfig
from .estimate import encoded_length, output_cycles
from .featuremap import FeatureMap, LoweringError, Place, emit_ifm, emit_ofm, feature_map, hwc
from .memo import memoised, op_id_key
from .overlap_rule import BlockLimit, Shape, limit_for
from .registers import Cmd0, Cmd1, PoolMode, Rounding, activation, kernel_stride
from .stream import CommandStream
from .weights import STREAM_ALIGN, WeightOrder, encode_bias_scale, encode_weights

FLASH_REGION = 0
ACTIVATION_TABLE = 16  # ACTIVATION function of LUT slot 0
T = TypeVar("T")
MAX_PAD = 255  # the engine's limit on IFM padding


class Flash:
    """The read-only image (region 0): encoded weights and scales, each 16-byte aligned."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.added: dict[bytes, int] = {}  # blob -> its address: a striped op's stripes share one copy

    def add(self, blob: bytes) -> int:
        """Append `blob` at the next 16-byte boundary (or find it there already); its address."""
        if blob in self.added:
            return self.added[blob]
        self.data += bytes(-len(self.data) % STREAM_ALIGN)
        self.added[blob] = len(self.data)
        address = len(self.data)
        self.data += blob
        return address


@dataclass(frozen=True)
class KernelOp:
    """What a kernel operation's commands are made of."""

    opcode: Cmd0
    param: int  # the operation command's parameter (pool mode)
    ifm: FeatureMap
    ofm: FeatureMap
    kernel: Kernel
    pads: tuple[int, int, int, int]  # top, left, bottom, right
    clamp: tuple[int, int]
    part_kernel_first: bool = False
    weights: tuple[int, int] | None = None  # address and length of the weight stream
    scales: tuple[int, int] | None = None
    constants_region: int = FLASH_REGION  # where weights and scales are: flash, or a weight buffer
    global_scale: tuple[int, int] | None = None  # OFM_SCALE (scale, shift); None: per channel
    rounding: Rounding = Rounding.TFL
    acc40: bool = False  # 40-bit accumulators (16-bit IFM convolutions)


def typed_options(op: Op, kind: type[T]) -> T:
    """The op's options as `kind` (the frontend gives each op kind its own options type)."""
    if not isinstance(op.options, kind):
        raise LoweringError(f"options {type(op.options).__name__}, expected {kind.__name__}")
    return op.options


def _pads(ifm: int, ofm: int, kernel: int, stride: int, dilation: int, padding: Padding) -> tuple[int, int]:
    """TFLite's padding: SAME pads (out - 1) * stride + dilated kernel - in, the smaller half
    before; VALID none."""
    if padding is Padding.VALID:
        return 0, 0
    total = max((ofm - 1) * stride + (kernel - 1) * dilation + 1 - ifm, 0)
    return total // 2, total - total // 2


def output_clamp(op: Op, act: Activation) -> tuple[int, int]:
    out = op.outputs[0]
    if out.quant is None:
        raise LoweringError(f"output '{out.name}' is not quantized")
    try:
        return activation_range(act, out.quant, out.dtype)
    except ValueError as e:
        raise LoweringError(str(e)) from None


def npu_scale_shift(multiplier: int, exponent: int) -> tuple[int, int]:
    """TFLite's multiplier m * 2^(e - 31) as the NPU's (scale, shift = 31 - e)."""
    if multiplier == 0:
        return 0, 0
    shift = 31 - exponent
    if not 0 <= shift <= 63:
        raise LoweringError(f"rescale 2^{exponent - 31} outside the NPU's shift range")
    return multiplier, shift


def reduced_scale_shift(multiplier: int, exponent: int) -> tuple[int, int]:
    """TFLite's int64 MultiplyByQuantizedMultiplier: the multiplier rounded to 16 bits
    ((m + 2^15) >> 16, at most 0x7FFF), shift 15 - e, one rounding (the NATURAL mode)."""
    reduced = (multiplier + (1 << 15)) >> 16 if multiplier < 0x7FFF0000 else 0x7FFF
    shift = 15 - exponent
    if reduced == 0:
        return 0, 0
    if not 0 <= shift <= 63:
        raise LoweringError(f"rescale 2^{exponent - 31} outside the NPU's shift range")
    return reduced, shift


def _bias_scale(op: Op, channels: int, reduced: bool, window: tuple[int, int] | None = None) -> bytes:
    """The bias/scale stream of a convolution or FULLY_CONNECTED (per-channel TFLite multipliers
    from the float32 scales in double, as TFLM; `reduced`: TFLite's 16-bit int64 form); `window`:
    only the entries of OFM channels [first, stop)."""
    bias, pairs = _bias_and_scales(op, channels, reduced)
    first, stop = window or (0, channels)
    return encode_bias_scale(bias[first:stop], np.array([p[0] for p in pairs[first:stop]]),
                             np.array([p[1] for p in pairs[first:stop]]))


@memoised(lambda op, channels, reduced: op_id_key(op, channels, reduced))
def _bias_and_scales(op: Op, channels: int, reduced: bool) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Every channel's bias and NPU (scale, shift): one op's slices and trial lowerings share them."""
    x, w = op.inputs[0], op.inputs[1]
    y = op.outputs[0]
    assert x is not None and w is not None
    if x.quant is None or w.quant is None or y.quant is None:
        raise LoweringError("input, weights and output must be quantized")
    w_scales = w.quant.scale if w.quant.per_channel else w.quant.scale * channels
    multipliers, exponents = per_channel_multipliers(x.quant.single_scale, w_scales, y.quant.single_scale)
    to_npu = reduced_scale_shift if reduced else npu_scale_shift
    pairs = [to_npu(int(m), int(e)) for m, e in zip(multipliers, exponents, strict=True)]
    bias_tensor = op.inputs[2] if len(op.inputs) > 2 else None
    bias = np.zeros(channels, np.int64) if bias_tensor is None or bias_tensor.data is None \
        else bias_tensor.data.astype(np.int64).reshape(-1)
    return bias, pairs


def _weights(w: Tensor, ohwi: np.ndarray, order: WeightOrder) -> bytes:
    zero_points = np.array(w.quant.zero_point if w.quant else (0,), np.int16)
    if (zero_points != 0).any():
        raise LoweringError(f"weights '{w.name}' have a nonzero zero point")
    return encode_weights(ohwi.astype(np.int16), order)


def _with_constants(k: KernelOp, weights: bytes, scales: bytes, flash: Flash, stream: CommandStream) -> KernelOp:
    """`k` reading `weights` and `scales` from flash, each added on its own; or, while the
    stream has a weight buffer, from that buffer, into which a DMA copies them as one blob
    (weights, then scales at the next 16 bytes) that this records in `stream.weight_copy`."""
    if stream.weight_buffer is None:
        return replace(k, weights=(flash.add(weights), len(weights)), scales=(flash.add(scales), len(scales)))
    region, base = stream.weight_buffer
    at = len(weights) + -len(weights) % STREAM_ALIGN
    blob = weights + bytes(at - len(weights)) + scales
    stream.weight_copy = (flash.add(blob), len(blob))
    return replace(k, weights=(base, len(weights)), scales=(base + at, len(scales)), constants_region=region)


def emit_kernel_op(stream: CommandStream, k: KernelOp, block: BlockConfig, function: int = 0) -> None:
    """All registers of a kernel operation, then the operation (`function`: the ACTIVATION
    function, 16 + n for LUT slot n)."""
    emit_ifm(stream, k.ifm)
    for command, pad in zip((Cmd0.IFM_PAD_TOP, Cmd0.IFM_PAD_LEFT, Cmd0.IFM_PAD_BOTTOM, Cmd0.IFM_PAD_RIGHT),
                            k.pads, strict=True):
        stream.cmd0(command, pad)
    emit_ofm(stream, k.ofm, k.global_scale is not None, k.rounding)
    kern = k.kernel
    stream.cmd0(Cmd0.KERNEL_HEIGHT_M1, kern.area_height - 1)
    stream.cmd0(Cmd0.KERNEL_WIDTH_M1, kern.area_width - 1)
    stream.cmd0(Cmd0.KERNEL_STRIDE, kernel_stride(kern.stride_x, kern.stride_y, kern.dilation_x, kern.dilation_y,
                                                  k.part_kernel_first))
    if k.weights is not None and k.scales is not None:
        stream.cmd0(Cmd0.WEIGHT_REGION, k.constants_region)
        stream.cmd1(Cmd1.WEIGHT_BASE, k.weights[0])
        stream.cmd1(Cmd1.WEIGHT_LENGTH, k.weights[1])
        stream.cmd0(Cmd0.SCALE_REGION, k.constants_region)
        stream.cmd1(Cmd1.SCALE_BASE, k.scales[0])
        stream.cmd1(Cmd1.SCALE_LENGTH, k.scales[1])
    if k.global_scale is not None:
        stream.cmd1(Cmd1.OFM_SCALE, k.global_scale[0], k.global_scale[1])
    emit_activation(stream, k.clamp, function)
    emit_block(stream, block)
    stream.cmd0(Cmd0.ACC_FORMAT, int(k.acc40))
    stream.cmd0(Cmd0.BLOCKDEP, 0)
    stream.cmd0(k.opcode, k.param)


def emit_activation(stream: CommandStream, clamp: tuple[int, int], function: int = 0) -> None:
    """ACTIVATION (clamp, or a LUT slot: `function`, else the stream's fused LUT) with the
    clamp's bounds in the OFM's quantized domain."""
    if function == 0 and stream.lut_slot is not None:
        function = ACTIVATION_TABLE + stream.lut_slot
    stream.cmd0(Cmd0.ACTIVATION, activation(function))
    stream.cmd0(Cmd0.ACTIVATION_MIN, clamp[0])
    stream.cmd0(Cmd0.ACTIVATION_MAX, clamp[1])


def emit_block(stream: CommandStream, block: BlockConfig) -> None:
    """The OFM block and the SHRAM layout."""
    stream.cmd0(Cmd0.OFM_BLK_HEIGHT_M1, block.ofm.height - 1)
    stream.cmd0(Cmd0.OFM_BLK_WIDTH_M1, block.ofm.width - 1)
    stream.cmd0(Cmd0.OFM_BLK_DEPTH_M1, block.ofm.depth - 1)
    stream.cmd0(Cmd0.IFM_IB_END, block.ib_end)
    stream.cmd0(Cmd0.AB_START, block.ab_start)


def activation_bits(x: Tensor, y: Tensor, weights: Tensor | None = None) -> int:
    """8 or 16: input and output both int8 or both int16, weights (if any) int8."""
    if weights is not None and weights.dtype.short != "int8":
        raise LoweringError(f"weights '{weights.name}' are {weights.dtype.short}, not int8")
    if x.dtype is not y.dtype or x.dtype.short not in ("int8", "int16"):
        raise LoweringError(f"input {x.dtype.short}, output {y.dtype.short}: both int8 or both int16")
    return 8 if x.dtype.short == "int8" else 16


def _wide(k: KernelOp, op: Op) -> KernelOp:
    """A 16-bit IFM convolution with an int64 bias (or none): 40-bit accumulators and TFLite's
    int64 rescale, which rounds once (NATURAL) with the multiplier reduced to 16 bits. With an
    int32 bias TFLite accumulates in int32 and rescales as for int8."""
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if k.ifm.bits == 16 and (bias is None or bias.dtype.short == "int64"):
        return replace(k, acc40=True, rounding=Rounding.NATURAL)
    return k


def _geometry(ifm: FeatureMap, ofm: FeatureMap, kernel: Kernel, padding: Padding,
              stripe_top: int | None = None) -> tuple[int, int, int, int]:
    """Pads (top, left, bottom, right); `stripe_top`: the IFM is one stripe's rows with that many
    padding rows above, and below it as many as its last output row's taps reach past it."""
    top, bottom = _pads(ifm.height, ofm.height, kernel.height, kernel.stride_y, kernel.dilation_y, padding)
    if stripe_top is not None:
        top = stripe_top
        reach = (ofm.height - 1) * kernel.stride_y + (kernel.height - 1) * kernel.dilation_y + 1
        bottom = max(0, reach - top - ifm.height)
    left, right = _pads(ifm.width, ofm.width, kernel.width, kernel.stride_x, kernel.dilation_x, padding)
    if max(top, left, bottom, right) > MAX_PAD:
        raise LoweringError(f"padding above {MAX_PAD}")
    return top, left, bottom, right


def _block_for(config: NpuConfig, kind: str, k: KernelOp, lut: bool, op: Op,
               weight_bytes: Callable[[int], int] | None = None, sram_weights: bool = False,
               limit: BlockLimit | None = None) -> BlockConfig:
    """The block of fewest device cycles (block_cycles.py), with the estimate's output rate."""
    shape = OpShape(kind, Block(k.ofm.width, k.ofm.height, k.ofm.depth),
                    Block(k.ifm.width, k.ifm.height, k.ifm.depth), k.kernel, k.ifm.bits,
                    acc_bits=40 if k.acc40 else 32, part_kernel_first=k.part_kernel_first, lut=lut,
                    weight_cost=SRAM_WEIGHT_COST if sram_weights else FLASH_WEIGHT_COST)
    rate = output_cycles(op, config) / max(1, op.outputs[0].num_elements)
    try:
        return cycle_block(config, shape, rate, weight_bytes, sram_weights, limit)
    except ValueError as e:
        raise LoweringError(str(e)) from None


def lower_conv(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """CONV_2D, int8 or int16 (int8 weights; int16: 40-bit accumulators): weights (zero point 0) OHWI; strides 1-3, dilation 1-2, pads up to 255;
    one group; per-tensor or per-channel weight scales."""
    x, w = op.inputs[0], op.inputs[1]
    assert x is not None and w is not None and w.data is not None
    bits = activation_bits(x, op.outputs[0], w)
    o = typed_options(op, Conv2DOptions)
    if w.shape[3] != hwc(x.shape)[2]:
        raise LoweringError("grouped convolution")
    kernel = _unstrided(Kernel(w.shape[1], w.shape[2], o.stride_h, o.stride_w, o.dilation_h, o.dilation_w),
                        op.outputs[0])
    _check_kernel(kernel)
    ifm, ofm = feature_map(x, place), feature_map(op.outputs[0], place)
    pkf = is_part_kernel_first(ifm.depth, kernel, bits)
    k = KernelOp(Cmd0.OP_CONV, 0, ifm, ofm, kernel, _geometry(ifm, ofm, kernel, o.padding, stream.pad_top),
                 output_clamp(op, o.activation), pkf)
    _emit_weighted(op, k, w.data, config, flash, stream, "conv")


def _unstrided(kernel: Kernel, output: Tensor) -> Kernel:
    """Stride 1 along an axis where the output has one position: the stride is never applied
    there (a global pool's 25x5 stride, say), and the NPU takes strides up to 3 only."""
    h, w, _ = hwc(output.shape)
    return replace(kernel, stride_y=1 if h == 1 else kernel.stride_y, stride_x=1 if w == 1 else kernel.stride_x)


def _check_kernel(kernel: Kernel) -> None:
    if not (1 <= kernel.stride_x <= 3 and 1 <= kernel.stride_y <= 3):
        raise LoweringError(f"stride {kernel.stride_y}x{kernel.stride_x}: the NPU takes 1 to 3")
    if kernel.dilation_x not in (1, 2) or kernel.dilation_y not in (1, 2):
        raise LoweringError(f"dilation {kernel.dilation_y}x{kernel.dilation_x}: the NPU takes 1 or 2")
    if kernel.area_height > 64 or kernel.area_width > 64:
        raise LoweringError("kernel larger than 64")


def _emit_weighted(op: Op, k: KernelOp, ohwi: np.ndarray, config: NpuConfig, flash: Flash,
                   stream: CommandStream, kind: str) -> None:
    """Block, weight stream, bias/scale stream, commands of a CONV or DEPTHWISE operation."""
    k = _wide(k, op)
    channels = k.ofm.depth
    if stream.ofm_slice is not None:  # one OFM depth slice of a streamed op (weight_stream.py)
        k, ohwi = _depth_slice(k, ohwi, stream.ofm_slice, kind)
    dilation = (k.kernel.dilation_y, k.kernel.dilation_x)
    order = WeightOrder(0, kind == "depthwise", k.part_kernel_first, k.ifm.bits,
                        config.ofm_ublock.depth, config.ifm_ublock.depth, dilation)
    whole_op = stream.pad_top is None and stream.ofm_slice is None  # stripes keep their own rule (tiling.py)
    block = _block_for(config, kind, k, stream.lut_busy, op,
                       lambda depth: encoded_length(ohwi, replace(order, ofm_block_depth=depth)),
                       stream.weight_buffer is not None, overlap_limit(k, kind) if whole_op else None)
    order = replace(order, ofm_block_depth=block.ofm.depth)
    w = op.inputs[1]
    assert w is not None
    scales = _bias_scale(op, channels, k.acc40, stream.ofm_slice)
    k = _with_constants(k, _weights(w, ohwi, order), scales, flash, stream)
    emit_kernel_op(stream, k, block)


def _row_starts(fm: FeatureMap) -> list[int]:
    """Each row's address (a map of two tiles continues at wrap_address after rows0 rows)."""
    p = fm.placement
    split = p.rows0 if 0 < p.rows0 < fm.height else fm.height
    return [p.address + r * fm.stride_y if r < split else p.wrap_address + (r - split) * fm.stride_y
            for r in range(fm.height)]


def overlap_limit(k: KernelOp, kind: str) -> BlockLimit | None:
    """The blocks a whole operation whose OFM overlaps its IFM may take (overlap_rule.py):
    every OFM row that lands on IFM bytes must land exactly on an IFM row at least the allowed
    rows above it; None where they do not overlap; LoweringError where no block is safe."""
    if k.ifm.placement.region != k.ofm.placement.region:
        return None
    ins, outs = _row_starts(k.ifm), _row_starts(k.ofm)
    in_span, out_span = k.ifm.width * k.ifm.stride_x, k.ofm.width * k.ofm.stride_x
    if max(outs) + out_span <= min(ins) or max(ins) + in_span <= min(outs):
        return None
    hits = [(r, j, o == i) for r, o in enumerate(outs) for j, i in enumerate(ins) if o < i + in_span and i < o + out_span]
    if not hits:
        return None
    same = ((k.ifm.height, k.ifm.width, k.ifm.depth, k.ifm.bits, k.ifm.stride_y)
            == (k.ofm.height, k.ofm.width, k.ofm.depth, k.ofm.bits, k.ofm.stride_y))
    shape = Shape(kind, k.kernel.height, k.kernel.width, k.kernel.stride_y, k.kernel.stride_x, k.pads[0], same)
    limit = None
    if all(aligned for _, _, aligned in hits):
        lag = min(r - j for r, j, _ in hits)
        limit = limit_for(shape, lag * k.ofm.stride_y, k.ofm.stride_y) if lag >= 0 else None
    if limit is None:
        raise LoweringError(f"the {kind}'s OFM overlaps its IFM where no OFM block keeps that safe")
    return limit


def _depth_slice(k: KernelOp, ohwi: np.ndarray, channels: tuple[int, int], kind: str) -> tuple[KernelOp, np.ndarray]:
    """OFM channels [first, stop) of a CONV or FULLY_CONNECTED: the OFM a window of the whole
    one (its strides), the weights of those channels."""
    first, stop = channels
    if kind != "conv" or not 0 <= first < stop <= k.ofm.depth:
        raise LoweringError(f"OFM depth slice {first}..{stop} of a {kind} of depth {k.ofm.depth}")
    ofm = k.ofm
    placement = replace(ofm.placement, address=ofm.placement.address + first * ofm.elem_bytes,
                        wrap_address=ofm.placement.wrap_address + first * ofm.elem_bytes
                        if ofm.placement.rows0 else 0)
    sliced = replace(ofm, placement=placement, depth=stop - first, row_stride=ofm.stride_y,
                     column_stride=ofm.stride_x)
    return replace(k, ofm=sliced), ohwi[first:stop]


def lower_depthwise(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """DEPTHWISE_CONV_2D, int8 or int16, depth multiplier 1 (OFM channel c reads IFM channel c);
    strides 1-3, dilation 1-2."""
    x, w = op.inputs[0], op.inputs[1]
    assert x is not None and w is not None and w.data is not None
    activation_bits(x, op.outputs[0], w)
    o = typed_options(op, DepthwiseConv2DOptions)
    if op.outputs[0].shape[-1] != hwc(x.shape)[2]:
        raise LoweringError("depth multiplier above 1")
    kernel = _unstrided(Kernel(w.shape[1], w.shape[2], o.stride_h, o.stride_w, o.dilation_h, o.dilation_w),
                        op.outputs[0])
    _check_kernel(kernel)
    ifm, ofm = feature_map(x, place), feature_map(op.outputs[0], place)
    k = KernelOp(Cmd0.OP_DEPTHWISE, 0, ifm, ofm, kernel, _geometry(ifm, ofm, kernel, o.padding, stream.pad_top),
                 output_clamp(op, o.activation))
    _emit_weighted(op, k, w.data.transpose(3, 1, 2, 0), config, flash, stream, "depthwise")


def lower_fully_connected(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """FULLY_CONNECTED, int8 or int16, constant weights: a 1x1 CONV over the input's rows (height) and
    its last axis (depth)."""
    x, w = op.inputs[0], op.inputs[1]
    assert x is not None and w is not None
    if w.data is None:
        raise LoweringError("weights are not constant")
    bits = activation_bits(x, op.outputs[0], w)
    depth = w.shape[1]
    rows = x.num_elements // depth
    ifm = feature_map(x, place, (rows, 1, depth))
    ofm = feature_map(op.outputs[0], place, (rows, 1, w.shape[0]))
    kernel = Kernel()
    k = KernelOp(Cmd0.OP_CONV, 0, ifm, ofm, kernel, (0, 0, 0, 0), output_clamp(op, typed_options(op, FullyConnectedOptions).activation),
                 is_part_kernel_first(depth, kernel, bits))
    _emit_weighted(op, k, w.data.reshape(w.shape[0], 1, 1, depth), config, flash, stream, "conv")


def lower_pool(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """MAX_POOL_2D and AVERAGE_POOL_2D, int8 or int16, input and output with equal scale and zero point;
    strides 1-3, windows up to 8x8 (AVERAGE with SAME padding) or 256x256. AVERAGE rounds
    half away from zero (NATURAL on the stored values), as TFLite."""
    x = op.inputs[0]
    assert x is not None
    y = op.outputs[0]
    activation_bits(x, y)
    if x.quant != y.quant:
        raise LoweringError("input and output quantization differ")
    o = typed_options(op, Pool2DOptions)
    kernel = _unstrided(Kernel(o.filter_h, o.filter_w, o.stride_h, o.stride_w), y)
    if not (1 <= kernel.stride_x <= 3 and 1 <= kernel.stride_y <= 3):
        raise LoweringError(f"stride {kernel.stride_y}x{kernel.stride_x}: the NPU takes 1 to 3")
    average = op.kind is OpKind.AVERAGE_POOL_2D
    limit = 8 if average and o.padding is Padding.SAME else 256
    if kernel.height > limit or kernel.width > limit:
        raise LoweringError(f"pool window above {limit}x{limit}")
    ifm, ofm = feature_map(x, place), feature_map(y, place)
    pads = _geometry(ifm, ofm, kernel, o.padding, stream.pad_top)
    if average:
        # TFLite averages the stored values (equal scales and zero points): zero points 0, and
        # over a padded window the hardware's count of real taps with OFM_SCALE 1, shift 0.
        ifm, ofm = replace(ifm, zero_point=0), replace(ofm, zero_point=0)
    k = KernelOp(Cmd0.OP_POOL, PoolMode.AVERAGE if average else PoolMode.MAX, ifm, ofm, kernel, pads,
                 output_clamp(op, o.activation), global_scale=(1, 0) if average and any(pads) else None,
                 rounding=Rounding.NATURAL if average else Rounding.TFL)
    emit_kernel_op(stream, k, _block_for(config, "pool", k, stream.lut_busy, op))


LOWERINGS = {
    OpKind.CONV_2D: lower_conv,
    OpKind.DEPTHWISE_CONV_2D: lower_depthwise,
    OpKind.FULLY_CONNECTED: lower_fully_connected,
    OpKind.MAX_POOL_2D: lower_pool,
    OpKind.AVERAGE_POOL_2D: lower_pool,
}

__all__ = ["LOWERINGS", "Flash", "LoweringError", "quantize_multiplier"]
