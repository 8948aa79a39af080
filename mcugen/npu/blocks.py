"""The OFM block of an NPU operation and the SHRAM layout that holds its IFM and accumulators.

SHRAM rule (Ethos-U55; the facts as Vela's architecture_allocator records them): the shared
buffer is 1 KiB banks. Banks 0-1 are reserved for the output; the IFM buffer follows
(IB_END = 2 + IFM banks), the accumulators end where the LUT's reserved banks start
(AB_START = total - reserved end banks - accumulator banks; 2 reserved end banks when the
configuration has more than 16 or the operation uses a LUT). A buffer is double-buffered: its banks are 2x its bytes
rounded up to a bank, rounded up to the configuration's granule. IFM bytes: the IFM block's
width x height x (depth x bits / 8 rounded up to 8); accumulator bytes: the OFM block's width x
height x (depth rounded up to 8) x accumulator bits / 8. Elementwise operations have no
accumulators: the IFM buffer runs up to the end, IFM2 starts at IB_END (full) and must fit too.
A layout fits when IB_END <= AB_START.

The block is chosen by the cost Vela uses: the IFM and weight bytes fetched per OFM element
over all blocks (an IFM block is refetched per OFM depth block of a convolution and per
sub-kernel), among the blocks (multiples of the micro-block, at most 64 wide, 32 high, 128
deep) whose layout fits.
"""

from __future__ import annotations

from ..records import dataclass
from .config import Block, NpuConfig

# Weights stream from flash (region 0) at 1 byte/cycle against SRAM's 8 in the default system
# config: a block that refetches them less is worth that much more (OpShape.weight_cost).
FLASH_WEIGHT_COST = 8.0
SRAM_WEIGHT_COST = 1.0
RESERVED_OUTPUT_BANKS = 2
OFM_BLOCK_MAX = Block(64, 32, 128)
SPLIT_DEPTH = 16
SUB_KERNEL_MAX = 8
# Bank granules per configuration: IFM 8-bit, 16-bit, elementwise 8-bit, 16-bit, 32-bit IFM,
# accumulators 16, 32, 40-bit.
_GRANULES = {
    32: (2, 2, 2, 2, 4, 4, 4, 4),
    64: (2, 2, 2, 2, 4, 4, 4, 8),
    128: (4, 4, 4, 4, 8, 4, 8, 12),
    256: (8, 8, 8, 8, 16, 8, 16, 20),
}


@dataclass(frozen=True)
class Kernel:
    """An operation's kernel geometry (1x1, stride 1 for elementwise)."""

    height: int = 1
    width: int = 1
    stride_y: int = 1
    stride_x: int = 1
    dilation_y: int = 1
    dilation_x: int = 1

    @property
    def area_height(self) -> int:
        return (self.height - 1) * self.dilation_y + 1

    @property
    def area_width(self) -> int:
        return (self.width - 1) * self.dilation_x + 1


@dataclass(frozen=True)
class BlockConfig:
    """The OFM block, and the layout registers IB_END, AB_START (and IFM2_IB_START)."""

    ofm: Block
    ib_end: int
    ab_start: int
    ib2_start: int


@dataclass(frozen=True)
class OpShape:
    """What the block search needs of an operation."""

    kind: str  # "conv", "depthwise", "pool", "elementwise"
    ofm: Block
    ifm: Block
    kernel: Kernel
    ifm_bits: int = 8
    acc_bits: int = 32
    part_kernel_first: bool = False
    scalar: bool = False  # elementwise with a scalar IFM2
    lut: bool = False  # the output stage reads a LUT from the last 2 KiB
    # What fetching a weight costs against an IFM element: 1 in Vela's cost (it DMAs weights to
    # SRAM first); mcugen streams them from flash, 8x slower than SRAM in the default system.
    weight_cost: float = 1.0


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def _banks(nbytes: int, granule: int) -> int:
    return _round_up(_ceil_div(nbytes, 1024) * 2, granule)


def _ifm_block_depth(op: OpShape, ofm_depth: int) -> int:
    if op.kind != "conv":
        return ofm_depth
    if op.ifm_bits == 16:
        return _round_up(min(op.ifm.depth, 16), 4)
    return _round_up(min(op.ifm.depth, 16 if op.part_kernel_first else 32), 8)


def _ifm_block(op: OpShape, ofm: Block, ublock: Block) -> Block:
    """The IFM box one OFM block needs for one sub-kernel."""
    k = op.kernel
    h = (ofm.height - 1) * k.stride_y + min(k.area_height, SUB_KERNEL_MAX)
    w = (ofm.width - 1) * k.stride_x + min(k.area_width, SUB_KERNEL_MAX)
    return Block(_round_up(w, ublock.width), _round_up(h, ublock.height), _ifm_block_depth(op, ofm.depth))


def layout(config: NpuConfig, op: OpShape, ofm: Block) -> BlockConfig | None:
    """The SHRAM layout of OFM block `ofm`, or None if it does not fit."""
    granules = _GRANULES[config.macs]
    ifm = _ifm_block(op, ofm, config.ofm_ublock)
    ifm_bytes = ifm.width * ifm.height * _round_up(_ceil_div(ifm.depth * op.ifm_bits, 8), 8)
    elementwise = op.kind == "elementwise"
    bit_granule = {8: 0, 16: 1, 32: 4}[op.ifm_bits]
    ifm_banks = _banks(ifm_bytes, granules[bit_granule + (2 if elementwise and op.ifm_bits < 32 else 0)])
    lut_start = config.shram_banks - (2 if config.shram_banks > 16 or op.lut else 0)
    ib_end = RESERVED_OUTPUT_BANKS + ifm_banks
    ib2_start = ib_end
    if elementwise:
        if ib2_start + (0 if op.scalar else ifm_banks) > lut_start:
            return None
        return BlockConfig(ofm, lut_start, lut_start, ib2_start)
    acc_granule = granules[{16: 5, 32: 6, 40: 7}[op.acc_bits]]
    acc_bytes = ofm.width * ofm.height * _round_up(ofm.depth, 8) * op.acc_bits // 8
    ab_start = lut_start - _banks(acc_bytes, acc_granule)
    if ib_end > ab_start:
        return None
    return BlockConfig(ofm, ib_end, ab_start, ib2_start)


def _cost(op: OpShape, config: NpuConfig, ofm: Block) -> float:
    """IFM and weight elements fetched per OFM element (Vela's relative cost)."""
    k, o = op.kernel, op.ofm
    ifm = _ifm_block(op, ofm, config.ofm_ublock)
    repeats = _ceil_div(k.area_width, SUB_KERNEL_MAX) * _ceil_div(k.area_height, SUB_KERNEL_MAX)
    full_wh = _ceil_div(o.width, ofm.width) * _ceil_div(o.height, ofm.height)
    blocks_wh = (o.width / ofm.width) * (o.height / ofm.height)
    convolution = op.kind in ("conv", "depthwise")
    weights: float = (k.area_width * k.area_height if convolution else 0) * op.ifm.depth * full_wh
    ifm_fetch = ifm.width * ifm.height * op.ifm.depth * repeats * blocks_wh
    if op.kind == "conv":
        weights *= ofm.depth * (o.depth / ofm.depth)
        ifm_fetch *= _ceil_div(o.depth, ofm.depth)
    weights *= op.weight_cost
    elements = o.width * o.height * o.depth
    cost = max(elements / (ofm.width * ofm.height * ofm.depth), 1) if op.kind == "elementwise" \
        else (ifm_fetch + weights) / elements
    if op.ifm.width * op.ifm.height * op.ifm.depth < ifm.width * ifm.height * ifm.depth * 2:
        cost /= 2
    return cost


def fitting_blocks(config: NpuConfig, op: OpShape, every_depth: bool = False) -> list[tuple[float, BlockConfig]]:
    """Every candidate OFM block whose layout fits, with its Vela cost: multiples of the
    micro-block up to OFM_BLOCK_MAX and the OFM; depths split in 16s below the OFM's depth as
    Vela does, or (`every_depth`) every multiple of the micro-block's depth."""
    ub = config.ofm_ublock
    limit = _limit(config, op)
    found: list[tuple[float, BlockConfig]] = []
    depth = ub.depth if every_depth else max(ub.depth, min(limit.depth, SPLIT_DEPTH))
    if depth < op.ofm.depth and not every_depth:
        depth = _round_up(depth, SPLIT_DEPTH)
    while depth <= limit.depth:
        for height in range(ub.height, limit.height + 1, ub.height):
            for width in range(ub.width, limit.width + 1, ub.width):
                fits = _try(config, op, Block(width, height, depth))
                if fits is None:
                    break  # nor does any wider block
                found.append(fits)
        depth += ub.depth
        if depth < op.ofm.depth and not every_depth:
            depth = _round_up(depth, SPLIT_DEPTH)
    return found


def balanced_blocks(config: NpuConfig, op: OpShape) -> list[tuple[float, BlockConfig]]:
    """The fitting blocks (any depth in micro-blocks) that are, along each axis, the smallest
    multiple of the micro-block for their count of blocks: a larger one of the same count
    only computes more of its edge blocks' padding. A layout that does not fit does not fit
    wider or higher either, which ends each row of the search."""
    ub, limit = config.ofm_ublock, _limit(config, op)
    found: list[tuple[float, BlockConfig]] = []
    for depth in _balanced(op.ofm.depth, limit.depth, ub.depth):
        for height in _balanced(op.ofm.height, limit.height, ub.height):
            row = 0
            for width in _balanced(op.ofm.width, limit.width, ub.width):
                fits = _try(config, op, Block(width, height, depth))
                if fits is None:
                    break
                found.append(fits)
                row += 1
            if row == 0:
                break
    return found


def _limit(config: NpuConfig, op: OpShape) -> Block:
    ub = config.ofm_ublock
    return Block(_round_up(min(op.ofm.width, OFM_BLOCK_MAX.width), ub.width),
                 _round_up(min(op.ofm.height, OFM_BLOCK_MAX.height), ub.height),
                 _round_up(min(op.ofm.depth, OFM_BLOCK_MAX.depth), ub.depth))


def _balanced(size: int, limit: int, step: int) -> list[int]:
    """Ascending: for each count of blocks along an axis of `size`, the smallest block (a
    multiple of `step`, at most `limit`) that covers it in that many."""
    sizes = {_round_up(_ceil_div(size, n), step) for n in range(1, _ceil_div(size, step) + 1)}
    return sorted(s for s in sizes if s <= limit)


def choose_block(config: NpuConfig, op: OpShape) -> BlockConfig:
    """The OFM block of least Vela cost whose layout fits; ValueError if none does."""
    best: tuple[float, BlockConfig] | None = None
    for fits in fitting_blocks(config, op):
        if best is None or fits[0] < best[0]:
            best = fits
    if best is None:
        raise ValueError(no_fit_message(config))
    return best[1]


def no_fit_message(config: NpuConfig) -> str:
    return f"no OFM block fits the {config.shram_banks} KiB shared buffer"


def _try(config: NpuConfig, op: OpShape, ofm: Block) -> tuple[float, BlockConfig] | None:
    shape = ofm
    if op.ofm.height == 1 and op.kernel.height == 1 and config.ofm_ublock.height == 2:
        shape = Block(ofm.width, 1, ofm.depth)  # 1-high OFMs: half the accumulators
    fitted = layout(config, op, shape)
    if fitted is None:
        return None
    return _cost(op, config, ofm), BlockConfig(ofm, fitted.ib_end, fitted.ab_start, fitted.ib2_start)


def is_part_kernel_first(ifm_depth: int, kernel: Kernel, ifm_bits: int) -> bool:
    """Part-kernel-first when the IFM is at most 8 deep, or when it uses the MACs better than
    depth-first (IFM depth over its rounding to 32 (16-bit: 16) channels vs. depth and kernel
    positions over their roundings to 8 channels and 4 (16-bit: 2) positions)."""
    if ifm_depth <= 8:
        return True
    positions = kernel.height * kernel.width
    depth_first = ifm_depth / _round_up(ifm_depth, 32 if ifm_bits == 8 else 16)
    part = ifm_depth * positions / (_round_up(ifm_depth, 8) * _round_up(positions, 4 if ifm_bits == 8 else 2))
    return part > depth_first


__all__ = [
    "FLASH_WEIGHT_COST",
    "SRAM_WEIGHT_COST",
    "BlockConfig",
    "Kernel",
    "OpShape",
    "balanced_blocks",
    "choose_block",
    "fitting_blocks",
    "is_part_kernel_first",
    "layout",
    "no_fit_message",
]
