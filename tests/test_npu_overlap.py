"""NPU ops writing their output over their dying input, whole, in a ring (mcugen/npu/overlap.py).

The oracle for the outputs is TFLM. A DS-CNN-like chain (DEPTHWISE 3x3 -> 1x1 CONV, twice, then
an AVERAGE pool) is built with its ring forced (the choice made to prefer the most overlaps) on
u55-128 and u55-256 and run under ASan/UBSan: the plan holds one ring buffer, some map in it
wraps past the ring's end, and the outputs equal TFLM's. On kws_dscnn u55-256 the default build
takes the ring with the 1x1 convolutions' weights in SRAM: no more SRAM than the build without
rings, fewer device cycles, equal to TFLM on its three stored cases (tests/test_npu_build.py
runs them on every size). The lowering refuses an overlap no block keeps safe.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import public_model
from modelbuilder import ModelBuilder
from oracles import assert_sanitized_build_equals_tflm
from vela_models import build_harness, device_cycles

from mcugen.driver import BuildOptions, compile_model
from mcugen.ir import OpKind
from mcugen.memory.plan import Plan
from mcugen.npu import overlap, weight_stream
from mcugen.npu.blocks import Kernel
from mcugen.npu.config import npu_config
from mcugen.npu.featuremap import FeatureMap, LoweringError, Placement
from mcugen.npu.lower import KernelOp, overlap_limit
from mcugen.npu.registers import Cmd0
from mcugen.targets import HOST
from mcugen.toolchain.host import RELEASE_FLAGS, WARNING_FLAGS

SHAPE = [1, 14, 6, 32]
Q = (0.05, -3)


def _chain_model() -> bytes:
    b = ModelBuilder("dw pw dw pw pool")
    c = SHAPE[-1]
    rng = np.random.default_rng(11)
    x = b.add_tensor("x", SHAPE, "int8", *Q)
    source = x
    for n in range(2):
        dw_w = b.add_tensor(f"dw{n}_w", [1, 3, 3, c], "int8", scale=[0.02] * c, zero_point=0, quantized_dimension=3,
                            data=rng.integers(-100, 100, (1, 3, 3, c)).astype(np.int8))
        dw_b = b.add_tensor(f"dw{n}_b", [c], "int32", data=rng.integers(-300, 300, c).astype(np.int32))
        dw = b.add_tensor(f"dw{n}", SHAPE, "int8", *Q)
        b.add_op("DEPTHWISE_CONV_2D", [source, dw_w, dw_b], [dw],
                 {"padding": "SAME", "depth_multiplier": 1, "fused_activation_function": "RELU"})
        pw_w = b.add_tensor(f"pw{n}_w", [c, 1, 1, c], "int8", scale=[0.01] * c, zero_point=0,
                            data=rng.integers(-100, 100, (c, 1, 1, c)).astype(np.int8))
        pw_b = b.add_tensor(f"pw{n}_b", [c], "int32", data=rng.integers(-300, 300, c).astype(np.int32))
        pw = b.add_tensor(f"pw{n}", SHAPE, "int8", *Q)
        b.add_op("CONV_2D", [dw, pw_w, pw_b], [pw], {"padding": "SAME", "fused_activation_function": "RELU"})
        source = pw
    y = b.add_tensor("y", [1, SHAPE[1] // 2, SHAPE[2] // 2, c], "int8", *Q)
    b.add_op("AVERAGE_POOL_2D", [source], [y],
             {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2})
    b.set_io([x], [y])
    return b.build()


def _options(size: str) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)))


@pytest.fixture
def most_overlaps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The choice ranks plans by their overlapping ops alone, the most first."""
    monkeypatch.setattr(weight_stream, "order_cycles",
                        lambda order, plan, config, chosen=None, lower_op=None: -len(overlap.limits_of(order, plan)))


def _rings(plan: Plan) -> list[overlap.Ring]:
    assert isinstance(plan.step_view, overlap.OverlapSteps)
    names = {b.name for b in plan.buffers}
    return [ring for ring in plan.step_view.rings if ring.name in names]


@pytest.mark.parametrize("size", ("u55-128", "u55-256"))
def test_a_forced_ring_wraps_and_is_bit_exact_with_tflm(size: str, most_overlaps: None) -> None:
    model = _chain_model()
    compiled = compile_model(model, _options(size), "chain.tflite")
    (ring,) = _rings(compiled.plan)
    assert [s.op.kind for s in ring.shares] == [OpKind.DEPTHWISE_CONV_2D, OpKind.CONV_2D] * 2
    wrapped = [overlap.ring_placement(compiled.plan, t, 1) for t in ring.tensors]
    assert any(p is not None and p.rows0 > 0 for p in wrapped)
    assert_sanitized_build_equals_tflm(model, _options(size), "chain.tflite", SHAPE, 5)


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_harness(tmp_path_factory.mktemp("harness") / "npu_harness", [*WARNING_FLAGS, *RELEASE_FLAGS])


def test_kws_takes_the_ring_for_fewer_cycles_in_no_more_sram(harness: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    model = public_model("kws_dscnn").read_bytes()
    ringed = compile_model(model, _options("u55-256"), "kws_dscnn.tflite")
    (ring,) = _rings(ringed.plan)
    weighted = {b.weights_of.index for b in ringed.plan.buffers if b.weights_of is not None}
    assert {s.op.index for s in ring.shares if s.op.kind is OpKind.CONV_2D} <= weighted
    monkeypatch.setattr(overlap, "rings_of", lambda graph, order, config, cap: [])
    plain = compile_model(model, _options("u55-256"), "kws_dscnn.tflite")
    assert not any(b.name.startswith("npu ring") for b in plain.plan.buffers)
    assert ringed.plan.arena_size <= plain.plan.arena_size
    assert (device_cycles(ringed.order, harness, 256, tmp_path / "ring")
            < device_cycles(plain.order, harness, 256, tmp_path / "plain"))


def _map(address: int, rows: int = 8) -> FeatureMap:
    return FeatureMap(Placement(1, address), rows, 4, 16, 8, True, 0)


def _kernel_op(ifm: int, ofm: int, size: int) -> KernelOp:
    return KernelOp(Cmd0.OP_DEPTHWISE, 0, _map(ifm), _map(ofm), Kernel(size, size), (size // 2, 1, 1, 1), (-128, 127))


@pytest.mark.parametrize(("ofm", "allowed"), [(-64 * 3, 2), (-64 * 2, 1), (-64, None), (0, None), (64, None)])
def test_a_depthwise_over_its_input_may_take_blocks_of_its_lag_less_the_top_padding(ofm: int,
                                                                                    allowed: int | None) -> None:
    """Rows of 64 bytes, top padding 1: an OFM 3 rows before the IFM allows blocks of 2 rows."""
    k = _kernel_op(1024, 1024 + ofm, 3)
    if allowed is None:
        with pytest.raises(LoweringError):
            overlap_limit(k, "depthwise")
    else:
        limit = overlap_limit(k, "depthwise")
        assert limit is not None and limit.max_height == allowed


def test_maps_apart_have_no_limit() -> None:
    assert overlap_limit(_kernel_op(0, 8 * 64, 3), "depthwise") is None

