"""READ_VARIABLE without a copy: its readers read the variable's state in place, where that
cannot change what they see.

READ_VARIABLE copies a variable's state into a tensor of its own (TFLite's semantics: the
value as it was at the read). Its readers may read the state itself instead, and the copy
goes, when every one of them (in the file's order) comes before each ASSIGN_VARIABLE of that
variable that follows the read, so that the value they see is the one read; the scheduler
then keeps them before it (mcugen/state.py orders every op that takes a state as input
against the assignments of that state). Kept as a copy: a read whose output is a graph output
(it must outlive the assignment), is quantized differently from the state (its readers read
its scale), or is read by an alias (a RESHAPE: its readers would read the state's bytes
unordered) or by an ASSIGN_VARIABLE.
"""

from __future__ import annotations

from ..ir import Graph, Op, OpKind
from ..ops.registry import op_def
from ..state import assigned_state
from .report import PassReport, Rewrite


def _in_place(op: Op, position: dict[int, int], ops: list[Op], outputs: set[int]) -> bool:
    state, value = op.inputs[0], op.outputs[0]
    if state is None or state.variable is None or id(value) in outputs or value.quant != state.quant:
        return False
    if any(op_def(c.kind).traits.alias or c.kind is OpKind.ASSIGN_VARIABLE for c in value.consumers):
        return False
    here = position[id(op)]
    later_writes = [position[id(w)] for w in ops[here + 1:] if assigned_state(w) is state]
    last_reader = max((position[id(c)] for c in value.consumers), default=here)
    return not later_writes or last_reader < min(later_writes)


def read_states_in_place(graph: Graph, report: PassReport) -> None:
    graph.link()
    outputs = {id(t) for t in graph.outputs}
    position = {id(op): n for n, op in enumerate(graph.ops)}
    kept: list[Op] = []
    for op in graph.ops:
        if op.kind is not OpKind.READ_VARIABLE or not _in_place(op, position, graph.ops, outputs):
            kept.append(op)
            continue
        state, value = op.inputs[0], op.outputs[0]
        for consumer in value.consumers:
            consumer.inputs = [state if t is value else t for t in consumer.inputs]
        report.record(op, Rewrite.READ_IN_PLACE)
    graph.ops = kept
    graph.link()
