"""The OFM block chooser (mcugen/npu/block_cycles.py) against the simulated device.

For single-op CONV_2D and DEPTHWISE_CONV_2D models with their weights in flash (region 0, the
device's default system), the stream with the block chosen by the device's cycle model runs in
no more cycles on the device (MODEL_CYCLES of firmware_tests/npu/npu_harness.c) than the same
stream with the block of Vela's relative cost (blocks.choose_block: weights as cheap as IFM
bytes, and with the weights' flash cost weighted 8x as mcugen chose before), and its outputs
equal TFLM's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import test_ref_conv as conv
from npu_compile import compile_ours
from npu_vela import run_device
from oracles import run_tflm
from vela_models import build_harness, run_npu

from mcugen.npu import lower
from mcugen.npu.blocks import FLASH_WEIGHT_COST, BlockConfig, OpShape, choose_block
from mcugen.npu.config import NpuConfig

_BASE = conv.ConvCase(False, 1, 9, 7, 4, 6, (3, 3), (1, 1), (1, 1), "SAME", "NONE", True, -128, 3, 7000)
CASES = {
    # kws_dscnn's pointwise CONV: 64x64 weights streamed once per block position
    "pointwise-25x5x64": replace(_BASE, height=25, width=5, in_channels=64, out_channels=64, kernel=(1, 1),
                                 seed=7001),
    # kws_dscnn's first CONV: 10x4 kernel, 1-channel IFM (part-kernel-first), stride 2
    "first-49x10x1-k10x4": replace(_BASE, height=49, width=10, in_channels=1, out_channels=64, kernel=(10, 4),
                                   stride=(2, 2), activation="RELU", seed=7002),
    # ic_resnet8's 3x3 CONVs
    "conv3x3-16x16x32": replace(_BASE, height=16, width=16, in_channels=32, out_channels=32, activation="RELU",
                                seed=7003),
    "depthwise3x3-25x5x64": replace(_BASE, depthwise=True, height=25, width=5, in_channels=64, out_channels=64,
                                    activation="RELU", seed=7004),
    "depthwise3x3-24x24x32-s2": replace(_BASE, depthwise=True, height=24, width=24, in_channels=32, out_channels=32,
                                        stride=(2, 2), seed=7005),
}

# Weight traffic bounds these on the device with Vela's blocks: covering more of the OFM's XY must gain.
FLASH_BOUND = frozenset({"pointwise-25x5x64", "conv3x3-16x16x32"})


def _vela_cost(weight_cost: float):  # type: ignore[no-untyped-def]
    def block(config: NpuConfig, op: OpShape, *_: object) -> BlockConfig:
        return choose_block(config, replace(op, weight_cost=weight_cost))
    return block


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_harness(tmp_path_factory.mktemp("npu-blocks") / "npu_harness")


@pytest.mark.parametrize("macs", (64, 128))
@pytest.mark.parametrize("name", sorted(CASES))
def test_block_by_cycles_is_no_slower_than_velas_cost_on_the_device(name: str, macs: int, harness: Path,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    data, inputs = conv.build_model(case), [conv.random_input(case)]
    ours = compile_ours(data, macs, tmp_path / "ours")
    run = run_npu(harness, ours, macs, inputs, tmp_path / "run-ours")
    assert (run.rc, run.fault) == (0, 0), run.stdout[-1500:]
    (expected,) = run_tflm(data, inputs)
    assert len(np.unique(expected)) >= 6, "oracle output has no spread"
    assert int(np.sum(run.outputs[0].reshape(expected.shape) != expected)) == 0, "outputs differ from TFLM"
    cycles = run_device(harness, ours).cycles
    for weight_cost in (1.0, FLASH_WEIGHT_COST):
        monkeypatch.setattr(lower, "cycle_block", _vela_cost(weight_cost))
        theirs = compile_ours(data, macs, tmp_path / f"vela-cost-{weight_cost}")
        theirs_cycles = run_device(harness, theirs).cycles
        assert cycles <= theirs_cycles, f"Vela's cost (weights x{weight_cost}) chose better"
        if name in FLASH_BOUND:
            assert cycles < theirs_cycles, f"no gain over Vela's cost (weights x{weight_cost})"
        monkeypatch.undo()
