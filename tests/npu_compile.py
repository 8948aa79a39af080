"""mcugen's own command streams for a model, in the shape tests/vela_models.py gives Vela's, so
that the same harness runs (run_npu, npu_vela.run_device) both.

`models()` lists the single-op models the tests and the benchmark run (the rows of
tests/npu_engine_models.py and tests/npu_elementwise_models.py whose ops mcugen lowers, and two
global pools). `compile_ours` parses the model, places every activation tensor in region 1 (16-byte aligned,
in tensor order), lowers all ops into one stream with mcugen.npu.compile.lower_ops, and writes
the payload and the read-only image (region 0) beside the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import test_ref_pool as pool
from npu_elementwise_models import (
    binary_cases,
    fused_lut_cases,
    int16_cases,
    lowered_cases,
    unary_cases,
)
from npu_engine_models import (
    Row,
    conv_rows,
    depthwise_rows,
    fully_connected_rows,
    int16_rows,
    pool_rows,
)
from npu_lowered_models import cases as lowered_op_cases
from vela_models import Feature, VelaModel

from mcugen.frontend.tflite import parse_model
from mcugen.ir import Graph, Op, Tensor
from mcugen.npu.compile import lower_op, lower_ops
from mcugen.npu.config import CONFIGS
from mcugen.npu.featuremap import Placement
from mcugen.npu.lower_softmax import softmax_scratch_bytes
from mcugen.npu.weight_stream import WeightStream, slice_blobs, slot_bytes

ARENA_REGION = 1


def arena_offsets(graph: Graph) -> dict[int, int]:
    """Every activation tensor at its own 16-byte aligned offset (no sharing)."""
    offsets, end = {}, 0
    for tensor in graph.tensors:
        if tensor.data is None:
            offsets[tensor.index] = end
            end += -(-tensor.nbytes // 16) * 16
    return offsets


def compile_ours(model: bytes, macs: int, workdir: Path, name: str = "model",
                 stream_depths: Mapping[int, int] | None = None) -> VelaModel:
    """`stream_depths`: op position -> OFM slice depth of a weight stream (mcugen/npu/weight_stream.py),
    its two slots after every tensor and scratch."""
    workdir.mkdir(parents=True, exist_ok=True)
    graph = parse_model(model, name)
    offsets = arena_offsets(graph)

    def place(tensor: Tensor) -> Placement:
        return Placement(ARENA_REGION, offsets[tensor.index])

    arena = max([16] + [offsets[t.index] + t.nbytes for t in graph.tensors if t.index in offsets])
    scratch = {id(op): -(-arena // 16) * 16 for op in graph.ops if softmax_scratch_bytes(op)}
    arena = max([arena] + [scratch[id(op)] + softmax_scratch_bytes(op) for op in graph.ops if id(op) in scratch])

    def scratch_of(op: Op) -> Placement | None:  # each op's scratch after the tensors (one op per model here)
        return Placement(ARENA_REGION, scratch[id(op)]) if id(op) in scratch else None

    config = CONFIGS[f"u55-{macs}"]
    streams = {}
    for position, depth in (stream_depths or {}).items():
        op = graph.ops[position]
        blobs = slice_blobs(op, config, depth, lower_op)
        assert blobs is not None, f"op {position} does not stream"
        where, slot = -(-arena // 16) * 16, slot_bytes(blobs)
        streams[id(op)] = WeightStream(((ARENA_REGION, where), (ARENA_REGION, where + slot)), slot, depth, position > 0)
        arena = where + 2 * slot
    program = lower_ops(graph.ops, place, config, frozenset(id(t) for t in graph.outputs),
                        scratch=scratch_of, streams=streams)
    payload, flash = workdir / "mcugen_payload.bin", workdir / "mcugen_flash.bin"
    payload.write_bytes(program.payload)
    flash.write_bytes(program.flash)

    def feature(t: Tensor) -> Feature:
        return Feature(offsets[t.index], t.shape, t.dtype.numpy.type)

    return VelaModel(name, macs, payload, [f"file:{flash}", f"zero:{arena}"], ARENA_REGION,
                     [feature(t) for t in graph.inputs], [feature(t) for t in graph.outputs], [], "", None)


# ---- the single-op models of tests/test_npu_compile.py and benchmarks/npu/own_streams.py ----

LOWERED = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D", "AVERAGE_POOL_2D", "ADD", "SUB", "MUL",
           "MINIMUM", "MAXIMUM", "LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "RELU", "RELU6", "ABS", "QUANTIZE"}
EVERY_SIZE = (32, 64, 128, 256)
# Rows (ids) that the NPU cannot take as mcugen lowers it, and why.
REFUSED = {
    "conv5014-2x9x7x4-o6-k3x3-s12-d11-SAME-NONE-pc-zp-128": "batch 2",
    "dw5101-1x13x11x5-o10-k5x5-s22-d11-SAME-RELU-pc-zp-128": "depth multiplier",
    "dw5102-1x11x11x3-o9-k3x3-s11-d22-SAME-NONE-pc-zp-37": "depth multiplier",
    "fc401-2x64-u21-RELU-pt4-zp0": "nonzero zero point",
    "max5301-int8-2x8x9x5-f2x2-s22-VALID-RELU-zp-60": "batch 2",
    "avg5311-int8-2x8x9x5-f2x3-s21-VALID-RELU6-zp-100": "batch 2",
    "avg5314-int8-1x16x16x3-f4x4-s44-VALID-NONE-zp-3": "stride 4x4",
    **{name: "int8 input" for name in ("int16-leaky-relu", "int16-leaky-relu-rescale", "int16-leaky-relu-alpha-1.5",
                                       "int16-leaky-relu-negative-alpha", "int16-abs")},
}


@dataclass(frozen=True)
class Model:
    """A single-op model: its id, builder, inputs, and the sizes it runs on."""

    id: str
    build: Any
    inputs: Any
    sizes: tuple[int, ...]


def _from_row(row: Row) -> Model:
    sizes = EVERY_SIZE if len(row.configs) > 1 else (128,)
    return Model(row.id, row.build, row.inputs, sizes)


def _global_pools() -> list[Model]:
    """Global pools whose stride equals the window (kws_dscnn's 25x5, ic_resnet8's 8x8): one
    output position, so the stride never applies."""
    cases = [pool.PoolCase("AVERAGE_POOL_2D", 1, 25, 5, 64, (25, 5), (25, 5), "VALID", "NONE", -3, 5900),
             pool.PoolCase("MAX_POOL_2D", 1, 8, 8, 24, (8, 8), (8, 8), "VALID", "NONE", 7, 5901)]
    return [Model(c.id, lambda c=c: pool.build_model(c), lambda c=c: [pool.random_input(c)], EVERY_SIZE)
            for c in cases]


def models() -> list[Model]:
    rows = conv_rows() + depthwise_rows() + fully_connected_rows() + pool_rows() + int16_rows()
    found = [_from_row(r) for r in rows if r.tflite_op in LOWERED]
    cases = [c for c in binary_cases() + int16_cases() + lowered_cases() + unary_cases() + fused_lut_cases()
             if c.op in LOWERED and (c.then is None or c.then[0] in LOWERED)]
    found += [Model(c.id, c.build, c.inputs, EVERY_SIZE if len(c.sizes) > 1 else (128,)) for c in cases]
    found += [Model(c.id, c.build, c.inputs, c.sizes) for c in lowered_op_cases()]
    return found + _global_pools()
