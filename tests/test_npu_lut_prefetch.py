"""A table's DMA into SHRAM started before earlier kernels (mcugen/npu/lut_prefetch.py).

The oracle for the outputs is TFLM: a CONV -> CONV -> SOFTMAX model and a CONV -> MAX_POOL -> TANH one
(the TANH in the pool's output stage) built for u55-64 (16 SHRAM banks: the kernels would use the LUT's banks unless
told not to) run under ASan/UBSan and equal TFLM bit for bit. The stream is decoded: the table's
DMA follows a KERNEL_WAIT, starts before at least one earlier kernel, and every kernel issued
while it may run keeps its accumulators below the LUT's 2 banks; the simulated device counts
no more cycles than the same build with the table loaded right before its op (fewer for the
SOFTMAX).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_sanitized_build_equals_tflm
from test_npu_weights_dma import SHRAM_DMA, stream
from vela_models import build_harness, device_cycles

import mcugen.npu.compile
from mcugen.driver import BuildOptions, compile_model
from mcugen.ir import OpKind
from mcugen.npu.config import npu_config
from mcugen.npu.registers import Cmd0
from mcugen.targets import HOST
from mcugen.toolchain.host import RELEASE_FLAGS, WARNING_FLAGS

SIZE = "u55-64"
SHAPE = [1, 8, 8, 16]
Q = (0.05, -3)
KERNELS = {int(Cmd0.OP_CONV), int(Cmd0.OP_DEPTHWISE), int(Cmd0.OP_POOL), int(Cmd0.OP_ELEMENTWISE)}
LUT_BANKS = 2


def _conv(b: ModelBuilder, name: str, source: int, size: int, seed: int, valid: bool = False) -> int:
    c = SHAPE[-1]
    rng = np.random.default_rng(seed)
    w = b.add_tensor(f"{name}_w", [c, size, size, c], "int8", scale=[0.01] * c, zero_point=0,
                     data=rng.integers(-100, 100, (c, size, size, c)).astype(np.int8))
    bias = b.add_tensor(f"{name}_b", [c], "int32", data=rng.integers(-500, 500, c).astype(np.int32))
    side = SHAPE[1] - size + 1 if valid else SHAPE[1]
    y = b.add_tensor(name, [1, side, side, c], "int8", *Q)
    b.add_op("CONV_2D", [source, w, bias], [y], {"padding": "VALID" if valid else "SAME"})
    return y


def _softmax_model() -> bytes:
    """The second CONV (VALID, the whole map) leaves one row of 16 for the SOFTMAX, whose MAX pool
    takes far less than the table's copy."""
    b = ModelBuilder("conv conv softmax")
    x = b.add_tensor("x", SHAPE, "int8", *Q)
    h = _conv(b, "b", _conv(b, "a", x, 3, 1), SHAPE[1], 2, valid=True)
    y = b.add_tensor("y", [1, 1, 1, SHAPE[-1]], "int8", 1 / 256, -128)
    b.add_op("SOFTMAX", [h], [y], {"beta": 1.0})
    b.set_io([x], [y])
    return b.build()


def _lut_model() -> bytes:
    """The TANH runs in the MAX pool's output stage; its table's copy takes longer than the pool."""
    b = ModelBuilder("conv pool tanh")
    x = b.add_tensor("x", SHAPE, "int8", *Q)
    half = [1, SHAPE[1] // 2, SHAPE[2] // 2, SHAPE[3]]
    pooled = b.add_tensor("p", half, "int8", *Q)
    b.add_op("MAX_POOL_2D", [_conv(b, "a", x, 3, 3)], [pooled],
             {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2})
    y = b.add_tensor("y", half, "int8", 1 / 128, 0)
    b.add_op("TANH", [pooled], [y])
    b.set_io([x], [y])
    return b.build()


MODELS = {"softmax": _softmax_model, "lut": _lut_model}


def _options() -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(SIZE)))


def _payloads(model: bytes) -> list[bytes]:
    compiled = compile_model(model, _options(), "m.tflite")
    found = []
    for op in compiled.order:
        if op.kind is OpKind.ETHOS_U:
            assert op.inputs[0] is not None and op.inputs[0].data is not None
            found.append(op.inputs[0].data.tobytes())
    return found


def _table_dma_windows(payload: bytes) -> list[tuple[int, list[int]]]:
    """Per table DMA: (the opcode before its first register write, the AB_START of each kernel
    issued between its start and the next DMA wait)."""
    commands = stream(payload)
    registers: dict[int, int] = {}
    windows: list[tuple[int, list[int]]] = []
    open_window: list[int] | None = None
    before_dma = -1
    for n, (opcode, is_cmd1, value) in enumerate(commands):
        if is_cmd1:
            continue
        registers[opcode] = value
        if opcode == Cmd0.DMA0_SRC_REGION:
            before_dma = commands[n - 1][0]
        if opcode == Cmd0.OP_DMA_START and registers.get(int(Cmd0.DMA0_DST_REGION), 0) & SHRAM_DMA:
            open_window = []
            windows.append((before_dma, open_window))
        elif opcode == Cmd0.OP_DMA_WAIT:
            open_window = None
        elif opcode in KERNELS and open_window is not None:
            open_window.append(registers[int(Cmd0.AB_START)])
    return windows


@pytest.mark.parametrize("name", sorted(MODELS))
def test_table_dma_runs_beside_earlier_kernels_that_leave_the_lut_banks_alone(name: str) -> None:
    windows = [w for payload in _payloads(MODELS[name]()) for w in _table_dma_windows(payload)]
    assert windows
    banks = npu_config(SIZE).shram_banks
    for before, kernels in windows:
        assert before == Cmd0.OP_KERNEL_WAIT
        assert kernels, "the table's DMA runs beside no kernel"
        assert all(ab_start <= banks - LUT_BANKS - 1 for ab_start in kernels)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_prefetched_tables_are_bit_exact_with_tflm(name: str) -> None:
    model = MODELS[name]()
    assert_sanitized_build_equals_tflm(model, _options(), f"{name}.tflite", SHAPE, 7)


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_harness(tmp_path_factory.mktemp("harness") / "npu_harness", [*WARNING_FLAGS, *RELEASE_FLAGS])


def _device_cycles(model: bytes, harness: Path, work: Path) -> int:
    return device_cycles(compile_model(model, _options(), "m.tflite").order, harness, int(SIZE.removeprefix("u55-")),
                         work)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_prefetched_tables_take_no_more_device_cycles(name: str, harness: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer for the SOFTMAX, whose table was loaded after its short MAX pool; as many for the
    TANH, whose table's copy already ran beside the CONV before the pool (no KERNEL_WAIT there)."""
    model = MODELS[name]()
    early = _device_cycles(model, harness, tmp_path / "early")
    monkeypatch.setattr(mcugen.npu.compile, "table_prefetches", lambda *args: {})
    late = _device_cycles(model, harness, tmp_path / "late")
    assert 0 < early < late if name == "softmax" else 0 < early <= late


@pytest.mark.parametrize(("size", "waits"), [("u55-64", True), ("u55-128", False)])
def test_a_table_loaded_right_before_its_op_waits_for_kernels_on_16_banks(
        size: str, waits: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the prefetch, the copy starts right after the kernel before it. On 16 banks that
    kernel's blocks may hold the LUT's banks, so the copy waits for it (KERNEL_WAIT), as Vela's
    streams do; above 16 banks the LUT's banks are never given to other kernels."""
    monkeypatch.setattr(mcugen.npu.compile, "table_prefetches", lambda *args: {})
    options = BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)))
    compiled = compile_model(_lut_model(), options, "m.tflite")
    payloads = [op.inputs[0].data.tobytes() for op in compiled.order
                if op.kind is OpKind.ETHOS_U and op.inputs[0] is not None and op.inputs[0].data is not None]
    windows = [w for payload in payloads for w in _table_dma_windows(payload)]
    assert windows
    assert all((before == Cmd0.OP_KERNEL_WAIT) is waits for before, _ in windows), windows
