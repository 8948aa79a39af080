"""Placement in one pool: an offset for every buffer, so that no two buffers whose lifetimes
share a step share a byte.

Like TensorFlow Lite Micro's memory planner interface, this module sees a buffer as its
`extent` (bytes, guard bytes included), its `first` and its `last` step and nothing else: no op,
no tensor (`Interval`). Offsets are multiples of ALIGNMENT (16 bytes); a pool's height is the
aligned end of its highest buffer.

Several algorithms run and the plan keeps the smallest result (ties: the first in this list):

- greedy by size (TFLite Micro's GreedyMemoryPlanner): buffers in decreasing size, ties by
  earlier first use; each takes the lowest 16-byte-aligned offset at which it overlaps no
  already placed conflicting buffer (first fit);
- greedy by size, best fit: the same order, each buffer in the smallest free gap that holds it;
- greedy by conflicts: buffers by decreasing total size of the buffers they conflict with;
- greedy by breadth: steps by decreasing breadth (bytes live at the step), and within a step
  its buffers by decreasing size (Pisarchyk and Lee, "Efficient memory management for deep
  neural net inference", 2020);
- greedy by lifetime: longest-lived buffers first, so short ones fill the holes;
- exact (for at most EXACT_MAX_BUFFERS buffers): branch and bound over placements in
  increasing offset, every buffer at offset 0 or at the aligned end of a conflicting buffer
  below it. Every optimal plan can be pushed down into that form, so the search is complete;
  it starts from the best greedy result, prunes any branch that already reaches it, and stops
  at the lower bound (`aligned_bound`). If it runs out of its node budget it is not exact and
  says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

ALIGNMENT = 16
EXACT_MAX_BUFFERS = 10
EXACT_NODE_BUDGET = 200_000

Offsets = list[int]


class Interval(Protocol):
    """What placement knows of a buffer: the bytes it takes and the steps it is live."""

    @property
    def extent(self) -> int: ...

    @property
    def first(self) -> int: ...

    @property
    def last(self) -> int: ...


def align_up(value: int, alignment: int = ALIGNMENT) -> int:
    return (value + alignment - 1) // alignment * alignment


def aligned_bound(buffers: Sequence[Interval]) -> int:
    """No aligned placement can be smaller: at each step, live buffers each take aligned room."""
    if not buffers:
        return 0
    totals = [0] * (max(b.last for b in buffers) + 1)
    for buffer in buffers:
        for step in range(buffer.first, buffer.last + 1):
            totals[step] += align_up(buffer.extent)
    return max(totals)


def conflict_lists(buffers: Sequence[Interval]) -> list[list[int]]:
    """For each buffer, the indices of the buffers live at one of its steps."""
    result: list[list[int]] = [[] for _ in buffers]
    for i, a in enumerate(buffers):
        for j in range(i + 1, len(buffers)):
            b = buffers[j]
            if a.first <= b.last and b.first <= a.last:
                result[i].append(j)
                result[j].append(i)
    return result


def free_offset(extent: int, taken: list[tuple[int, int]], best_fit: bool) -> int:
    """Lowest (first fit) or tightest (best fit) aligned offset clear of the taken ranges."""
    offset, best, best_gap = 0, -1, -1
    for start, end in sorted(taken):
        if offset + extent <= start:
            gap = start - offset
            if not best_fit:
                return offset
            if best < 0 or gap < best_gap:
                best, best_gap = offset, gap
        offset = max(offset, align_up(end))
    return best if best >= 0 else offset


def _place_in_order(buffers: Sequence[Interval], conflicts: list[list[int]], order: Sequence[int],
                    best_fit: bool = False) -> Offsets:
    offsets = [-1] * len(buffers)
    for i in order:
        taken = [(offsets[j], offsets[j] + buffers[j].extent) for j in conflicts[i] if offsets[j] >= 0]
        offsets[i] = free_offset(buffers[i].extent, taken, best_fit)
    return offsets


def order_by_size(buffers: Sequence[Interval]) -> list[int]:
    """Indices by decreasing extent, ties by earlier first step (TFLM's order)."""
    return sorted(range(len(buffers)), key=lambda i: (-buffers[i].extent, buffers[i].first, i))


def _by_conflicts(buffers: Sequence[Interval], conflicts: list[list[int]]) -> list[int]:
    weight = [sum(buffers[j].extent for j in conflicts[i]) for i in range(len(buffers))]
    return sorted(range(len(buffers)), key=lambda i: (-weight[i], -buffers[i].extent, i))


def _by_breadth(buffers: Sequence[Interval]) -> list[int]:
    steps = max((b.last for b in buffers), default=-1) + 1
    breadth = [0] * steps
    live: list[list[int]] = [[] for _ in range(steps)]
    for i, b in enumerate(buffers):
        for step in range(b.first, b.last + 1):
            breadth[step] += b.extent
            live[step].append(i)
    order: list[int] = []
    seen: set[int] = set()
    for step in sorted(range(steps), key=lambda s: (-breadth[s], s)):
        for i in sorted(live[step], key=lambda i: (-buffers[i].extent, i)):
            if i not in seen:
                seen.add(i)
                order.append(i)
    return order


def _by_lifetime(buffers: Sequence[Interval]) -> list[int]:
    return sorted(range(len(buffers)), key=lambda i: (-(buffers[i].last - buffers[i].first), -buffers[i].extent, i))


def placed_height(buffers: Sequence[Interval], offsets: Offsets) -> int:
    """The pool bytes a placement takes: the aligned end of its highest buffer."""
    return align_up(max((o + b.extent for o, b in zip(offsets, buffers)), default=0))


def place_exact(buffers: Sequence[Interval], conflicts: list[list[int]], upper: int,
                budget: int = EXACT_NODE_BUDGET) -> tuple[Offsets | None, bool]:
    """Branch and bound: the least height below `upper`, or None; and whether the search ended."""
    n = len(buffers)
    floor = align_up(aligned_bound(buffers))
    offsets = [-1] * n
    best: list[Offsets | None] = [None]
    best_height = [upper]
    nodes = [0]

    def fits(i: int, offset: int) -> bool:
        end = offset + buffers[i].extent
        return all(offsets[j] < 0 or end <= offsets[j] or offsets[j] + buffers[j].extent <= offset
                   for j in conflicts[i])

    def search(placed: int, last_offset: int, last_index: int, height: int) -> bool:
        """Returns True to stop (bound reached or budget spent)."""
        if placed == n:
            if height < best_height[0]:
                best_height[0], best[0] = height, list(offsets)
            return best_height[0] <= floor
        nodes[0] += 1
        if nodes[0] > budget:
            return True
        moves = []
        for i in range(n):
            if offsets[i] >= 0:
                continue
            starts = {0} | {align_up(offsets[j] + buffers[j].extent) for j in conflicts[i] if offsets[j] >= 0}
            moves += [(offset, i) for offset in starts if (offset, i) > (last_offset, last_index)]
        unplaced = sorted((buffers[i].extent for i in range(n) if offsets[i] < 0), reverse=True)
        for offset, i in sorted(moves):
            new_height = max(height, align_up(offset + buffers[i].extent))
            # Every buffer still to place goes at this offset or above.
            rest = unplaced[1] if unplaced[0] == buffers[i].extent and len(unplaced) > 1 else unplaced[0]
            if len(unplaced) > 1:
                new_bound = max(new_height, align_up(offset + rest))
            else:
                new_bound = new_height
            if new_bound >= best_height[0] or not fits(i, offset):
                continue
            offsets[i] = offset
            stop = search(placed + 1, offset, i, new_height)
            offsets[i] = -1
            if stop:
                return True
        return False

    stopped = search(0, 0, -1, 0)
    finished = not stopped or best_height[0] <= floor
    return best[0], finished


def place_best(buffers: Sequence[Interval], extra: Offsets | None = None,
               exact: bool = True) -> tuple[Offsets, str, bool]:
    """Run every algorithm (and `extra`, a placement found elsewhere); (offsets, name of the
    winner, whether it is proven optimal)."""
    if not buffers:
        return [], "empty", True
    conflicts = conflict_lists(buffers)
    candidates: list[tuple[str, Offsets]] = [
        ("greedy by size", _place_in_order(buffers, conflicts, order_by_size(buffers))),
        ("greedy by size, best fit", _place_in_order(buffers, conflicts, order_by_size(buffers), best_fit=True)),
        ("greedy by conflicts", _place_in_order(buffers, conflicts, _by_conflicts(buffers, conflicts))),
        ("greedy by breadth", _place_in_order(buffers, conflicts, _by_breadth(buffers))),
        ("greedy by lifetime", _place_in_order(buffers, conflicts, _by_lifetime(buffers))),
    ]
    if extra is not None:
        candidates.append(("first fit by uses", extra))
    name, offsets = min(candidates, key=lambda item: placed_height(buffers, item[1]))
    height = placed_height(buffers, offsets)
    optimal = height <= align_up(aligned_bound(buffers))
    if exact and not optimal and len(buffers) <= EXACT_MAX_BUFFERS:
        exact_offsets, finished = place_exact(buffers, conflicts, height)
        if exact_offsets is not None:
            name, offsets = "exact (branch and bound)", exact_offsets
        optimal = finished
    return offsets, name, optimal
