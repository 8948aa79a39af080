"""The support stage: every rule of every op, checked at once, and the rules as a document.

The rules themselves belong to the op kinds (mcugen/ops/<family>/, read through
mcugen.ops.registry): plain rules whose docstrings are the rule users read, and the rules of
each kind's prepare step, which need the computed parameters. `check_graph` reports every
broken rule of every op in one error; `mcugen inspect` shows the same list per op.
"""

from __future__ import annotations

from .errors import UnsupportedError
from .ir import DType, Graph, Op
from .ops import registry
from .ops.base import DEFAULT_SETTING, Setting, broken_rules, rule_texts


def check_op(op: Op, setting: Setting = DEFAULT_SETTING) -> list[str]:
    """Every broken rule of one op, as 'where: rule Got: value' messages."""
    definition = registry.op_def(op.kind)
    return [f"{op.where()}: {text} Got: {value}" for text, value in broken_rules(definition, op, setting)]


def graph_problems(graph: Graph, setting: Setting = DEFAULT_SETTING) -> list[str]:
    return [problem for op in graph.ops for problem in check_op(op, setting)]


def check_graph(graph: Graph, setting: Setting = DEFAULT_SETTING) -> None:
    """Raise UnsupportedError, in one short line, when any op breaks a rule: the count, the first
    broken rule and where to see them all (`mcugen inspect`), or, for float32 weighted ops that
    break rules, how many and what else to do (full-integer quantization)."""
    per_op = {op.index: check_op(op, setting) for op in graph.ops}
    problems = [problem for found in per_op.values() for problem in found]
    if not problems:
        return
    float_ops = [op for op in float_weighted_ops(graph) if per_op[op.index]]
    if float_ops:  # float32 kernels exist, but these ops break their rules
        kinds = ", ".join(sorted({op.kind.name for op in float_ops}))
        raise UnsupportedError(
            f"{graph.name}: {len(float_ops)} op(s) with float32 weights break rules ({kinds}), the first: "
            f"{per_op[float_ops[0].index][0][:200]}; `mcugen inspect` on the model lists every broken rule, "
            "or convert with full-integer quantization (int8 or int16x8, see docs/supported_ops.md)")
    if len(problems) == 1:
        raise UnsupportedError(f"{graph.name}: 1 unsupported: {problems[0]}")
    ops = sum(1 for found in per_op.values() if found)
    raise UnsupportedError(
        f"{graph.name}: {len(problems)} broken rules in {ops} op(s), the first: {problems[0]}; "
        "`mcugen inspect` on the model lists them all")


def float_weighted_ops(graph: Graph) -> list[Op]:
    """Ops whose weights are float32: the mark of a model converted without quantization."""
    found = []
    for op in graph.ops:
        role = registry.op_def(op.kind).roles.weights
        weights = op.inputs[role] if role is not None and role < len(op.inputs) else None
        if weights is not None and weights.dtype is DType.FLOAT32:
            found.append(op)
    return found


def supported_ops_markdown() -> str:
    """docs/supported_ops.md, generated from the registry."""
    lines = [
        "# Supported operators",
        "",
        "Generated from the op definitions (`mcugen/ops/`) by `python -m mcugen.support`; do not edit.",
        "Every op below runs on the CPU kernels, bit-exact with TensorFlow Lite Micro",
        "(`--rounding tflm`, the default) and with LiteRT's reference kernels (`--rounding litert`).",
        "",
    ]
    for definition in registry.definitions():
        lines.append(f"## {definition.kind.name}")
        lines.append("")
        lines.extend(f"- {text}" for text in rule_texts(definition))
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(supported_ops_markdown(), end="")
