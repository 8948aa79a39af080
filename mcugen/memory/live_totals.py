"""Bytes live at each step of a tiled order, fast: what the tiling search scores every candidate by.

`LiveTotals(graph, order, scratch_bytes).variants(tiling)` is
`[live_by_step(b) for b in <the planner's two buffer sets of tiling>]` (tiling_search.py's
variant_totals: collect_buffers through the tiling's step view, without and with each chain's
output over its dying input), the same lists to the byte, made with few Buffer objects: the
search scores tens of candidates per round, and collect_buffers, which also makes the buffers
that are placed and emitted (names, tensors, in-place ops, views), re-read every op for each.

Here what does not depend on the tiling is read once per order: each step's non-constant reads
and writes as small integers, its alias source, its in-place candidates (the inputs of the
output's dtype and shape, in input order; which one dies is asked per tiling), its scratch.
A tiling then changes only its chains' steps: the chain's external inputs read, its output
written and the largest scratch of its ops at its last step, nothing at the others, and no
alias or in-place for any of them (liveness.py's StepView, as tiling.Tiling implements it).
The merges and lifetimes follow collect_buffers rule for rule; the output-over-input sharing is
Tiling.shared_variant's own, given Buffers made for the few groups that hold a chain's input or
output. tests/test_live_totals.py checks every candidate the search scores on the public models
and the test fixtures against collect_buffers.

Vela-compiled models (pinned tensors) are never tiled: `supported` is False for them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from ..ir import Graph, Op, Tensor
from ..ops.registry import op_def
from ..state import state_tensors
from .liveness import Buffer, ScratchBytes, alias_input
from .tiling import Chain, Tiling


def _squeezed(shape: Sequence[int]) -> tuple[int, ...]:
    dims = list(shape)
    while dims and dims[0] == 1:
        dims.pop(0)
    return tuple(dims)


class LiveTotals:
    """The bytes live at each step of `order` under any tiling of it (module docstring)."""

    def __init__(self, graph: Graph, order: Sequence[Op], scratch_bytes: ScratchBytes) -> None:
        self.order = list(order)
        self.supported = not any(t.pin is not None for t in graph.tensors)
        self._numbers: dict[int, int] = {}  # id(tensor) -> its number
        self.nbytes: list[int] = []
        self.tensors: list[Tensor] = []  # by number
        number = self._number
        self.inputs = [number(t) for t in graph.inputs]
        self.states = [number(t) for t in state_tensors(graph)]
        self.outputs = [number(t) for t in graph.outputs]
        self.reads: list[tuple[int, ...]] = []
        self.writes: list[tuple[int, ...]] = []
        self.scratch: list[int] = []
        # per step: (output, source) of an alias, else (output, in-place candidates) or None
        self.alias: list[tuple[int, int] | None] = []
        self.in_place: list[tuple[int, tuple[int, ...]] | None] = []
        for op in self.order:
            self.reads.append(tuple(number(t) for t in op.inputs if t is not None and not t.is_constant))
            self.writes.append(tuple(number(t) for t in op.outputs if not t.is_constant))
            self.scratch.append(scratch_bytes(op))
            source = alias_input(op)
            self.alias.append((number(op.outputs[0]), number(source)) if source is not None else None)
            self.in_place.append(self._in_place(op) if source is None else None)
        self._scratch_bytes = scratch_bytes
        self._chains: dict[int, tuple[Chain, tuple[int, ...], int, int]] = {}

    def _number(self, tensor: Tensor) -> int:
        found = self._numbers.get(id(tensor))
        if found is None:
            found = self._numbers[id(tensor)] = len(self.nbytes)
            self.nbytes.append(tensor.nbytes)
            self.tensors.append(tensor)
        return found

    def _in_place(self, op: Op) -> tuple[int, tuple[int, ...]] | None:
        """liveness.in_place_candidate's inputs of the output's dtype and shape, in its order."""
        if not op_def(op.kind).traits.in_place or len(op.outputs) != 1:
            return None
        out = op.outputs[0]
        shape = _squeezed(out.shape)
        candidates = tuple(self._number(t) for t in op.inputs if t is not None and not t.is_constant
                           and t.dtype == out.dtype and _squeezed(t.shape) == shape)
        return (self._number(out), candidates) if candidates else None

    def _chain(self, chain: Chain) -> tuple[tuple[int, ...], int, int]:
        """(external reads, output, scratch bytes) of the chain's step, made once per chain."""
        known = self._chains.get(id(chain))
        if known is None or known[0] is not chain:
            assert all(op is self.order[chain.first_step + j] for j, op in enumerate(chain.ops))
            reads = tuple(self._number(t) for t in chain.external_inputs() if not t.is_constant)
            scratch = max(self._scratch_bytes(o) for o in chain.ops)
            known = self._chains[id(chain)] = (chain, reads, self._number(chain.output), scratch)
        return known[1:]

    def variants(self, tiling: Tiling) -> list[list[int]]:
        """Bytes live at each step of each of the planner's buffer sets of `tiling`, in
        tiling_search.TilingSearch.variant_totals' order (shared first; one set if no chains)."""
        n = len(self.order)
        reads, writes, scratch = list(self.reads), list(self.writes), list(self.scratch)
        grouped = [False] * n
        extra: list[tuple[int, int]] = []  # (step, bytes) of buffers of one step: scratch, stripe regions
        for chain in tiling.chains:
            chain_reads, output, chain_scratch = self._chain(chain)
            for step in range(chain.first_step, chain.last_step):
                reads[step], writes[step], scratch[step], grouped[step] = (), (), 0, True
            last = chain.last_step
            reads[last], writes[last], scratch[last], grouped[last] = chain_reads, (output,), chain_scratch, True
            extra.append((last, chain.region_bytes))
        extra.extend((step, size) for step, size in enumerate(scratch) if size > 0)
        spans, members, roots = self._buffers(reads, writes, grouped)
        unshared = _totals(spans.values(), extra)
        if not tiling.chains:
            return [unshared]
        return [self._shared(tiling, spans, members, roots, extra), unshared]

    def _buffers(self, reads: list[tuple[int, ...]], writes: list[tuple[int, ...]], grouped: list[bool]
                 ) -> tuple[dict[int, list[int]], dict[int, list[int]], dict[int, int]]:
        """({root: [size, first, last]}, {root: its tensors, as touched}, {tensor: root}) of the
        touched tensors: collect_buffers' merges (aliases, in place) and lifetimes."""
        end = len(reads)
        nbytes = self.nbytes
        last_use = [-1] * len(nbytes)
        for step, read in enumerate(reads):
            for t in read:
                last_use[t] = step
        for t in self.outputs:
            last_use[t] = end
        for t in self.states:
            last_use[t] = end
        parent: dict[int, int] = {}
        members_last: dict[int, int] = {}

        def root(t: int) -> int:
            while t in parent:
                t = parent[t]
            return t

        for step in range(end):
            if grouped[step]:
                continue
            alias = self.alias[step]
            if alias is not None:
                out, into = alias
            else:
                in_place = self.in_place[step]
                if in_place is None:
                    continue
                out, candidates = in_place
                for into in candidates:
                    base = root(into)
                    if members_last.get(base, last_use[base]) == step and nbytes[base] == nbytes[into]:
                        break
                else:
                    continue
            base = root(into)
            parent[out] = base
            members_last[base] = max(members_last.get(base, last_use[base]), last_use[out])

        spans: dict[int, list[int]] = {}
        members: dict[int, list[int]] = {}
        roots: dict[int, int] = {}

        def touch(t: int, step: int) -> None:
            base = roots.get(t)
            if base is None:
                base = roots[t] = root(t)
                members.setdefault(base, []).append(t)
            span = spans.get(base)
            if span is None:
                spans[base] = [nbytes[base], step, step]
            elif step < span[1]:
                span[1] = step
            elif step > span[2]:
                span[2] = step

        for t in self.inputs:
            touch(t, 0)
        for t in self.states:
            touch(t, 0)
            touch(t, end)
        for step in range(end):
            for t in reads[step]:
                touch(t, step)
            for t in writes[step]:
                touch(t, step)
        for t in self.outputs:
            touch(t, end)
        return spans, members, roots

    def _shared(self, tiling: Tiling, spans: dict[int, list[int]], members: dict[int, list[int]],
                roots: dict[int, int], extra: list[tuple[int, int]]) -> list[int]:
        """The totals with each chain's output over its dying input where it may: the buffers
        that hold a chain's input or output made as the planner's and given to
        Tiling.shared_variant (the sharing rule is tiling.py's alone), the others as they are."""
        held = {roots[t] for chain in tiling.chains for t in (self._number(chain.input), self._chain(chain)[1])
                if t in roots}
        tensors = self.tensors
        buffers = [Buffer(name=tensors[base].name, size=spans[base][0], first=spans[base][1], last=spans[base][2],
                          tensors=[tensors[t] for t in members[base]]) for base in sorted(held)]
        shared = dataclasses.replace(tiling, share_output=False).shared_variant(buffers)
        others = [span for base, span in spans.items() if base not in held]
        return _totals([*others, *([b.size, b.first, b.last] for b in shared)], extra)


def _totals(buffers: Iterable[Sequence[int]], extra: list[tuple[int, int]]) -> list[int]:
    """liveness.live_by_step of the buffers ([size, first, last, ...] each) and the one-step
    buffers `extra` ((step, bytes) each)."""
    spans = list(buffers)
    if not spans and not extra:
        return []
    length = max([b[2] for b in spans] + [step for step, _ in extra]) + 1
    change = [0] * (length + 1)
    for span in spans:
        change[span[1]] += span[0]
        change[span[2] + 1] -= span[0]
    for step, size in extra:
        change[step] += size
        change[step + 1] -= size
    totals = []
    live = 0
    for delta in change[:length]:
        live += delta
        totals.append(live)
    return totals
