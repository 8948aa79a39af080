"""Run an external tool (compiler, make, QEMU) with a time limit."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from ..errors import BuildError


def run_tool(command: list[str], timeout_s: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """subprocess.run with text output, no check, and a time limit; a timeout is a BuildError."""
    try:
        return subprocess.run(command, check=False, text=True, timeout=timeout_s, **kwargs)
    except subprocess.TimeoutExpired:
        raise BuildError(f"{Path(command[0]).name} took more than {timeout_s:g} s: "
                         f"{' '.join(command)[:200]}") from None
