"""`--npu-weights auto|sram|flash`: which NPU ops read their weights from an SRAM buffer.

An op's encoded weights and bias/scale entries live in flash (region 0). The device streams
them again for every OFM block position, and flash is 8x slower than SRAM in the default
system config, so a 1x1 convolution spends most of its time on weights. With a weight buffer,
a DMA copies the op's weights and scales once into SRAM (npu/weight_dma.py) and the kernel reads
them there, as Vela's streams do. A buffer is a planned buffer of no tensor (Buffer.weights_of):
it lives from the step its DMA starts, the previous op's when that is an NPU op (the DMA runs
beside that op's kernel), to its op's step, so no feature map live then shares its bytes and
arena_bytes counts it.

Policies (`choose`, a function of the option value, so that a global speed/RAM option can map
onto it): flash: none (the SRAM of today's builds); sram: every weighted NPU op outside a striped
chain; auto (the default): ops by estimated cycle saving (npu/estimate.py), largest first, each
kept only where the re-planned arena is no larger than with none. Ops of a striped chain keep
their weights in flash (a stripe's block shape can change its stream; their SRAM is the
chain's bytes; npu/chain_room.py then may run ops as chains of one op with buffers), as do
--npu-async builds (their steps overlap CPU ops).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..errors import McugenError, PlanningError
from ..ir import Graph, Op, OpKind
from ..memory.liveness import Buffer, ScratchBytes
from ..memory.plan import Plan, plan_memory
from ..memory.pools import PoolSpec
from ..records import dataclass
from .compile import NO_COMMANDS, lower_op
from .config import NpuConfig
from .estimate import (
    FLASH_BYTES_PER_CYCLE,
    FLASH_LATENCY,
    SRAM_BYTES_PER_CYCLE,
    mac_cycles,
    op_cycles,
    output_cycles,
)
from .featuremap import LoweringError, apart
from .lower import Flash
from .registers import CMD1_FLAG, Cmd0, Cmd1
from .stream import CommandStream
from .weight_dma import addressable

POLICIES = ("auto", "sram", "flash")
WEIGHTED = frozenset({OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED})


@dataclass(frozen=True)
class Candidate:
    """An op that can read its weights from SRAM: its buffer's bytes and lifetime, and the
    cycles that saves by the build-time estimate."""

    op: Op
    size: int
    first: int  # the step its DMA starts
    step: int  # the op's own step
    saving: int

    def buffer(self) -> Buffer:
        return Buffer(name=f"npu weights of op {self.op.index}", size=self.size, first=self.first,
                      last=self.step, weights_of=self.op, uses=1)


@dataclass(frozen=True)
class Lowered:
    """What a trial lowering of a weighted op tells: its constants' bytes and how often the
    kernel reads its weight stream (once per OFM block position, as the device model charges)."""

    weight_bytes: int
    scale_bytes: int
    block_positions: int
    copy_bytes: int  # the blob a DMA copies into its buffer (0 when lowered for flash)


def _registers(words: list[int]) -> tuple[dict[int, int], dict[int, int]]:
    """The last cmd0 parameter and cmd1 data word per opcode of a stream."""
    cmd0: dict[int, int] = {}
    cmd1: dict[int, int] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word & CMD1_FLAG:
            cmd1[word & 0x3FF] = words[i + 1]
            i += 2
        else:
            cmd0[word & 0x3FF] = word >> 16
            i += 1
    return cmd0, cmd1


def lowered(op: Op, config: NpuConfig, sram: bool, lut: int | None = None) -> Lowered | None:
    """A trial lowering of `op` with its weights in flash or in a weight buffer (`sram`), with
    a fused LUT in slot `lut`; None if it has no weights or does not lower."""
    trial = CommandStream()
    trial.weight_buffer, trial.lut_slot = ((1, 0) if sram else None), lut
    try:
        lower_op(op, apart(), Flash(), config, trial)
    except LoweringError:
        return None
    cmd0, cmd1 = _registers(trial.words)
    if Cmd1.WEIGHT_LENGTH not in cmd1 or (sram and trial.weight_copy is None):
        return None
    positions = (-(-(cmd0[Cmd0.OFM_HEIGHT_M1] + 1) // (cmd0[Cmd0.OFM_BLK_HEIGHT_M1] + 1))
                 * -(-(cmd0[Cmd0.OFM_WIDTH_M1] + 1) // (cmd0[Cmd0.OFM_BLK_WIDTH_M1] + 1)))
    return Lowered(cmd1[Cmd1.WEIGHT_LENGTH], cmd1[Cmd1.SCALE_LENGTH], positions,
                   trial.weight_copy[1] if trial.weight_copy is not None else 0)


def saving(op: Op, config: NpuConfig, flash: Lowered, sram: Lowered, beside: int) -> int:
    """Cycles a weight buffer saves `op` (negative: costs), estimated: the kernel takes the
    slowest of its compute (npu/estimate.py), its flash reads (weights once per block
    position, then scales, 1 byte/cycle) and its SRAM traffic (feature maps, and weights and
    scales once buffered, 8 bytes/cycle); the DMA (1 byte/cycle from flash) runs beside the
    previous kernel (`beside` cycles, 0 if none) and delays this one by what it takes beyond."""
    compute = max(mac_cycles(op, config), output_cycles(op, config))
    maps = sum(t.nbytes for t in [*op.inputs, *op.outputs] if t is not None and not t.is_constant)
    from_flash = max(compute, maps / SRAM_BYTES_PER_CYCLE,
                     (flash.weight_bytes * flash.block_positions + flash.scale_bytes) / FLASH_BYTES_PER_CYCLE)
    from_sram = max(compute, (maps + sram.weight_bytes * sram.block_positions + sram.scale_bytes)
                    / SRAM_BYTES_PER_CYCLE)
    copy = sram.copy_bytes / FLASH_BYTES_PER_CYCLE + FLASH_LATENCY
    return math.floor(from_flash - from_sram - max(0.0, copy - beside))


def candidates(order: list[Op], plan: Plan, config: NpuConfig) -> list[Candidate]:
    """The weighted NPU ops of `order` outside the plan's striped chains, largest saving first."""
    chained = {id(op) for chain in (plan.tiling.chains if plan.tiling is not None else []) for op in chain.ops}
    found = []
    for step, op in enumerate(order):
        if op.backend != "npu" or op.kind not in WEIGHTED or id(op) in chained:
            continue
        flash, sram, fused = lowered(op, config, False), lowered(op, config, True), lowered(op, config, True, 0)
        if flash is None or sram is None or fused is None:
            continue
        before = order[step - 1] if step else None
        overlapped = before is not None and before.backend == "npu" and before.kind not in NO_COMMANDS
        beside = op_cycles(before, config) if overlapped and before is not None else 0
        found.append(Candidate(op, max(sram.copy_bytes, fused.copy_bytes), step - 1 if overlapped else step, step,
                               saving(op, config, flash, sram, beside)))
    return sorted(found, key=lambda c: (-c.saving, c.step))


Replan = Callable[[Sequence[Candidate]], Plan]


def choose(policy: str, found: Sequence[Candidate], flash_plan: Plan, replan: Replan,
           ceiling: int | None = None) -> Plan:
    """The plan for `policy` (POLICIES): `flash_plan` has no weight buffers; `replan` places
    the buffers of some candidates; auto keeps the arena within `ceiling` (None: flash_plan's)."""
    if policy == "flash" or not found:
        return flash_plan
    if policy == "sram":
        return replan(found)
    if policy != "auto":
        raise McugenError(f"--npu-weights '{policy}' is not one of {', '.join(POLICIES)}")
    worth = [c for c in found if c.saving > 0]
    if not worth:
        return flash_plan
    bound = flash_plan.arena_size if ceiling is None else max(ceiling, flash_plan.arena_size)

    def fitting(chosen: Sequence[Candidate]) -> Plan | None:
        """The plan with these buffers if it is no larger than flash's (and fits the pools)."""
        try:
            plan = replan(chosen)
        except PlanningError:
            return None
        return plan if plan.arena_size <= bound and addressable(plan) else None

    every = fitting(worth)
    if every is not None:
        return every
    best, kept = flash_plan, list[Candidate]()
    for candidate in worth:
        trial = fitting([*kept, candidate])
        if trial is not None:
            best, kept = trial, [*kept, candidate]
    return best


def plan_weight_buffers(graph: Graph, order: list[Op], plan: Plan, policy: str, config: NpuConfig,
                        scratch_bytes: ScratchBytes, pools: Sequence[PoolSpec], guard: int,
                        ceiling: int | None = None) -> Plan:
    """`plan` re-made with the weight buffers `policy` chooses (its tiling and step view kept;
    `ceiling`: the arena auto may fill, None: `plan`'s)."""
    if policy == "flash":
        return plan

    def replan(chosen: Sequence[Candidate]) -> Plan:
        placed = plan_memory(graph, order, scratch_bytes, pools, guard, tiling=plan.tiling,
                             extra=[c.buffer() for c in chosen], steps=plan.step_view)
        placed.schedule_exact, placed.async_groups = plan.schedule_exact, plan.async_groups
        return placed

    return choose(policy, candidates(order, plan, config), plan, replan, ceiling)


__all__ = ["POLICIES", "Candidate", "candidates", "choose", "lowered", "plan_weight_buffers", "saving"]
