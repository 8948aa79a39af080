"""Memory pools: named RAM regions the planner spreads buffers over (`--pool NAME:SIZE[:SPEED]`).

A microcontroller's RAM is rarely one region: a Cortex-M7 has fast tightly coupled memory
(DTCM), ordinary SRAM, and perhaps external PSRAM that is large but slow. Each pool becomes its
own static, 16-byte-aligned array in its own linker section, so a linker script can place it.

SIZE is bytes, or a number with K or M (binary: 64K = 65536). SPEED is fast, normal (the
default) or slow: the planner fills fast pools first with the most used small buffers, then
normal ones, then slow ones. NAME must be a C identifier: it names the array and the section.
Without any --pool, the model has one pool of unlimited capacity, the classic single arena.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import McugenError

SPEEDS = ("fast", "normal", "slow")
DEFAULT_POOL_NAME = "arena"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
_SIZE = re.compile(r"^(\d+)([KkMm]?)$")


@dataclass(frozen=True)
class PoolSpec:
    """One memory region: its name, capacity in bytes (None: unlimited) and speed class."""

    name: str
    capacity: int | None = None
    speed: str = "normal"

    @property
    def rank(self) -> int:
        """Fill order: fast pools first, slow ones last."""
        return SPEEDS.index(self.speed)

    def describe(self) -> str:
        size = "unlimited" if self.capacity is None else f"{self.capacity} bytes"
        return f"{self.name} ({size}, {self.speed})"


DEFAULT_POOLS: tuple[PoolSpec, ...] = (PoolSpec(DEFAULT_POOL_NAME),)


def parse_size(text: str, where: str) -> int:
    match = _SIZE.match(text.strip())
    if not match:
        raise McugenError(f"--pool '{where}': size '{text}' is not bytes, nK or nM")
    value = int(match.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[match.group(2).lower()]
    if value <= 0:
        raise McugenError(f"--pool '{where}': size must be positive, got {text}")
    return value


def parse_pool(text: str) -> PoolSpec:
    """'DTCM:64K:fast' -> PoolSpec('DTCM', 65536, 'fast')."""
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise McugenError(f"--pool '{text}': expected NAME:SIZE or NAME:SIZE:fast|normal|slow")
    name, size = parts[0], parse_size(parts[1], text)
    if not _NAME.match(name):
        raise McugenError(f"--pool '{text}': name '{name}' is not a C identifier of at most 32 characters")
    speed = parts[2].lower() if len(parts) == 3 else "normal"
    if speed not in SPEEDS:
        raise McugenError(f"--pool '{text}': speed '{parts[2]}' is not one of {', '.join(SPEEDS)}")
    return PoolSpec(name, size, speed)


def parse_pools(texts: Sequence[str]) -> tuple[PoolSpec, ...]:
    """The pools of a command line, in the order given; () when none."""
    pools = tuple(parse_pool(t) for t in texts)
    names = [p.name.lower() for p in pools]
    for name in names:
        if names.count(name) > 1:
            raise McugenError(f"--pool: the name '{name}' is given more than once")
    return pools


def pool_symbol(prefix: str, name: str) -> str:
    """The C array of a pool: <prefix>_arena for the default pool, <prefix>_pool_<NAME> otherwise."""
    return f"{prefix}_arena" if name == DEFAULT_POOL_NAME else f"{prefix}_pool_{name}"


def pool_section(prefix: str, name: str) -> str:
    """Its linker section: .bss.mcugen_arena.<prefix>, or .bss.mcugen_pool_<NAME>.<prefix>
    (a linker script places a pool with, e.g., *(.bss.mcugen_pool_DTCM.*) in its region)."""
    if name == DEFAULT_POOL_NAME:
        return f".bss.mcugen_arena.{prefix}"
    return f".bss.mcugen_pool_{name}.{prefix}"
