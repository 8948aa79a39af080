"""The per-op resources of `mcugen report`: flash and RAM per op, RAM over the schedule, and
(with --qemu) instructions per op on the emulated core.

- Flash per op: the bytes of the constant arrays the op's step reads (weights, biases, the
  multipliers and tables codegen derives from them), from codegen (GeneratedCode.flash_by_op).
  An array that two ops read counts for both, so the sum over the ops covers the weights.
- RAM per op: the arena bytes live while the op's step runs (memory plan buffers whose lifetime
  holds the step, over every pool), its own scratch included; `scratch_bytes` is that scratch.
- RAM over the schedule: one point per step of the execution order, labelled with the op
  (index and kind) that runs there.
- Instructions per op: the same per-op profile as `mcugen profile --qemu` (analysis/profile.py).

A tiled chain (memory/tiling.py) runs all its ops in the step of its last op: that op holds the
chain's flash, scratch and instructions, and its other ops say so in `timed_in`.
"""

from __future__ import annotations

from typing import Any

from ..driver import Compiled
from .profile import Profile


def step_ram(compiled: Compiled) -> list[dict[str, Any]]:
    """One point per step of the schedule: the op there and the arena bytes live while it runs."""
    plan = compiled.plan
    points = []
    for step, op in enumerate(compiled.order):
        live = [b for b in plan.buffers if b.first <= step <= b.last]
        points.append({"step": step, "index": op.index, "kind": op.kind.name,
                       "label": f"{step}: op {op.index} {op.kind.name}",
                       "ram_bytes": sum(b.size for b in live),
                       "scratch_bytes": sum(b.size for b in live if b.scratch_of is not None)})
    return points


def chain_of_ops(compiled: Compiled) -> dict[int, int]:
    """Op index -> the index of the op whose step runs it (a tiled chain's last op), for the
    ops of tiled chains other than the last."""
    tiling = compiled.plan.tiling
    if tiling is None:
        return {}
    return {op.index: chain.ops[-1].index for chain in tiling.chains for op in chain.ops[:-1]}


def op_resources(compiled: Compiled, profile: Profile | None) -> list[dict[str, Any]]:
    """Per op in execution order: flash_bytes, ram_bytes, scratch_bytes, timed_in and, with a
    QEMU profile, instructions."""
    flash = compiled.code.flash_by_op
    points = step_ram(compiled)
    timed_in = chain_of_ops(compiled)
    counted = {op.index: op.instructions for op in profile.ops} if profile is not None else {}
    rows = []
    for point, op in zip(points, compiled.order):
        row = {"flash_bytes": flash.get(op.index, 0), "ram_bytes": point["ram_bytes"],
               "scratch_bytes": point["scratch_bytes"], "timed_in": timed_in.get(op.index, op.index)}
        if profile is not None:
            row["instructions"] = counted.get(op.index) or 0
        rows.append(row)
    return rows
