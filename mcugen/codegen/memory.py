"""The memory side of the generated C: one static array per pool, and the canary checks of a
guarded build.

A guarded build (BuildOptions.guard > 0, for tests) has `guard` canary bytes after every
planned buffer and at both ends of every pool. Before each step the canaries of the buffers that
come to life at that step are filled with GUARD_BYTE; after each step, the canaries of every
buffer live during it and the pool ends are checked, and invoke returns GUARD_STATUS if any byte
changed: a kernel that writes past its output or scratch, or a plan that puts two live buffers
on the same bytes, is caught at the step that did it.
"""

from __future__ import annotations

from typing import Any

from ..ir import Op
from ..memory.plan import Plan
from ..memory.pools import DEFAULT_POOL_NAME, pool_section, pool_symbol

GUARD_BYTE = 0xA5
GUARD_STATUS = -100


def pool_entries(plan: Plan, prefix: str) -> list[dict[str, Any]]:
    """Template data of each pool that holds any buffer (a C array cannot have 0 bytes)."""
    entries = []
    for pool in plan.pools:
        if pool.size == 0 and pool.name != DEFAULT_POOL_NAME:
            continue
        spec = pool.spec
        entries.append({
            "name": pool.name,
            "NAME": pool.name.upper(),
            "default": pool.name == DEFAULT_POOL_NAME,
            "symbol": pool_symbol(prefix, pool.name),
            "section": pool_section(prefix, pool.name),
            "size": pool.size,
            "capacity": spec.capacity if spec.capacity is not None else "unlimited",
            "speed": spec.speed,
            "guards": [{"offset": start, "bytes": end - start} for start, end in pool.guards],
        })
    return entries


def guard_statements(plan: Plan, prefix: str, op: Op | None, step: int) -> tuple[list[str], list[str]]:
    """(C before the step: fill new canaries; C after it: check live canaries), or ([], [])."""
    if not plan.guard:
        return [], []
    before: list[str] = []
    after: list[str] = []
    for buffer in plan.buffers:
        where = f"{pool_symbol(prefix, buffer.pool)} + {buffer.offset + buffer.size}"
        if buffer.first == step:
            before.append(f"{prefix}_guard_fill({where}, {buffer.pad});")
        if buffer.first <= step <= buffer.last:
            after.append(f"if (!{prefix}_guard_intact({where}, {buffer.pad})) {{ return {prefix.upper()}_GUARD_TOUCHED; }}")
    for pool in plan.pools:
        for start, end in pool.guards:
            where = f"{pool_symbol(prefix, pool.name)} + {start}"
            after.append(f"if (!{prefix}_guard_intact({where}, {end - start})) {{ return {prefix.upper()}_GUARD_TOUCHED; }}")
    return before, after
