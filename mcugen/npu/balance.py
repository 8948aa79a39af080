"""`--optimize balanced` across stripes and weight streams: cycles the streams save may buy SRAM.

stripes.choose_stripes keeps an NPU chain's stripes within BALANCED_SLACK of the estimated
cycles of the plain build (unstriped, weights in flash); weight buffers and streams, chosen after
it and never above its SRAM, then save cycles. The balance is the build's: at most
BALANCED_SLACK above the plain build. So where the streamed build is below that budget, the
stripes are chosen again with what is left as extra slack, the weight buffers and streams planned
again for them, and the result kept if it needs less SRAM and its estimate stays within the
budget (the streams may find less room under the lower peak, so it is checked, not assumed).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Graph, Op
from ..memory.liveness import ScratchBytes
from ..memory.plan import Plan
from ..memory.pools import PoolSpec
from .config import NpuConfig
from .estimate import op_cycles
from .stripes import BALANCED_SLACK, choose_stripes
from .weight_buffers import plan_weight_buffers
from .weight_stream import LowerOp, order_cycles, plan_weight_streams


def plain_cycles(order: list[Op], config: NpuConfig) -> int:
    """The estimated NPU cycles of the plain build: every op whole, its weights in flash."""
    return sum(op_cycles(op, config) for op in order if op.backend == "npu")


def spend_savings(graph: Graph, order: list[Op], searched: Plan, placed: Plan, scratch_bytes: ScratchBytes,
                  pools: Sequence[PoolSpec], guard: int, config: NpuConfig, mode: str, policy: str,
                  lower_op: LowerOp) -> Plan:
    """`placed` (stripes, weight buffers and streams chosen from the tiling search's `searched`),
    or, in mode "balanced", the plan of less SRAM whose stripes spend the cycles the streams
    saved, while the whole stays within BALANCED_SLACK of the plain build's estimate."""
    if mode != "balanced" or searched.tiling is None:
        return placed
    budget = (1 + BALANCED_SLACK) * plain_cycles(order, config)
    spare = budget - order_cycles(order, placed, config, lower_op=lower_op)
    if spare <= 0:
        return placed
    striped = choose_stripes(graph, order, searched, scratch_bytes, list(pools), guard, config, mode, spare)
    if striped.arena_size >= placed.arena_size:
        return placed
    again = plan_weight_buffers(graph, order, striped, policy, config, scratch_bytes, pools, guard)
    again = plan_weight_streams(graph, order, again, policy, config, scratch_bytes, pools, guard, lower_op)
    if again.arena_size < placed.arena_size and order_cycles(order, again, config, lower_op=lower_op) <= budget:
        return again
    return placed


__all__ = ["plain_cycles", "spend_savings"]
