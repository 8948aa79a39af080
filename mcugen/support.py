"""The support stage: every rule of every op, checked at once, and the rules as a document.

The rules themselves belong to the op kinds (mcugen/ops/<family>/, read through
mcugen.ops.registry): plain rules whose docstrings are the rule users read, and the rules of
each kind's prepare step, which need the computed parameters. `check_graph` reports every
broken rule of every op in one error; `mcugen inspect` shows the same list per op.
"""

from __future__ import annotations

from .errors import UnsupportedError
from .ir import Graph, Op
from .ops import registry
from .ops.base import DEFAULT_SETTING, Setting, broken_rules, rule_texts


def check_op(op: Op, setting: Setting = DEFAULT_SETTING) -> list[str]:
    """Every broken rule of one op, as 'where: rule Got: value' messages."""
    definition = registry.op_def(op.kind)
    return [f"{op.where()}: {text} Got: {value}" for text, value in broken_rules(definition, op, setting)]


def graph_problems(graph: Graph, setting: Setting = DEFAULT_SETTING) -> list[str]:
    return [problem for op in graph.ops for problem in check_op(op, setting)]


def check_graph(graph: Graph, setting: Setting = DEFAULT_SETTING) -> None:
    """Raise UnsupportedError listing every broken rule of every op at once."""
    problems = graph_problems(graph, setting)
    if problems:
        raise UnsupportedError(f"{graph.name}: {len(problems)} unsupported: " + "; ".join(problems))


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
