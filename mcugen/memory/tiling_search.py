"""Choosing the chains to tile (tiling.py): which runs of ops, in how many stripes.

`choose_tiling` tries, around the current peak step, every chain of 2..MAX_CHAIN_OPS ops that
covers it (each with its least-memory cut first, then every cut of the best few), scores each
by the bytes live at each step of the tiled buffers (cheap; largest first, compared element by
element, so that taking one of two equal peaks down counts), keeps the best and repeats while
that goes down; then it drops every chain the peak does not need. `plan_tiling` scores by the
bytes live at each step that liveness.collect_buffers and live_by_step give through the Tiling's
step view, made faster by live_totals.py (the same lists). plan.plan_model keeps the tiling only
if the placed plan is smaller than the untiled one.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence

from ..ir import ConcatenationOptions, Graph, Op, OpKind, Tensor
from ..ops.registry import op_def, op_macs
from .live_totals import LiveTotals
from .liveness import ScratchBytes, collect_buffers, live_by_step
from .tiling import RESIZES, Chain, Stripe, Tiling, make_chain, rolling_prefixes, row_broadcast

RECOMPUTED_COUNTS = (2, 4, 8, 16)
MAX_ROUNDS = 6
MAX_CHAIN_OPS = 12
SHORTLIST = 3


# --- which runs of ops can be chained --------------------------------------------------------


def _is_spatial(tensor: Tensor | None) -> bool:
    return tensor is not None and len(tensor.shape) == 4 and tensor.shape[0] == 1 and not tensor.is_constant


# The engines a chain may run on: the CPU (codegen/stripes.py) or, with --npu, the NPU (the
# build marks the ops it takes before planning; mcugen/npu/stripes.py lowers each stripe).
ENGINES = ("cpu", "npu")

# Element-wise ops of one input that a chain may run on a stripe's rows (output[i] = f(input[i])).
ROW_WISE_UNARY = (OpKind.LOGISTIC, OpKind.TANH, OpKind.HARD_SWISH, OpKind.RELU, OpKind.RELU6,
                  OpKind.LEAKY_RELU, OpKind.ABS, OpKind.NEG)

# The engines that run each row-wise op inside a chain: the CPU all of them; the NPU a residual
# ADD or MUL (npu/stripes.py cuts both operands to the call's rows).
ROW_WISE_ENGINES = {OpKind.ADD: ENGINES, OpKind.MUL: ENGINES}


def _can_start(op: Op) -> bool:
    """An op that may be a chain's first op (it reads a whole tensor): a window op, or a resize
    on the CPU (its rows come from its row table: codegen/stripes.py slices it per stripe)."""
    if len(op.outputs) != 1 or not (_is_spatial(op.inputs[0]) and _is_spatial(op.outputs[0])):
        return False
    if op.kind in RESIZES:
        return op.backend == "cpu"
    return op_def(op.kind).traits.window and op.backend in ENGINES


def _can_follow(op: Op, previous: Op, graph_outputs: set[int]) -> bool:
    """`op` may extend a chain ending in `previous`: it reads previous's output, row by row, and
    nothing else reads that output."""
    link = previous.outputs[0]
    if id(link) in graph_outputs or len(link.consumers) != 1 or link.consumers[0] is not op:
        return False
    if op.backend != previous.backend:  # one engine runs a chain
        return False
    if op_def(op.kind).traits.window or op.kind in RESIZES:
        return _can_start(op) and op.inputs[0] is link
    if op.backend not in ROW_WISE_ENGINES.get(op.kind, ("cpu",)) or len(op.outputs) != 1 \
            or sum(t is link for t in op.inputs) != 1:
        return False
    return _row_wise(op, link)


def _row_wise(op: Op, link: Tensor) -> bool:
    """Output row r of `op` is made from row r of each input only, `link` among them, the
    others whole tensors (the chain reads their rows) or one row broadcast over all: a residual
    ADD or MUL, SE's scaling MUL, an element-wise activation, a concatenation along channels."""
    y = op.outputs[0]
    if not _is_spatial(y) or y.shape[:3] != link.shape[:3]:
        return False
    variable = [t for t in op.inputs if t is not None and not t.is_constant]
    if op.kind in (OpKind.ADD, OpKind.MUL):
        if len(op.inputs) != 2 or link.shape != y.shape:
            return False
        side = op.inputs[1] if op.inputs[0] is link else op.inputs[0]
        # A residual operand (made before the chain, read at the stripe's rows), or one row
        # broadcast over all of them (squeeze-excitation's scales): read whole by every stripe.
        return side is not None and (row_broadcast(side, y) or (
            not side.is_constant and side is not link and side.shape == y.shape))
    if op.kind is OpKind.CONCATENATION:
        axis = op.options.axis if isinstance(op.options, ConcatenationOptions) else None
        return axis in (3, -1) and len(variable) == len(op.inputs) and all(
            _is_spatial(t) and t.shape[:3] == y.shape[:3] for t in variable)
    if op.kind in ROW_WISE_UNARY:
        return len(variable) == 1 and variable[0] is link and link.shape == y.shape
    return False


def chain_runs(graph: Graph, order: Sequence[Op]) -> list[tuple[int, int]]:
    """Maximal (first step, last step) runs of consecutive ops that can form a chain."""
    outputs = {id(t) for t in graph.outputs}
    runs: list[tuple[int, int]] = []
    step = 0
    while step < len(order):
        if not _can_begin(order[step]):
            step += 1
            continue
        end = step
        while end + 1 < len(order) and _can_follow(order[end + 1], order[end], outputs):
            end += 1
        if end > step:
            runs.append((step, end))
        step = end + 1
    return runs


def _can_begin(op: Op) -> bool:
    """An op that may be a chain's first op: one that may start it, or a row-wise op on the CPU
    whose input 0 (the chain's input) has its rows (SE's scaling MUL after the pool)."""
    x = op.inputs[0]
    return _can_start(op) or (op.backend == "cpu" and len(op.outputs) == 1 and _is_spatial(x)
                              and x is not None and _row_wise(op, x))


def _side_inputs_ready(ops: Sequence[Op]) -> bool:
    """Every residual operand is made before the chain, so it is whole while the chain runs."""
    inside = {id(op.outputs[0]) for op in ops}
    return all(t is None or t is ops[j - 1].outputs[0] or id(t) not in inside
               for j, op in enumerate(ops[1:], start=1) for t in op.inputs)


# --- choosing ----------------------------------------------------------------------------------


# Bytes live at each step, largest first: lower is better, compared element by element, so
# that taking one of two equal peaks down counts as progress.
Score = Callable[[Tiling], tuple[int, ...]]
Trial = tuple[tuple[int, ...], int, int, Tiling]  # (score, extra MACs, stripes, tiling)
Admissible = Callable[[Tiling], bool]  # a tiling the search may keep (--optimize balanced: cost.py)


def _runs_around(graph: Graph, order: Sequence[Op], taken: Sequence[Chain], peak: int) -> list[tuple[int, int]]:
    """(first, last) steps of every chain of 2..MAX_CHAIN_OPS free ops covering the peak step
    (a chain ending just before it counts: its output is what the peak step reads)."""
    used = {id(op) for chain in taken for op in chain.ops}
    found = []
    for first, last in chain_runs(graph, order):
        for a in range(first, last):
            for b in range(a + 1, min(last, a + MAX_CHAIN_OPS - 1) + 1):
                ops = order[a:b + 1]
                if (a <= peak <= b + 1 and not any(id(op) in used for op in ops) and _side_inputs_ready(ops)
                        and _can_begin(ops[0])):
                    found.append((a, b))
    return found


def _counts(ops: Sequence[Op], rolling: bool) -> list[int]:
    """Stripe counts to try; none rolling on the NPU (the search cuts NPU chains recomputed, by
    bytes; npu/stripes.choose_stripes then weighs rolling and other cuts by cycles too)."""
    if rolling and ops[0].backend == "npu":
        return []
    if rolling:
        rows = ops[0].outputs[0].shape[1]
        return sorted({c for c in (rows, rows // 2, rows // 4) if c >= 2}, reverse=True)
    rows = ops[-1].outputs[0].shape[1]
    return sorted({c for c in (rows, *RECOMPUTED_COUNTS) if 2 <= c <= rows}, reverse=True)


def _least_memory_cut(ops: Sequence[Op]) -> list[tuple[int, bool]]:
    """[(stripes, rolling)] of the most stripes, halo rows kept if the first op has the rows
    for it, else recomputed; [] if the chain cannot be cut at all."""
    for rolling in (True, False):
        counts = _counts(ops, rolling)
        if counts:
            return [(counts[0], rolling)]
    return []


def _best(trials: list[Trial]) -> Trial | None:
    return min(trials, key=lambda t: t[:3]) if trials else None


class _Chains:
    """make_chain for the search. Its first pass cuts every chain from an op in as many rolling
    stripes as its first op has rows: those chains' walks are prefixes of one walk, made once
    (tiling.rolling_prefixes) for the longest chain from that op."""

    def __init__(self, graph: Graph, order: Sequence[Op]) -> None:
        self.order = order
        self.ends: dict[int, int] = {}  # first step -> the last step a chain from it may reach
        for first, last in chain_runs(graph, order):
            for a in range(first, last):
                self.ends[a] = min(last, a + MAX_CHAIN_OPS - 1)
        self.walks: dict[tuple[int, int], list[list[Stripe] | None]] = {}
        # (a, b, count, rolling) -> the chain: the search asks again in later rounds, and
        # --optimize balanced's second search (TilingSearch) for many of the first one's
        self.made: dict[tuple[int, int, int, bool], Chain | None] = {}
        self.macs: dict[int, int] = {}  # step -> op_macs of its op: asked for every chain made

    def make(self, a: int, b: int, count: int, rolling: bool, shared: bool = False) -> Chain | None:
        """make_chain(order[a:b + 1], a, count, rolling), made once; `shared`: walk every chain
        from `a` with this count at once (the caller will ask for them)."""
        key = (a, b, count, rolling)
        if key not in self.made:
            self.made[key] = self._make(a, b, count, rolling, shared)
        return self.made[key]

    def macs_of(self, a: int, b: int) -> list[int]:
        known = self.macs
        for step in range(a, b + 1):
            if step not in known:
                known[step] = op_macs(self.order[step])
        return [known[step] for step in range(a, b + 1)]

    def _make(self, a: int, b: int, count: int, rolling: bool, shared: bool) -> Chain | None:
        ops = self.order[a:b + 1]
        key = (a, count)
        if not rolling or b > self.ends.get(a, -1) or not (shared or key in self.walks):
            return make_chain(ops, a, count, rolling, macs=self.macs_of(a, b))
        if key not in self.walks:
            self.walks[key] = rolling_prefixes(self.order[a:self.ends[a] + 1], count)
        stripes = self.walks[key][b - a - 1]
        return make_chain(ops, a, count, rolling, stripes, self.macs_of(a, b)) if stripes is not None else None


def _try(tiling: Tiling, chains: _Chains, a: int, b: int, count: int, rolling: bool, score: Score,
         shared: bool = False) -> Trial | None:
    chain = chains.make(a, b, count, rolling, shared)
    if chain is None:
        return None
    trial = Tiling([*tiling.chains, chain])
    return score(trial), chain.extra_macs, len(chain.stripes), trial


def _trials(tiling: Tiling, chains: _Chains, runs: list[tuple[int, int]], score: Score) -> list[Trial]:
    """Each run first with its least-memory cut (rolling, a row per stripe); then every cut of
    the few best runs."""
    order = chains.order
    first = [t for a, b in runs for count, rolling in _least_memory_cut(order[a:b + 1])
             for t in [_try(tiling, chains, a, b, count, rolling, score, shared=True)] if t is not None]
    first.sort(key=lambda t: t[:3])
    trials = list(first)
    for _, _, _, trial in first[:SHORTLIST]:
        chain = trial.chains[-1]
        a, b = chain.first_step, chain.last_step
        for rolling in (True, False):
            for count in _counts(chain.ops, rolling):
                result = _try(tiling, chains, a, b, count, rolling, score)
                if result is not None:
                    trials.append(result)
    return trials


# Within an instruction budget the least-memory cuts say little (they cost the most): every run
# is cut in more stripe counts, fewest first while within budget, and only the last of them
# (the most stripes: about the least memory) is scored per run and halo mode.
BUDGET_DIVISORS = (1, 2, 3, 4, 6, 8, 12)


def _budget_trials(tiling: Tiling, chains: _Chains, runs: list[tuple[int, int]], score: Score,
                   admissible: Admissible) -> list[Trial]:
    trials: list[Trial] = []
    for a, b in runs:
        ops = chains.order[a:b + 1]
        for rolling in (True, False):
            if not _counts(ops, rolling):
                continue
            rows = (ops[0] if rolling else ops[-1]).outputs[0].shape[1]
            counts = {*_counts(ops, rolling), *(rows // d for d in BUDGET_DIVISORS if rows // d >= 2)}
            chosen: Tiling | None = None
            for count in sorted(counts):  # fewest stripes first: the cheapest, and the cheapest walks
                chain = chains.make(a, b, count, rolling, shared=True)  # one walk for every run from a
                if chain is None:
                    continue
                trial = Tiling([*tiling.chains, chain])
                if not admissible(trial):
                    break
                chosen = trial
            if chosen is not None:
                chain = chosen.chains[-1]
                trials.append((score(chosen), chain.extra_macs, len(chain.stripes), chosen))
    return trials


def choose_tiling(graph: Graph, order: Sequence[Op], score: Score,
                  peak_step: Callable[[Tiling], int], admissible: Admissible | None = None,
                  made: _Chains | None = None) -> Tiling:
    """Greedy: add the chain (and stripe count) that lowers `score` most, while it goes down;
    then drop every chain the peak does not need.

    `score` is the cost of a tiling (the bytes live at each step of the planner's buffers,
    largest first); ties go to fewer extra MACs, then fewer stripes. `admissible` (--optimize
    balanced: within an instruction budget) rejects tilings; with it, every run is cut every way,
    not only the few of the least memory.
    """
    tiling = Tiling()
    best = score(tiling)
    chains = made if made is not None else _Chains(graph, order)
    for _ in range(MAX_ROUNDS):
        runs = _runs_around(graph, order, tiling.chains, peak_step(tiling))
        if admissible is not None:
            winner = _best(_budget_trials(tiling, chains, runs, score, admissible))
        else:
            winner = _best(_trials(tiling, chains, runs, score))
        if winner is None or winner[0] >= best:
            break
        best, tiling = winner[0], winner[3]
    for chain in reversed(list(tiling.chains)):
        without = Tiling([c for c in tiling.chains if c is not chain])
        if score(without)[0] <= best[0] and (admissible is None or admissible(without)):
            tiling = without
    tiling.chains.sort(key=lambda c: c.first_step)
    return tiling


def plan_tiling(graph: Graph, order: Sequence[Op], scratch_bytes: ScratchBytes,
                admissible: Admissible | None = None) -> Tiling:
    """The chains for `order`, scored by the liveness bound of the tiled buffers (in place on),
    among the tilings `admissible` accepts (None: any)."""
    return TilingSearch(graph, order, scratch_bytes).plan(admissible)


class TilingSearch:
    """plan_tiling for one order, as often as asked (--optimize balanced searches again within an
    instruction budget): the chains made and the tilings scored stay known between searches."""

    def __init__(self, graph: Graph, order: Sequence[Op], scratch_bytes: ScratchBytes) -> None:
        self.graph, self.order, self.steps = graph, order, list(order)
        self.scratch_bytes = functools.cache(scratch_bytes)  # asked for every op of every candidate
        self.chains = _Chains(graph, order)
        self.live = LiveTotals(graph, order, self.scratch_bytes)
        # the chains of a tiling, by identity (each made once: _Chains.made keeps them) -> the
        # bytes live at each step under its planner variant of the least bytes live
        self.known: dict[tuple[int, ...], list[int]] = {}

    def plan(self, admissible: Admissible | None = None) -> Tiling:
        """choose_tiling's tiling among those `admissible` accepts (None: any)."""
        return choose_tiling(self.graph, self.order, self.score, self.peak, admissible, self.chains)

    def variant_totals(self, tiling: Tiling) -> list[list[int]]:
        """Bytes live at each step under each of the planner's variants, in variants() order
        (live_totals.py makes the same lists faster)."""
        if self.live.supported:
            return self.live.variants(tiling)
        return self.collected_totals(tiling)

    def collected_totals(self, tiling: Tiling) -> list[list[int]]:
        """variant_totals through liveness.collect_buffers, as the planner collects buffers."""
        graph, steps, scratch_bytes = self.graph, self.steps, self.scratch_bytes
        if not tiling.chains:
            return [live_by_step(collect_buffers(graph, steps, scratch_bytes, steps=tiling))]
        unshared = dataclasses.replace(tiling, share_output=False)
        buffers = collect_buffers(graph, steps, scratch_bytes, steps=unshared)
        return [live_by_step(unshared.shared_variant(buffers)), live_by_step(buffers)]

    def totals(self, tiling: Tiling) -> list[int]:
        """The totals of the variant with the lowest bytes live, step by step, largest first."""
        key = tuple(id(chain) for chain in tiling.chains)
        if key not in self.known:
            self.known[key] = min(self.variant_totals(tiling), key=lambda t: sorted(t, reverse=True))
        return self.known[key]

    def score(self, tiling: Tiling) -> tuple[int, ...]:
        return tuple(sorted(self.totals(tiling), reverse=True))

    def peak(self, tiling: Tiling) -> int:
        found = self.totals(tiling)
        return found.index(max(found)) if found else 0
