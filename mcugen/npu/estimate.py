"""A build-time estimate of an mcugen NPU segment's cycles, without running the device.

report.json's "npu" "cycles_estimate" beside the "cycles" the simulated device measures.

- CONV_2D, DEPTHWISE_CONV_2D and the pools on 4-D feature maps, and FULLY_CONNECTED (the
  lowering's 1x1 CONV over its rows): the device's own cycle model
  (kernel_cycles.py, a mirror of templates/runtime/npu/mcugen_npu_cycles.c) with the OFM block
  the lowering chooses (block_cycles.cycle_block, for lower.py's shape of the operation) and the
  length of the weight stream as the lowering encodes it. Block by block, with the pipeline's
  fill, the IFM refetches and the weights streamed from flash once per block position.
- Every other op: a roofline, the slowest of its MAC array (MACs over the MACs per cycle), its
  output stage (per OFM element: the output unit's or the activation unit's rate, whichever is
  slower; the cycle model's tables, which come from Vela's performance model), its feature-map
  traffic in SRAM (8 bytes/cycle) and its constants read from flash (1 byte/cycle, plus 10 bytes
  of bias and scale per OFM channel); each memory adds one read latency.

Vela's default system config (Ethos_U55_High_End_Embedded, Shared_Sram), as the device's
defaults. It ignores the timeline of DMAs (the LUT loads) and bursts of odd shapes;
tests/test_npu_figures.py states the band it keeps to the measured cycles.

An op whose weights a DMA copied into an SRAM buffer (--npu-weights, weight_buffers.py) reads
them and its scales from SRAM, with the blocks the lowering picks for that; its DMA runs beside
the op before it and adds what it takes beyond that op.

A striped chain (mcugen/npu/stripes.py) is one operation per call of every stripe: each call is
estimated on its own rows (`chain_cycles`), so the per-operation fill and latencies, the weights
re-streamed per call and the recomputed halo rows all count; stripes.choose_stripes weighs them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping

import numpy as np

from ..ir import Activation, Conv2DOptions, DepthwiseConv2DOptions, Op, OpKind, Pool2DOptions
from ..memory.tiling import Chain, OpRows, Tiling, call_view
from ..ops.registry import op_macs
from .block_cycles import cycle_block, cycle_shape
from .blocks import FLASH_WEIGHT_COST, SRAM_WEIGHT_COST, Kernel, OpShape, is_part_kernel_first
from .config import Block, NpuConfig
from .kernel_cycles import KernelShape, kernel_cycles
from .memo import memoised, op_id_key, op_shape_key
from .overlap_rule import BlockLimit
from .weights import WeightOrder, encode_weights

SRAM_BYTES_PER_CYCLE = 8
FLASH_BYTES_PER_CYCLE = 1
SRAM_LATENCY = 32
FLASH_LATENCY = 64
SCALE_BYTES_PER_CHANNEL = 10


# Q8 cycles per output element, by configuration (u55-32, -64, -128, -256): the cycle model's
# output_rate columns OUT_ADD_SUB, OUT_MUL32, OUT_MAXPOOL, OUT_OTHER and activation_rate.
ADD_SUB = (1536, 768, 384, 192)
MUL = (768, 384, 320, 288)
MAX_POOL = (256, 128, 64, 32)
OTHER = (512, 256, 128, 64)
LUT = (256, 256, 256, 256)
CLAMP = (256, 256, 128, 64)

OUTPUT_RATE = {OpKind.ADD: ADD_SUB, OpKind.SUB: ADD_SUB, OpKind.MUL: MUL, OpKind.MAX_POOL_2D: MAX_POOL,
               OpKind.MAXIMUM: ADD_SUB, OpKind.MINIMUM: ADD_SUB}
LUT_KINDS = frozenset({OpKind.LOGISTIC, OpKind.TANH, OpKind.HARD_SWISH, OpKind.LEAKY_RELU})
NO_WORK = frozenset({OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS, OpKind.CONCATENATION})


def _column(config: NpuConfig) -> int:
    return int(math.log2(config.macs // 32))


def _activation(op: Op) -> Activation | None:
    return getattr(op.options, "activation", None)


def output_cycles(op: Op, config: NpuConfig) -> float:
    """The output stage: OFM elements at the slower of the output and activation units."""
    column = _column(config)
    rate = OUTPUT_RATE.get(op.kind, OTHER)[column]
    if op.kind in LUT_KINDS:
        rate = max(rate, LUT[column])
    elif op.kind in (OpKind.RELU, OpKind.RELU6) or _activation(op) not in (None, Activation.NONE):
        rate = max(rate, CLAMP[column])
    return sum(t.num_elements for t in op.outputs if t is not None) * rate / 256


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def mac_cycles(op: Op, config: NpuConfig) -> float:
    """The MAC array: CONV and FULLY_CONNECTED take 8 IFM channels per step (a 1-channel IFM
    wastes 7/8 of it); DEPTHWISE uses half of it (4 kernel positions x the OFM micro-block)."""
    if op.kind is OpKind.DEPTHWISE_CONV_2D:
        return op_macs(op) / (config.macs // 2)
    macs = op_macs(op)
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    if op.kind in (OpKind.CONV_2D, OpKind.FULLY_CONNECTED) and weights is not None and weights.shape[-1]:
        macs = macs * _round_up(weights.shape[-1], 8) // weights.shape[-1]
    return macs / config.macs


def encoded_length(ohwi: np.ndarray, order: WeightOrder) -> int:
    """The length of OHWI weights' stream in `order` (weights.encode_weights caches it)."""
    return len(encode_weights(ohwi, order))


def _ohwi(op: Op) -> np.ndarray:
    """The op's weights as the lowering orders them: OHWI (DEPTHWISE: channels as O, FULLY_CONNECTED: O11I)."""
    w = op.inputs[1]
    assert w is not None and w.data is not None
    if op.kind is OpKind.DEPTHWISE_CONV_2D:
        return w.data.transpose(3, 1, 2, 0)
    if op.kind is OpKind.FULLY_CONNECTED:
        return w.data.reshape(w.shape[0], 1, 1, w.shape[1])
    return w.data


def encoded_weight_bytes(op: Op, config: NpuConfig, block_depth: int, pkf: bool) -> int:
    """The length of `op`'s weight stream as the lowering encodes it for OFM blocks of
    `block_depth` (what the device streams per block position)."""
    x = op.inputs[0]
    assert x is not None
    o = op.options
    dilation = (o.dilation_h, o.dilation_w) if isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions)) else (1, 1)
    order = WeightOrder(block_depth, op.kind is OpKind.DEPTHWISE_CONV_2D, pkf, 8 * x.dtype.itemsize,
                        config.ofm_ublock.depth, config.ifm_ublock.depth, dilation)
    return encoded_length(_ohwi(op), order)


def _fully_connected(op: Op) -> tuple[Block, Block] | None:
    """A FULLY_CONNECTED with constant weights as the lowering's 1x1 CONV: (IFM, OFM) as
    (1 wide, rows high, depth)."""
    w = op.inputs[1] if len(op.inputs) > 1 else None
    x = op.inputs[0]
    if op.kind is not OpKind.FULLY_CONNECTED or x is None or w is None or w.data is None or len(w.shape) != 2:
        return None
    rows = x.num_elements // w.shape[1]
    return Block(1, rows, w.shape[1]), Block(1, rows, w.shape[0])


def kernel_shape(op: Op, config: NpuConfig, sram_weights: bool = False) -> tuple[KernelShape, OpShape] | None:
    """A CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED or pool on 4-D feature maps as the
    device's cycle model and the lowering's block search see it (lower.py's shape of the
    operation); else None."""
    x, y, o = op.inputs[0], op.outputs[0], op.options
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    fc = _fully_connected(op)
    if fc is not None and x is not None:
        ifm, ofm = fc
        kind, kh, kw, dilation, strides = "conv", 1, 1, (1, 1), (1, 1)
    elif x is None or len(x.shape) != 4 or len(y.shape) != 4:
        return None
    else:
        (_, ih, iw, ic), (_, oh, ow, oc) = x.shape, y.shape
        ifm, ofm = Block(iw, ih, ic), Block(ow, oh, oc)
        if isinstance(o, Pool2DOptions):
            kind, kh, kw, dilation = "pool", o.filter_h, o.filter_w, (1, 1)
        elif isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions)) and weights is not None:
            kind = "conv" if op.kind is OpKind.CONV_2D else "depthwise"
            kh, kw, dilation = weights.shape[1], weights.shape[2], (o.dilation_h, o.dilation_w)
        else:
            return None
        strides = (o.stride_h if oh > 1 else 1, o.stride_w if ow > 1 else 1)
    kernel = Kernel(kh, kw, *strides, *dilation)
    bits = 8 * x.dtype.itemsize
    bias = op.inputs[2] if len(op.inputs) > 2 and kind != "pool" else None
    acc40 = kind != "pool" and bits == 16 and (bias is None or bias.dtype.short == "int64")
    pkf = kind == "conv" and is_part_kernel_first(ifm.depth, kernel, bits)
    search = OpShape(kind, ofm, ifm, kernel, bits, acc_bits=40 if acc40 else 32, part_kernel_first=pkf,
                     weight_cost=SRAM_WEIGHT_COST if sram_weights else FLASH_WEIGHT_COST)
    rate = output_cycles(op, config) / max(1, y.num_elements)
    raw = weights.nbytes if kind != "pool" and weights is not None else 0
    return cycle_shape(search, rate, raw, sram_weights), search


def kernel_block(op: Op, config: NpuConfig, search: OpShape, sram_weights: bool = False,
                 limit: BlockLimit | None = None) -> Block | None:
    """The OFM block the lowering chooses for `op` (block_cycles.cycle_block; `limit`: its OFM
    over its IFM, overlap_rule.py); None if none fits."""
    def length(depth: int) -> int:
        return encoded_weight_bytes(op, config, depth, search.part_kernel_first)
    try:
        return cycle_block(config, search, output_cycles(op, config) / max(1, op.outputs[0].num_elements),
                           length if search.kind != "pool" else None, sram_weights, limit).ofm
    except ValueError:
        return None


def constant_bytes(op: Op) -> int:
    """The op's constants (and 10 bytes of bias and scale per OFM channel if any)."""
    flash = sum(t.nbytes for t in op.inputs if t is not None and t.is_constant)
    if flash:
        flash += SCALE_BYTES_PER_CHANNEL * op.outputs[0].shape[-1]  # type: ignore[union-attr]
    return flash


def memory_cycles(op: Op, sram_weights: bool = False) -> tuple[float, float]:
    """(SRAM, flash) cycles: feature maps in SRAM, constants (and bias and scales) in flash, or
    in SRAM too (`sram_weights`: a DMA copied them into a weight buffer, --npu-weights)."""
    sram = sum(t.nbytes for t in [*op.inputs, *op.outputs] if t is not None and not t.is_constant)
    flash = constant_bytes(op)
    if sram_weights:
        sram, flash = sram + flash, 0
    return (sram / SRAM_BYTES_PER_CYCLE + SRAM_LATENCY,
            flash / FLASH_BYTES_PER_CYCLE + FLASH_LATENCY if flash else 0.0)


@memoised(lambda op, config, sram_weights=False, limit=None: op_shape_key(op, config, sram_weights, limit))
def op_cycles(op: Op, config: NpuConfig, sram_weights: bool = False, limit: BlockLimit | None = None) -> int:
    """One IR op's estimated cycles on the NPU (0 for ops that move no data); `sram_weights`:
    its weights and scales read from a weight buffer in SRAM; `limit`: the blocks its OFM over
    its IFM allows (overlap.py)."""
    if op.kind in NO_WORK:
        return 0
    shapes = kernel_shape(op, config, sram_weights)
    block = kernel_block(op, config, shapes[1], sram_weights, limit) if shapes is not None else None
    if shapes is not None and block is not None:  # the device's own model, block by block
        shape = shapes[0]
        if shape.kind != "pool":
            shape = dataclasses.replace(shape, weight_bytes=encoded_weight_bytes(op, config, block.depth,
                                                                                 shape.part_kernel),
                                        weights_in_sram=sram_weights)
        return math.ceil(kernel_cycles(shape, config, block))
    compute = max(mac_cycles(op, config), output_cycles(op, config))
    return math.ceil(max(compute, *memory_cycles(op, sram_weights)))


@memoised(lambda op, rows, config, sram_weights=False: op_id_key(op, rows.in_rows, rows.out_rows, config,
                                                                 sram_weights))
def call_cycles(op: Op, rows: OpRows, config: NpuConfig, sram_weights: bool = False) -> int:
    """One stripe's call of `op`: the op on its input rows and output rows alone (its weights
    read from a weight buffer if `sram_weights`)."""
    # which operand carries the chain does not matter here: a row-wise op's rows are its input's
    return op_cycles(call_view(op, 0, rows), config, sram_weights)


def chain_cycles(chain: Chain, config: NpuConfig, sram_weights: frozenset[int] = frozenset()) -> int:
    """A striped chain: every call of every stripe, one NPU operation each; the ops in
    `sram_weights` (ids) read their weights from their buffer (npu/chain_room.py)."""
    return sum(call_cycles(op, rows, config, id(op) in sram_weights) for stripe in chain.stripes
               for op, rows in zip(chain.ops, stripe.calls, strict=True) if rows is not None)


def flash_copy_cycles(length: int) -> int:
    """A DMA of `length` bytes from flash into SRAM (flash's rate and read latency bound it)."""
    return math.ceil(length / FLASH_BYTES_PER_CYCLE + FLASH_LATENCY)


def weight_copy_cycles(op: Op) -> int:
    """The DMA of the op's constants from flash into its weight buffer."""
    return flash_copy_cycles(constant_bytes(op))


# id(op) of a streamed op (weight_stream.py) -> (cycles of the kernel before it) -> (cycles it
# adds after that kernel, the cycles before its end that the next op's DMAs run beside it)
Streamed = Mapping[int, Callable[[int], tuple[int, int]]]


def segment_cycles(ops: tuple[Op, ...], config: NpuConfig, tiling: Tiling | None = None,
                   sram_weights: frozenset[int] = frozenset(), streamed: Streamed | None = None,
                   limits: Mapping[int, BlockLimit] | None = None) -> int:
    """A segment's ops one after the other (the device runs them in stream order); the ops of a
    chain of `tiling` as its stripes' calls; an op in `sram_weights` (ids) reads its constants
    from SRAM after a DMA that runs beside the previous op and adds what it takes beyond it; an
    op in `streamed` by its weight stream's timeline; an op in `limits` (id) with the blocks its
    OFM over its IFM allows (overlap.py)."""
    total = previous = 0
    for op in ops:
        chain = tiling.chain_of(op) if tiling is not None else None
        if streamed and id(op) in streamed:
            added, previous = streamed[id(op)](previous)
            total += added
            continue
        if chain is None:
            cycles = op_cycles(op, config, id(op) in sram_weights, (limits or {}).get(id(op)))
            if id(op) in sram_weights:
                total += max(0, weight_copy_cycles(op) - previous)
        elif op is chain.ops[-1]:
            cycles = chain_cycles(chain, config, sram_weights)
            total += sum(max(0, weight_copy_cycles(o) - previous) for o in chain.ops if id(o) in sram_weights)
        else:
            continue
        total += cycles
        previous = cycles
    return total
