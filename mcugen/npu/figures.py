"""report.json's "npu": what runs on the NPU, its data and where each region sits.

Built from the compiled graph and memory plan (no toolchain): the configuration from the
payload's CONFIG word, the ops on each side, the payload and read-only bytes, and the regions
the generated invoke passes to the driver (TFLM's order: 0 read-only, 1 scratch, 2 fast
scratch, then IFMs and OFMs). "cycles" is measured by running the build on the simulated
device (analysis/measure.py); here it is left unmeasured.
"""

from __future__ import annotations

from typing import Any

from ..ir import NpuSegmentOptions, Op, OpKind, Tensor
from ..memory.plan import Plan
from ..ops.base import DEFAULT_SETTING, Setting
from .config import CONFIGS

NOT_MEASURED = "not measured: mcugen build runs the model once on the simulated NPU (host) to count them"


def _payload(op: Op, setting: Setting) -> Any:
    # The npu op family, imported only for models with NPU ops.
    from ..ops.npu import prepare_ethos_u

    return prepare_ethos_u(op, setting)


def _op_regions(op: Op) -> list[Tensor]:
    from ..ops.npu import regions

    return regions(op)


def npu_ops(order: list[Op]) -> list[Op]:
    return [op for op in order if op.kind is OpKind.ETHOS_U]


def config_name(order: list[Op]) -> str:
    """The configuration of the model's NPU ops (Vela compiles one model for one)."""
    names = sorted({_payload(op, DEFAULT_SETTING).config_name for op in npu_ops(order)})
    return ", ".join(names)


def _unique(tensors: list[Tensor]) -> list[Tensor]:
    seen: dict[int, Tensor] = {}
    for tensor in tensors:
        seen.setdefault(id(tensor), tensor)
    return list(seen.values())


def _placement(tensor: Tensor, plan: Plan) -> str:
    if tensor.is_constant:
        return "flash (const array, 16-byte aligned)"
    buffer = plan.buffer_of(tensor)
    where = f"pool {buffer.pool} at offset {plan.offset_of(tensor)}"
    if tensor.pin is not None and tensor.pin.offset:
        where += f" ({tensor.pin.offset} bytes into the npu {tensor.pin.area} area, as Vela fixed)"
    return where


def _region_kind(number: int, tensor: Tensor, op: Op) -> str:
    if number == 0:
        return "read-only: encoded weights and scales"
    if number in (1, 2):
        kind = "scratch" if number == 1 else "fast scratch"
        return kind + (" (the scratch tensor: region 1's memory)" if number == 2 and tensor is _op_regions(op)[1] else "")
    return "IFM" if any(t is tensor for t in op.inputs) else "OFM"


def npu_report(order: list[Op], plan: Plan) -> dict[str, Any] | None:
    """report.json's "npu", or None for a model without NPU ops."""
    ops = npu_ops(order)
    if not ops:
        return None
    payloads = _unique([op.inputs[0] for op in ops if op.inputs[0] is not None])
    read_only = _unique([op.inputs[1] for op in ops if op.inputs[1] is not None])
    return {
        "config": config_name(order),
        "cycles": None,
        "cycles_source": NOT_MEASURED,
        "ops_on_npu": len(ops),
        "ops_on_cpu": len(order) - len(ops),
        "command_stream_bytes": sum(t.nbytes for t in payloads),
        "weights_encoded_bytes": sum(t.nbytes for t in read_only),
        "regions": [entry for op in ops for entry in _regions(op, plan)],
        **_own_figures(ops, plan),
    }


ESTIMATE_SOURCE = ("mcugen/npu/estimate.py at build time: convolutions and pools through a mirror of the device's "
                   "cycle model (per stripe call when striped), other ops a roofline of MACs, output stage, SRAM "
                   "and flash traffic; summed over the segments' ops")


def _own_figures(ops: list[Op], plan: Plan) -> dict[str, Any]:
    """For mcugen's own segments (--npu): the build-time cycle estimate and the SRAM the NPU
    works in (the plan's pools: feature maps live there, no scratch beyond them). Vela-compiled
    ops have Vela's own estimate (its summary CSV), not ours: nothing."""
    segments = [op for op in ops if isinstance(op.options, NpuSegmentOptions)]
    if not segments:
        return {}
    # the NPU's cost model (and its lowering), imported by --npu builds only
    from .estimate import segment_cycles

    payload = _payload(segments[0], DEFAULT_SETTING)
    config = next(c for c in CONFIGS.values() if c.macs == payload.macs_per_cycle)
    from .compile import lower_op
    from .overlap import limits_of
    from .weight_stream import estimates

    return {"cycles_estimate": sum(segment_cycles(op.options.ops, config, plan.tiling,
                                                  frozenset(id(o) for o in op.options.sram_weights),
                                                  estimates(op.options.ops, plan, config, lower_op),
                                                  limits_of(op.options.ops, plan))
                                   for op in segments if isinstance(op.options, NpuSegmentOptions)),
            "cycles_estimate_source": ESTIMATE_SOURCE,
            "sram_bytes": sum(pool.size for pool in plan.pools),
            # --npu-weights: ops whose weights and scales a DMA copies into SRAM, and those buffers' bytes
            "weight_buffer_ops": sum(len(op.options.sram_weights) for op in segments
                                     if isinstance(op.options, NpuSegmentOptions)),
            "weight_buffer_bytes": sum(b.size for b in plan.buffers if b.weights_of is not None),
            # ops that run in OFM depth slices with their weights streamed through two slots
            "weight_stream_ops": len({b.weights_of.index for b in plan.buffers if b.stream_depth and b.weights_of})}


def _regions(op: Op, plan: Plan) -> list[dict[str, Any]]:
    """The op's base addresses: Vela's tensors (TFLM's order), or for an mcugen segment the
    read-only image and the pools its feature maps are planned in."""
    if isinstance(op.options, NpuSegmentOptions):
        flash = op.inputs[1]
        assert flash is not None
        entries = [{"op": op.index, "region": 0, "what": "read-only: encoded weights and scales", "tensor": flash.name,
                    "bytes": flash.nbytes, "placed": _placement(flash, plan)}]
        return entries + [{"op": op.index, "region": 1 + n, "what": f"pool {r.pool}: feature maps at their planned "
                           "offsets", "tensor": None, "bytes": r.size, "placed": f"pool {r.pool} at offset 0"}
                          for n, r in enumerate(op.options.pools)]
    return [{"op": op.index, "region": number, "what": _region_kind(number, tensor, op), "tensor": tensor.name,
             "bytes": tensor.nbytes, "placed": _placement(tensor, plan)} for number, tensor in enumerate(_op_regions(op))]
