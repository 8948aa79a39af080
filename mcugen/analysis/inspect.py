"""What `mcugen inspect` prints: the model's I/O, and every op of the file with what happens
to it (runs on the CPU, aliased, folded at build time, removed, or unsupported and why).

The graph goes through the same passes as a build before the support rules are checked, so
an op folded into a constant is reported as folded, not as unsupported.

Nothing a model gets wrong hides the table: every op is listed with every reason it cannot
run. An op of a builtin mcugen does not know, and an op whose options or shapes break a
validation rule, is set aside (its outputs count as given, its inputs as used) so that the
ops around it are still checked; a CUSTOM op without a kernel is refused by its support rule
like any other. A rule of the model as a whole (a tensor's quantization, the wiring) is listed
above the table; the passes, which trust a valid model, then do not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from ..custom_ops import bind_kernels
from ..errors import McugenError, ModelError
from ..frontend.tflite import UnknownOp, decode_model
from ..frontend.validate import Problems, validation_problems
from ..ir import CustomKernel, CustomOptions, Graph, Op, Tensor
from ..npu.config import NpuConfig
from ..ops.base import DEFAULT_SETTING, Setting, raised_notices
from ..ops.registry import op_def, op_macs
from ..passes import Rewrite
from ..records import dataclass
from ..state import state_tensors
from ..support import check_op
from .npu_placement import NpuInspection

# What a support rule may raise on an op whose options broke validation (a zero stride, say):
# such an op is listed with its validation problems, and rules that cannot judge it add nothing.
_UNJUDGED = (McugenError, ArithmeticError, IndexError, KeyError, TypeError, ValueError)


@dataclass
class Inspection:
    lines: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)  # "op 3 CONV_2D" for each op that breaks a rule
    problems: int = 0  # broken rules, over all ops
    model_problems: list[str] = field(default_factory=list)  # rules of the model as a whole

    def summary(self, label: str) -> str:
        """The one line `mcugen inspect` ends with on stderr when anything is wrong."""
        parts = [f"{len(self.model_problems)} problem(s) with the model"] if self.model_problems else []
        if self.unsupported:
            parts.append(f"{len(self.unsupported)} unsupported op(s): {', '.join(self.unsupported)}")
        return f"{label}: {'; '.join(parts)}"


def dynamic_note(tensor: Tensor) -> str:
    """How a shape the model leaves open is fixed (empty for a static tensor)."""
    if not tensor.dynamic_axes:
        return ""
    if tensor.dynamic_axes == (0,):
        return f" (dynamic batch: fixed at {tensor.shape[0]})"
    fixed = ", ".join(f"axis {a} at {tensor.shape[a]}" for a in tensor.dynamic_axes)
    return f" (dynamic: {fixed})"


def _io_lines(inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> list[str]:
    lines = []
    for kind, tensors in (("input", inputs), ("output", outputs)):
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


def _set_aside(graph: Graph, reads: Sequence[Tensor], writes: Sequence[Tensor]) -> None:
    """Leave an op out of the graph: what it writes becomes given, what it reads stays live."""
    given = {id(t) for t in graph.inputs}
    graph.inputs += [t for t in writes if not t.is_constant and id(t) not in given]
    kept = {id(t) for t in graph.outputs}
    graph.outputs += [t for t in reads if not t.is_constant and id(t) not in kept and id(t) not in given]


def _row(index: int, kind: str, outputs: Sequence[Tensor], macs: int, backend: str, name: str) -> str:
    shape = str(list(outputs[0].shape)) if outputs else "[]"
    return f"  {index:>3}  {kind:<20} {shape:<22} {macs:>10}  {backend:<8}  {name}"


def _unknown_lines(op: UnknownOp) -> list[str]:
    name = op.outputs[0].name if op.outputs else f"op{op.index}"
    return [_row(op.index, op.builtin, op.outputs, 0, "-", name),
            (f"       unsupported: {op.builtin} (op {op.index}, '{name}'): mcugen has no kernel for this builtin "
             "(docs/supported_ops.md lists those it has)")]


def _kind(op: Op) -> str:
    """The op column: the kind, and a CUSTOM op's custom code."""
    return f"CUSTOM '{op.options.code}'" if isinstance(op.options, CustomOptions) else op.kind.name


def _guarded_rules(op: Op, setting: Setting) -> list[str]:
    try:
        return check_op(op, setting)
    except _UNJUDGED:
        return []


def inspect_model(path: Path, setting: Setting = DEFAULT_SETTING, npu: NpuConfig | None = None,
                  custom_ops: Sequence[CustomKernel] = ()) -> Inspection:
    from ..driver import prepare_graph

    if not path.is_file():
        raise ModelError(f"{path}: no such file")
    unknown: list[UnknownOp] = []
    graph = decode_model(path.read_bytes(), path.name, unknown)
    bind_kernels(graph, custom_ops)
    inputs, outputs = list(graph.inputs), list(graph.outputs)
    constants = [t for t in graph.tensors if t.is_constant]
    file_ops = list(graph.ops)
    for stranger in unknown:
        _set_aside(graph, stranger.inputs, stranger.outputs)
    problems: Problems = validation_problems(graph, path.name)
    invalid = [op for op in file_ops if op.index in problems.ops]
    for op in invalid:
        _set_aside(graph, [t for t in op.inputs if t is not None], op.outputs)
    graph.ops = [op for op in file_ops if op.index not in problems.ops]
    graph.link()
    rewrites = {} if problems.model else prepare_graph(graph, setting.rounding).by_index()
    kept = {op.index: op for op in graph.ops}
    # With --npu, where mcugen's NPU compiler puts each op (the passes must have run)
    on_npu = NpuInspection(graph, npu) if npu is not None and not problems.model else None

    result = Inspection(model_problems=list(problems.model))
    result.lines.append(
        f"{path.name}: {len(file_ops) + len(unknown)} ops, {len(graph.tensors)} tensors, "
        f"{sum(t.num_elements for t in constants)} parameters in {sum(t.nbytes for t in constants)} bytes"
    )
    dynamic = sorted({t.name for t in graph.tensors if t.dynamic_axes})
    if dynamic:
        result.lines.append(f"  {len(dynamic)} tensor(s) with a dynamic shape, fixed at their stored extents "
                            "(a dynamic batch runs as batch 1)")
    result.lines.extend(_io_lines(inputs, outputs))
    result.lines.extend(f"  invalid model: {problem}" for problem in problems.model)
    if problems.model:
        result.lines.append("  (the model breaks the rules above: the build's passes were not run, so no op "
                            "is shown folded or removed)")
    for state in state_tensors(graph):
        result.lines.append(f"  variable '{state.name}' {state.dtype.short}{list(state.shape)}: state kept across "
                            f"invokes, {state.nbytes} bytes")
    result.lines.append(f"  {'#':>3}  {'op':<20} {'output':<22} {'MACs':>10}  {'backend':<8}  name")
    by_index: dict[int, Op | UnknownOp] = {**{op.index: op for op in file_ops}, **{op.index: op for op in unknown}}
    for index in sorted(by_index):
        entry = by_index[index]
        if isinstance(entry, UnknownOp):
            result.lines.extend(_unknown_lines(entry))
            result.unsupported.append(f"op {index} {entry.builtin}")
            result.problems += 1
            continue
        result.lines.extend(_op_lines(entry, kept.get(index), rewrites.get(index), problems.ops.get(index, []),
                                      setting, result, on_npu))
    total = sum(op_macs(op) for op in graph.ops)
    status = (f"{len(result.unsupported)} unsupported op(s), {result.problems} broken rule(s)"
              if result.problems else "every op is supported")
    result.lines.append(f"  total MACs {total}; {status}")
    if on_npu is not None:
        result.lines.extend(on_npu.summary())
    return result


def _op_lines(file_op: Op, op: Op | None, rewrite: Rewrite | None, invalid: list[str], setting: Setting,
              result: Inspection, on_npu: NpuInspection | None) -> list[str]:
    """The table's lines for one op of the file that mcugen knows."""
    if op is None and not invalid:  # folded or removed by the passes
        lines = [_row(file_op.index, _kind(file_op), file_op.outputs, 0,
                      "-" if rewrite is None else rewrite.name.lower(), file_op.name)]
        return lines + ([f"       {rewrite.value}"] if rewrite is not None else [])
    subject = op if op is not None else file_op
    broken = [*invalid, *_guarded_rules(subject, setting)]
    result.problems += len(broken)
    if broken:
        result.unsupported.append(f"op {subject.index} {subject.kind.name}")
    macs = 0 if invalid else op_macs(subject)
    backend = "-" if broken else _backend(subject)
    npu_lines = on_npu.op_lines(subject.index) if on_npu is not None and op is not None else []
    if on_npu is not None and op is not None and backend == "cpu" and on_npu.by_index[op.index].on_npu:
        backend = "npu"
    lines = [_row(subject.index, _kind(file_op), file_op.outputs, macs, backend, subject.name)]
    if rewrite is Rewrite.ALIASED:
        lines.append(f"       {Rewrite.ALIASED.value}")
    lines.extend(f"       invalid: {' '.join(problem.split())}" for problem in invalid)
    lines.extend(f"       unsupported: {' '.join(problem.split())}" for problem in broken[len(invalid):])
    lines.extend(npu_lines)
    if not invalid:
        lines.extend(f"       note: {' '.join(text.split())} Got: {value}"
                     for text, value in raised_notices(op_def(subject.kind), subject, setting))
    return lines
