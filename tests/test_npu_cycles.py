"""The cycle model of the simulated Ethos-U55 (templates/runtime/npu/mcugen_npu_cycles.c) against
Vela 5.2's own performance estimate, the oracle: each model is compiled by Vela (default system
config Ethos_U55_High_End_Embedded, Shared_Sram), its payload runs through our driver and device
in the host harness (ASan/UBSan), and the run's cycles (MODEL_CYCLES, read through the register
interface) are compared with `cycles_total` of Vela's summary CSV.

Bounds: the public models within 0.8-1.25 of Vela (the issue's target; measured 0.987-1.028 on
u55-32/64/128/256, see docs/npu.md, "Cycle model"), and each single-op model too (measured
0.89-1.23). Where they differ: our model computes every OFM block at its real (edge) size from the
block config the command stream programs and counts the weights' re-reads from SRAM for every
block position, which Vela's estimate leaves out for weights it buffered in SRAM."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, public_model
from modelbuilder import ModelBuilder
from npu_vela import DeviceRun, run_device, vela_compile
from vela_models import VelaModel, build_harness

CONFIGS = (32, 64, 128, 256)
NETWORK_BOUND = (0.8, 1.25)
# single ops: measured 0.89-1.23 over the cases below on u55-32/64/128/256 (Vela 5.2)
SINGLE_OP_BOUND = (0.8, 1.25)


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("npu-cycles") / "npu_harness"
    return build_harness(out)


Compile = Callable[[Path, int], VelaModel]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Compile:
    cache: dict[tuple[Path, int], VelaModel] = {}

    def get(model: Path, macs: int) -> VelaModel:
        if (model, macs) not in cache:
            cache[model, macs] = vela_compile(model, macs, tmp_path_factory.mktemp(f"vela-{model.stem}-{macs}"))
        return cache[model, macs]

    return get


def ratio(run: DeviceRun, build: VelaModel) -> float:
    return run.cycles / build.estimate.cycles


@pytest.mark.parametrize("macs", CONFIGS)
@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_public_model_cycles_match_vela(harness: Path, compiled: Compile, name: str, macs: int) -> None:
    build = compiled(public_model(name), macs)
    run = run_device(harness, build)
    low, high = NETWORK_BOUND
    assert low <= ratio(run, build) <= high, (
        f"{name} u55-{macs}: {run.cycles} simulated cycles, Vela estimates {build.estimate.cycles}")
    # the PMU, read through the registers: CYCLE and NPU_ACTIVE are the run's cycles; MAC_ACTIVE
    # counts the MAC array's cycles, part of them
    assert run.pmu_cycles == run.pmu_active == run.cycles
    assert 0 < run.pmu_mac <= run.cycles
    # the kernels run one after the other; DMAs may overlap them but cannot make the run shorter
    kernels = sum(c for op, c in run.op_cycles if op in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL",
                                                          "NPU_OP_ELEMENTWISE"))
    everything = sum(c for _, c in run.op_cycles)
    assert kernels <= run.cycles <= everything


# ---- single-op models ---------------------------------------------------------------------------

def _conv_model(h: int, w: int, cin: int, cout: int, k: int, stride: int = 1, depthwise: bool = False) -> bytes:
    rng = np.random.default_rng(h * 1000 + w * 100 + cin * 10 + cout + k)
    b = ModelBuilder()
    x = b.add_tensor("x", [1, h, w, cin], "int8", scale=0.05, zero_point=-3)
    oh, ow = -(-h // stride), -(-w // stride)
    y = b.add_tensor("y", [1, oh, ow, cout], "int8", scale=0.1, zero_point=2)
    shape = [1, k, k, cout] if depthwise else [cout, k, k, cin]
    wt = b.add_tensor("w", shape, "int8", scale=[0.01] * cout, quantized_dimension=3 if depthwise else 0,
                      data=rng.integers(-127, 128, shape))
    bias = b.add_tensor("b", [cout], "int32", scale=[0.0005] * cout, data=rng.integers(-1000, 1000, [cout]))
    options = {"padding": "SAME", "stride_w": stride, "stride_h": stride, "fused_activation_function": "RELU"}
    b.add_op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, wt, bias], [y], options)
    b.set_io([x], [y])
    return b.build()


def _pool_model(op: str, h: int, w: int, c: int, k: int) -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, h, w, c], "int8", scale=0.05, zero_point=-3)
    y = b.add_tensor("y", [1, h // k, w // k, c], "int8", scale=0.05, zero_point=-3)
    b.add_op(op, [x], [y], {"filter_width": k, "filter_height": k, "stride_w": k, "stride_h": k})
    b.set_io([x], [y])
    return b.build()


def _binary_model(op: str, h: int, w: int, c: int) -> bytes:
    b = ModelBuilder()
    x1 = b.add_tensor("x1", [1, h, w, c], "int8", scale=0.05, zero_point=-3)
    x2 = b.add_tensor("x2", [1, h, w, c], "int8", scale=0.04, zero_point=1)
    y = b.add_tensor("y", [1, h, w, c], "int8", scale=0.1, zero_point=0)
    b.add_op(op, [x1, x2], [y])
    b.set_io([x1, x2], [y])
    return b.build()


def _fc_model(n_in: int, n_out: int) -> bytes:
    rng = np.random.default_rng(n_in + n_out)
    b = ModelBuilder()
    x = b.add_tensor("x", [1, n_in], "int8", scale=0.05, zero_point=-3)
    wt = b.add_tensor("w", [n_out, n_in], "int8", scale=0.01, data=rng.integers(-127, 128, [n_out, n_in]))
    bias = b.add_tensor("b", [n_out], "int32", scale=0.0005, data=rng.integers(-1000, 1000, [n_out]))
    y = b.add_tensor("y", [1, n_out], "int8", scale=0.1, zero_point=0)
    b.add_op("FULLY_CONNECTED", [x, wt, bias], [y])
    b.set_io([x], [y])
    return b.build()


SINGLE_OPS: dict[str, Callable[[], bytes]] = {
    "conv3x3_32x32x16_to_32": lambda: _conv_model(32, 32, 16, 32, 3),
    "conv1x1_16x16x64_to_64": lambda: _conv_model(16, 16, 64, 64, 1),
    "conv3x3_s2_24x24x8_to_16": lambda: _conv_model(24, 24, 8, 16, 3, stride=2),
    "depthwise3x3_32x32x32": lambda: _conv_model(32, 32, 32, 32, 3, depthwise=True),
    "maxpool2x2_32x32x16": lambda: _pool_model("MAX_POOL_2D", 32, 32, 16, 2),
    "avgpool2x2_32x32x16": lambda: _pool_model("AVERAGE_POOL_2D", 32, 32, 16, 2),
    "add_16x16x32": lambda: _binary_model("ADD", 16, 16, 32),
    "mul_16x16x32": lambda: _binary_model("MUL", 16, 16, 32),
    "fully_connected_256_to_64": lambda: _fc_model(256, 64),
}


@pytest.fixture(scope="module")
def single_op(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Callable[[], bytes]], Path]:
    root = tmp_path_factory.mktemp("single-op")

    def write(name: str, make: Callable[[], bytes]) -> Path:
        path = root / f"{name}.tflite"
        if not path.exists():
            path.write_bytes(make())
        return path

    return write


@pytest.mark.parametrize("macs", CONFIGS)
@pytest.mark.parametrize("case", sorted(SINGLE_OPS))
def test_single_op_cycles_match_vela(harness: Path, compiled: Compile, single_op: Callable, case: str,
                                     macs: int) -> None:
    build = compiled(single_op(case, SINGLE_OPS[case]), macs)
    run = run_device(harness, build)
    assert any(op != "NPU_OP_DMA_START" and c > 0 for op, c in run.op_cycles), "no operation on the NPU"
    low, high = SINGLE_OP_BOUND
    assert low <= ratio(run, build) <= high, (
        f"{case} u55-{macs}: {run.cycles} simulated cycles, Vela estimates {build.estimate.cycles}")
    assert run.pmu_cycles == run.pmu_active == run.cycles


# ---- facts that must hold whatever the calibration ------------------------------------------------

@pytest.mark.parametrize("case", ["conv3x3_32x32x16_to_32", "conv1x1_16x16x64_to_64", "depthwise3x3_32x32x32"])
def test_more_macs_per_cycle_take_no_more_cycles(harness: Path, compiled: Compile, single_op: Callable,
                                                 case: str) -> None:
    runs = [run_device(harness, compiled(single_op(case, SINGLE_OPS[case]), macs)) for macs in CONFIGS]
    kernel_cycles = [sum(c for op, c in r.op_cycles if op in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE")) for r in runs]
    assert kernel_cycles == sorted(kernel_cycles, reverse=True), f"{case}: {dict(zip(CONFIGS, kernel_cycles))}"
    assert kernel_cycles[0] > kernel_cycles[-1]  # u55-32 is really slower than u55-256
    totals = [r.cycles for r in runs]
    assert totals == sorted(totals, reverse=True), f"{case}: {dict(zip(CONFIGS, totals))}"


@pytest.mark.parametrize("macs", (64, 256))
def test_bigger_ofm_takes_more_cycles(harness: Path, compiled: Compile, single_op: Callable, macs: int) -> None:
    sizes = (8, 16, 32, 48)
    cycles = [run_device(harness, compiled(single_op(f"conv3x3_{s}x{s}x16_to_32",
                                                     lambda s=s: _conv_model(s, s, 16, 32, 3)), macs)).cycles
              for s in sizes]
    assert all(a < b for a, b in itertools.pairwise(cycles)), dict(zip(sizes, cycles))
    cycles = [run_device(harness, compiled(single_op(f"add_16x16x{c}", lambda c=c: _binary_model("ADD", 16, 16, c)),
                                           macs)).cycles for c in (8, 32, 64)]
    assert all(a < b for a, b in itertools.pairwise(cycles)), cycles


# ---- the memory system is the device's configuration ----------------------------------------------

def test_memory_configuration_sets_the_flash_bound(harness: Path, compiled: Compile) -> None:
    """ad_autoencoder's fully connected layers read every weight once, straight from flash: with
    Vela's default system the run takes exactly Vela's off-chip flash access cycles (Vela's
    estimate, the oracle); the device's cycle configuration (-m: memory 1, the flash, at 128/256
    = 0.5 bytes per cycle instead of 1) doubles them, and a flash as fast as the SRAM (8 bytes
    per cycle) leaves the compute as the bound, under the flash-bound time."""
    build = compiled(public_model("ad_autoencoder"), 128)
    default = run_device(harness, build)
    assert default.cycles == build.estimate.flash_cycles == build.estimate.cycles
    assert run_device(harness, build, ["-m", "1,128,128,64,0"]).cycles == 2 * build.estimate.flash_cycles
    fast = run_device(harness, build, ["-m", "1,2048,128,64,0"])
    kernels = sum(c for op, c in fast.op_cycles if op != "NPU_OP_DMA_START")
    assert fast.cycles == kernels < build.estimate.flash_cycles // 4
