"""mcugen's own command streams for a model, in the shape tests/vela_models.py gives Vela's, so
that the same harness runs (run_npu, npu_vela.run_device) both.

`compile_ours` parses the model, places every activation tensor in region 1 (16-byte aligned,
in tensor order), lowers all ops into one stream with mcugen.npu.compile.lower_ops, and writes
the payload and the read-only image (region 0) beside the model.
"""

from __future__ import annotations

from pathlib import Path

from vela_models import Feature, VelaModel

from mcugen.frontend.tflite import parse_model
from mcugen.ir import Graph, Tensor
from mcugen.npu.compile import lower_ops
from mcugen.npu.config import CONFIGS
from mcugen.npu.featuremap import Placement

ARENA_REGION = 1


def arena_offsets(graph: Graph) -> dict[int, int]:
    """Every activation tensor at its own 16-byte aligned offset (no sharing)."""
    offsets, end = {}, 0
    for tensor in graph.tensors:
        if tensor.data is None:
            offsets[tensor.index] = end
            end += -(-tensor.nbytes // 16) * 16
    return offsets


def compile_ours(model: bytes, macs: int, workdir: Path, name: str = "model") -> VelaModel:
    workdir.mkdir(parents=True, exist_ok=True)
    graph = parse_model(model, name)
    offsets = arena_offsets(graph)

    def place(tensor: Tensor) -> Placement:
        return Placement(ARENA_REGION, offsets[tensor.index])

    program = lower_ops(graph.ops, place, CONFIGS[f"u55-{macs}"])
    payload, flash = workdir / "mcugen_payload.bin", workdir / "mcugen_flash.bin"
    payload.write_bytes(program.payload)
    flash.write_bytes(program.flash)
    arena = max([16] + [offsets[t.index] + t.nbytes for t in graph.tensors if t.index in offsets])

    def feature(t: Tensor) -> Feature:
        return Feature(offsets[t.index], t.shape, t.dtype.numpy.type)

    return VelaModel(name, macs, payload, [f"file:{flash}", f"zero:{arena}"], ARENA_REGION,
                     [feature(t) for t in graph.inputs], [feature(t) for t in graph.outputs], [], "", None)
