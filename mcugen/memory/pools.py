"""Memory pools: named RAM regions the planner spreads buffers over (`--pool NAME:SIZE[:SPEED]`).

A microcontroller's RAM is rarely one region: a Cortex-M7 has fast tightly coupled memory
(DTCM), ordinary SRAM, and perhaps external PSRAM that is large but slow. Each pool becomes its
own static, 16-byte-aligned array in its own linker section, so a linker script can place it.

SIZE is bytes, or a number with K or M (binary: 64K = 65536). SPEED is fast, normal (the
default) or slow: the planner fills fast pools first with the most used small buffers, then
normal ones, then slow ones. NAME must be a C identifier: it names the array and the section.
Without any --pool, the model has one pool of unlimited capacity, the classic single arena.

Assignment
----------
With several pools buffers are ranked by uses per byte (the most used small buffers first) and
each goes to the first pool, fast ones first, where it still fits (the pool placed by first fit
in that ranking order); each pool is then re-placed by all the algorithms of placement.py and
keeps its best. A buffer that fits in no pool is an error naming the pool, by how many bytes,
and the buffers live at that pool's peak. With `guard` > 0 (tests), every buffer is followed by
`guard` canary bytes and each pool starts and ends with `guard` of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field

from ..errors import McugenError, PlanningError
from ..records import dataclass
from .liveness import Buffer, peak_step
from .placement import Offsets, align_up, free_offset, order_by_size, place_best, placed_height

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


@dataclass
class PoolPlan:
    """One pool's result: the bytes it needs, how they were found, and its canary ranges."""

    spec: PoolSpec
    size: int = 0
    algorithm: str = "empty"
    exact: bool = True
    guards: list[tuple[int, int]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.spec.name


# --- assigning buffers to pools ----------------------------------------------------------


def _short(name: str, limit: int = 48) -> str:
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _live_names(buffers: Sequence[Buffer], limit: int = 6) -> str:
    step = peak_step(buffers)
    live = sorted((b for b in buffers if b.first <= step <= b.last), key=lambda b: -b.size)
    names = ", ".join(f"'{_short(b.name)}' ({b.size})" for b in live[:limit])
    more = f" and {len(live) - limit} more" if len(live) > limit else ""
    return f"live at its peak (step {step}): {names}{more}"


def _does_not_fit(pool: PoolSpec, buffers: Sequence[Buffer], needed: int,
                  buffer: Buffer | None = None) -> PlanningError:
    assert pool.capacity is not None
    which = f" ('{_short(buffer.name)}', {buffer.size} bytes, fits in no pool)" if buffer is not None else ""
    return PlanningError(
        f"the model does not fit pool {pool.name}{which}: it needs {needed} bytes of its {pool.capacity} "
        f"({needed - pool.capacity} bytes over); {_live_names(buffers)}"
    )


def assign_pools(buffers: Sequence[Buffer], pools: Sequence[PoolSpec]) -> dict[str, Offsets]:
    """Each buffer to a pool, ranked by uses per byte; if that fails, ranked by size instead."""
    by_uses = sorted(range(len(buffers)), key=lambda i: (-buffers[i].uses / max(1, buffers[i].extent),
                                                         buffers[i].extent, i))
    try:
        return _assign_in_rank(buffers, pools, by_uses)
    except PlanningError:
        return _assign_in_rank(buffers, pools, order_by_size(buffers))


def _admit(buffers: Sequence[Buffer], pool: PoolSpec, placed: dict[int, int], i: int) -> dict[int, int] | None:
    """The pool's offsets with buffer i added, if it fits: first fit, else every algorithm."""
    buffer = buffers[i]
    taken = [(o, o + buffers[j].extent) for j, o in placed.items() if buffers[j].overlaps_in_time(buffer)]
    offset = free_offset(buffer.extent, taken, best_fit=False)
    if pool.capacity is None or align_up(offset + buffer.extent) <= pool.capacity:
        return {**placed, i: offset}
    members = sorted([*placed, i])
    best, _, _ = place_best([buffers[j] for j in members], exact=False)
    if placed_height([buffers[j] for j in members], best) <= pool.capacity:
        return dict(zip(members, best))
    return None


def _assign_in_rank(buffers: Sequence[Buffer], pools: Sequence[PoolSpec], ranked: Sequence[int]) -> dict[str, Offsets]:
    """Give each buffer, in rank order, the first pool (fast pools first) where it still fits.

    When it fits nowhere, one repair is tried: move one buffer that conflicts with it out of a
    pool into another pool where that one fits, and put the new buffer in the freed pool.
    """
    by_speed = sorted(pools, key=lambda p: p.rank)
    offsets: dict[str, dict[int, int]] = {p.name: {} for p in pools}
    for i in ranked:
        if _admit_anywhere(buffers, by_speed, offsets, i) or _admit_by_moving_one(buffers, by_speed, offsets, i):
            continue
        largest = max(pools, key=lambda p: p.capacity or 0)
        members = sorted([*offsets[largest.name], i])
        mine = [buffers[j] for j in members]
        needed = placed_height(mine, place_best(mine)[0])
        raise _does_not_fit(largest, mine, needed, buffers[i])
    for name, placed in offsets.items():
        for j in placed:
            buffers[j].pool = name
    return {name: [placed[j] for j in sorted(placed)] for name, placed in offsets.items()}


def _admit_anywhere(buffers: Sequence[Buffer], by_speed: Sequence[PoolSpec],
                    offsets: dict[str, dict[int, int]], i: int, skip: str = "") -> bool:
    for pool in by_speed:
        if pool.name == skip:
            continue
        admitted = _admit(buffers, pool, offsets[pool.name], i)
        if admitted is not None:
            offsets[pool.name] = admitted
            return True
    return False


def _admit_by_moving_one(buffers: Sequence[Buffer], by_speed: Sequence[PoolSpec],
                         offsets: dict[str, dict[int, int]], i: int) -> bool:
    for pool in by_speed:
        for j in sorted(offsets[pool.name]):
            if not buffers[j].overlaps_in_time(buffers[i]):
                continue
            without = {k: o for k, o in offsets[pool.name].items() if k != j}
            admitted = _admit(buffers, pool, without, i)
            if admitted is None:
                continue
            trial = {**offsets, pool.name: admitted}
            if _admit_anywhere(buffers, by_speed, trial, j, skip=pool.name):
                offsets.update(trial)
                return True
    return False


def place_pools(buffers: list[Buffer], pools: Sequence[PoolSpec], guard: int) -> list[PoolPlan]:
    """Assign `buffers` to `pools` and place each pool; the buffers get pad, pool and offset."""
    for buffer in buffers:
        buffer.pad = guard
        buffer.pool = pools[0].name
    # Pools hold their end canaries too: assign against what is left of each capacity.
    usable = [PoolSpec(p.name, None if p.capacity is None else p.capacity - 2 * guard, p.speed) for p in pools]
    admitted = assign_pools(buffers, usable) if len(pools) > 1 else {pools[0].name: None}
    pool_plans = []
    for spec in pools:
        mine = [b for b in buffers if b.pool == spec.name]
        extra = admitted.get(spec.name)
        offsets, algorithm, exact = place_best(mine, extra if extra is not None and len(extra) == len(mine) else None)
        for buffer, offset in zip(mine, offsets):
            buffer.offset = offset + guard
        size = placed_height(mine, offsets)
        pool = PoolPlan(spec, size, algorithm, exact)
        if guard and mine:
            pool.size = guard + size + guard
            pool.guards = [(0, guard), (pool.size - guard, pool.size)]
        if spec.capacity is not None and pool.size > spec.capacity:
            raise _does_not_fit(spec, mine, pool.size)
        pool_plans.append(pool)
    return pool_plans
