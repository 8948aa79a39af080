"""Lowering of binary elementwise ops into NPU_OP_ELEMENTWISE: ADD, SUB, MUL, MINIMUM, MAXIMUM.

Operands: the IFM is the operand with the OFM's shape, the IFM2 the other; when that is the
first TFLite operand the reversed-operands bit keeps TFLite's order. IFM2 may broadcast h, w
and/or c (its extent 1 where the OFM's is larger); a constant one-element IFM2 is the 16-bit
IFM2_SCALAR, another constant IFM2 lies in the read-only region. int8 and int16.

Scaling, TFLM's arithmetic (its multipliers from the float32 scales in double, mcugen.ops.
elementwise.prepare): ADD/SUB shift both operands left by S (20 int8, 15 int16) and rescale
each by its multiplier, the larger-scale operand's being exactly 1/2. The NPU's IFM scale mode 1
(operand A scaled, B halved) or 2 (B scaled, A halved) does that with OPA_SCALE = the scaled
operand's multiplier m, shift 31 - e - S (m 2^(e-31) its TFLite value); OFM_SCALE is the output
multiplier with shift 31 - e. MUL: OFM_SCALE = TFLite's multiplier of s1 s2 / s_out. MINIMUM and
MAXIMUM need one quantization for all three tensors and are not scaled.
"""

from __future__ import annotations

import numpy as np

from ..errors import McugenError
from ..ir import Activation, Op, OpKind, Tensor
from ..ops.elementwise.prepare import RescaleParams, add_sub_params, mul_params
from ..quantization import Rounding as TfliteRounding
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
    hwc,
)
from .lower import FLASH_REGION, Flash, emit_activation, emit_block, npu_scale_shift, output_clamp
from .registers import (
    BROADCAST_C,
    BROADCAST_H,
    BROADCAST_REVERSED,
    BROADCAST_SCALAR,
    BROADCAST_W,
    Cmd0,
    Cmd1,
    ElementwiseMode,
    ifm_precision,
)
from .stream import CommandStream

MODES = {OpKind.ADD: ElementwiseMode.ADD, OpKind.SUB: ElementwiseMode.SUB, OpKind.MUL: ElementwiseMode.MUL,
         OpKind.MINIMUM: ElementwiseMode.MIN, OpKind.MAXIMUM: ElementwiseMode.MAX}
LEFT_SHIFT = {8: 20, 16: 15}
SCALE_MODE_A, SCALE_MODE_B = 1, 2


def _aligned(tensor: Tensor, rank: int) -> tuple[int, int, int]:
    shape = (1,) * (rank - len(tensor.shape)) + tuple(tensor.shape)
    return hwc(shape)


def _broadcast_bits(ifm2: tuple[int, int, int], ofm: tuple[int, int, int]) -> int:
    bits = 0
    for axis, bit in zip(range(3), (BROADCAST_H, BROADCAST_W, BROADCAST_C), strict=True):
        if ifm2[axis] != ofm[axis]:
            if ifm2[axis] != 1:
                raise LoweringError(f"operand extent {ifm2[axis]} does not broadcast to {ofm[axis]}")
            bits |= bit
    return bits


def _operands(op: Op) -> tuple[Tensor, Tensor, bool]:
    """(IFM, IFM2, reversed): the IFM has the OFM's shape."""
    a, b = op.inputs[0], op.inputs[1]
    assert a is not None and b is not None
    rank = len(op.outputs[0].shape)
    out = _aligned(op.outputs[0], rank)
    if _aligned(a, rank) == out and not (a.is_constant and not b.is_constant and _aligned(b, rank) == out):
        return a, b, False
    if _aligned(b, rank) == out:
        return b, a, True
    raise LoweringError("neither operand has the output's shape")


def _ifm2(tensor: Tensor, rank: int, place: Place, flash: Flash) -> FeatureMap:
    shape = _aligned(tensor, rank)
    if tensor.data is not None:
        address = flash.add(np.ascontiguousarray(tensor.data).tobytes())
        return feature_map(tensor, lambda t: Placement(FLASH_REGION, address), shape)
    return feature_map(tensor, place, shape)


def _add_sub_scales(op: Op, bits: int) -> tuple[int, int, int, tuple[int, int]]:
    """(IFM scale mode, OPA_SCALE, OPA shift, OFM_SCALE (scale, shift)) of ADD/SUB."""
    params = add_sub_params(op, TfliteRounding.TFLM)
    assert isinstance(params, RescaleParams)
    if params.left_shift != LEFT_SHIFT[bits]:
        raise LoweringError(f"left shift {params.left_shift} for {bits}-bit operands")
    half = (1 << 30, 0)
    if (params.input1_multiplier, params.input1_shift) == half:
        mode, m, e = SCALE_MODE_B, params.input2_multiplier, params.input2_shift
    elif (params.input2_multiplier, params.input2_shift) == half:
        mode, m, e = SCALE_MODE_A, params.input1_multiplier, params.input1_shift
    else:
        raise LoweringError("neither operand's rescale is exactly 1/2")
    shift = 31 - e - LEFT_SHIFT[bits]
    if not 0 <= shift <= 63 - LEFT_SHIFT[bits]:
        raise LoweringError(f"operand rescale 2^{e} out of the NPU's range")
    return mode, m, shift, npu_scale_shift(params.output_multiplier, params.output_shift)


def _mul_scale(op: Op) -> tuple[int, int]:
    params = mul_params(op, TfliteRounding.TFLM)
    return npu_scale_shift(params.output_multiplier, params.output_shift)


def lower_elementwise(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """ADD, SUB, MUL, MINIMUM, MAXIMUM on int8 or int16 operands of the output's type."""
    y = op.outputs[0]
    if y.dtype.short not in ("int8", "int16") or any(t is None or t.dtype is not y.dtype for t in op.inputs[:2]):
        raise LoweringError("operands and output must all be int8 or all int16")
    ifm_t, ifm2_t, reversed_ = _operands(op)
    rank = len(y.shape)
    ofm = feature_map(y, place, _aligned(y, rank))
    ifm = feature_map(ifm_t, place, _aligned(ifm_t, rank))
    ifm2 = _ifm2(ifm2_t, rank, place, flash)
    scalar = ifm2_t.data is not None and ifm2_t.num_elements == 1
    bits = _broadcast_bits((ifm2.height, ifm2.width, ifm2.depth), (ofm.height, ofm.width, ofm.depth))
    bits |= BROADCAST_REVERSED if reversed_ else 0
    try:
        scale_mode, opa, ofm_scale = _scales(op, ofm.bits)
    except McugenError as e:
        raise LoweringError(str(e)) from None
    block = choose_block(config, OpShape("elementwise", Block(ofm.width, ofm.height, ofm.depth),
                                         Block(ifm.width, ifm.height, ifm.depth), Kernel(), ifm.bits, scalar=scalar,
                                         lut=stream.lut_busy))
    if opa is not None:
        stream.cmd1(Cmd1.OPA_SCALE, opa[0], opa[1])
        stream.cmd1(Cmd1.OPB_SCALE, 0)
    stream.cmd1(Cmd1.OFM_SCALE, ofm_scale[0], ofm_scale[1])
    emit_ifm(stream, ifm, scale_mode)
    emit_ofm(stream, ofm, True)
    emit_activation(stream, output_clamp(op, getattr(op.options, "activation", Activation.NONE)))
    _emit_ifm2(stream, ifm2, ifm2_t, scalar, bits)
    emit_block(stream, block)
    stream.cmd0(Cmd0.IFM2_IB_START, block.ib2_start)
    stream.cmd0(Cmd0.ACC_FORMAT, 0)
    stream.cmd0(Cmd0.BLOCKDEP, 0)
    stream.cmd0(Cmd0.OP_ELEMENTWISE, MODES[op.kind])


def _scales(op: Op, bits: int) -> tuple[int, tuple[int, int] | None, tuple[int, int]]:
    """(IFM scale mode, OPA_SCALE or None, OFM_SCALE) of the op."""
    if op.kind in (OpKind.ADD, OpKind.SUB):
        mode, m, shift, ofm_scale = _add_sub_scales(op, bits)
        return mode, (m, shift), ofm_scale
    if op.kind is OpKind.MUL:
        return 0, None, _mul_scale(op)
    quants = {t.quant for t in (*op.inputs[:2], op.outputs[0]) if t is not None}
    if len(quants) != 1:
        raise LoweringError("MINIMUM/MAXIMUM with different quantizations")
    return 0, None, (1, 0)


def _emit_ifm2(stream: CommandStream, ifm2: FeatureMap, tensor: Tensor, scalar: bool, bits: int) -> None:
    if scalar:
        assert tensor.data is not None
        stream.cmd0(Cmd0.IFM2_SCALAR, int(tensor.data.reshape(-1)[0]))
        stream.cmd0(Cmd0.IFM2_ZERO_POINT, ifm2.zero_point)
        stream.cmd0(Cmd0.IFM2_PRECISION, ifm_precision(ifm2.bits, ifm2.signed))
        stream.cmd0(Cmd0.IFM2_BROADCAST, BROADCAST_SCALAR | (bits & BROADCAST_REVERSED))
        return
    emit_ifm2(stream, ifm2)
    stream.cmd0(Cmd0.IFM2_BROADCAST, bits)


ELEMENTWISE_LOWERINGS = {kind: lower_elementwise for kind in MODES}
