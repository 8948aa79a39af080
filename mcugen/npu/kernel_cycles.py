"""The device's cycle model of one CONV, DEPTHWISE or POOL operation, at build time.

A Python mirror of templates/runtime/npu/mcugen_npu_cycles.c's kernel operations (NHWC feature
maps in SRAM, weights and scales in flash, Vela's default system config), so that the build can
weigh stripe cuts by what the device will charge: block by block the MAC array and the output
unit work as a pipeline (the slower stage sets the pace, each at least a quarter of the block's
work with its IFM and OFM transfers), the first block's faster stage adds once (fill), and the
operation takes the slower of that and each memory's traffic (the IFM block refetched per
sub-kernel and, for a CONV, per OFM depth block; the weights streamed per block position).
What it does not know: the encoded weights' length (it counts the raw int8 weights) and bursts
of odd shapes. The OFM block is the lowering's (blocks.choose_block), passed in.
"""

from __future__ import annotations

import math

from ..records import dataclass
from .config import Block, NpuConfig

SUB_KERNEL_MAX = 8
SRAM_BYTES_PER_CYCLE = 8
SRAM_BURST = 32
SRAM_LATENCY = 32
FLASH_BYTES_PER_CYCLE = 1
FLASH_BURST = 128
FLASH_LATENCY = 64
SCALE_BYTES_PER_CHANNEL = 10


@dataclass(frozen=True)
class KernelShape:
    """One kernel operation as the cycle model sees it."""

    kind: str  # "conv", "depthwise", "pool"
    ofm: Block
    ifm: Block  # the IFM rows, columns and channels the operation reads
    kernel_h: int  # undilated
    kernel_w: int
    stride_y: int
    stride_x: int
    bits: int  # IFM bits (8 or 16); the OFM has the same
    part_kernel: bool
    acc40: bool
    output_rate: float  # cycles per OFM element of the output stage (estimate.output_cycles' rate)
    weight_bytes: int  # 0 for a pool
    weights_in_sram: bool = False  # a DMA copied the weights and scales into SRAM (--npu-weights)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def _column(config: NpuConfig) -> int:
    return int(math.log2(config.macs // 32))


def _ifm_block(op: KernelShape, block: Block, config: NpuConfig) -> Block:
    """The IFM block one OFM block needs for its first sub-kernel (the device's describe())."""
    ub = config.ofm_ublock
    if op.kind != "conv":
        depth = block.depth
    elif op.bits == 16:
        depth = _round_up(min(op.ifm.depth, 16), 4)
    else:
        depth = _round_up(min(op.ifm.depth, 16 if op.part_kernel else 32), 8)
    return Block(_round_up((block.width - 1) * op.stride_x + min(op.kernel_w, SUB_KERNEL_MAX), ub.width),
                 _round_up((block.height - 1) * op.stride_y + min(op.kernel_h, SUB_KERNEL_MAX), ub.height), depth)


def _clip(a: Block, limit: Block) -> Block:
    return Block(min(a.width, limit.width), min(a.height, limit.height), min(a.depth, limit.depth))


def _volume(a: Block) -> int:
    return a.width * a.height * a.depth


def _used(nbytes: float, burst: int, want: int) -> float:
    """Bytes of bandwidth: a burst shorter than the memory's costs a whole one."""
    return nbytes * want / min(want, max(burst, 1))


def _read_burst(elem: int, block: Block, whole_depth: bool) -> int:
    return elem * block.depth * (block.width if whole_depth else 1)


def _write_burst(elem: int, block: Block, whole_depth: bool) -> int:
    if whole_depth and block.depth <= 16:
        return elem * block.depth * block.width
    return min(64, 16 * elem, block.depth * elem)


def _sub_kernel(op: KernelShape, config: NpuConfig, elements: int, ublk_xy: int, ublk_z: int,
                ifm_block_depth: int) -> tuple[int, int]:
    """(MAC cycles, kernel steps) of one sub-kernel for one OFM block."""
    writeback = 4 * config.ofm_ublock.depth
    per_step = 4 * ublk_xy
    if op.kind == "pool":
        cycles = max(elements, 4) * ublk_xy * ublk_z
        return (cycles * (op.bits // 2) if _column(config) else cycles), 1
    if op.kind == "depthwise":
        steps = _ceil_div(elements, 4)
        per_step *= 2 if op.bits == 16 else 1
        return max(per_step, writeback) * steps * ublk_z, steps
    if not op.part_kernel:
        return max(per_step, writeback) * elements * ublk_z, elements
    steps = _ceil_div(elements, 2 if op.bits == 16 else 4)
    return max(per_step, writeback) * steps * _ceil_div(ifm_block_depth, 8) * ublk_z, steps


def _pipeline_delay(op: KernelShape, config: NpuConfig, steps: int, ublk_x: int, ublk_y: int, ublk_z: int,
                    ifm_block_depth: int) -> int:
    column = _column(config)
    if column == 0:
        delay = 7 if op.acc40 else 3
    else:
        delay = 3 if op.acc40 and column in (1, 2) else 2
    cycles = 0
    if ublk_x == 1 and ublk_y == 1:
        if ublk_z == 1:
            cycles = delay * steps
        elif steps > 1:
            cycles = delay * (steps - 1) * ublk_z
    if column == 0 and (ublk_x == 1 or ublk_y == 1) and ublk_z > 1 and op.acc40:
        cycles += delay * ublk_z
    if op.part_kernel:
        cycles *= _ceil_div(ifm_block_depth, 8)
    return cycles


def _block_mac(op: KernelShape, config: NpuConfig, block: Block, ublock: Block, ifm_block_depth: int) -> int:
    ublk_x, ublk_y = _ceil_div(block.width, ublock.width), _ceil_div(block.height, ublock.height)
    ublk_z = _ceil_div(block.depth, ublock.depth)
    cycles = 0
    for sy in range(0, op.kernel_h, SUB_KERNEL_MAX):
        for sx in range(0, op.kernel_w, SUB_KERNEL_MAX):
            elements = min(op.kernel_h - sy, SUB_KERNEL_MAX) * min(op.kernel_w - sx, SUB_KERNEL_MAX)
            mac, steps = _sub_kernel(op, config, elements, ublk_x * ublk_y, ublk_z, ifm_block_depth)
            cycles += mac + _pipeline_delay(op, config, steps, ublk_x, ublk_y, ublk_z, ifm_block_depth)
    if op.kind == "conv":
        cycles *= _ceil_div(op.ifm.depth, min(op.ifm.depth, ifm_block_depth))
    return cycles


def _axis(size: int, block: int) -> list[tuple[int, int]]:
    """(block size, count) along one axis: full blocks, then the rest."""
    first = min(size, block)
    full = size // first
    rest = size - full * first
    return [(first, full)] + ([(rest, 1)] if rest else [])


def kernel_cycles(op: KernelShape, config: NpuConfig, block: Block) -> float:
    """The operation's cycles on the device with OFM block `block` (mcugen_npu_op_cycles)."""
    ublock = config.ofm_ublock
    if (ublock.height == 2 and op.kind != "pool" and op.ofm.height == 1 and op.ofm.width % 2 == 0
            and op.kernel_h == 1):  # u55-256's 1D convolution
        ublock, block = Block(4, 1, ublock.depth), Block(block.width, 1, block.depth)
    ifm_block = _ifm_block(op, block, config)
    elem = op.bits // 8
    in_blk = _clip(op.ifm, ifm_block)
    whole_in = ifm_block.depth == op.ifm.depth
    block_memory = (SRAM_LATENCY + _used(_volume(in_blk) * elem, _read_burst(elem, ifm_block, whole_in), SRAM_BURST)
                    / SRAM_BYTES_PER_CYCLE)
    whole_out = block.depth == op.ofm.depth
    block_memory += SRAM_LATENCY + _used(_volume(_clip(op.ofm, block)) * elem,
                                         _write_burst(elem, block, whole_out), SRAM_BURST) / SRAM_BYTES_PER_CYCLE
    total, fill = 0.0, None
    for h, nh in _axis(op.ofm.height, block.height):
        for w, nw in _axis(op.ofm.width, block.width):
            for d, nd in _axis(op.ofm.depth, block.depth):
                blk = Block(w, h, d)
                mac = float(_block_mac(op, config, blk, ublock, ifm_block.depth))
                out = float(math.ceil(op.output_rate * _volume(blk)))
                if op.kind != "pool":
                    out = max(out, SCALE_BYTES_PER_CHANNEL * d * FLASH_LATENCY / 256)
                command = (block_memory + out + mac) / 4
                mac, out = max(mac, command), max(out, command)
                fill = min(mac, out) if fill is None else fill
                total += max(mac, out) * nh * nw * nd
    compute = total + (fill or 0.0)
    xy_blocks = _ceil_div(op.ofm.height, block.height) * _ceil_div(op.ofm.width, block.width)
    fetches = xy_blocks * (_ceil_div(op.ofm.depth, block.depth) if op.kind == "conv" else 1)
    sub_kernels = _ceil_div(op.kernel_w, SUB_KERNEL_MAX) * _ceil_div(op.kernel_h, SUB_KERNEL_MAX)
    ifm_bytes = in_blk.height * in_blk.width * op.ifm.depth * elem * sub_kernels * fetches
    sram = (_used(ifm_bytes, _read_burst(elem, ifm_block, whole_in), SRAM_BURST)
            + _used(_volume(op.ofm) * elem, _write_burst(elem, block, whole_out), SRAM_BURST)) / SRAM_BYTES_PER_CYCLE
    constants = op.weight_bytes * xy_blocks + (SCALE_BYTES_PER_CHANNEL * op.ofm.depth if op.kind != "pool" else 0)
    if op.weights_in_sram:
        sram, flash = sram + constants / SRAM_BYTES_PER_CYCLE, 0.0
    else:
        flash = constants / FLASH_BYTES_PER_CYCLE
    return max(math.ceil(compute), math.ceil(sram), math.ceil(flash))


__all__ = ["KernelShape", "kernel_cycles"]
