"""The Ethos-U55 command encoding: opcodes and the packing of command parameter fields.

The facts are the Ethos-U55 programmer's interface (arch 1.0.6) as templates/runtime/npu/
mcugen_npu_regs.h lists them for our device. A cmd0 is one word: opcode in bits 9:0, payload
size 0 in 15:14, a 16-bit parameter in 31:16. A cmd1 is the same with payload size 1, followed
by one 32-bit data word (addresses, lengths and scales).
"""

from __future__ import annotations

import enum

CMD1_FLAG = 0x4000


class Cmd0(enum.IntEnum):
    """Operations and 16-bit parameter commands."""

    OP_STOP = 0x000
    OP_IRQ = 0x001
    OP_CONV = 0x002
    OP_DEPTHWISE = 0x003
    OP_POOL = 0x005
    OP_ELEMENTWISE = 0x006
    OP_DMA_START = 0x010
    OP_DMA_WAIT = 0x011
    OP_KERNEL_WAIT = 0x012
    OP_PMU_MASK = 0x013
    IFM_PAD_TOP = 0x100
    IFM_PAD_LEFT = 0x101
    IFM_PAD_RIGHT = 0x102
    IFM_PAD_BOTTOM = 0x103
    IFM_DEPTH_M1 = 0x104
    IFM_PRECISION = 0x105
    IFM_UPSCALE = 0x107
    IFM_ZERO_POINT = 0x109
    IFM_WIDTH0_M1 = 0x10A
    IFM_HEIGHT0_M1 = 0x10B
    IFM_HEIGHT1_M1 = 0x10C
    IFM_IB_END = 0x10D
    IFM_REGION = 0x10F
    OFM_WIDTH_M1 = 0x111
    OFM_HEIGHT_M1 = 0x112
    OFM_DEPTH_M1 = 0x113
    OFM_PRECISION = 0x114
    OFM_BLK_WIDTH_M1 = 0x115
    OFM_BLK_HEIGHT_M1 = 0x116
    OFM_BLK_DEPTH_M1 = 0x117
    OFM_ZERO_POINT = 0x118
    OFM_WIDTH0_M1 = 0x11A
    OFM_HEIGHT0_M1 = 0x11B
    OFM_HEIGHT1_M1 = 0x11C
    OFM_REGION = 0x11F
    KERNEL_WIDTH_M1 = 0x120
    KERNEL_HEIGHT_M1 = 0x121
    KERNEL_STRIDE = 0x122
    PARALLEL_MODE = 0x123
    ACC_FORMAT = 0x124
    ACTIVATION = 0x125
    ACTIVATION_MIN = 0x126
    ACTIVATION_MAX = 0x127
    WEIGHT_REGION = 0x128
    SCALE_REGION = 0x129
    AB_START = 0x12D
    BLOCKDEP = 0x12F
    DMA0_SRC_REGION = 0x130
    DMA0_DST_REGION = 0x131
    DMA0_SIZE0 = 0x132
    DMA0_SIZE1 = 0x133
    IFM2_BROADCAST = 0x180
    IFM2_SCALAR = 0x181
    IFM2_PRECISION = 0x185
    IFM2_ZERO_POINT = 0x189
    IFM2_WIDTH0_M1 = 0x18A
    IFM2_HEIGHT0_M1 = 0x18B
    IFM2_HEIGHT1_M1 = 0x18C
    IFM2_IB_START = 0x18D
    IFM2_REGION = 0x18F


class Cmd1(enum.IntEnum):
    """Parameter commands with a 32-bit data word."""

    IFM_BASE0 = 0x000
    IFM_BASE1 = 0x001
    IFM_BASE2 = 0x002
    IFM_BASE3 = 0x003
    IFM_STRIDE_X = 0x004
    IFM_STRIDE_Y = 0x005
    IFM_STRIDE_C = 0x006
    OFM_BASE0 = 0x010
    OFM_BASE1 = 0x011
    OFM_BASE2 = 0x012
    OFM_BASE3 = 0x013
    OFM_STRIDE_X = 0x014
    OFM_STRIDE_Y = 0x015
    OFM_STRIDE_C = 0x016
    WEIGHT_BASE = 0x020
    WEIGHT_LENGTH = 0x021
    SCALE_BASE = 0x022
    SCALE_LENGTH = 0x023
    OFM_SCALE = 0x024
    OPA_SCALE = 0x025
    OPB_SCALE = 0x026
    DMA0_SRC = 0x030
    DMA0_DST = 0x031
    DMA0_LEN = 0x032
    IFM2_BASE0 = 0x080
    IFM2_BASE1 = 0x081
    IFM2_BASE2 = 0x082
    IFM2_BASE3 = 0x083
    IFM2_STRIDE_X = 0x084
    IFM2_STRIDE_Y = 0x085
    IFM2_STRIDE_C = 0x086


class PoolMode(enum.IntEnum):
    MAX = 0
    AVERAGE = 1
    REDUCE_SUM = 2


class ElementwiseMode(enum.IntEnum):
    MUL = 0
    ADD = 1
    SUB = 2
    MIN = 3
    MAX = 4
    LRELU = 5
    ABS = 6
    CLZ = 7
    SHR = 8
    SHL = 9


class Rounding(enum.IntEnum):
    """OFM_PRECISION / IFM_PRECISION rounding field."""

    TFL = 0  # TFLite's double rounding
    TRUNCATE = 1
    NATURAL = 2


PRECISION_BITS = {8: 0, 16: 1, 32: 2}  # the precision field of a feature map's bit width

# IFM2_BROADCAST bits
BROADCAST_H, BROADCAST_W, BROADCAST_C, BROADCAST_REVERSED, BROADCAST_SCALAR = 1, 2, 4, 64, 128

# ACTIVATION clip-range field (bits 15:12)
CLIP_OFM_PRECISION = 0


def cmd0_word(opcode: int, param: int = 0) -> int:
    """One cmd0 word; `param` is taken as 16 bits (negative values two's complement)."""
    return (opcode & 0x3FF) | ((param & 0xFFFF) << 16)


def cmd1_words(opcode: int, data: int, param: int = 0) -> tuple[int, int]:
    """A cmd1 word and its data word (taken as 32 bits)."""
    return (opcode & 0x3FF) | CMD1_FLAG | ((param & 0xFFFF) << 16), data & 0xFFFFFFFF


def ifm_precision(bits: int, signed: bool, scale_mode: int = 0, rounding: Rounding = Rounding.TFL) -> int:
    """IFM/IFM2_PRECISION: signed bit 0, precision 3:2, NHWC format (7:6 = 0), IFM scale mode
    9:8, IFM rounding 15:14."""
    return int(signed) | PRECISION_BITS[bits] << 2 | scale_mode << 8 | int(rounding) << 14


def ofm_precision(bits: int, signed: bool, global_scale: bool, rounding: Rounding = Rounding.TFL) -> int:
    """OFM_PRECISION: signed bit 0, precision 2:1, NHWC format, global scale bit 8 (OFM_SCALE
    instead of the per-channel scale stream), rounding 15:14."""
    return int(signed) | PRECISION_BITS[bits] << 1 | int(global_scale) << 8 | int(rounding) << 14


def kernel_stride(stride_x: int, stride_y: int, dilation_x: int, dilation_y: int, part_kernel_first: bool) -> int:
    """KERNEL_STRIDE: (stride - 1) split into its lsb (bits 0, 1) and msbs (8:6, 11:9),
    part-kernel-first weight order bit 2, (dilation - 1) bits 3 and 4."""
    if not (1 <= stride_x <= 16 and 1 <= stride_y <= 16 and dilation_x in (1, 2) and dilation_y in (1, 2)):
        raise ValueError(f"stride {stride_x}x{stride_y} dilation {dilation_x}x{dilation_y} not encodable")
    sx, sy = stride_x - 1, stride_y - 1
    return ((sx & 1) | (sy & 1) << 1 | int(part_kernel_first) << 2 | (dilation_x - 1) << 3
            | (dilation_y - 1) << 4 | (sx >> 1) << 6 | (sy >> 1) << 9)


def activation(function: int = 0, clip_range: int = CLIP_OFM_PRECISION) -> int:
    """ACTIVATION: function 11:0 (0 clamp only, 16 + n the LUT in slot n), clip range 15:12."""
    return function | clip_range << 12
