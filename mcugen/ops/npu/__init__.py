"""The npu family: Vela's `ethos-u` custom op, a whole NPU subgraph run by the Ethos-U driver.

Vela (Arm's compiler for Ethos-U) replaces the ops an Ethos-U can run with one CUSTOM op
'ethos-u' per NPU subgraph. Its inputs in the file are the driver payload (command stream), the
read-only area (encoded weights and scales), the scratch and fast-scratch areas, then the IFMs;
its outputs the OFMs. The frontend (mcugen/frontend/vela.py) turns the scratch tensors into
areas that the planner places whole, with every tensor Vela placed in them at Vela's offset.

The op runs as TFLM's ethos-u kernel runs it (tensorflow/lite/micro/kernels/ethos_u/ethosu.cc):
ethosu_reserve_driver, ethosu_invoke_v3 with the base addresses of inputs 1.. then the outputs
(region 0 read-only, 1 scratch, 2 fast scratch, then IFMs and OFMs; at most 8), and
ethosu_release_driver. Invoke returns the driver's failure to the application
(templates/npu/mcugen_npu_model.c.j2). It has no numpy reference: `mcugen run` runs the
simulated device.
"""

from __future__ import annotations

import tflite

from ...errors import UnsupportedError
from ...ir import DType, EthosUOptions, NpuSegmentOptions, Op, OpKind, Tensor
from ..base import OpDef, PrepareRule, Setting, no_fast_path_scratch, no_macs, no_scratch
from ..emitting import EmitContext, KernelCall
from .payload import Payload, PayloadError, read_payload

CUSTOM_CODE = "ethos-u"
MAX_REGIONS = 8  # Ethos-U base-pointer registers; TFLM passes at most the first 8 tensors
SIMULATED_MACS = (32, 64, 128, 256)

PAYLOAD_RULE = PrepareRule(
    "The payload (input 0) is a 'COP1' driver payload with a CONFIG action and one command stream, "
    "for an Ethos-U55 with 32, 64, 128 or 256 MACs per cycle.")


def _options(op: Op) -> EthosUOptions:
    assert isinstance(op.options, EthosUOptions)
    return op.options


def constant_uint8_areas(op: Op) -> str | None:
    """The payload (input 0) and the read-only area (input 1) are constant uint8 tensors."""
    for position in (0, 1):
        tensor = op.inputs[position] if position < len(op.inputs) else None
        if tensor is None or not tensor.is_constant or tensor.dtype is not DType.UINT8:
            what = "missing" if tensor is None else f"{tensor.dtype.short}{'' if tensor.is_constant else ' activation'}"
            return f"input {position}: {what}"
    return None


def tensors_pinned(op: Op) -> str | None:
    """Every IFM and OFM sits at the offset Vela fixed in the scratch area (its
    OfflineMemoryAllocation metadata); the scratch areas are uint8 tensors."""
    options = _options(op)
    for area in (options.scratch, options.fast_scratch):
        if area.dtype is not DType.UINT8 or area.is_constant:
            return f"scratch area '{area.name}' is {area.dtype.short}{' constant' if area.is_constant else ''}"
    for tensor in [*op.inputs[2:], *op.outputs]:
        if tensor is not None and tensor.pin is None:
            return f"'{tensor.name}' has no offset"
    return None


def prepare_ethos_u(op: Op, setting: Setting) -> Payload:
    payload = op.inputs[0]
    assert payload is not None and payload.data is not None
    try:
        parsed = read_payload(payload.data.tobytes())
    except PayloadError as error:
        PAYLOAD_RULE.refuse(op, str(error))
    PAYLOAD_RULE.require(parsed.product == 0 and parsed.macs_per_cycle in SIMULATED_MACS, op,
                         lambda: f"CONFIG word 0x{parsed.config:08X} ({parsed.config_name})")
    return parsed


def regions(op: Op) -> list[Tensor]:
    """The tensors behind base addresses 0.. in TFLM's order: inputs 1.. of the file's op (the
    read-only area, scratch, fast scratch, IFMs), then the OFMs; the first 8."""
    options = _options(op)
    ifms = [t for t in op.inputs[2:] if t is not None]
    found = [op.inputs[1], options.scratch, options.fast_scratch, *ifms, *op.outputs]
    return [t for t in found if t is not None][:MAX_REGIONS]


def _bases(op: Op, ctx: EmitContext) -> list[tuple[str, int]]:
    """(C address, bytes) of each region. Vela's op: the tensors of `regions`, each its bytes
    (TFLM passes element counts, the same for the uint8/int8 tensors Vela puts there). An
    mcugen segment: the read-only image, then each pool's base (its anchor's address minus
    the anchor's offset) and size."""
    if isinstance(op.options, NpuSegmentOptions):
        flash = op.inputs[1]
        assert flash is not None
        pools = [(f"(const uint8_t *)({ctx.ptr(r.anchor)}) - {r.anchor_offset}", r.size) for r in op.options.pools]
        return [(ctx.ptr(flash), flash.nbytes), *pools]
    return [(ctx.ptr(t), t.nbytes) for t in regions(op)]


def emit_ethos_u(op: Op, ctx: EmitContext) -> KernelCall:
    payload = op.inputs[0]
    assert payload is not None
    used = _bases(op, ctx)
    bases = ", ".join(f"(uint64_t)(uintptr_t)({address})" for address, _ in used)
    sizes = ", ".join(f"{size}u" for _, size in used)
    if isinstance(op.options, NpuSegmentOptions) and op.options.concurrent:
        # --npu-async: the driver keeps the base addresses until the wait, after this block
        return KernelCall(
            declarations=[f"static uint64_t npu_base[{len(used)}];",
                          f"static const size_t npu_base_size[{len(used)}] = {{ {sizes} }};",
                          *(f"npu_base[{n}] = (uint64_t)(uintptr_t)({address});" for n, (address, _) in enumerate(used))],
            calls=[f"mcugen_npu_model_start({ctx.ptr(payload)}, {payload.nbytes}, npu_base, npu_base_size, {len(used)})"])
    return KernelCall(
        declarations=[f"uint64_t npu_base[{len(used)}] = {{ {bases} }};",
                      f"static const size_t npu_base_size[{len(used)}] = {{ {sizes} }};"],
        calls=[f"mcugen_npu_model_invoke({ctx.ptr(payload)}, {payload.nbytes}, npu_base, npu_base_size, {len(used)})"])


def no_reference(op: Op, inputs: list, rounding: object) -> list:
    raise UnsupportedError(f"{op.where()}: the ethos-u op has no numpy reference; `mcugen run` runs it on the "
                           "simulated NPU")


def read_no_options(operator: object, where: str) -> EthosUOptions:
    raise UnsupportedError(f"{where}: the ethos-u op is read by mcugen/frontend/vela.py")


OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.ETHOS_U, builtin=tflite.BuiltinOperator.CUSTOM, custom_code=CUSTOM_CODE,
        read_options=read_no_options, rules=(constant_uint8_areas, tensors_pinned),
        prepare=prepare_ethos_u, prepare_rules=(PAYLOAD_RULE,), emit=emit_ethos_u, scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch, reference=no_reference, macs=no_macs,
        notes=("Runs on the NPU through the Ethos-U driver (docs/npu.md), not on the CPU kernels.",)),
]
