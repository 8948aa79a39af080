"""Kernel variants as a planning choice: an op's fast path, or its portable C without the fast
path's scratch.

On cores with fast paths (Cortex-M4/M7: DSP, Cortex-M55: MVE) several int8 kernels ask for
scratch of their own (im2col columns, the input widened to int16, requantization entries): the
`fast` part of the build's scratch (ops/registry.fast_path_scratch_bytes). Every such kernel
runs its portable loops when its context holds less than that (mcugen_fast_common.h's
scratch_ok), the same outputs bit for bit, so leaving that scratch out of the plan is a choice
the planner can make per op: `portable`, the set of op indices that run their portable C.

`lean_portable` finds, for one buffer set (a tiling, or whole tensors), the ops whose fast-path
scratch raises the arena: it starts from every fast path dropped and gives back each op's (the
costliest to lose first, by cost.py's instruction model) while the liveness peak stays at or
below the arena of the all-portable plan. plan.plan_model places that set as one more candidate
beside the fast ones, and optimize.py chooses among them: ram the least arena, speed the fewest
estimated instructions, balanced the least arena within a few percent of the fastest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ir import Op
from ..records import dataclass
from .liveness import Buffer, ScratchBytes, StepView, live_by_step
from .placement import ALIGNMENT

Portable = frozenset[int]  # indices of the ops that run their portable C


def without_fast_paths(scratch: ScratchBytes, fast: ScratchBytes, portable: Portable) -> ScratchBytes:
    """`scratch` less the fast-path part for the ops in `portable`."""
    if not portable:
        return scratch

    def bytes_for(op: Op) -> int:
        total = scratch(op)
        return total - fast(op) if op.index in portable else total

    return bytes_for


def fast_path_ops(order: Sequence[Op], fast: ScratchBytes) -> list[Op]:
    """The CPU ops of `order` whose fast path asks for scratch (an NPU op runs no CPU kernel)."""
    return [op for op in order if op.backend == "cpu" and fast(op) > 0]


def _aligned(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


@dataclass
class _Peaks:
    """The liveness peak of one buffer set for any portable set: the bytes live at each step
    without scratch, plus each step's scratch as `portable` makes it."""

    order: Sequence[Op]
    view: StepView
    scratch: ScratchBytes
    fast: ScratchBytes
    base: list[int]

    def peak(self, portable: Portable) -> int:
        totals = list(self.base)
        sizes = without_fast_paths(self.scratch, self.fast, portable)
        for step, op in enumerate(self.order):
            at, size = self.view.scratch(op, step, sizes)
            if size > 0:
                while at >= len(totals):
                    totals.append(0)
                totals[at] += _aligned(size)
        return max(totals, default=0)


def lean_portable(order: Sequence[Op], view: StepView, scratch: ScratchBytes, fast: ScratchBytes,
                  buffers: Sequence[Buffer], arena: int, penalty: Callable[[Op], float]) -> Portable:
    """The ops to run portable for a buffer set whose all-portable plan places in `arena` bytes
    (`buffers`: that set collected with every fast path dropped, seen through `view`): every
    fast-path op but those whose scratch fits under the arena, given back in the order of their
    `penalty` (the instructions the portable C costs more), most first."""
    ops = fast_path_ops(order, fast)
    peaks = _Peaks(order, view, scratch, fast,
                   live_by_step([b for b in buffers if b.scratch_of is None]))
    portable = {op.index for op in ops}
    for op in sorted(ops, key=penalty, reverse=True):
        tried = frozenset(portable - {op.index})
        if peaks.peak(tried) <= arena:
            portable.discard(op.index)
    return frozenset(portable)
