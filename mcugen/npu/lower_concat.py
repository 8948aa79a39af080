"""Lowering of CONCATENATION: each input copied by the NPU into its slice of the output.

The output is seen as (h, w, c) (mcugen/npu/featuremap.hwc); the concatenation axis is one of
the three. Input n's slice starts at the sum of the earlier inputs' extents along that axis and
has the input's extents; as a feature map it is the output's bytes from the slice's first
element on, with the output's row and column strides. A 1x1 AVERAGE pool with zero points 0,
OFM_SCALE 1 and shift 0 (as Vela's memory copies) writes the input there element for element;
every input has the output's dtype and quantization (the support rules), so the copy changes no
value. A constant input is read from the read-only region.

When the memory planner has made an input a view of its slice (mcugen/memory/liveness.
concat_slices: the slice is contiguous and the input's producer wrote it there already), its
copy is left out: such a concatenation costs the NPU nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Activation, ConcatenationOptions, Op, OpKind, Tensor
from .blocks import Kernel, OpShape, choose_block
from .config import Block, NpuConfig
from .featuremap import FeatureMap, LoweringError, Place, Placement, feature_map, hwc
from .lower import FLASH_REGION, Flash, KernelOp, emit_kernel_op
from .registers import Cmd0, PoolMode, Rounding
from .stream import CommandStream

# which (h, w, c) axis each axis of a rank-n tensor is (rank 2 [rows, c]: rows are the height)
VIEW_AXIS = {4: {1: 0, 2: 1, 3: 2}, 3: {0: 0, 1: 1, 2: 2}, 2: {0: 0, 1: 2}, 1: {0: 2}}


def concat_view_axis(op: Op) -> int:
    """The (h, w, c) axis the op concatenates along (LoweringError: none of them)."""
    assert isinstance(op.options, ConcatenationOptions)
    out = op.outputs[0]
    rank = len(out.shape)
    axis = op.options.axis % rank if rank else 0
    if rank == 4 and axis == 0:
        if out.shape[0] != 1:
            raise LoweringError(f"concatenates batches into {list(out.shape)}")
        return 0  # one input of batch 1: a copy, along any axis
    if rank not in VIEW_AXIS or axis not in VIEW_AXIS[rank]:
        raise LoweringError(f"axis {op.options.axis} of rank {rank}")
    return VIEW_AXIS[rank][axis]


def _source(tensor: Tensor, place: Place, flash: Flash) -> Placement:
    if tensor.data is not None:
        return Placement(FLASH_REGION, flash.add(np.ascontiguousarray(tensor.data).tobytes()))
    return place(tensor)


def lower_concatenation(op: Op, place: Place, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """CONCATENATION of int8 or int16 inputs quantized as the output, no fused activation:
    one 1x1 pool copy per input into its slice of the output (none for an input the planner
    placed there)."""
    assert isinstance(op.options, ConcatenationOptions)
    if op.options.activation is not Activation.NONE:
        raise LoweringError(f"fused activation {op.options.activation.name}")
    out = op.outputs[0]
    axis = concat_view_axis(op)
    whole = feature_map(out, place)
    extents = (whole.height, whole.width, whole.depth)
    start = 0
    for tensor in op.inputs:
        assert tensor is not None
        if tensor.dtype is not out.dtype or tensor.quant != out.quant:
            raise LoweringError(f"input '{tensor.name}' is not of the output's dtype and quantization")
        shape = hwc((1,) * (len(out.shape) - len(tensor.shape)) + tuple(tensor.shape))
        if any(shape[a] != extents[a] for a in range(3) if a != axis):
            raise LoweringError(f"input '{tensor.name}' {list(tensor.shape)} does not fit {list(out.shape)}")
        offset = [0, 0, 0]
        offset[axis] = start
        start += shape[axis]
        target = _slice(whole, shape, offset)
        ifm = replace(feature_map(tensor, lambda t: _source(t, place, flash), shape), zero_point=0)
        in_place = ifm.placement == target.placement and all(extents[a] == 1 for a in range(axis))
        if in_place and stream.lut_slot is None:
            continue  # already there: the planner made the input a view of its slice
        _copy(ifm, target, config, stream)
    if start != extents[axis]:
        raise LoweringError(f"inputs fill {start} of {extents[axis]} along the axis")


def _slice(whole: FeatureMap, shape: tuple[int, int, int], offset: list[int]) -> FeatureMap:
    """The part of `whole` of `shape` from element `offset`, with `whole`'s strides."""
    address = (whole.placement.address + offset[0] * whole.stride_y + offset[1] * whole.stride_x
               + offset[2] * whole.elem_bytes)
    return replace(whole, placement=Placement(whole.placement.region, address), height=shape[0], width=shape[1],
                   depth=shape[2], zero_point=0, row_stride=whole.stride_y, column_stride=whole.stride_x)


def _copy(ifm: FeatureMap, ofm: FeatureMap, config: NpuConfig, stream: CommandStream) -> None:
    """A 1x1 AVERAGE pool that writes `ifm` unchanged to `ofm`."""
    low, high = (-128, 127) if ofm.bits == 8 else (-32768, 32767)
    k = KernelOp(Cmd0.OP_POOL, PoolMode.AVERAGE, ifm, ofm, Kernel(), (0, 0, 0, 0), (low, high),
                 global_scale=(1, 0), rounding=Rounding.NATURAL)
    shape = OpShape("pool", Block(ofm.width, ofm.height, ofm.depth), Block(ifm.width, ifm.height, ifm.depth),
                    Kernel(), ifm.bits, lut=stream.lut_busy)
    try:
        block = choose_block(config, shape)
    except ValueError as e:
        raise LoweringError(str(e)) from None
    emit_kernel_op(stream, k, block)


CONCAT_LOWERINGS = {OpKind.CONCATENATION: lower_concatenation}
