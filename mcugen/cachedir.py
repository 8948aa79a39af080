"""Where mcugen keeps what it caches between processes (compiled templates): only time is saved
there, never a result that the inputs do not determine."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_VARIABLE = "MCUGEN_CACHE_DIR"  # where the cache goes; empty: no cache


def cache_directory() -> Path | None:
    """$MCUGEN_CACHE_DIR, else $XDG_CACHE_HOME/mcugen, else ~/.cache/mcugen; None if set empty."""
    chosen = os.environ.get(CACHE_VARIABLE)
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mcugen"
