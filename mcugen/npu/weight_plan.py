"""The NPU's weights in SRAM for a plan: weight buffers (weight_buffers.py), weight streams
(weight_stream.py), and, where that is faster in no more SRAM, outputs written over dying inputs
whose freed bytes the buffers then fill: in stripes, chains of one op (chain_room.py), or whole
ops in rings (overlap.py); the estimate picks between them."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import PlanningError
from ..ir import Graph, Op
from ..memory.liveness import ScratchBytes
from ..memory.plan import Plan, plan_memory
from ..memory.pools import PoolSpec
from . import weight_stream
from .chain_room import make_room
from .config import NpuConfig
from .overlap import CAPS, overlap_steps
from .stripes import LowerOp
from .weight_buffers import plan_weight_buffers


def plan_npu_weights(graph: Graph, order: list[Op], plan: Plan, policy: str, config: NpuConfig,
                     scratch_bytes: ScratchBytes, pools: Sequence[PoolSpec], guard: int,
                     lower_op: LowerOp, room: bool = False) -> Plan:
    """`plan` with the weight buffers and streams `policy` takes; with auto on an untiled plan,
    the same on the plan with rings (overlap.py) for each cap of a depthwise's block rows, the
    buffers and streams filling up to `plan`'s arena; the fewest estimated cycles kept among
    those no larger than the plan without rings (ties: less SRAM, then without rings). `room`
    (striping allowed): the plan without rings may also take chain_room's chains."""

    def finish(start: Plan, ceiling: int | None) -> Plan:
        buffered = plan_weight_buffers(graph, order, start, policy, config, scratch_bytes, pools, guard, ceiling)
        if room and policy == "auto" and ceiling is None:  # streams leave striped ops alone, so first
            buffered = make_room(graph, order, buffered, config, scratch_bytes, pools, guard)
        return weight_stream.plan_weight_streams(graph, order, buffered, policy, config, scratch_bytes, pools,
                                                 guard, lower_op, ceiling)

    base = finish(plan, None)
    if policy != "auto" or plan.tiling is not None or plan.async_groups:
        return base
    best, best_key = base, (weight_stream.order_cycles(order, base, config, lower_op=lower_op), base.arena_size, 0)
    for cap in (None, *CAPS):
        steps = overlap_steps(graph, order, config, cap)
        if not steps.rings:
            continue
        try:
            start = plan_memory(graph, order, scratch_bytes, pools, guard, steps=steps)
        except PlanningError:
            continue
        start.schedule_exact, start.async_groups = plan.schedule_exact, plan.async_groups
        if start.arena_size > plan.arena_size:
            continue
        final = finish(start, plan.arena_size)
        key = (weight_stream.order_cycles(order, final, config, lower_op=lower_op), final.arena_size, 1)
        if final.arena_size <= base.arena_size and key < best_key:
            best, best_key = final, key
    return best


__all__ = ["plan_npu_weights"]
