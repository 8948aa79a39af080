"""Vela-compiled models on our simulated Ethos-U55: compile a .tflite with Vela 5.2 (default system
config: Ethos_U55_High_End_Embedded, Shared_Sram), run its payload through the host harness
(firmware_tests/npu/npu_harness.c) and read the cycle model's figures next to Vela's estimate.
Shared by tests/test_npu_cycles.py and benchmarks/npu/run.py."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tflite

REPO = Path(__file__).resolve().parents[1]
NPU = REPO / "templates" / "runtime" / "npu"
HARNESS = REPO / "firmware_tests" / "npu" / "npu_harness.c"

_ITEMSIZE = {tflite.TensorType.INT8: 1, tflite.TensorType.UINT8: 1, tflite.TensorType.INT16: 2,
             tflite.TensorType.INT32: 4, tflite.TensorType.FLOAT32: 4}


@dataclass(frozen=True)
class VelaBuild:
    """One Vela compilation: the payload, the harness's region specs (TFLM's base-address order)
    and Vela's own estimate (its summary CSV)."""

    name: str
    macs: int
    payload: Path
    regions: list[str]
    vela_cycles: int  # summary CSV cycles_total
    vela_flash_cycles: int  # summary CSV cycles_off_chip_flash_access
    vela_npu_ops: int  # NPU_OP_CONV/DEPTHWISE/POOL/ELEMENTWISE/DMA_START in the payload's stream
    stream_bytes: int  # the command stream's bytes (the payload's COMMAND_STREAM part)


@dataclass(frozen=True)
class DeviceRun:
    cycles: int  # MODEL_CYCLES
    pmu_cycles: int  # PMCCNTR (48-bit)
    pmu_active: int  # PMEVCNTR0 = NPU_ACTIVE
    pmu_mac: int  # PMEVCNTR1 = MAC_ACTIVE
    op_cycles: list[tuple[str, int]]  # (command name, modelled cycles) per operation command


def build_harness(out: Path, compiler: str, flags: list[str]) -> Path:
    sources = [str(HARNESS), *(str(p) for p in sorted(NPU.glob("*.c")))]
    subprocess.run([compiler, *flags, f"-I{NPU}", *sources, "-o", str(out)], check=True, capture_output=True,
                   text=True)
    return out


def _tensor_bytes(model: tflite.Model, sg: tflite.SubGraph, index: int) -> tuple[bytes, int]:
    tensor = sg.Tensors(index)
    data = model.Buffers(tensor.Buffer()).DataAsNumpy()
    raw = data.tobytes() if isinstance(data, np.ndarray) else b""
    return raw, int(np.prod(tensor.ShapeAsNumpy())) * _ITEMSIZE[tensor.Type()]


def _stream_bytes(payload: bytes) -> int:
    """The COMMAND_STREAM length of a COP1 payload (driver actions: 1 CONFIG +2 words, 2 stream, 5 NOP)."""
    words = np.frombuffer(payload, dtype="<u4")
    i = 1
    while i < len(words):
        action = int(words[i]) & 0xFF
        if action == 2:
            return ((int(words[i]) >> 16) | ((int(words[i]) >> 8 & 0xFF) << 16)) * 4
        i += 3 if action == 1 else 1
    raise ValueError("payload without COMMAND_STREAM")


def vela_compile(model: Path, macs: int, out: Path, options: Sequence[str] = ()) -> VelaBuild:
    """`vela --accelerator-config ethos-u55-MACS` (default system config unless `options` say
    otherwise) into `out`."""
    result = subprocess.run(
        [sys.executable, "-m", "ethosu.vela", str(model), "--accelerator-config", f"ethos-u55-{macs}",
         "--output-dir", str(out), "--verbose-register-command-stream", *options],
        check=True, capture_output=True, text=True)
    ops = sum(1 for line in result.stdout.splitlines()
              if re.search(r" - NPU_OP_(CONV|DEPTHWISE|POOL|ELEMENTWISE|DMA_START)\b", line))
    stem = model.stem
    with open(next(out.glob(f"{stem}_summary_*.csv")), newline="") as f:
        summary = next(csv.DictReader(f))
    buf = (out / f"{stem}_vela.tflite").read_bytes()
    tfl = tflite.Model.GetRootAsModel(buf, 0)
    sg = tfl.Subgraphs(0)
    ethos = [sg.Operators(i) for i in range(sg.OperatorsLength())
             if tfl.OperatorCodes(sg.Operators(i).OpcodeIndex()).CustomCode() == b"ethos-u"]
    if len(ethos) != 1:
        raise ValueError(f"{model}: expected one ethos-u op, found {len(ethos)}")
    inputs, outputs = list(ethos[0].InputsAsNumpy()), list(ethos[0].OutputsAsNumpy())
    payload, _ = _tensor_bytes(tfl, sg, inputs[0])
    (out / "payload.bin").write_bytes(payload)
    regions: list[str] = []
    seen: dict[int, int] = {}
    for index in [*inputs[1:], *outputs]:  # TFLM: the inputs after the payload, then the outputs
        if index in seen:
            regions.append(f"same:{seen[index]}")
            continue
        seen[index] = len(regions)
        data, size = _tensor_bytes(tfl, sg, index)
        if data:
            path = out / f"region{len(regions)}.bin"
            path.write_bytes(data)
            regions.append(f"file:{path}")
        else:
            regions.append(f"zero:{size}")
    return VelaBuild(stem, macs, out / "payload.bin", regions, int(float(summary["cycles_total"])),
                     int(float(summary["cycles_off_chip_flash_access"])), ops, _stream_bytes(payload))


def run_device(harness: Path, build: VelaBuild, options: Sequence[str] = ()) -> DeviceRun:
    """Run the payload; `options` go to the harness (e.g. -m to change a memory of the model)."""
    result = subprocess.run([str(harness), str(build.macs), str(build.payload), *build.regions, *options],
                            check=False,
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0 or not re.search(r"^result 0 ", result.stdout, re.MULTILINE):
        raise RuntimeError(f"{build.name} u55-{build.macs}: harness failed: {result.stderr[-2000:]}"
                           f"{result.stdout[-500:]}")
    text = result.stdout

    def number(pattern: str) -> int:
        m = re.search(pattern, text, re.MULTILINE)
        if m is None:
            raise RuntimeError(f"no {pattern!r} in the harness output")
        return int(m[1])

    lo = number(r"^pmu cycles (\d+) active")
    hi = number(r"^pmu cycles_hi (\d+) mac")
    return DeviceRun(number(r"^model cycles (\d+)$"), lo | hi << 32, number(r"^pmu cycles \d+ active (\d+)$"),
                     number(r"^pmu cycles_hi \d+ mac (\d+)$"),
                     [(m[1], int(m[2])) for m in re.finditer(r"^opcycles (\w+) (\d+)$", text, re.MULTILINE)])
