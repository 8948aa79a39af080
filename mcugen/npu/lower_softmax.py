"""Lowering of int8 SOFTMAX into a program of NPU operations, bit-exact with TFLite.

TFLite's int8 SOFTMAX (reference_ops::Softmax, mcugen/ops/activation/reference.softmax_rows),
per row of the last axis:

  diff = x - max(row)
  e    = exp_on_negative_values(rescale(diff))      Q0.31; 0 for diff < diff_min
  sum  = sum of RoundingDivideByPOT(e, 12)          Q12.19
  h    = CLZ(sum)                                    headroom + 1
  d    = sum << (h - 1)                              the denominator in [1/2, 1) (Q0.31)
  r    = 1/d by Newton-Raphson: r0 = 48/17 - 32/17 d, then 3 x (r += 4 * SRDHM(r, 1 - d r))
  out  = RoundingDivideByPOT(SRDHM(2 r, e), 35 - h) - 128

On the NPU (the operations Vela 5.2 runs for it; the arithmetic is the NPU's, the constants
TFLite's): a MAX pool gives each row's maximum; an ELEMENTWISE SUB of the row's maximum, with
OFM zero point 127 and the 8-bit clip, indexes a 256-entry table of 32-bit exponentials (built
at build time from mcugen's TFLite reference of exp_on_negative_values for every diff) in the
output stage, into an int32 feature map; SHR 12 (NATURAL rounding) and a REDUCE_SUM pool give
the sum; CLZ, SUB and SHL the headroom and the denominator; 32-bit MULs with OFM_SCALE
(2^30, 31) are SRDHM; the last MUL (OFM_SCALE (2^30, 30): SRDHM by 2 r) and SHR by 35 - h
(NATURAL rounding) with OFM zero point -128 write the int8 output.

The int32 intermediates live in the op's scratch, a buffer the memory planner places
(`softmax_scratch_bytes`; `CommandStream.scratch` says where): two row-by-row maps (the
exponentials; the shifted ones, later the scaled ones) and seven per-row vectors. The rows are
the input's elements over its last axis; at most 256 per row (the MAX pool's window).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import McugenError
from ..ir import DType, Op, OpKind
from ..ops.activation.prepare import ACCUMULATION_INTEGER_BITS, softmax_params
from ..ops.activation.reference import exp_on_negative_values
from ..ops.fixedpoint import multiply_by_quantized_multiplier
from ..records import dataclass
from .blocks import Kernel, OpShape, choose_block
from .config import Block, NpuConfig
from .featuremap import (
    FeatureMap,
    LoweringError,
    Place,
    Placement,
    emit_ifm,
    emit_ifm2,
    emit_ofm,
    feature_map,
)
from .lower import FLASH_REGION, Flash, emit_block
from .lower_lut import load_table
from .registers import (
    BROADCAST_C,
    BROADCAST_H,
    BROADCAST_REVERSED,
    BROADCAST_W,
    Cmd0,
    Cmd1,
    ElementwiseMode,
    PoolMode,
    Rounding,
    activation,
)
from .stream import CommandStream

MAX_ROW = 256  # the MAX pool's window width
TABLE_ENTRIES = 256
CLIP_INT8 = 3  # ACTIVATION clip range: the LUT index forced to signed 8 bits
TABLE_0 = 16  # ACTIVATION function: LUT slot 0
WIDE = (-32768, 32767)  # ACTIVATION_MIN/MAX of a 32-bit OFM (not applied: 16-bit registers)
SRDHM = (1 << 30, 31)  # OFM_SCALE of a 32-bit MUL that is SaturatingRoundingDoublingHighMul
SRDHM_TWICE = (1 << 30, 30)  # ... of 2 x the first operand
ONE = (1, 0)
# TFLite's constants: 12 + 31 - 8 (the output exponent is this minus CLZ(sum)), -32/17 and 48/17
# in Q2.29 / Q0.31 halves as gemmlowp's one_over_one_plus_x_for_x_in_0_1 writes them, 1 in Q2.29
EXPONENT_BASE = ACCUMULATION_INTEGER_BITS + 31 - 8
NEG_32_OVER_17 = -1010580540
C_48_OVER_17 = 1515870810
ONE_Q29 = 1 << 29
NEWTON_STEPS = 3
ALIGN = 16
At = Callable[[int], Placement]  # a scratch offset -> where it is


def _round_up(n: int, to: int = ALIGN) -> int:
    return -(-n // to) * to


def softmax_rows(op: Op) -> tuple[int, int]:
    """(rows, row length): the input as rows of its last axis."""
    x = op.inputs[0]
    assert x is not None
    length = x.shape[-1] if x.shape else 1
    return (x.num_elements // length if length else 0), length


@dataclass(frozen=True)
class ScratchLayout:
    """Byte offsets in the op's scratch of its int32 maps ([rows, length]) and vectors ([rows])."""

    exps: int
    work: int  # shifted exponentials, then the scaled ones
    vectors: tuple[int, ...]  # max (int8), sum, clz, exponent, denominator, x, t
    size: int


def scratch_layout(rows: int, length: int) -> ScratchLayout:
    whole, vector = _round_up(rows * length * 4), _round_up(rows * 4)
    vectors = tuple(2 * whole + n * vector for n in range(7))
    return ScratchLayout(0, whole, vectors, 2 * whole + 7 * vector)


def softmax_scratch_bytes(op: Op) -> int:
    """Scratch the NPU program of a SOFTMAX needs (0 for any other op)."""
    if op.kind is not OpKind.SOFTMAX:
        return 0
    return scratch_layout(*softmax_rows(op)).size


def exp_table(op: Op) -> bytes:
    """TFLite's exponential of every diff -255..0 (entry 255 + diff), 0 below diff_min, as 32-bit."""
    try:
        p = softmax_params(op)
    except (AssertionError, McugenError) as e:
        raise LoweringError(f"no TFLite parameters: {e}") from None
    diff = np.arange(-255, 1, dtype=np.int64)
    used = diff >= p.diff_min
    rescaled = multiply_by_quantized_multiplier(np.where(used, diff, 0), p.input_multiplier, p.input_left_shift)
    exps = np.where(used, exp_on_negative_values(rescaled), 0)
    return exps.astype("<i4").tobytes()


def _int32(placement: Placement, rows: int, length: int = 1) -> FeatureMap:
    """An int32 map of `rows` x `length` (h 1, w rows, c length), NHWC."""
    return FeatureMap(placement, 1, rows, length, 32, True, 0)


def _constant(flash: Flash, value: int) -> FeatureMap:
    address = flash.add(np.array([value], "<i4").tobytes())
    return FeatureMap(Placement(FLASH_REGION, address), 1, 1, 1, 32, True, 0)


def _broadcast(ifm2: FeatureMap, ofm: FeatureMap) -> int:
    bits = 0
    for extent, full, bit in ((ifm2.height, ofm.height, BROADCAST_H), (ifm2.width, ofm.width, BROADCAST_W),
                              (ifm2.depth, ofm.depth, BROADCAST_C)):
        bits |= bit if extent == 1 and full > 1 else 0
    return bits


@dataclass(frozen=True)
class Stage:
    """The output stage of one operation."""

    scale: tuple[int, int] = ONE
    global_scale: bool = True
    rounding: Rounding = Rounding.TFL
    clamp: tuple[int, int] = WIDE
    function: int = 0
    clip: int = 0


class Program:
    """Writes the operations of one SOFTMAX into a stream."""

    def __init__(self, config: NpuConfig, flash: Flash, stream: CommandStream) -> None:
        self.config, self.flash, self.stream = config, flash, stream

    def _stage(self, ofm: FeatureMap, stage: Stage) -> None:
        s = self.stream
        s.cmd1(Cmd1.OFM_SCALE, stage.scale[0], stage.scale[1])
        emit_ofm(s, ofm, stage.global_scale, stage.rounding)
        s.cmd0(Cmd0.ACTIVATION, activation(stage.function, stage.clip))
        s.cmd0(Cmd0.ACTIVATION_MIN, stage.clamp[0])
        s.cmd0(Cmd0.ACTIVATION_MAX, stage.clamp[1])

    def _no_padding(self) -> None:
        for command in (Cmd0.IFM_PAD_TOP, Cmd0.IFM_PAD_LEFT, Cmd0.IFM_PAD_BOTTOM, Cmd0.IFM_PAD_RIGHT):
            self.stream.cmd0(command, 0)

    def _kernel(self, height: int, width: int) -> None:
        self.stream.cmd0(Cmd0.KERNEL_HEIGHT_M1, height - 1)
        self.stream.cmd0(Cmd0.KERNEL_WIDTH_M1, width - 1)
        self.stream.cmd0(Cmd0.KERNEL_STRIDE, 0)

    def _block(self, kind: str, ifm: FeatureMap, ofm: FeatureMap, kernel: Kernel, lut: bool = False) -> int:
        shape = OpShape(kind, Block(ofm.width, ofm.height, ofm.depth), Block(ifm.width, ifm.height, ifm.depth),
                        kernel, ifm.bits, lut=lut)
        try:
            block = choose_block(self.config, shape)
        except ValueError as e:
            raise LoweringError(str(e)) from None
        emit_block(self.stream, block)
        return block.ib2_start

    def pool(self, mode: PoolMode, ifm: FeatureMap, ofm: FeatureMap, kernel_width: int, stage: Stage) -> None:
        emit_ifm(self.stream, ifm)
        self._no_padding()
        self._stage(ofm, stage)
        self._kernel(1, kernel_width)
        self._block("pool", ifm, ofm, Kernel(1, kernel_width), lut=self.stream.lut_busy)
        self._finish(Cmd0.OP_POOL, mode)

    def elementwise(self, mode: ElementwiseMode, ifm: FeatureMap, ifm2: FeatureMap | None, ofm: FeatureMap,
                    stage: Stage = Stage(), reversed_: bool = False) -> None:
        """`ifm` (mode) `ifm2`, or `ifm2` (mode) `ifm` when `reversed_`; `ifm2` broadcast where it
        has extent 1; None for a unary mode (CLZ)."""
        s = self.stream
        s.cmd1(Cmd1.OPA_SCALE, 1, 0)
        s.cmd1(Cmd1.OPB_SCALE, 1)
        emit_ifm(s, ifm)
        self._no_padding()
        self._stage(ofm, stage)
        self._kernel(1, 1)
        if ifm2 is not None:
            emit_ifm2(s, ifm2)
            s.cmd0(Cmd0.IFM2_BROADCAST, _broadcast(ifm2, ofm) | (BROADCAST_REVERSED if reversed_ else 0))
        else:
            s.cmd0(Cmd0.IFM2_BROADCAST, 0)
        ib2_start = self._block("elementwise", ifm, ofm, Kernel(), lut=stage.function != 0 or self.stream.lut_busy)
        s.cmd0(Cmd0.IFM2_IB_START, ib2_start)
        self._finish(Cmd0.OP_ELEMENTWISE, mode)

    def _finish(self, opcode: Cmd0, param: int) -> None:
        self.stream.cmd0(Cmd0.ACC_FORMAT, 0)
        self.stream.cmd0(Cmd0.BLOCKDEP, 0)
        self.stream.cmd0(opcode, param)

    def load_table(self, table: bytes) -> None:
        """The exponentials into LUT slot 0 (its 1 KiB of 32-bit entries), before the next operation."""
        load_table(table, self.flash, self.config, self.stream)

    def constant(self, value: int) -> FeatureMap:
        return _constant(self.flash, value)


def lower_softmax(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """SOFTMAX int8 -> int8 over the last axis (at most 256 elements): 27 NPU operations in the
    op's scratch (module docstring)."""
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    if x.dtype is not DType.INT8 or y.dtype is not DType.INT8:
        raise LoweringError(f"{x.dtype.short} -> {y.dtype.short}: int8 -> int8 only")
    if stream.lut_slot is not None:
        raise LoweringError("a SOFTMAX cannot apply another op's table")
    rows, length = softmax_rows(op)
    if not 1 <= length <= MAX_ROW:
        raise LoweringError(f"rows of {length} elements: at most {MAX_ROW}")
    if y.quant is None or y.quant.single_zero_point != -128:
        raise LoweringError("output zero point is not -128")
    table = exp_table(op)
    base = stream.scratch
    if base is None:
        raise LoweringError("no scratch for the SOFTMAX's intermediates")
    layout = scratch_layout(rows, length)

    def at(offset: int) -> Placement:
        return Placement(base[0], base[1] + offset)

    p = Program(config, flash, stream)
    rows_in = feature_map(x, place, (rows, length, 1))  # a row per height for the MAX pool
    rows_max = FeatureMap(at(layout.vectors[0]), rows, 1, 1, 8, True, rows_in.zero_point)
    p.pool(PoolMode.MAX, rows_in, rows_max, length, Stage(clamp=(-128, 127)))
    _sum_of_exps(p, feature_map(x, place, (1, rows, length)), layout, at, rows, length, table)
    _reciprocal(p, layout, at, rows)
    v = layout.vectors
    scaled = _int32(at(layout.work), rows, length)
    p.elementwise(ElementwiseMode.MUL, _int32(at(layout.exps), rows, length), _int32(at(v[5]), rows), scaled,
                  Stage(scale=SRDHM_TWICE))
    out = feature_map(y, place, (1, rows, length))
    p.elementwise(ElementwiseMode.SHR, scaled, _int32(at(v[3]), rows), out,
                  Stage(global_scale=False, rounding=Rounding.NATURAL, clamp=(-128, 127)))


def _sum_of_exps(p: Program, x: FeatureMap, layout: ScratchLayout, at: At, rows: int, length: int,
                 table: bytes) -> None:
    """exps = table[x - max]; vectors[1] = sum of RoundingDivideByPOT(exps, 12)."""
    v = layout.vectors
    rows_max = FeatureMap(at(v[0]), 1, rows, 1, 8, True, x.zero_point)
    exps = _int32(at(layout.exps), rows, length)
    p.load_table(table)
    lut_ofm = FeatureMap(exps.placement, 1, rows, length, 32, True, 127)
    p.elementwise(ElementwiseMode.SUB, x, rows_max, lut_ofm,
                  Stage(clamp=(-128, 127), function=TABLE_0, clip=CLIP_INT8))
    shifted = _int32(at(layout.work), rows, length)
    p.elementwise(ElementwiseMode.SHR, exps, p.constant(ACCUMULATION_INTEGER_BITS), shifted,
                  Stage(global_scale=False, rounding=Rounding.NATURAL))
    p.pool(PoolMode.REDUCE_SUM, shifted, _int32(at(v[1]), rows), 1, Stage(rounding=Rounding.NATURAL))


def _reciprocal(p: Program, layout: ScratchLayout, at: At, rows: int) -> None:
    """vectors[3] = 35 - CLZ(sum) (the output exponent), vectors[5] = 1 / (sum << (CLZ - 1))."""
    total, clz, exponent, denominator, x, t = (_int32(at(o), rows) for o in layout.vectors[1:])
    unscaled = Stage(global_scale=False)
    p.elementwise(ElementwiseMode.CLZ, total, None, clz, unscaled)
    p.elementwise(ElementwiseMode.SUB, clz, p.constant(EXPONENT_BASE), exponent, reversed_=True)
    p.elementwise(ElementwiseMode.SUB, clz, p.constant(1), denominator)
    p.elementwise(ElementwiseMode.SHL, total, denominator, denominator, unscaled)
    p.elementwise(ElementwiseMode.MUL, denominator, p.constant(NEG_32_OVER_17), x, Stage(scale=SRDHM))
    p.elementwise(ElementwiseMode.ADD, x, p.constant(C_48_OVER_17), x)
    for _ in range(NEWTON_STEPS):
        p.elementwise(ElementwiseMode.MUL, x, denominator, t, Stage(scale=SRDHM))
        p.elementwise(ElementwiseMode.SUB, t, p.constant(ONE_Q29), t, reversed_=True)
        p.elementwise(ElementwiseMode.MUL, x, t, t, Stage(scale=SRDHM))
        p.elementwise(ElementwiseMode.MUL, t, p.constant(4), t)
        p.elementwise(ElementwiseMode.ADD, x, t, x)


SOFTMAX_LOWERINGS = {OpKind.SOFTMAX: lower_softmax}
