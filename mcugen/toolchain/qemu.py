"""Run a firmware ELF on the QEMU board of its target (Target.qemu).

The board is started with semihosting on (the application prints through it and exits with
its status) and, to count instructions, `-icount shift=0`: the virtual clock advances 1 ns per
instruction, so SysTick counts instructions at the board's clock (QemuBoard.instructions).
The application prints `PASS <prefix> <n> bytes` when every output byte matched.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..errors import BuildError, McugenError
from ..targets import QEMU_TARGET_NAMES, QemuBoard, Target
from .process import run_tool

QEMU = "qemu-system-arm"
QEMU_TIMEOUT_S = 900
PASS_LINE = re.compile(r"^PASS \w+ \d+ bytes$", re.MULTILINE)


def qemu_board(target: Target) -> QemuBoard:
    """The target's board; an McugenError for a target QEMU does not emulate here."""
    if target.qemu is None:
        raise McugenError(f"running on QEMU (--qemu, --instructions) needs --target "
                          f"{' or '.join(QEMU_TARGET_NAMES)}, not '{target.name}'")
    return target.qemu


# What the test application prints when it got as far as comparing the outputs.
VERDICT_LINE = re.compile(r"^(PASS \w+ \d+ bytes|FAIL \w+: \d+ of \d+ bytes differ .*)$", re.MULTILINE)


def run_qemu(elf: Path, target: Target, count_instructions: bool = True, cwd: Path | None = None,
             require_pass: bool = True) -> str:
    """Run an ELF on the target's QEMU board; its semihosting output (QEMU's stderr and stdout).
    A BuildError unless QEMU exits 0 and the application printed PASS; with require_pass
    False, unless the application compared its outputs (PASS or FAIL k of n bytes differ).
    Files the application writes through semihosting land in `cwd`."""
    board = qemu_board(target)
    command = [QEMU, "-M", board.machine, "-cpu", board.cpu, "-nographic", "-monitor", "none",
               "-serial", "none", "-semihosting-config", "enable=on,target=native"]
    command += ["-icount", "shift=0"] if count_instructions else []
    result = run_tool([*command, "-kernel", str(elf.resolve())], QEMU_TIMEOUT_S, stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT, cwd=cwd)
    if not require_pass:
        if result.returncode in (0, 1) and VERDICT_LINE.search(result.stdout):
            return result.stdout
    elif result.returncode == 0 and PASS_LINE.search(result.stdout):
        return result.stdout
    raise BuildError(f"{elf.name} on QEMU {board.machine} exited with status {result.returncode}: "
                     f"{' '.join(result.stdout.split())[-400:]}")
