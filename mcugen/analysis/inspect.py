"""What `mcugen inspect` prints: the model's I/O, and every op of the file with what happens
to it (runs on the CPU, aliased, folded at build time, removed, or unsupported and why).

The graph goes through the same passes as a build before the support rules are checked, so
an op folded into a constant is reported as folded, not as unsupported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..frontend.tflite import read_model
from ..ir import Graph, Op, Tensor
from ..ops.base import DEFAULT_SETTING, Setting, raised_notices
from ..ops.registry import op_def, op_macs
from ..passes import Rewrite
from ..state import state_tensors
from ..support import check_op


@dataclass
class Inspection:
    lines: list[str] = field(default_factory=list)
    unsupported: list[Op] = field(default_factory=list)  # ops (after the passes) that break a rule
    problems: int = 0  # broken rules, over all ops


def dynamic_note(tensor: Tensor) -> str:
    """How a shape the model leaves open is fixed (empty for a static tensor)."""
    if not tensor.dynamic_axes:
        return ""
    if tensor.dynamic_axes == (0,):
        return f" (dynamic batch: fixed at {tensor.shape[0]})"
    fixed = ", ".join(f"axis {a} at {tensor.shape[a]}" for a in tensor.dynamic_axes)
    return f" (dynamic: {fixed})"


def _io_lines(graph: Graph) -> list[str]:
    lines = []
    for kind, tensors in (("input", graph.inputs), ("output", graph.outputs)):
        for i, t in enumerate(tensors):
            q = f" scale {t.quant.single_scale:.6g} zero point {t.quant.single_zero_point}" if t.quant else ""
            folded = " (a constant, folded at build time)" if t.is_constant else ""
            lines.append(f"  {kind}{i} '{t.name}' {t.dtype.short}{list(t.shape)}{q}{dynamic_note(t)}{folded}")
    return lines


def _backend(op: Op) -> str:
    source = op.inputs[0] if op.inputs else None
    if op_def(op.kind).traits.alias and source is not None and not source.is_constant:
        return "alias"
    return op.backend


def inspect_model(path: Path, setting: Setting = DEFAULT_SETTING) -> Inspection:
    from ..driver import prepare_graph

    graph = read_model(path)
    constants = [t for t in graph.tensors if t.is_constant]
    file_ops = list(graph.ops)
    rewrites = prepare_graph(graph, setting.rounding).by_index()  # the build's stages, up to the support rules
    kept = {op.index: op for op in graph.ops}

    result = Inspection()
    result.lines.append(
        f"{path.name}: {len(file_ops)} ops, {len(graph.tensors)} tensors, "
        f"{sum(t.num_elements for t in constants)} parameters in {sum(t.nbytes for t in constants)} bytes"
    )
    dynamic = sorted({t.name for t in graph.tensors if t.dynamic_axes})
    if dynamic:
        result.lines.append(f"  {len(dynamic)} tensor(s) with a dynamic shape, fixed at their stored extents "
                            "(a dynamic batch runs as batch 1)")
    result.lines.extend(_io_lines(graph))
    for state in state_tensors(graph):
        result.lines.append(f"  variable '{state.name}' {state.dtype.short}{list(state.shape)}: state kept across "
                            f"invokes, {state.nbytes} bytes")
    result.lines.append(f"  {'#':>3}  {'op':<20} {'output':<22} {'MACs':>10}  {'backend':<8}  name")
    for file_op in file_ops:
        op = kept.get(file_op.index)
        shape = str(list(file_op.outputs[0].shape)) if file_op.outputs else "[]"
        if op is None:
            rewrite = rewrites.get(file_op.index)
            backend = "-" if rewrite is None else rewrite.name.lower()
            result.lines.append(f"  {file_op.index:>3}  {file_op.kind.name:<20} {shape:<22} {0:>10}  "
                                f"{backend:<8}  {file_op.name}")
            if rewrite is not None:
                result.lines.append(f"       {rewrite.value}")
            continue
        problems = check_op(op, setting)
        result.problems += len(problems)
        if problems:
            result.unsupported.append(op)
        backend = "-" if problems else _backend(op)
        result.lines.append(f"  {op.index:>3}  {file_op.kind.name:<20} {shape:<22} {op_macs(op):>10}  "
                            f"{backend:<8}  {op.name}")
        if rewrites.get(op.index) is Rewrite.ALIASED:
            result.lines.append(f"       {Rewrite.ALIASED.value}")
        result.lines.extend(f"       unsupported: {' '.join(problem.split())}" for problem in problems)
        result.lines.extend(f"       note: {' '.join(text.split())} Got: {value}"
                            for text, value in raised_notices(op_def(op.kind), op, setting))
    total = sum(op_macs(op) for op in graph.ops)
    status = (f"{len(result.unsupported)} unsupported op(s), {result.problems} broken rule(s)"
              if result.problems else "every op is supported")
    result.lines.append(f"  total MACs {total}; {status}")
    return result
