"""The examples' make-based firmware builds: generated C + firmware/common, on the host and on
QEMU-emulated Cortex-M4 (mps2-an386) and Cortex-M55 (mps3-an547).

Each test runs `make -C examples/<name> BUILD=<tmp> <target>` from a clean build directory
and checks the exit status and the PASS line the test application prints. The QEMU tests
need arm-none-eabi-gcc and qemu-system-arm: without them they skip, except under CI=true,
where a missing tool is a failure. The host tests need make and cc.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
COMMON = REPO / "firmware" / "common"

# example directory -> the model's C prefix (the PASS line names it)
EXAMPLE_PREFIX = {"kws": "kws_dscnn", "ic_resnet8": "ic_resnet8", "custom_op": "my_relu"}
QEMU_TARGETS = {"qemu-m4": "m4", "qemu-m55": "m55"}
MAKE_TIMEOUT = 900  # seconds; a clean build and run takes a few seconds per target
PASS_LINE = re.compile(r"^PASS (\w+) (\d+) bytes$", re.MULTILINE)
FAIL_LINE = re.compile(
    r"^FAIL (\w+): (\d+) of (\d+) bytes differ \(first at (\d+): got (-?\w+) want (-?\w+)\)$",
    re.MULTILINE)


def require_tools(*tools: str) -> None:
    """Skip when a tool is missing from PATH; fail instead under CI=true."""
    missing = [t for t in tools if shutil.which(t) is None]
    if not missing:
        return
    reason = f"{', '.join(missing)} not on PATH"
    if any(t in ("arm-none-eabi-gcc", "qemu-system-arm") for t in missing):
        reason += (" (Debian/Ubuntu: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi"
                   " qemu-system-arm)")
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true, so this fails instead of skipping")
    pytest.skip(reason)


def make(example: str, build: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """make -C examples/<example> BUILD=<build> ARGS, stdout and stderr together (QEMU prints
    semihosting output on its stderr)."""
    command = ["make", "--no-print-directory", "-C", str(EXAMPLES / example), f"BUILD={build}",
               f"PYTHON={sys.executable}", *args]
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=MAKE_TIMEOUT, check=False)


def assert_pass(result: subprocess.CompletedProcess[str], prefix: str, expected_bytes: int) -> None:
    assert result.returncode == 0, result.stdout
    passes = PASS_LINE.findall(result.stdout)
    assert passes, result.stdout
    assert all(p == (prefix, str(expected_bytes)) for p in passes), result.stdout
    assert "FAIL" not in result.stdout, result.stdout


def expected_bytes(example: str) -> int:
    with np.load(EXAMPLES / example / "case0.npz") as case:
        return sum(case[k].nbytes for k in case.files if re.fullmatch(r"output\d+", k))


def section_table(elf: Path) -> dict[str, tuple[int, int, int]]:
    """name -> (address, size, alignment) from arm-none-eabi-readelf -S."""
    text = subprocess.run(["arm-none-eabi-readelf", "-SW", str(elf)], capture_output=True,
                          text=True, check=True).stdout
    # [Nr] Name Type Addr Off Size ES Flg Lk Inf Al  (Flg may be empty)
    row = re.compile(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)"
                     r"\s+\S+\s+\S*\s+\d+\s+\d+\s+(\d+)$")
    sections = {}
    for line in text.splitlines():
        m = row.match(line)
        if m:
            sections[m[1]] = (int(m[2], 16), int(m[3], 16), int(m[4]))
    return sections


@pytest.mark.parametrize("example", sorted(EXAMPLE_PREFIX))
def test_host(example: str, tmp_path: Path) -> None:
    require_tools("make", "cc")
    result = make(example, tmp_path / "build", "host")
    assert_pass(result, EXAMPLE_PREFIX[example], expected_bytes(example))


# Where the linker scripts put the weights (code memory) and the arena (data memory).
REGIONS = {
    "m4": {".mcugen_weights": (0x00000000, 4 << 20), ".mcugen_arena": (0x20000000, 4 << 20)},
    "m55": {".mcugen_weights": (0x01000000, 2 << 20), ".mcugen_arena": (0x20000000, 512 << 10)},
}


@pytest.mark.parametrize("target", sorted(QEMU_TARGETS))
@pytest.mark.parametrize("example", sorted(EXAMPLE_PREFIX))
def test_qemu(example: str, target: str, tmp_path: Path) -> None:
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    build = tmp_path / "build"
    result = make(example, build, target)
    assert_pass(result, EXAMPLE_PREFIX[example], expected_bytes(example))
    assert re.search(r"^\s*text\s+data\s+bss", result.stdout, re.MULTILINE), \
        "no arm-none-eabi-size output"

    # The generated sections landed in the intended memories, 16-byte aligned, whole.
    core = QEMU_TARGETS[target]
    report = json.loads((build / core / "gen" / "report.json").read_text())
    sections = section_table(build / core / "app.elf")
    for name, (origin, length) in REGIONS[core].items():
        assert name in sections, f"{name} missing from the ELF: {sorted(sections)}"
        address, size, align = sections[name]
        assert origin <= address and address + size <= origin + length, (name, hex(address), size)
        assert address % 16 == 0 and align >= 16, (name, hex(address), align)
    assert sections[".mcugen_arena"][1] == report["arena_bytes"]
    assert sections[".mcugen_weights"][1] >= report["weights_bytes"]


@pytest.mark.parametrize("target", ["host", *sorted(QEMU_TARGETS)])
def test_wrong_output_fails(target: str, tmp_path: Path) -> None:
    """A case with one wrong expected byte makes the program print FAIL and make fail: the
    exit status gets through (on QEMU, through semihosting)."""
    if target == "host":
        require_tools("make", "cc")
    else:
        require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    with np.load(EXAMPLES / "kws" / "case0.npz") as case:
        arrays = {k: case[k].copy() for k in case.files}
    want = arrays["output0"].reshape(-1)
    want[3] = ~want[3]  # now differs from what the model computes
    bad_case = tmp_path / "bad.npz"
    np.savez(bad_case, **arrays)
    result = make("kws", tmp_path / "build", f"CASE={bad_case}", target)
    assert result.returncode != 0, result.stdout
    fails = FAIL_LINE.findall(result.stdout)
    assert fails, result.stdout
    assert fails[0][:4] == ("kws_dscnn", "1", str(want.size), "3"), fails[0]
    assert fails[0][5] == str(int(want[3])), fails[0]


def test_make_regenerates_exactly_when_needed(tmp_path: Path) -> None:
    """Second make: nothing regenerated or recompiled. Touching the .tflite or changing an
    mcugen option regenerates; changing OPT recompiles without regenerating."""
    require_tools("make", "cc")
    model = tmp_path / "kws_dscnn.tflite"
    shutil.copy(EXAMPLES / "kws" / "kws_dscnn.tflite", model)
    build = tmp_path / "build"

    def run(*args: str) -> str:
        result = make("kws", build, f"MODEL={model}", "build-host", *args)
        assert result.returncode == 0, result.stdout
        return result.stdout

    def generated(out: str) -> bool:
        return "-m mcugen build" in out

    def compiled(out: str) -> bool:
        return bool(re.search(r"^\S*cc .* -c ", out, re.MULTILINE))

    first = run()
    assert generated(first) and compiled(first)
    second = run()
    assert not generated(second) and not compiled(second), second

    time.sleep(1.1)  # a newer mtime even on file systems with 1 s resolution
    model.touch()
    touched = run()
    assert generated(touched) and compiled(touched), touched
    assert not generated(run())

    litert = run("MCUGEN_OPTS=--rounding litert")
    assert generated(litert) and compiled(litert), litert
    assert not generated(run("MCUGEN_OPTS=--rounding litert"))
    os_build = run("MCUGEN_OPTS=--rounding litert", "OPT=-Os")
    assert compiled(os_build) and not generated(os_build), os_build


def test_npz_to_header_reports_a_missing_key(tmp_path: Path) -> None:
    case = tmp_path / "case.npz"
    np.savez(case, input0=np.zeros(4, np.int8), output0=np.zeros(2, np.int8))
    out = tmp_path / "case.h"
    script = str(COMMON / "npz_to_header.py")
    result = subprocess.run(
        [sys.executable, script, str(case), str(out), "--expected-key", "tflm_output"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "tflm_output0" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not out.exists()
    ok = subprocess.run([sys.executable, script, str(case), str(out)], capture_output=True,
                        text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert "#define CASE_NUM_OUTPUTS 1" in out.read_text()
