"""The cycle model's view of a Vela compilation (tests/vela_models.py compiles and reads it): run
its payload through the host harness (firmware_tests/npu/npu_harness.c) and read the device's
cycle figures, to set beside Vela's estimate (VelaModel.estimate). Shared by
tests/test_npu_cycles.py and benchmarks/npu/run.py."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vela_models import VelaModel, compile_model


def vela_compile(model: Path, macs: int, out: Path) -> VelaModel:
    """`model` (a file) compiled by Vela for ethos-u55-`macs`, named after the file."""
    compiled = compile_model(model.read_bytes(), macs, out, name=model.stem)
    if compiled.estimate is None:
        raise ValueError(f"{model}: Vela made no single ethos-u op ({compiled.cpu_ops})")
    return compiled


@dataclass(frozen=True)
class DeviceRun:
    cycles: int  # MODEL_CYCLES
    pmu_cycles: int  # PMCCNTR (48-bit)
    pmu_active: int  # PMEVCNTR0 = NPU_ACTIVE
    pmu_mac: int  # PMEVCNTR1 = MAC_ACTIVE
    op_cycles: list[tuple[str, int]]  # (command name, modelled cycles) per operation command


def run_device(harness: Path, build: VelaModel, options: Sequence[str] = ()) -> DeviceRun:
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
