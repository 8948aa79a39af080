"""arm-none-eabi builds for a Cortex-M target: the code size of the generated C, and the
firmware application of firmware/common (shipped inside the package as mcugen/firmware).

Code size. The generated sources are compiled with arm-none-eabi-gcc for the target core
(Target.core_flags) at -Os (with -ffunction-sections -fdata-sections) and linked with
--gc-sections against newlib-nano, rooted at the model's public functions only (no
application, no startup code), with a small linker script that keeps mcugen's sections apart:

    .text .rodata .data .bss     the runtime: the model's invoke, the kernels it calls, and the
                                 libc/libgcc/libm functions they pull in (memcpy, divisions, expf)
    .mcugen_weights              the weights (.rodata.mcugen_weights.<prefix>), padding included
    .mcugen_arena                the arena and memory pools (.bss.mcugen_arena/pool_*)

`arm-none-eabi-size -A` reads the linked sections; "objects" adds each object's sections before
linking (what each file holds, unreferenced functions included). Flash of the runtime is
text + rodata + data (data's initial values live in flash too); RAM besides the arena is
data + bss. Without the toolchain, or for the host target, "code_size" says why it is absent.

Firmware. build_firmware() runs firmware/common's app.mk (the examples' make logic) for the
target's QEMU board (Target.qemu.make_core): `mcugen build` of the model, the test application
with a test case baked in, startup code and linker script; run_qemu() (qemu.py) runs the ELF.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..driver import BuildOptions
from ..errors import BuildError, McugenError
from ..targets import Target
from .process import run_tool
from .qemu import QEMU, QEMU_TIMEOUT_S, qemu_board

PACKAGE = Path(__file__).resolve().parents[1]
# firmware/common, inside the package (a symlink in the source tree, files in an install)
FIRMWARE_COMMON = PACKAGE / "firmware"
CROSS = "arm-none-eabi-"
COMPILE_FLAGS = ["-Os", "-std=c99", "-ffp-contract=off", "-ffunction-sections", "-fdata-sections"]
LINK_FLAGS = ["-nostartfiles", "--specs=nano.specs", "--specs=nosys.specs", "-Wl,--gc-sections"]
TIMEOUT_S = 300

# Sections at address 0, one after another: only their sizes matter, nothing runs this image.
LINKER_SCRIPT = """\
SECTIONS
{
    .text : { *(.text .text.*) }
    .mcugen_weights : { *(.rodata.mcugen_weights.*) }
    .rodata : { *(.rodata .rodata.*) }
    .ARM.exidx : { *(.ARM.exidx* .gnu.linkonce.armexidx.*) }
    .data : { *(.data .data.*) }
    .mcugen_arena (NOLOAD) : { *(.bss.mcugen_arena.* .bss.mcugen_pool_*) }
    .bss (NOLOAD) : { *(.bss .bss.* COMMON) }
}
"""


def classify(section: str) -> str | None:
    """The column of a section: weights, arena, text, rodata, data, bss, or None (debug info,
    attributes, comments: not in the image)."""
    if section.startswith((".rodata.mcugen_weights", ".mcugen_weights")):
        return "weights"
    if section.startswith((".bss.mcugen_arena", ".bss.mcugen_pool_", ".mcugen_arena")):
        return "arena"
    if section.startswith((".text", ".ARM.exidx", ".ARM.extab")):
        return "text"
    if section.startswith(".rodata"):
        return "rodata"
    if section.startswith(".data"):
        return "data"
    if section.startswith((".bss", "COMMON")):
        return "bss"
    return None


def section_sizes(path: Path) -> dict[str, int]:
    """text, rodata, data, bss, weights, arena of an object or ELF, from `size -A`."""
    output = subprocess.run([f"{CROSS}size", "-A", str(path)], capture_output=True, text=True,
                            check=True, timeout=TIMEOUT_S).stdout
    totals = dict.fromkeys(("text", "rodata", "data", "bss", "weights", "arena"), 0)
    for line in output.splitlines():
        match = re.match(r"^(\S+)\s+(\d+)\s+\d+\s*$", line)
        if match and (column := classify(match.group(1))) is not None:
            totals[column] += int(match.group(2))
    return totals


def unavailable(target: Target) -> str | None:
    """Why code size cannot be measured for `target` here, or None when it can."""
    if not target.is_cross:
        return f"target {target.name}: code size is measured for Cortex-M targets only"
    missing = [tool for tool in (f"{CROSS}gcc", f"{CROSS}size") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not on PATH (Debian: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)"
    return None


def _compiler_version() -> str:
    first = subprocess.run([f"{CROSS}gcc", "--version"], check=False, capture_output=True, text=True).stdout.splitlines()
    return first[0].strip() if first else f"{CROSS}gcc"


def measure_code_size(files: dict[str, str], prefix: str, target: Target,
                      portable: bool = False) -> dict[str, Any]:
    """report.json's "code_size" for the generated `files` (name -> text) on `target`.

    portable: compile with -DMCUGEN_PORTABLE (the kernels' portable C instead of the DSP/MVE
    fast paths), for comparisons.
    """
    reason = unavailable(target)
    if reason is not None:
        return {"measured": False, "reason": reason}
    flags = [*target.core_flags, *COMPILE_FLAGS] + (["-DMCUGEN_PORTABLE"] if portable else [])
    # --arena external models have init_arena (binding the application's arena) instead of init
    init = "init_arena" if f"{prefix}_init_arena(" in files.get(f"{prefix}_model.h", "") else "init"
    roots = [f"{prefix}_{name}" for name in (init, "invoke", "input", "output", "input_bytes", "output_bytes")]
    with tempfile.TemporaryDirectory(prefix="mcugen-size-") as tmp:
        work = Path(tmp)
        for name, text in files.items():
            (work / name).write_text(text)
        sources = sorted(name for name in files if name.endswith(".c"))
        objects: dict[str, dict[str, int]] = {}
        for source in sources:
            obj = source[:-2] + ".o"
            _run([f"{CROSS}gcc", *flags, "-I.", "-c", source, "-o", obj], work, f"compiling {source}")
            objects[obj] = section_sizes(work / obj)
        (work / "size.ld").write_text(LINKER_SCRIPT)
        link = [f"{CROSS}gcc", *target.core_flags, *LINK_FLAGS, "-T", "size.ld", "-Wl,--entry=0",
                *(f"-Wl,--require-defined={root}" for root in roots),
                *(s[:-2] + ".o" for s in sources), "-lm", "-o", "size.elf"]
        _run(link, work, "linking")
        linked = section_sizes(work / "size.elf")
    runtime_flash = linked["text"] + linked["rodata"] + linked["data"]
    return {
        "measured": True,
        "compiler": _compiler_version(),
        "flags": " ".join(flags),
        "text": linked["text"], "rodata": linked["rodata"], "data": linked["data"], "bss": linked["bss"],
        "runtime_flash_bytes": runtime_flash,
        "weights_bytes": linked["weights"],
        "arena_bytes": linked["arena"],
        "objects": objects,
    }


def _run(command: list[str], cwd: Path, what: str) -> None:
    try:
        result = subprocess.run(command, check=False, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BuildError(f"code size: {what} took more than {TIMEOUT_S} s") from None
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or ["(no output)"]
        first = next((line for line in lines if "error" in line), lines[0])
        raise BuildError(f"code size: {what} failed with {CROSS}gcc: {first.strip()}")


# ---- the firmware application --------------------------------------------------------------


def require_firmware_tools() -> None:
    """BuildError naming what is missing for a QEMU run."""
    missing = [t for t in ("make", f"{CROSS}gcc", QEMU) if shutil.which(t) is None]
    if missing:
        raise BuildError(f"--qemu needs {', '.join(missing)} on PATH (Debian: apt-get install make "
                         "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)")
    if not (FIRMWARE_COMMON / "app.mk").is_file():
        raise BuildError(f"--qemu needs mcugen's firmware directory, not found at {FIRMWARE_COMMON}")


def _mcugen_options(options: BuildOptions) -> str:
    """The `mcugen build` options (all but --target) that reproduce `options`."""
    parts = [f"--rounding {options.rounding.value}"]
    if options.prefix:
        parts.append(f"--prefix {options.prefix}")
    if not options.tiling:
        parts.append("--no-tiling")
    parts.append(f"--optimize {options.optimize}")
    if not options.kernel_choice:
        parts.append("--no-kernel-choice")
    if options.sparse_weights:
        parts.append("--sparse")
    for pool in options.pools:
        if pool.capacity is None:
            raise McugenError(f"--qemu: pool {pool.name} has no capacity to pass to mcugen build")
        parts.append(f"--pool {pool.name}:{pool.capacity}:{pool.speed}")
    parts += [f"--custom-op {shlex.quote(kernel.option)}" for kernel in options.custom_ops]
    return " ".join(parts)


def firmware_dir(build: Path, target: Target) -> Path:
    """Where build_firmware puts the target's files under `build`: app.elf, gen/ (the
    generated C and its report.json)."""
    return build / qemu_board(target).make_core


def build_firmware(model: Path, options: BuildOptions, case: dict[str, np.ndarray], build: Path,
                   extra_cflags: str = "", opt: str = "-O2") -> Path:
    """Cross-compile firmware/common's test application for options.target with `model` and
    `case` baked in, through app.mk (the examples' make logic); returns the ELF."""
    board = qemu_board(options.target)
    build.mkdir(parents=True, exist_ok=True)
    case_path = build / "case.npz"
    np.savez(case_path, **case)  # type: ignore[arg-type]
    command = ["make", "--no-print-directory", "-f", str(FIRMWARE_COMMON / "app.mk"),
               f"MODEL={model.resolve()}", f"CASE={case_path.resolve()}", f"BUILD={build.resolve()}",
               f"PYTHON={sys.executable}", f"MCUGEN_OPTS={_mcugen_options(options)}",
               f"EXTRA_CFLAGS={extra_cflags}", f"OPT={opt}", f"build-{board.make_core}"]
    # app.mk runs `python -m mcugen build`: this mcugen, wherever it is installed
    path = os.pathsep.join(filter(None, [str(PACKAGE.parent), os.environ.get("PYTHONPATH")]))
    result = run_tool(command, QEMU_TIMEOUT_S, cwd=build, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                      env=dict(os.environ, PYTHONPATH=path))
    if result.returncode != 0:
        tail = " | ".join(result.stdout.strip().splitlines()[-4:])
        raise BuildError(f"{model.name}: the firmware build for {options.target.name} failed: {tail[-600:]}")
    return firmware_dir(build, options.target) / "app.elf"
