"""Bytes live at each step of a tiled order, fast: what the tiling search scores every candidate by.

`LiveTotals(graph, order, scratch_bytes).variants(tiling)` is
`[live_by_step(b) for b in <the planner's two buffer sets of tiling>]` (tiling_search.py's
variant_totals: collect_buffers through the tiling's step view, without and with each chain's
output over its dying input), the same lists to the byte, made without Buffer objects: the
search scores tens of candidates per round, and collect_buffers, which also makes the buffers
that are placed and emitted (names, tensors, in-place ops, views), re-read every op for each.

Here what does not depend on the tiling is read once per order: each step's non-constant reads
and writes as small integers, its alias source, its in-place candidates (the inputs of the
output's dtype and shape, in input order; which one dies is asked per tiling), its scratch.
A tiling then changes only its chains' steps: the chain's external inputs read, its output
written and the largest scratch of its ops at its last step, nothing at the others, and no
alias or in-place for any of them (liveness.py's StepView, as tiling.Tiling implements it).
The merges, lifetimes and the output-over-input sharing (tiling._share) follow collect_buffers
and Tiling.shared_variant rule for rule; tests/test_live_totals.py checks every candidate the
search scores on the public models and the test fixtures against them.

Vela-compiled models (pinned tensors) are never tiled: `supported` is False for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..ir import Graph, Op, Tensor
from ..ops.registry import op_def
from ..state import state_tensors
from .liveness import ScratchBytes, alias_input
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
        buffers, roots = self._buffers(reads, writes, grouped)
        unshared = _totals(buffers.values(), extra)
        if not tiling.chains:
            return [unshared]
        return [_totals(self._shared(tiling, buffers, roots), extra), unshared]

    def _buffers(self, reads: list[tuple[int, ...]], writes: list[tuple[int, ...]], grouped: list[bool]
                 ) -> tuple[dict[int, list[int]], dict[int, int]]:
        """({root: [size, first, last]}, {tensor: root}) of the touched tensors: collect_buffers'
        merges (aliases, in place) and lifetimes."""
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

        buffers: dict[int, list[int]] = {}
        roots: dict[int, int] = {}

        def touch(t: int, step: int) -> None:
            base = roots.get(t)
            if base is None:
                base = roots[t] = root(t)
            buffer = buffers.get(base)
            if buffer is None:
                buffers[base] = [nbytes[base], step, step]
            elif step < buffer[1]:
                buffer[1] = step
            elif step > buffer[2]:
                buffer[2] = step

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
        return buffers, roots

    def _shared(self, tiling: Tiling, buffers: dict[int, list[int]], roots: dict[int, int]) -> list[list[int]]:
        """The buffers with each chain's output over its dying input where it may
        (Tiling.shared_variant, tiling._share): [size, first, last, viewed] per buffer."""
        shared = {base: [*buffer, 0] for base, buffer in buffers.items()}
        owner: dict[int, int] = {}  # a root whose buffer was merged -> the root of the buffer it joined

        def holder(t: int) -> int | None:
            base = roots.get(t)
            while base is not None and base in owner:
                base = owner[base]
            return base

        for chain in tiling.chains:
            if chain.lag is None:
                continue
            _, output, _ = self._chain(chain)
            x_root = holder(self._number(chain.input))
            y_root = holder(output)
            if x_root is None or y_root is None or x_root == y_root:
                continue
            x, y = shared[x_root], shared[y_root]
            if (x[0] != chain.input.nbytes or y[0] != self.nbytes[output] or x[3] or y[3]
                    or x[2] != chain.last_step or y[1] != chain.last_step):
                continue
            x[0] = max(chain.lag + x[0], y[0])
            x[2] = y[2]
            x[3] = 1 if chain.lag else 0
            del shared[y_root]
            owner[y_root] = x_root
        return list(shared.values())


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
