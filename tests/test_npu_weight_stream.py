"""Weight streaming (mcugen/npu/weight_stream.py): a convolution in OFM depth slices whose weights
are DMA'd into two SRAM slots in turn, the DMA of slice k + 1 beside the kernel of slice k.

The oracle is TFLM: single-op CONV_2D and FULLY_CONNECTED models (int8 and int16) and the
ic_resnet8 chain lowered with streamed weights run through our driver, device
and engine under ASan/UBSan and must equal TFLM's outputs bit for bit. The decoded command stream
is held to the protocol: each slice's kernel reads its slot only after a DMA_WAIT that leaves its
DMA ended, and the next slice's DMA was issued before that kernel. The simulated device counts
fewer cycles for a flash-bound convolution streamed than read from flash, and the build-time
estimate stays within 2% of the device's cycles for the default builds that stream.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import public_model
from npu_compile import REFUSED, Model, compile_ours, models
from npu_vela import run_device
from oracles import run_tflm
from test_npu_weights_dma import stream
from vela_models import build_harness, run_npu

from mcugen.cli import main
from mcugen.frontend.tflite import parse_model
from mcugen.ir import OpKind
from mcugen.npu.config import CONFIGS
from mcugen.npu.registers import Cmd0, Cmd1
from mcugen.npu.weight_stream import depth_slices, stream_timeline

SHRAM_DMA = 0x100
SIZES = (32, 128)


def streamable(model: Model) -> bool:
    return model.id.startswith(("conv", "fc", "int16-conv", "int16-fc")) and model.id not in REFUSED


def slice_depth(channels: int, macs: int) -> int:
    """About three slices, a whole number of OFM micro-blocks each (one if the OFM is shallow)."""
    unit = CONFIGS[f"u55-{macs}"].ofm_ublock.depth
    return max(unit, -(-channels // 3 // unit) * unit)


def weighted_positions(model: bytes) -> dict[int, int]:
    """Op position -> OFM depth of each CONV_2D and FULLY_CONNECTED of the model."""
    graph = parse_model(model, "model")
    return {n: op.outputs[0].shape[-1] for n, op in enumerate(graph.ops)
            if op.kind in (OpKind.CONV_2D, OpKind.FULLY_CONNECTED)}


def check_protocol(payload: bytes) -> tuple[int, int]:
    """Replays the stream's DMAs and waits: every kernel that reads SRAM weights reads bytes
    whose DMA has ended (a DMA_WAIT n ends all but the newest n), and a streamed slice that is
    not its op's last runs with the next slice's DMA already issued. (kernels from SRAM, of
    them those with the next slice's DMA issued before them)."""
    registers: dict[tuple[int, bool], int] = {}
    issued: list[tuple[int, int, int]] = []  # (region, address, length), oldest first
    ended = 0  # the first `ended` DMAs of `issued` have ended
    kernels = ahead = 0
    for opcode, is_cmd1, value in stream(payload):
        registers[(opcode, is_cmd1)] = value
        if is_cmd1:
            continue
        if opcode == Cmd0.OP_DMA_START and not registers[(Cmd0.DMA0_DST_REGION, False)] & SHRAM_DMA:
            issued.append((registers[(Cmd0.DMA0_DST_REGION, False)], registers[(Cmd1.DMA0_DST, True)],
                           registers[(Cmd1.DMA0_LEN, True)]))
        elif opcode == Cmd0.OP_DMA_WAIT:
            ended = max(ended, len(issued) - value)
        elif opcode in (Cmd0.OP_CONV, Cmd0.OP_DEPTHWISE) and registers[(Cmd0.WEIGHT_REGION, False)]:
            region, base = registers[(Cmd0.WEIGHT_REGION, False)], registers[(Cmd1.WEIGHT_BASE, True)]
            writer = max(n for n, (r, a, length) in enumerate(issued) if r == region and a <= base < a + length)
            assert writer < ended, f"kernel {kernels} reads weights whose DMA {writer} may still run"
            kernels += 1
            ahead += writer + 1 < len(issued)
    return kernels, ahead


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_harness(tmp_path_factory.mktemp("npu-stream") / "npu_harness")


@pytest.mark.parametrize("macs", SIZES)
@pytest.mark.parametrize("model", [m for m in models() if streamable(m)], ids=lambda m: m.id)
def test_streamed_single_op_is_bit_exact_with_tflm(model: Model, macs: int, harness: Path, tmp_path: Path) -> None:
    data, inputs = model.build(), model.inputs()
    ((position, channels),) = weighted_positions(data).items()
    depth = slice_depth(channels, macs)
    ours = compile_ours(data, macs, tmp_path / "ours", stream_depths={position: depth})
    kernels, ahead = check_protocol(ours.payload.read_bytes())
    slices = len(depth_slices(channels, depth))
    assert (kernels, ahead) == (slices, slices - 1)
    run = run_npu(harness, ours, macs, inputs, tmp_path / "run")
    assert (run.rc, run.fault) == (0, 0), run.stdout[-1500:]
    (expected,) = run_tflm(data, inputs)
    assert len(np.unique(expected)) >= min(6, expected.size), "oracle output has no spread"
    assert int(np.sum(run.outputs[0].reshape(expected.shape) != expected)) == 0, "outputs differ from TFLM"


@pytest.mark.parametrize("macs", (32, 256))
def test_every_convolution_of_a_chain_streamed_is_bit_exact_with_tflm(macs: int, harness: Path, tmp_path: Path) -> None:
    """ic_resnet8 (15 ops: CONVs, residual ADDs, pool, FULLY_CONNECTED, SOFTMAX) with every CONV_2D
    and FULLY_CONNECTED streamed, each one's first DMAs beside the op before it."""
    path = public_model("ic_resnet8")
    data = path.read_bytes()
    depths = {n: slice_depth(c, macs) for n, c in weighted_positions(data).items()}
    ours = compile_ours(data, macs, tmp_path / "ours", stream_depths=depths)
    kernels, ahead = check_protocol(ours.payload.read_bytes())
    slices = sum(len(depth_slices(c, depths[n])) for n, c in weighted_positions(data).items())
    # every slice but an op's last runs with the next slice's DMA issued; an op's last slice
    # with the next op's first, where that op streams too
    followed = sum(1 for n in depths if n + 1 in depths)
    assert kernels == slices and ahead == slices - len(depths) + followed
    for k in range(3):
        case = np.load(path.with_name(f"ic_resnet8.case{k}.npz"))
        run = run_npu(harness, ours, macs, [case["input0"]], tmp_path / f"run{k}")
        assert (run.rc, run.fault) == (0, 0), run.stdout[-1500:]
        want = case["tflm_output0"]
        assert int(np.sum(run.outputs[0].reshape(want.shape) != want)) == 0, f"case {k} differs from TFLM"


def test_streaming_a_flash_bound_convolution_takes_fewer_device_cycles(harness: Path, tmp_path: Path) -> None:
    """ic_resnet8's stage-3 3x3 CONV (64 -> 64 channels on 8x8, ~37 KB of weights, read from flash
    per OFM block position) streamed in slices: fewer device cycles, outputs still TFLM's."""
    path = public_model("ic_resnet8")
    data = path.read_bytes()
    case = np.load(path.with_name("ic_resnet8.case0.npz"))
    conv = next(n for n, op in enumerate(parse_model(data, "m").ops)
                if op.kind is OpKind.CONV_2D and op.inputs[0].shape[-1] == 64)
    flash = compile_ours(data, 128, tmp_path / "flash")
    streamed = compile_ours(data, 128, tmp_path / "streamed", stream_depths={conv: 16})
    assert check_protocol(streamed.payload.read_bytes()) == (4, 3)
    assert run_device(harness, streamed).cycles < run_device(harness, flash).cycles
    run = run_npu(harness, streamed, 128, [case["input0"]], tmp_path / "run")
    assert (run.rc, run.fault) == (0, 0)
    assert int(np.sum(run.outputs[0].reshape(case["tflm_output0"].shape) != case["tflm_output0"])) == 0


def _build(size: str, weights: str, out: Path) -> dict[str, Any]:
    """report.json of `mcugen build ic_resnet8 --npu SIZE --npu-weights WEIGHTS` (cycles: the device's)."""
    result = CliRunner().invoke(main, ["build", str(public_model("ic_resnet8")), "--npu", size, "--npu-weights", weights,
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report


@pytest.mark.parametrize("size", ("u55-128", "u55-256"))
def test_auto_streams_within_the_flash_builds_sram_and_the_estimate_holds(size: str, tmp_path: Path) -> None:
    """The default build streams some of ic_resnet8's convolutions: its arena is no larger than
    with every weight in flash, its device cycles fewer, and the build-time estimate (the stream's
    timeline) within 2% of the device."""
    auto, flash = _build(size, "auto", tmp_path / "auto"), _build(size, "flash", tmp_path / "flash")
    npu, plain = auto["npu"], flash["npu"]
    assert npu["weight_stream_ops"] > 0 and plain["weight_stream_ops"] == 0
    assert npu["sram_bytes"] <= plain["sram_bytes"]
    assert npu["cycles"] < plain["cycles"]
    assert 0.99 <= npu["cycles"] / npu["cycles_estimate"] <= 1.02
    streams = [b for b in auto["buffers"] if "npu_stream_depth" in b]
    for buffer in streams:  # no buffer live with a stream's slots shares their bytes
        for other in auto["buffers"]:
            if other is buffer or other["pool"] != buffer["pool"] or not other["bytes"]:
                continue
            in_time = other["first"] <= buffer["last"] and buffer["first"] <= other["last"]
            in_space = other["offset"] < buffer["offset"] + buffer["bytes"] and buffer["offset"] < other["offset"] + other["bytes"]
            assert not (in_time and in_space), f"{other['name']} overlaps {buffer['name']}"


def test_timeline_overlaps_each_dma_with_the_kernel_before() -> None:
    """Kernels of 100 cycles, DMAs of 300: after the first two DMAs the kernels wait on the DMA
    engine (flash-bound), and the next op's DMAs get the engine only for the last kernel; DMAs
    of 50: the kernels run back to back after the first DMA, and the next op's DMAs get the
    engine from the middle of the last-but-one kernel."""
    assert stream_timeline([100] * 4, [300] * 4, 0, False) == (1300, 100)
    assert stream_timeline([100] * 4, [50] * 4, 0, False) == (450, 150)
    # prefetched beside a 1000-cycle kernel: both slots are full by its end, then flash-bound again
    assert stream_timeline([100] * 4, [300] * 4, 1000, True) == (800, 100)
