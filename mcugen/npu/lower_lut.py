"""Lowering of int8 unary ops through the output stage's 256-entry LUT.

An int8 op whose output element depends only on its input element (LOGISTIC, TANH, HARD_SWISH,
LEAKY_RELU, RELU, RELU6, ABS, QUANTIZE int8 -> int8) is a table: entry i is the op's TFLM
result for the input i - 128, computed once at build time by mcugen's reference kernel of the
op (held bit-exact to TFLM by the reference tests). On the NPU: a DMA copies the table from the
read-only region into the last 2 KiB of SHRAM (slot 0: SHRAM size - 2048), and a 1x1 AVERAGE
pool with zero points 0 and OFM_SCALE 1, shift 0 (Vela's LUT operation) passes each stored
value unchanged to the output stage, whose ACTIVATION
function 16 (table slot 0) replaces value v by entry v + 128. The block leaves the LUT's two
banks free.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import McugenError
from ..ir import Op, OpKind
from ..ops.registry import op_def
from ..quantization import Rounding as TfliteRounding
from .blocks import Kernel, OpShape, choose_block
from .config import Block, NpuConfig
from .featuremap import LoweringError, Place, feature_map
from .lower import FLASH_REGION, Flash, KernelOp, emit_kernel_op
from .registers import Cmd0, Cmd1, PoolMode, Rounding
from .stream import CommandStream

LUT_KINDS = frozenset({OpKind.LOGISTIC, OpKind.TANH, OpKind.HARD_SWISH, OpKind.LEAKY_RELU, OpKind.RELU,
                       OpKind.RELU6, OpKind.ABS, OpKind.QUANTIZE})
LUT_BYTES = 256
LUT_AREA = 2048  # the last 2 KiB of SHRAM hold the LUT slots
DMA_INTERNAL = 0x100  # DMA0_DST_REGION: the destination is SHRAM
ACTIVATION_TABLE_0 = 16


def lut_table(op: Op) -> bytes:
    """The op's TFLM results for the int8 inputs -128..127, as 256 bytes."""
    x, y = op.inputs[0], op.outputs[0]
    if x is None or x.dtype.short != "int8" or y.dtype.short != "int8" or x.shape != y.shape:
        raise LoweringError("a LUT op takes an int8 input to an int8 output of its shape")
    domain = np.arange(-128, 128, dtype=np.int8)
    try:
        (values,) = op_def(op.kind).reference(op, [domain], TfliteRounding.TFLM)
    except McugenError as e:  # the reference refuses what TFLM refuses (quantization, options)
        raise LoweringError(f"no table: {e}") from None
    return np.asarray(values, dtype=np.int8).reshape(LUT_BYTES).tobytes()


# Up to this many SHRAM banks, kernels of non-LUT operations may use the LUT's banks.
LUT_SHARED_BANKS = 16


def start_table_dma(table: bytes, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """`table` into flash, and the DMA that starts copying it to LUT slot 0."""
    address = flash.add(table)
    stream.cmd0(Cmd0.DMA0_SRC_REGION, FLASH_REGION)
    stream.cmd1(Cmd1.DMA0_SRC, address)
    stream.cmd0(Cmd0.DMA0_DST_REGION, DMA_INTERNAL)
    stream.cmd1(Cmd1.DMA0_DST, config.shram_bytes - LUT_AREA)
    stream.cmd1(Cmd1.DMA0_LEN, len(table))
    stream.cmd0(Cmd0.OP_DMA_START)


def load_table(table: bytes, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """`table` in LUT slot 0 before the next operation (which waits for the DMA); only the wait
    where the stream started its DMA earlier (`stream.table_started`). On 16-bank configurations
    a kernel may hold the LUT's banks (blocks.layout reserves them only above 16 or for LUT
    ops), so the copy first waits for the kernels issued before it, as Vela's streams do."""
    if stream.table_started != table:
        if config.shram_banks <= LUT_SHARED_BANKS:
            stream.cmd0(Cmd0.OP_KERNEL_WAIT, 0)
        start_table_dma(table, flash, config, stream)
    stream.table_started = None
    stream.cmd0(Cmd0.OP_DMA_WAIT, 0)


def load_lut(op: Op, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """The op's table in LUT slot 0 before the next operation (load_table)."""
    load_table(lut_table(op), flash, config, stream)


def lower_lut(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """One of LUT_KINDS, int8: the table DMA'd into SHRAM, then a 1x1 pool through it."""
    load_lut(op, flash, config, stream)
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    ifm, ofm = feature_map(x, place), feature_map(y, place)
    ifm, ofm = replace(ifm, zero_point=0), replace(ofm, zero_point=0)
    k = KernelOp(Cmd0.OP_POOL, PoolMode.AVERAGE, ifm, ofm, Kernel(), (0, 0, 0, 0), (-128, 127),
                 global_scale=(1, 0), rounding=Rounding.NATURAL)
    shape = OpShape("pool", Block(ofm.width, ofm.height, ofm.depth), Block(ifm.width, ifm.height, ifm.depth),
                    Kernel(), lut=True)
    emit_kernel_op(stream, k, choose_block(config, shape), ACTIVATION_TABLE_0)


LUT_LOWERINGS = {kind: lower_lut for kind in LUT_KINDS}
