"""Operator order: the topological order with the least peak memory.

Any topological order computes the same outputs (every op is a pure function of its inputs),
so the scheduler is free to choose the one whose largest sum of live activation bytes is
smallest. On a chain there is one order; on branching graphs (residual blocks, concatenations,
several heads) the order decides which branch's tensors are alive together.

Cost model
----------
The same as the planner's whole-tensor bound: a buffer (a tensor and the RESHAPE / SQUEEZE /
EXPAND_DIMS outputs that alias it) is live from the step that produces it (graph inputs: from
the start) through the last step that reads it (graph outputs: to the end). While an op runs,
its inputs, its outputs and its scratch are all live. A variable's state is live throughout. The peak of an order is the largest sum
over steps; `order_peak` computes it with the planner's own functions (memory/liveness.py), so
the two never differ.

Search
------
The state after some ops have run is the set of ops executed: which buffers are live depends
only on that set, not on the order within it. So the search runs level by level (level k: sets
of k executed ops), keeping for each set the least peak reached by any order leading to it, and
extends each set by every op whose inputs are ready (and, in stateful models, whose reads
and assignments of a variable keep their file order: mcugen/state.py). This is dynamic programming over the
downsets of the graph: exact, and small on the graphs of MCU models (a chain has one set per
level; a residual block a handful).

When one level holds more sets than the beam width (about SEARCH_BUDGET / ops^2, between
MIN_BEAM_WIDTH and MAX_BEAM_WIDTH) the search keeps the best of them,
ranked by (peak so far, bytes live now): a beam search, a bounded heuristic, and
`Schedule.exact` says False. The result is then compared with the file's own order and the
better one is kept (on a tie, the file's order), so scheduling never makes the peak worse.
`verify_order` checks the chosen order is a permutation of the graph's ops in which every op's
activation inputs are produced before it runs.
"""

from __future__ import annotations

from .errors import ModelError
from .ir import Graph, Op, Tensor
from .memory.liveness import ScratchBytes, alias_input, whole_tensor_bound
from .records import dataclass
from .state import check_state_order, state_order, state_tensors

# Beam width: states kept per level, so that levels x states x ops stays near SEARCH_BUDGET.
SEARCH_BUDGET = 1_000_000
MAX_BEAM_WIDTH = 1000
MIN_BEAM_WIDTH = 16


@dataclass
class Schedule:
    order: list[Op]
    peak: int  # whole-tensor liveness bound of `order`
    file_peak: int  # the same bound for the file's (TFLite's) order
    exact: bool  # True when the search pruned nothing: no order has a smaller peak


def _no_scratch(op: Op) -> int:
    return 0


def order_peak(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes = _no_scratch) -> int:
    """The whole-tensor liveness bound of an order, exactly as the planner computes it."""
    return whole_tensor_bound(graph, order, scratch_bytes)


class _Problem:
    """The graph as buffers and ops over small integers, for a fast search."""

    def __init__(self, graph: Graph, scratch_bytes: ScratchBytes) -> None:
        self.ops = list(graph.ops)
        root: dict[int, Tensor] = {}

        def find(tensor: Tensor) -> Tensor:
            while id(tensor) in root:
                tensor = root[id(tensor)]
            return tensor

        for op in self.ops:
            source = alias_input(op)
            if source is not None:
                root[id(op.outputs[0])] = source
        buffer_of: dict[int, int] = {}
        self.size: list[int] = []
        self.users: list[int] = []  # bit set of ops touching the buffer
        self.made_by: list[int] = []  # bit set of ops producing (a tensor of) the buffer; 0 = input
        self.pinned: list[bool] = []  # graph outputs stay live to the end

        def buffer(tensor: Tensor) -> int:
            key = id(find(tensor))
            if key not in buffer_of:
                buffer_of[key] = len(self.size)
                self.size.append(find(tensor).nbytes)
                self.users.append(0)
                self.made_by.append(0)
                self.pinned.append(False)
            return buffer_of[key]

        for tensor in graph.inputs:
            buffer(tensor)
        self.reads: list[list[int]] = []
        self.writes: list[list[int]] = []
        self.needs: list[int] = []  # bit set of ops that must run first
        self.scratch: list[int] = []
        for i, op in enumerate(self.ops):
            reads = sorted({buffer(t) for t in op.inputs if t is not None and not t.is_constant})
            writes = sorted({buffer(t) for t in op.outputs} - set(reads))
            for b in reads + writes:
                self.users[b] |= 1 << i
            for written in op.outputs:
                self.made_by[buffer(written)] |= 1 << i
            self.reads.append(reads)
            self.writes.append(writes)
            self.scratch.append(scratch_bytes(op))
        producer = {id(t): i for i, op in enumerate(self.ops) for t in op.outputs}
        for op in self.ops:
            need = 0
            for used in op.inputs:
                if used is not None and id(used) in producer:
                    need |= 1 << producer[id(used)]
            self.needs.append(need)
        for tensor in graph.outputs:
            if not tensor.is_constant:  # a folded output takes bytes only after the last op
                self.pinned[buffer(tensor)] = True
        for tensor in state_tensors(graph):  # live across invokes, as the planner has them
            self.pinned[buffer(tensor)] = True
        for i, j in state_order(self.ops):  # reads of a state before its assignment, and after
            self.needs[j] |= 1 << i

    def live_bytes(self, done: int) -> int:
        """Bytes of buffers live between steps once the ops in `done` have run."""
        total = 0
        for b, size in enumerate(self.size):
            made = self.made_by[b] == 0 or (self.made_by[b] & done)
            if made and (self.pinned[b] or self.users[b] & ~done):
                total += size
        return total

    def step_bytes(self, done: int, live: int, i: int) -> tuple[int, int]:
        """(bytes live while op i runs after `done`, bytes live after it)."""
        during = live + self.scratch[i]
        for b in self.writes[i]:
            made = self.made_by[b] == 0 or (self.made_by[b] & done)
            if not made:
                during += self.size[b]
        after_done = done | (1 << i)
        after = during - self.scratch[i]
        for b in self.reads[i] + self.writes[i]:
            if not self.pinned[b] and not self.users[b] & ~after_done:
                after -= self.size[b]
        return during, after


def _search(problem: _Problem, beam_width: int) -> tuple[list[int] | None, int, bool]:
    """Least-peak order of op indices by level-wise DP over executed sets (beam if too wide)."""
    n = len(problem.ops)
    start_live = problem.live_bytes(0)
    # state: done-set -> (peak so far, live bytes now, order so far)
    level: dict[int, tuple[int, int, list[int]]] = {0: (start_live, start_live, [])}
    exact = True
    for _ in range(n):
        following: dict[int, tuple[int, int, list[int]]] = {}
        for done, (peak, live, order) in level.items():
            for i in range(n):
                bit = 1 << i
                if done & bit or problem.needs[i] & ~done:
                    continue
                during, after = problem.step_bytes(done, live, i)
                new_peak = max(peak, during, after)
                key = done | bit
                known = following.get(key)
                if known is None or new_peak < known[0]:
                    following[key] = (new_peak, after, order + [i])
        if not following:
            return None, 0, exact
        if len(following) > beam_width:
            exact = False
            best = sorted(following.items(), key=lambda item: (item[1][0], item[1][1], item[1][2]))
            following = dict(best[:beam_width])
        level = following
    (peak, _, order), = level.values()
    return order, peak, exact


def default_beam_width(ops: int) -> int:
    return max(MIN_BEAM_WIDTH, min(MAX_BEAM_WIDTH, SEARCH_BUDGET // max(1, ops * ops)))


def schedule(graph: Graph, scratch_bytes: ScratchBytes = _no_scratch, beam_width: int | None = None,
             optimise: bool = True) -> Schedule:
    """The order of least peak whole-tensor memory, never worse than the file's order."""
    file_order = list(graph.ops)
    verify_order(graph, file_order)
    file_peak = order_peak(graph, file_order, scratch_bytes)
    best = Schedule(file_order, file_peak, file_peak, exact=False)
    if not optimise or len(file_order) < 2:
        return best
    problem = _Problem(graph, scratch_bytes)
    width = beam_width if beam_width is not None else default_beam_width(len(file_order))
    indices, _, exact = _search(problem, width)
    if indices is None:
        return best
    order = [problem.ops[i] for i in indices]
    verify_order(graph, order)
    peak = order_peak(graph, order, scratch_bytes)
    if peak < file_peak:
        return Schedule(order, peak, file_peak, exact)
    return Schedule(file_order, file_peak, file_peak, exact and peak == file_peak)


def verify_order(graph: Graph, order: list[Op]) -> None:
    """Every op exactly once, each after the producers of its activation inputs, and the
    reads and assignments of each variable in their file order (mcugen/state.py)."""
    if len(order) != len(graph.ops) or {id(op) for op in order} != {id(op) for op in graph.ops}:
        raise ModelError(f"the op order has {len(order)} ops, not a permutation of the graph's {len(graph.ops)}")
    ready = {id(t) for t in graph.inputs} | {id(t) for t in state_tensors(graph)}
    for op in order:
        for tensor in op.inputs:
            if tensor is not None and not tensor.is_constant and id(tensor) not in ready:
                raise ModelError(f"{op.where()}: runs before its input '{tensor.name}' is produced")
        ready.update(id(t) for t in op.outputs)
    broken = check_state_order(graph.ops, order)
    if broken is not None:
        raise ModelError(broken)
