"""A build-time estimate of an mcugen NPU segment's cycles, without running the device.

report.json's "npu" "cycles_estimate" beside the "cycles" the simulated device measures. Per
IR op of a segment, a roofline: the op takes the slowest of its MAC array (MACs over the MACs per
cycle, half of them for DEPTHWISE, whose micro-block walks 4 kernel positions per step), its
output stage (per OFM element: the output unit's or the activation unit's rate, whichever is
slower; the tables of the device's cycle model, templates/runtime/npu/mcugen_npu_cycles.c,
which come from Vela's performance model), its feature-map traffic in SRAM (8 bytes/cycle) and
its constants read from flash (1 byte/cycle, plus 10 bytes of bias and scale per OFM channel);
each memory adds one read latency. Vela's default system config (Ethos_U55_High_End_Embedded,
Shared_Sram), as the device's defaults. It ignores what the device model charges beyond that:
block edges, refetches of IFM blocks per sub-kernel and of weights per block, bursts, and the
timeline of DMAs; tests/test_npu_figures.py states the band it keeps to the measured cycles.
"""

from __future__ import annotations

import math

from ..ir import Activation, Op, OpKind
from ..ops.registry import op_macs
from .config import NpuConfig

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


def op_cycles(op: Op, config: NpuConfig, sram_weights: bool = False) -> int:
    """One IR op's estimated cycles on the NPU (0 for ops that move no data)."""
    if op.kind in NO_WORK:
        return 0
    compute = max(mac_cycles(op, config), output_cycles(op, config))
    return math.ceil(max(compute, *memory_cycles(op, sram_weights)))


def weight_copy_cycles(op: Op) -> int:
    """The DMA of the op's constants from flash into its weight buffer."""
    return math.ceil(constant_bytes(op) / FLASH_BYTES_PER_CYCLE + FLASH_LATENCY)


def segment_cycles(ops: tuple[Op, ...], config: NpuConfig, sram_weights: frozenset[int] = frozenset()) -> int:
    """A segment's ops one after the other (the device runs them in stream order); an op in
    `sram_weights` (ids) reads its constants from SRAM after a DMA that runs beside the previous
    op and adds what it takes beyond it."""
    total = previous = 0
    for op in ops:
        cycles = op_cycles(op, config, id(op) in sram_weights)
        if id(op) in sram_weights:
            total += max(0, weight_copy_cycles(op) - previous)
        total += cycles
        previous = cycles
    return total
