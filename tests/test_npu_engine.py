"""The NPU compute engine (templates/runtime/npu/mcugen_npu_engine*.c) against TFLite Micro.

Each row of tests/npu_engine_models.py is a small int8 or int16 model of one op kind. Vela 5.2
compiles it for ethos-u55-128 (a subset also for -64 and -256, and -32); the test asserts that
Vela put the op on the NPU (no CPU operator left, and the harness counts the NPU operations the
op must become), runs the payload through our driver, device and engine in the host harness
under ASan/UBSan with the input loaded where TFLM's offline planner puts it, and requires the
output to equal TFLM's on the original model, bit for bit, with a spread of values.

Vela 5.2 lowers MEAN to a DEPTHWISE sum and an ELEMENTWISE multiply: those rows check the two
together (tests/test_npu_elementwise.py has the ELEMENTWISE modes on their own). The engine's scaling is also checked on its own against exact rational
arithmetic and TFLite's integer definition, and two corrupted streams check that the engine
refuses what it does not model instead of computing something.
"""

from __future__ import annotations

import dataclasses
import random
import re
import subprocess
from fractions import Fraction
from math import floor
from pathlib import Path

import numpy as np
import pytest
from conftest import public_model
from npu_engine_models import Row, all_rows, mean_rows
from oracles import run_tflm
from vela_models import (
    NPU,
    VelaModel,
    build_harness,
    cmd0_positions,
    compile_model,
    run_npu,
    stream_start,
)

from mcugen.toolchain.host import SANITIZE_FLAGS, WARNING_FLAGS, compiler

REPO = Path(__file__).resolve().parents[1]
SCALE_CHECK = REPO / "firmware_tests" / "npu" / "npu_scale_check.c"
MIN_DISTINCT = 6

# MODEL_FAULT values and driver results (mcugen_npu_device.h, ethosu_driver.h)
FAULT_UNSUPPORTED, FAULT_ENGINE = 9, 10

ROWS = [r for r in all_rows() if r.tflite_op != "MEAN"]
U55_32 = {"conv5002-1x9x7x4-o6-k3x3-s11-d11-SAME-NONE-pc-zp-128", "dw5100-1x9x7x20-o20-k3x3-s11-d11-SAME-NONE-pc-zp-128"}


def params(rows: list[Row]) -> list:
    out = []
    for row in rows:
        sizes = sorted(set(row.configs) | ({32} if row.id in U55_32 else set()))
        out += [pytest.param(row, macs, id=f"{row.id}-u55-{macs}") for macs in sizes]
    return out


@pytest.fixture(scope="session")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_harness(tmp_path_factory.mktemp("npu-engine") / "npu_harness")


class Compiled:
    """Vela's compilation of each (row, size), once per session."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[tuple[str, int], tuple[bytes, VelaModel]] = {}

    def get(self, row: Row, macs: int) -> tuple[bytes, VelaModel]:
        key = (row.id, macs)
        if key not in self.cache:
            model = row.build()
            self.cache[key] = (model, compile_model(model, macs, self.root / f"{len(self.cache)}-{macs}"))
        return self.cache[key]


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    return Compiled(tmp_path_factory.mktemp("vela"))


def op_counts(stdout: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^count (\w+) (\d+)$", stdout, re.MULTILINE)}


def check_row(row: Row, macs: int, harness: Path, compiled: Compiled, tmp_path: Path) -> None:
    model, vm = compiled.get(row, macs)
    assert vm.cpu_ops == [], f"Vela left {vm.cpu_ops} on the CPU: the row would test nothing"
    inputs = row.inputs()
    run = run_npu(harness, vm, macs, inputs, tmp_path)
    assert (run.rc, run.fault) == (0, 0), run.stdout[-1500:]
    counts = op_counts(run.stdout)
    for kind in row.npu_ops:
        assert counts.get(kind, 0) > 0, f"no NPU_OP_{kind} in the stream: {counts}"
    expected = run_tflm(model, inputs)
    assert len(run.outputs) == len(expected)
    for actual, wanted in zip(run.outputs, expected):
        assert len(np.unique(wanted)) >= min(MIN_DISTINCT, wanted.size), "oracle output has no spread"
        assert actual.dtype == wanted.dtype and actual.size == wanted.size
        mismatches = int(np.sum(actual.reshape(wanted.shape) != wanted))
        assert mismatches == 0, f"{mismatches} of {wanted.size} outputs differ from TFLM"


@pytest.mark.parametrize("row, macs", params(ROWS))
def test_op_on_the_npu_is_bit_exact(row: Row, macs: int, harness: Path, compiled: Compiled, tmp_path: Path) -> None:
    check_row(row, macs, harness, compiled, tmp_path)


@pytest.mark.parametrize("row, macs", params(mean_rows()))
def test_mean_on_the_npu_is_bit_exact(row: Row, macs: int, harness: Path, compiled: Compiled,
                                      tmp_path: Path) -> None:
    check_row(row, macs, harness, compiled, tmp_path)


@pytest.mark.parametrize("macs", (64, 128, 256))
def test_public_fully_connected_model_is_bit_exact(macs: int, harness: Path, tmp_path: Path) -> None:
    """ad_autoencoder (ten FULLY_CONNECTED layers) runs wholly on the NPU: the inputs of its three
    stored cases give TFLM's outputs. (The cases' stored outputs come from LiteRT, whose
    reference FULLY_CONNECTED rescales in double precision: TFLM, not those, is the oracle.)"""
    path = public_model("ad_autoencoder")
    model = path.read_bytes()
    vm = compile_model(model, macs, tmp_path / "vela")
    assert vm.cpu_ops == []
    for k in range(3):
        case = np.load(path.with_name(f"ad_autoencoder.case{k}.npz"))
        run = run_npu(harness, vm, macs, [case["input0"]], tmp_path / f"case{k}")
        assert (run.rc, run.fault) == (0, 0) and op_counts(run.stdout)["CONV"] >= 10
        (expected,) = run_tflm(model, [case["input0"]])
        assert np.array_equal(run.outputs[0].reshape(expected.shape), expected)


@pytest.mark.parametrize("macs", (64, 128, 256))
@pytest.mark.parametrize("name", ("kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025"))
def test_public_model_streams_run_without_a_fault(name: str, macs: int, harness: Path, tmp_path: Path) -> None:
    """The other public models' streams run to the end with CONV/DEPTHWISE/POOL operations among
    them (their outputs against TFLM: tests/test_npu_elementwise.py and test_npu_frontend.py)."""
    path = public_model(name)
    vm = compile_model(path.read_bytes(), macs, tmp_path / "vela")
    run = run_npu(harness, vm, macs, [np.load(path.with_name(f"{name}.case0.npz"))["input0"]], tmp_path / "run")
    ops = [line.split()[2] for line in run.stdout.splitlines()
           if line.startswith("cmd ") and " NPU_OP_" in line and "NPU_OP_STOP" not in line]
    assert sum(op in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL") for op in ops) >= 3
    assert (run.rc, run.fault) == (0, 0), run.stdout[-800:]


# ---- refusals ------------------------------------------------------------------------------------

def _patched_payload(vm: VelaModel, tmp_path: Path, name: str, patch) -> VelaModel:  # type: ignore[no-untyped-def]
    """vm with its payload's command stream words edited by patch(words) (in place)."""
    words = np.frombuffer(vm.payload.read_bytes(), dtype="<u4").copy()
    patch(words)
    path = tmp_path / f"{name}.bin"
    path.write_bytes(words.tobytes())
    return dataclasses.replace(vm, payload=path)


def _conv_row() -> Row:
    return next(r for r in ROWS if r.id.startswith("conv5002"))


def test_unmodelled_accumulator_format_is_refused(harness: Path, compiled: Compiled, tmp_path: Path) -> None:
    """ACC_FORMAT 2 (fp16 accumulators) is not modelled: the device stops with UNSUPPORTED."""
    _, vm = compiled.get(_conv_row(), 128)

    def patch(words: np.ndarray) -> None:
        (at,) = cmd0_positions(words, 0x124)  # NPU_SET_ACC_FORMAT
        words[at] = (2 << 16) | 0x124

    run = run_npu(harness, _patched_payload(vm, tmp_path, "acc16", patch), 128, _conv_row().inputs(), tmp_path)
    assert run.rc != 0 and run.fault == FAULT_UNSUPPORTED, run.stdout[-800:]


def test_short_weight_stream_is_refused(harness: Path, compiled: Compiled, tmp_path: Path) -> None:
    """A weight length that ends the stream early: the engine's decoder runs dry and the device
    stops with ENGINE instead of convolving with missing weights (and ASan sees no overread)."""
    _, vm = compiled.get(_conv_row(), 128)

    def patch(words: np.ndarray) -> None:
        i = stream_start(words)
        while i < len(words):
            word = int(words[i])
            if word & 0xFFFF == 0x4021:  # NPU_SET_WEIGHT_LENGTH (cmd1)
                words[i + 1] = 16
                return
            i += 2 if (word >> 14) & 3 == 1 else 1
        raise AssertionError("no NPU_SET_WEIGHT_LENGTH")

    run = run_npu(harness, _patched_payload(vm, tmp_path, "short", patch), 128, _conv_row().inputs(), tmp_path)
    assert run.rc != 0 and run.fault == FAULT_ENGINE, run.stdout[-800:]


def _parameter_commands(words: np.ndarray) -> list[int]:
    """Indices of the NPU_SET_* commands (cmd0 and cmd1) of a payload's command stream."""
    found, i = [], stream_start(words)
    while i < len(words):
        word = int(words[i])
        cmd1 = (word >> 14) & 3 == 1
        if cmd1 or word & 0x3FF >= 0x100:
            found.append(i)
        i += 2 if cmd1 else 1
    return found


FUZZ_ROWS = ("conv5009", "dw5101", "avg5310", "max5301", "tc5200", "conv-then-conv-nhcwb16", "conv-then-logistic")


@pytest.mark.parametrize("prefix", FUZZ_ROWS)
def test_corrupted_parameters_stay_inside_the_operands(prefix: str, harness: Path, compiled: Compiled,
                                                       tmp_path: Path) -> None:
    """40 corruptions of one parameter command each (a random 16-bit parameter, or a cmd1 data word
    moved by a small random amount): whatever the device and engine make of them, the harness
    exits cleanly under ASan/UBSan (run_npu asserts it) with success or a fault code."""
    row = next(r for r in ROWS if r.id.startswith(prefix))
    _, vm = compiled.get(row, 128)
    inputs = row.inputs()
    rng = np.random.default_rng(sum(map(ord, prefix)))
    outcomes = set()
    for n in range(40):
        def patch(words: np.ndarray) -> None:
            at = int(rng.choice(_parameter_commands(words)))
            if (int(words[at]) >> 14) & 3 == 1:
                words[at + 1] = (int(words[at + 1]) + int(rng.integers(-64, 65))) & 0xFFFFFFFF
            else:
                words[at] = (int(words[at]) & 0xFFFF) | (int(rng.integers(0, 1 << 16)) << 16)

        run = run_npu(harness, _patched_payload(vm, tmp_path, f"fuzz{n}", patch), 128, inputs, tmp_path / f"r{n}")
        assert run.rc <= 0
        outcomes.add(run.rc)
    assert len(outcomes) > 1, "no corruption changed the outcome: the test would not see a fault"


# ---- the scaling arithmetic on its own ------------------------------------------------------------

def tflite_double_rounding(acc: int, scale: int, shift: int) -> int:
    """TFLite's MultiplyByQuantizedMultiplier with multiplier `scale` and exponent 31 - shift:
    SaturatingRoundingDoublingHighMul(acc << left, scale), then RoundingDivideByPowerOfTwo."""
    left, right = max(31 - shift, 0), max(shift - 31, 0)
    product = (acc << left) * scale
    nudge = (1 << 30) if product >= 0 else 1 - (1 << 30)
    high = product + nudge
    high = -((-high) >> 31) if high < 0 else high >> 31  # C's division truncates towards zero
    if right == 0:
        return high
    mask = (1 << right) - 1
    remainder, threshold = high & mask, (mask >> 1) + (1 if high < 0 else 0)
    return (high >> right) + (1 if remainder > threshold else 0)


def expected_scale(acc: int, scale: int, shift: int, rounding: int) -> int:
    """The rounded value, saturated to int64 as the engine documents it."""
    exact = Fraction(acc * scale, 1 << shift)
    if rounding == 1:  # TRUNCATE: towards zero
        value = int(exact)
    elif rounding == 2:  # NATURAL: floor(x + 1/2)
        value = floor(exact + Fraction(1, 2))
    else:
        value = tflite_double_rounding(acc, scale, shift)
    return min(max(value, -(1 << 63)), (1 << 63) - 1)


def in_domain(acc: int, scale: int, shift: int, rounding: int) -> bool:
    """The engine's domain (a 40-bit accumulator), and for TFL also TFLite's (int32 values,
    a multiplier below 2^31, no overflow of the left shift)."""
    if not -(1 << 39) <= acc < 1 << 39:
        return False
    if rounding != 0:
        return True
    left = max(31 - shift, 0)
    return scale < 1 << 31 and -(1 << 31) <= acc << left < 1 << 31


def scale_cases() -> list[tuple[int, int, int, int]]:
    rng = random.Random(1234)
    cases = []
    for rounding in (0, 1, 2):
        # ties (t + 1/2) and their neighbours at every shift: acc * scale = t * 2^(shift - 1) (+1)
        for shift in range(64):
            low = min(max(shift - 1, 0), 36)
            scale = 1 << (max(shift - 1, 0) - low)
            for t in (-3, -2, -1, 0, 1, 2, 3):
                cases += [((t << low) + d, scale, shift, rounding) for d in (0, 1)]
        for _ in range(3000):
            bits = rng.choice((8, 16, 24, 32, 40))
            acc = rng.randrange(-(1 << (bits - 1)), 1 << (bits - 1))
            scale = rng.choice((rng.randrange(1 << 30, 1 << 31), rng.randrange(0, 1 << 32), 1 << 30))
            cases.append((acc, scale, rng.randrange(0, 64), rounding))
    return [c for c in cases if in_domain(*c)]


def test_scaling_matches_exact_arithmetic_and_tflite(tmp_path: Path) -> None:
    binary = tmp_path / "npu_scale_check"
    sources = [str(SCALE_CHECK), str(NPU / "mcugen_npu_fm.c"), str(NPU / "mcugen_npu_device.c"),
               str(NPU / "mcugen_npu_cycles.c")]
    subprocess.run([compiler(), *WARNING_FLAGS, *SANITIZE_FLAGS, f"-I{NPU}", *sources, "-o", str(binary)],
                   check=True, capture_output=True, text=True)
    cases = scale_cases()
    text = "".join(f"{a} {s} {sh} {r}\n" for a, s, sh, r in cases)
    result = subprocess.run([str(binary)], input=text, check=True, capture_output=True, text=True)
    got = [int(v) for v in result.stdout.split()]
    assert len(got) == len(cases)
    wrong = [(c, g, expected_scale(*c)) for c, g in zip(cases, got) if g != expected_scale(*c)]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. {wrong[:5]}"
    assert {r for *_, r in cases} == {0, 1, 2}
