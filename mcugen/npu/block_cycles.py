"""The OFM block of a CONV, DEPTHWISE, FULLY_CONNECTED or pool operation, chosen by the device's cycles.

Vela's relative cost (blocks.choose_block without a cycle model) counts IFM and weight bytes
per OFM element as if both came from SRAM. On the device (mcugen_npu_cycles.c, mirrored by
kernel_cycles.py) an operation takes the slowest of its compute and each memory's traffic,
and the weights, in flash unless a DMA buffered them, stream again for every OFM block XY
position: a block that covers more of the OFM's XY can cost MAC efficiency yet save far more
flash traffic. So the candidates whose SHRAM layout fits (any depth in micro-blocks, not
only Vela's splits in 16s: a shallow block may fit the whole OFM's XY; per axis the smallest
block for each count of blocks, blocks.balanced_blocks) are scored by the cycle model, and
Vela's cost breaks ties (deterministic, and the better block where the model is blind).

The lowering (lower.py) and the build-time estimate (estimate.py) both choose here, from the
same operation shape, so the estimate prices the block the stream carries. The weight
stream's length depends a little on the block depth (padding to micro-blocks); the search
uses its length for blocks of the whole OFM depth (at most 128).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .blocks import OFM_BLOCK_MAX, BlockConfig, OpShape, balanced_blocks, no_fit_message
from .config import Block, NpuConfig
from .kernel_cycles import FLASH_BYTES_PER_CYCLE, SRAM_BYTES_PER_CYCLE, KernelShape, kernel_cycles
from .overlap_rule import BlockLimit


def cycle_shape(op: OpShape, output_rate: float, weight_bytes: int, weights_in_sram: bool) -> KernelShape:
    """`op` (a "conv", "depthwise" or "pool" shape) as the cycle model sees it."""
    k = op.kernel
    return KernelShape(op.kind, op.ofm, op.ifm, k.height, k.width, k.stride_y, k.stride_x, op.ifm_bits,
                       op.part_kernel_first, op.acc_bits == 40, output_rate,
                       weight_bytes if op.kind != "pool" else 0, weights_in_sram)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# the same operation shape comes back with other weight lengths (stream slices, SRAM weights)
_balanced_blocks = functools.lru_cache(maxsize=1024)(balanced_blocks)


@functools.lru_cache(maxsize=8192)
def _fastest(config: NpuConfig, op: OpShape, shape: KernelShape, limit: BlockLimit | None) -> BlockConfig:
    """Branch and bound: the weights' traffic (weight bytes per block position) bounds a
    block's cycles from below and costs nothing to compute, so candidates go in its order
    and the search stops at the first whose bound exceeds the best cycles found."""
    rate = SRAM_BYTES_PER_CYCLE if shape.weights_in_sram else FLASH_BYTES_PER_CYCLE

    def bound(block: Block) -> float:
        xy_blocks = _ceil_div(op.ofm.height, block.height) * _ceil_div(op.ofm.width, block.width)
        return shape.weight_bytes * xy_blocks / rate

    allowed = [f for f in _balanced_blocks(config, op) if limit is None or limit.allows(f[1].ofm, op.ofm.depth)]
    ranked = sorted(allowed, key=lambda fits: (bound(fits[1].ofm), fits[0]))
    best: tuple[tuple[float, float], BlockConfig] | None = None
    for cost, block in ranked:
        if best is not None and bound(block.ofm) > best[0][0]:
            break
        key = (kernel_cycles(shape, config, block.ofm), cost)
        if best is None or key < best[0]:
            best = key, block
    if best is None:
        raise ValueError(no_fit_message(config))
    return best[1]


def cycle_block(config: NpuConfig, op: OpShape, output_rate: float, weight_bytes: Callable[[int], int] | None,
                weights_in_sram: bool = False, limit: BlockLimit | None = None) -> BlockConfig:
    """The block of fewest device cycles for `op`, whose output stage takes `output_rate`
    cycles per OFM element and whose weight stream is `weight_bytes(block depth)` long (None:
    no weights), among those `limit` allows (an OFM over its IFM, overlap_rule.py); ValueError
    if no block fits. Cached per shape."""
    ub = config.ofm_ublock.depth
    length = weight_bytes(-(-min(op.ofm.depth, OFM_BLOCK_MAX.depth) // ub) * ub) if weight_bytes is not None else 0
    return _fastest(config, op, cycle_shape(op, output_rate, length, weights_in_sram), limit)


__all__ = ["cycle_block", "cycle_shape"]
