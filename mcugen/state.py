"""Stateful models: the states of resource variables and the order their reads and writes keep.

A variable's state is a Tensor with `variable` set (ir.Variable): no op produces it, it holds
a value before the first op (the init subgraph's constant, copied in by `<prefix>_init()`
and `<prefix>_reset_state()`), and it keeps its value across invokes. READ_VARIABLE and
ASSIGN_VARIABLE take it as input 0; after the passes (passes/state.py) other ops may read it
directly instead of through a READ_VARIABLE copy.

Order
-----
Every op is a pure function of its inputs except ASSIGN_VARIABLE, which writes its state: an op
that reads a state before an ASSIGN_VARIABLE of it in the file must read the old value, one
after it the new one. So for each state, every pair of ops that touch it (read it as an input,
or assign it) in which one is an ASSIGN_VARIABLE keeps its file order (`state_order`): the
scheduler adds these pairs to its dependencies and `check_state_order` checks any order.
Tiling groups only window ops and ADDs (memory/tiling_search.py), never an ASSIGN_VARIABLE, and
runs a chain at its last op's step, so a chain that reads a state reads it before the
assignment its ops were scheduled before.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ir import Graph, Op, OpKind, Tensor


def state_tensors(graph: Graph) -> list[Tensor]:
    """The graph's variable states, each once, in tensor order."""
    seen: set[int] = set()
    states = []
    for tensor in graph.tensors:
        if tensor.variable is not None and id(tensor) not in seen:
            seen.add(id(tensor))
            states.append(tensor)
    return states


def state_bytes(graph: Graph) -> int:
    return sum(t.nbytes for t in state_tensors(graph))


def assigned_state(op: Op) -> Tensor | None:
    """The state an ASSIGN_VARIABLE writes (None for any other op)."""
    if op.kind is OpKind.ASSIGN_VARIABLE and op.inputs and op.inputs[0] is not None:
        return op.inputs[0]
    return None


def _touched_states(op: Op) -> set[int]:
    return {id(t) for t in op.inputs if t is not None and t.variable is not None}


def state_order(ops: Sequence[Op]) -> list[tuple[int, int]]:
    """(i, j) positions in `ops` (the file's order) with i < j where op j must run after op i:
    both touch one state and one of them assigns it."""
    pairs = []
    for j, later in enumerate(ops):
        later_states = _touched_states(later)
        if not later_states:
            continue
        written_later = assigned_state(later)
        for i in range(j):
            earlier = ops[i]
            shared = later_states & _touched_states(earlier)
            if not shared:
                continue
            written_earlier = assigned_state(earlier)
            if any(w is not None and id(w) in shared for w in (written_earlier, written_later)):
                pairs.append((i, j))
    return pairs


def check_state_order(file_ops: Sequence[Op], order: Sequence[Op]) -> str | None:
    """None if `order` keeps every pair of `state_order(file_ops)`, else the first it breaks."""
    position = {id(op): n for n, op in enumerate(order)}
    for i, j in state_order(file_ops):
        first, second = file_ops[i], file_ops[j]
        if position[id(first)] > position[id(second)]:
            return (f"{second.where()} must run after {first.where()}: one assigns a variable "
                    "the other reads or assigns")
    return None
