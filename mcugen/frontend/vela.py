"""Vela's output in the IR: the `ethos-u` custom op and the offsets Vela fixed.

Arm's Vela compiles the ops an Ethos-U can run into one CUSTOM op 'ethos-u' per NPU subgraph
and writes the `OfflineMemoryAllocation` metadata (its tflite_writer.py): int32 words
`[version 0, subgraph count 1, tensor count, offset of tensor 0, offset of tensor 1, ...]`, where an
offset >= 0 places the tensor at that byte in the scratch area (TFLM's arena, which the NPU
sees as base address 1) and -1 leaves it to the runtime's planner. The NPU's command stream
addresses its IFMs and OFMs at those offsets, so they are fixed: here every tensor with an
offset gets a `Pin` into its area, and the planner places each area whole
(mcugen/memory/liveness.py). A fast-scratch tensor distinct from the scratch tensor is an area
of its own ("scratch_fast", base address 2).

The op's file inputs are (payload, read-only, scratch, fast scratch, IFMs...); in the IR the
scratch tensors move into EthosUOptions (no op produces them: they are memory, not values) and
the inputs are (payload, read-only, IFMs...). This module reads no flatbuffer itself (the
reader, tflite.py, passes the parts) so that `tflite` stays imported in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ModelError, UnsupportedError
from ..ir import EthosUOptions, Op, OpKind, Pin, Tensor

CUSTOM_CODE = "ethos-u"
OFFLINE_METADATA = "OfflineMemoryAllocation"
CO_TYPE_ETHOSU = 1  # TFLM's ethos-u kernel refuses any other coprocessor type
SCRATCH_AREA = "scratch"
FAST_SCRATCH_AREA = "scratch_fast"

# flexbuffers type codes of a scalar root (the custom options Vela writes are one integer)
_FBT_INT, _FBT_UINT = 1, 2


def co_type(custom_options: bytes, where: str) -> int:
    """The coprocessor type in the op's custom options: a flexbuffer whose root is one integer
    (the last byte is the root's width, the one before its packed type)."""
    if len(custom_options) < 3:
        raise ModelError(f"{where}: custom options of {len(custom_options)} bytes, not a flexbuffer integer")
    width, packed = custom_options[-1], custom_options[-2]
    if packed >> 2 not in (_FBT_INT, _FBT_UINT) or width not in (1, 2, 4, 8) or width + 2 > len(custom_options):
        raise ModelError(f"{where}: custom options are not a flexbuffer integer (type byte 0x{packed:02X})")
    value = custom_options[-2 - width:-2]
    return int.from_bytes(value, "little", signed=packed >> 2 == _FBT_INT)


def ethos_u_op(index: int, inputs: Sequence[Tensor | None], outputs: list[Tensor], custom_options: bytes,
               where: str) -> Op:
    """The IR op of one `ethos-u` op: the payload, read-only area and IFMs as inputs, the
    scratch areas in its options."""
    kind = co_type(custom_options, where)
    if kind != CO_TYPE_ETHOSU:
        raise UnsupportedError(f"{where}: coprocessor type {kind} in the custom options; TFLM's ethos-u "
                               f"kernel (and mcugen) run only type {CO_TYPE_ETHOSU} (Ethos-U)")
    if len(inputs) < 4 or any(t is None for t in inputs):
        raise ModelError(f"{where}: {len(inputs)} inputs; Vela writes the payload, read-only, scratch and "
                         "fast-scratch tensors, then the IFMs, none omitted")
    present = [t for t in inputs if t is not None]
    options = EthosUOptions(scratch=present[2], fast_scratch=present[3])
    return Op(kind=OpKind.ETHOS_U, inputs=[present[0], present[1], *present[4:]], outputs=outputs,
              options=options, index=index, backend="npu")


def offline_offsets(raw: bytes | None, tensor_count: int, label: str) -> list[int]:
    """The per-tensor offsets of the OfflineMemoryAllocation metadata (-1: not fixed)."""
    where = f"{label}: metadata '{OFFLINE_METADATA}'"
    if raw is None:
        raise ModelError(f"{label}: an ethos-u op but no '{OFFLINE_METADATA}' metadata: the NPU's tensors "
                         "have no fixed offsets (compile the model with Vela 2.1 or later)")
    if len(raw) % 4 or len(raw) < 12:
        raise ModelError(f"{where}: {len(raw)} bytes, not int32 words [version, subgraphs, count, offsets...]")
    words = [int(w) for w in np.frombuffer(raw, dtype="<i4")]
    version, subgraphs, count = words[:3]
    if version != 0 or subgraphs != 1:
        raise UnsupportedError(f"{where}: version {version} for {subgraphs} subgraphs; mcugen reads version 0 "
                               "for one subgraph")
    if count != tensor_count or len(words) != 3 + count:
        raise ModelError(f"{where}: {count} offsets in {len(words) - 3} words for {tensor_count} tensors")
    return words[3:]


def pin_tensors(tensors: list[Tensor], ops: list[Op], offsets: list[int], label: str) -> None:
    """Give every activation tensor with a Vela offset its Pin (the scratch areas at 0)."""
    npu_ops = [op for op in ops if op.kind is OpKind.ETHOS_U]
    areas = {id(area): area for op in npu_ops for area in _areas(op)}
    scratch = {id(_areas(op)[0]) for op in npu_ops}
    fast = {id(_areas(op)[1]) for op in npu_ops}
    if len(scratch) != 1 or len(fast) != 1:
        raise UnsupportedError(f"{label}: the ethos-u ops use {len(scratch)} scratch and {len(fast)} fast-scratch "
                               "tensors; Vela writes one of each, shared by every NPU op")
    fast_is_scratch = fast == scratch
    for tensor, offset in zip(tensors, offsets):
        if id(tensor) in areas:
            area = FAST_SCRATCH_AREA if id(tensor) in fast and not fast_is_scratch else SCRATCH_AREA
            tensor.pin = Pin(area, 0)
        elif offset >= 0 and not tensor.is_constant:
            if offset % 16:
                raise ModelError(f"{label}: tensor {tensor.index} '{tensor.name}' at offset {offset} in the scratch "
                                 "area is not 16-byte aligned (the NPU's base addresses are)")
            tensor.pin = Pin(SCRATCH_AREA, offset)


def _areas(op: Op) -> tuple[Tensor, Tensor]:
    assert isinstance(op.options, EthosUOptions)
    return op.options.scratch, op.options.fast_scratch
