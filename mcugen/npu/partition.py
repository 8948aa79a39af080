"""The ops in schedule order, cut into NPU segments: each segment one command stream.

A segment is a maximal run of consecutive NPU ops (mcugen/npu/support.py's placement) in the
schedule's order (mcugen/schedule.py's, or the file's); a CPU op between two NPU ops ends one
segment and the next starts after it. The order is checked to be topological, so every input of a
segment's op is a constant, a graph input, or the output of an op before it (in the segment, or
on the other side of the boundary), never of a CPU op later in the order: nothing in a segment
waits for the CPU once the segment has started.
A run made only of views (RESHAPE, SQUEEZE, EXPAND_DIMS) is no segment: the NPU would have nothing
to do, and the CPU aliases them for free.

Each segment names what crosses the CPU/NPU boundary: its inputs (the non-constant tensors its
ops read and no op of it writes: graph inputs or outputs of CPU ops and of earlier segments) and
its outputs (what its ops write and an op after it, or the graph, reads). Constants stay with the
segment (its weights). Of these, `from_cpu` and `to_cpu` are the ones the CPU side writes or reads
(graph inputs and outputs included): a tensor that passes from one segment to a later one never
touches the CPU, and Vela's `ethos-u` ops, too, list only the CPU's tensors as their IFMs and OFMs.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Graph, Op, Tensor
from ..records import dataclass
from .support import MEMORY_KINDS, Placement


@dataclass(frozen=True)
class Segment:
    """Consecutive NPU ops that become one command stream, and the tensors at its boundary."""

    index: int
    ops: tuple[Op, ...]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    from_cpu: tuple[Tensor, ...]  # the inputs that a CPU op or the application writes
    to_cpu: tuple[Tensor, ...]  # the outputs that a CPU op or the application reads

    @property
    def constants(self) -> tuple[Tensor, ...]:
        """The constants the segment's ops read (weights, biases, constant operands), once each."""
        seen: dict[int, Tensor] = {}
        for op in self.ops:
            for t in op.inputs:
                if t is not None and t.is_constant:
                    seen.setdefault(id(t), t)
        return tuple(seen.values())


def _runs(order: Sequence[Op], on_npu: dict[int, bool], starts: frozenset[int] = frozenset()) -> list[list[Op]]:
    runs: list[list[Op]] = []
    current: list[Op] = []
    for op in order:
        if on_npu[id(op)] and id(op) in starts and current:
            runs.append(current)
            current = [op]
        elif on_npu[id(op)]:
            current.append(op)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return [run for run in runs if not all(op.kind in MEMORY_KINDS for op in run)]


def _boundary(graph: Graph, ops: list[Op]) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...]]:
    inside = {id(op) for op in ops}
    written = {id(t) for op in ops for t in op.outputs}
    graph_outputs = {id(t) for t in graph.outputs}
    inputs: dict[int, Tensor] = {}
    outputs: dict[int, Tensor] = {}
    for op in ops:
        for t in op.inputs:
            if t is not None and not t.is_constant and id(t) not in written:
                inputs.setdefault(id(t), t)
        for t in op.outputs:
            if id(t) in graph_outputs or any(id(c) not in inside for c in t.consumers):
                outputs.setdefault(id(t), t)
    return tuple(inputs.values()), tuple(outputs.values())


def _check_order(graph: Graph, order: Sequence[Op]) -> None:
    """`order` holds the graph's ops, each once, every one after the producers of its inputs."""
    if sorted(id(op) for op in order) != sorted(id(op) for op in graph.ops):
        raise ValueError("partition: the order does not hold the graph's ops, each once")
    available = {id(t) for t in graph.inputs}
    for op in order:
        for t in op.inputs:
            # a variable's state has no producer: it holds the last invoke's value
            if t is not None and not t.is_constant and t.variable is None and id(t) not in available:
                raise ValueError(f"partition: {op.where()} comes before the producer of '{t.name}'")
        available.update(id(t) for t in op.outputs)


def partition(graph: Graph, decisions: Sequence[Placement], order: Sequence[Op] | None = None,
              starts: frozenset[int] = frozenset()) -> list[Segment]:
    """The NPU segments of `graph` in `order` (a schedule; default: the graph's own op order),
    with one decision per op from placement(); an op in `starts` (by id) begins a segment of
    its own even after an NPU op (--npu-async: npu/concurrency.py)."""
    order = list(graph.ops) if order is None else list(order)
    _check_order(graph, order)
    on_npu = {id(d.op): d.on_npu for d in decisions}
    if set(on_npu) != {id(op) for op in graph.ops}:
        raise ValueError("partition: the decisions are not one per op of the graph")
    graph.link()
    runs = _runs(order, on_npu, starts)
    in_segment = {id(op) for run in runs for op in run}
    graph_io = {id(t) for t in [*graph.inputs, *graph.outputs]}
    segments: list[Segment] = []
    for run in runs:
        inputs, outputs = _boundary(graph, run)
        from_cpu = tuple(t for t in inputs if id(t) in graph_io or
                         (t.producer is not None and id(t.producer) not in in_segment))
        to_cpu = tuple(t for t in outputs if id(t) in graph_io or
                       any(id(c) not in in_segment for c in t.consumers))
        segments.append(Segment(len(segments), tuple(run), inputs, outputs, from_cpu, to_cpu))
    return segments
