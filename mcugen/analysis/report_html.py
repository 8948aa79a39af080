"""`mcugen report`: one self-contained HTML file that answers where the time, the memory and
the accuracy go.

Everything is inline (CSS, SVG charts, the memory plan picture of analysis/memory_plan.py); the
file loads nothing from the network and has no script. Its numbers come from one build: the
summary and the per-op MACs from the build's report.json (Compiled.report()), the parameters
from the graph's constants, the time and memory tables from analysis/profile.py on the host,
the accuracy table from analysis/per_layer.py, flash and RAM per op and RAM over the schedule
from analysis/report_target.py. With `qemu` (`mcugen report --target cortex-m4|cortex-m55
--qemu`) the profile and the per-layer comparison run on the emulated core, and every op gains
its instruction count there. Long names are cut to NAME_CHARS characters with an ellipsis
(the whole name in the cell's title attribute, and CSS that ellipsizes what still overflows),
so a 300-character tensor name cannot widen the page. `report_data()` is the same content as JSON
(`mcugen report --json`); every number shown in a table cell is also in the cell's
`data-value` attribute, exactly as in the JSON, so a test can read them back from the DOM.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from ..ir import Op

Progress = Callable[[str], None]
REPORT_STEPS = 7  # compile, profile, 4 per-layer steps, render
NAME_CHARS = 48  # longer names are cut, with the whole name in a title attribute
_NAME_KEYS = ("name", "tensor", "label")


def op_params(op: Op) -> int:
    """Parameters of an op: the elements of its constant inputs (weights, biases, tables)."""
    return sum(t.num_elements for t in op.inputs if t is not None and t.is_constant)


def report_data(model: Path, options: Any, runs: int = 3, reference: str = "runtime",
                case: Sequence[np.ndarray] | None = None, progress: Progress = lambda _: None,
                qemu: bool = False) -> dict[str, Any]:
    """The report's content: summary, per-op rows, profile, memory, plan, RAM over the schedule
    and accuracy; with `qemu` measured on the emulated core of options.target."""
    from ..driver import compile_model
    from .memory_plan import PlannedModel, plan_json, plan_svg
    from .per_layer import per_layer
    from .profile import profile_model, random_inputs
    from .report_target import op_resources, step_ram

    compiled = compile_model(model, options)
    if compiled.npu is not None:  # TFLite has no ethos-u kernel of its own to compare layers with
        raise UnsupportedError(f"{model.name}: a Vela-compiled model (ethos-u ops): the report compares every "
                               "layer with TFLite, which cannot run them; use mcugen build, run and profile")
    build = compiled.report()
    progress("build")
    inputs = list(case) if case is not None else random_inputs(build)
    profile = profile_model(model, options, qemu=qemu, runs=runs, inputs=inputs)
    progress("profile")
    accuracy = per_layer(model, inputs, options, reference, progress, qemu)
    resources = op_resources(compiled, profile if qemu else None)
    timings = {op.index: op for op in profile.ops}
    total_ns = sum(op.cpu_ns for op in profile.ops)
    ops = []
    for position, (op, entry, used) in enumerate(zip(compiled.order, build["ops"], resources)):
        timed = timings.get(op.index)
        time_ns = timed.cpu_ns if timed is not None else 0.0
        ops.append({"position": position, "index": op.index, "kind": op.kind.name, "name": op.name,
                    "backend": entry["backend"], "macs": entry["macs"], "params": op_params(op),
                    "time_ns": time_ns, "time_percent": 100.0 * time_ns / total_ns if total_ns else 0.0,
                    **used})
    planned = PlannedModel(model.name, compiled.graph, compiled.order, compiled.plan)
    constants = [t for t in compiled.graph.tensors if t.is_constant]
    summary = {
        "model": build["model"], "model_sha256": build["model_sha256"], "rounding": build["rounding"],
        "target": build["target"], "ops": len(compiled.order), "macs": build["macs"],
        "params": sum(t.num_elements for t in constants), "arena_bytes": build["arena_bytes"],
        "weights_bytes": build["weights_bytes"], "lower_bound_bytes": build["lower_bound_bytes"],
        "invoke_ns": profile.invoke_ns, "where": profile.where,
        **({"invoke_instructions": profile.invoke_instructions} if qemu else {}),
        **({"optimize": compiled.plan.trade_off.line()} if compiled.plan.trade_off is not None else {}),
    }
    return {"summary": summary, "inputs": build["inputs"], "outputs": build["outputs"], "ops": ops,
            "profile": profile.to_json(), "memory": profile.to_json()["memory"], "plan": plan_json(planned),
            "accuracy": accuracy.to_json(), "ram_steps": step_ram(compiled), "qemu": qemu,
            "plan_svg": plan_svg(planned)}


def report_json(data: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in data.items() if k != "plan_svg"}, indent=2, sort_keys=True)


# ---- HTML ----------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .9em; display: block; max-width: 100%;
        overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: .25em .6em; } th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td[data-key="model_sha256"] { max-width: 28em; overflow-wrap: anywhere; }
td.name { max-width: 24em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
p, h1 { overflow-wrap: anywhere; } svg.chart { max-width: 100%; height: auto; }
tr.diverged td { background: #fde2e1; } .note { color: #555; font-size: .9em; }
.chart { margin: .5em 0 1.5em; }
"""


def _number(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value == 0.0:
            return "0"
        return f"{value:.6g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def short_name(name: str, limit: int = NAME_CHARS) -> str:
    """`name`, or its first limit-1 characters and an ellipsis."""
    return name if len(name) <= limit else name[: limit - 1] + "\u2026"


def _cell(key: str, value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'<td class="num" data-key="{key}" data-value="{escape(json.dumps(value))}">{_number(value)}</td>'
    if key in _NAME_KEYS:  # cut visibly; the whole name in the title attribute
        text = str(value)
        return f'<td class="name" data-key="{key}" title="{escape(text)}">{escape(short_name(text))}</td>'
    return f'<td data-key="{key}">{escape(str(value))}</td>'


def _table(table_id: str, columns: Sequence[tuple[str, str]], rows: Sequence[dict[str, Any]],
           row_class: Callable[[dict[str, Any]], str] = lambda _: "") -> str:
    """A table of `rows` (dicts), one column per (key, heading)."""
    head = "".join(f"<th>{escape(h)}</th>" for _, h in columns)
    body = []
    for row in rows:
        cls = row_class(row)
        attr = f' class="{cls}"' if cls else ""
        body.append(f"<tr{attr}>" + "".join(_cell(k, row.get(k, "")) for k, _ in columns) + "</tr>")
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def bar_chart(chart_id: str, title: str, labels: Sequence[str], values: Sequence[float], unit: str,
              width: int = 900) -> str:
    """A horizontal bar chart as inline SVG: one bar per label, its value at its end."""
    bar_h, gap, left, top = 14, 4, 260, 24
    height = top + len(labels) * (bar_h + gap) + 10
    largest = max([float(v) for v in values] + [0.0]) or 1.0
    plot_w = width - left - 120
    parts = [(f'<svg id="{chart_id}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
              f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'),
             f'<text x="0" y="14" font-size="13" font-weight="bold">{escape(title)}</text>']
    for row, (label, value) in enumerate(zip(labels, values)):
        y = top + row * (bar_h + gap)
        w = max(0.5, plot_w * float(value) / largest) if value else 0.0
        short = short_name(label, 40)
        shown = _number(value)
        parts.append(f'<text x="{left - 6}" y="{y + bar_h - 3}" text-anchor="end">{escape(short)}</text>')
        parts.append(f'<rect class="bar" x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="#4e79a7" '
                     f'data-value="{escape(json.dumps(value))}"><title>{escape(label)}: {shown} {unit}</title></rect>')
        parts.append(f'<text x="{left + w + 4:.1f}" y="{y + bar_h - 3}">{shown} {escape(unit)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


_SUMMARY = [("model", "Model"), ("model_sha256", "SHA-256"), ("rounding", "Rounding"), ("target", "Target"),
            ("ops", "Ops"), ("macs", "MACs"), ("params", "Parameters"), ("arena_bytes", "Arena (bytes)"),
            ("weights_bytes", "Weights (bytes)"), ("lower_bound_bytes", "Whole-tensor lower bound (bytes)"),
            ("invoke_ns", "Invoke (ns)"), ("where", "Measured on"), ("invoke_instructions", "Invoke (instructions)"),
            ("optimize", "RAM or speed (--optimize)")]
_IO = [("name", "Tensor"), ("shape", "Shape"), ("dtype", "Type"), ("scale", "Scale"),
       ("zero_point", "Zero point"), ("bytes", "Bytes")]
_OPS = [("position", "Step"), ("index", "Op"), ("kind", "Kind"), ("name", "Output"), ("backend", "Backend"),
        ("macs", "MACs"), ("params", "Parameters"), ("time_ns", "Time (ns)"), ("time_percent", "Time (%)"),
        ("flash_bytes", "Flash (bytes)"), ("ram_bytes", "RAM (bytes)"), ("scratch_bytes", "Scratch (bytes)")]
_INSTRUCTIONS = ("instructions", "Instructions")  # --qemu only
_RAM_STEPS = [("step", "Step"), ("index", "Op"), ("kind", "Kind"), ("ram_bytes", "RAM live (bytes)"),
              ("scratch_bytes", "of which scratch (bytes)")]
_KINDS = [("kind", "OpType"), ("calls", "Call"), ("cpu_ns", "CPU(ns)"), ("npu_ns", "NPU(ns)"),
          ("total_ns", "Total(ns)"), ("ratio", "Ratio(%)"), ("macs", "MACs")]
_MEMORY = [("core", "Core"), ("command", "Command (bytes)"), ("internal", "Internal (bytes)"),
           ("weight", "Weight (bytes)"), ("kvcache", "KVCache (bytes)"), ("total", "Total (bytes)")]
_ACCURACY = [("step", "Step"), ("op_index", "Op"), ("kind", "Kind"), ("tensor", "Tensor"), ("cosine", "Cosine"),
             ("euclidean", "Euclidean"), ("max_abs_diff", "Max |diff| (steps)"), ("mismatches", "Differ")]


def _summary_table(summary: dict[str, Any]) -> str:
    rows = "".join(f"<tr><th>{escape(h)}</th>{_cell(k, summary[k])}</tr>" for k, h in _SUMMARY if k in summary)
    return f'<table id="summary-table"><tbody>{rows}</tbody></table>'


def _io_rows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**item, "shape": "x".join(str(d) for d in item["shape"]) or "scalar"} for item in items]


def _accuracy_section(accuracy: dict[str, Any], where: str) -> str:
    first = accuracy["first_divergence"]
    if first is None:
        verdict = f'<p id="first-divergence">No divergence: every tensor is bit-exact with {escape(accuracy["reference"])}.</p>'
    else:
        verdict = (f'<p id="first-divergence">First divergence: step {first["step"]}, op {first["op_index"]} '
                   f'{escape(first["kind"])} \'<span title="{escape(first["tensor"])}">'
                   f'{escape(short_name(first["tensor"]))}</span>\'.</p>')
    diverged_step = None if first is None else first["step"]

    def mark(row: dict[str, Any]) -> str:
        return "diverged" if row["mismatches"] else ("first" if row["step"] == diverged_step else "")

    note = (f'<p class="note">Every op output of the compiled C (one case, on {escape(where)}) against '
            f'{escape(accuracy["reference"])}, rounding {escape(accuracy["rounding"])}; cosine and Euclidean '
            f'distance on dequantized values.</p>')
    return note + _table("accuracy-table", _ACCURACY, accuracy["layers"], mark) + verdict


def render_html(data: dict[str, Any]) -> str:
    """The whole report as one HTML document."""
    summary, ops = data["summary"], data["ops"]
    labels = [f'{op["index"]} {op["kind"]}' for op in ops]
    profile = data["profile"]
    qemu = data.get("qemu", False)
    charts = "\n".join([
        bar_chart("chart-macs", "MACs per op", labels, [op["macs"] for op in ops], "MACs"),
        bar_chart("chart-params", "Parameters per op", labels, [op["params"] for op in ops], "params"),
        bar_chart("chart-time", f'Time per op ({profile["where"]}, {profile["runs"]} runs averaged)', labels,
                  [op["time_ns"] for op in ops], "ns"),
        *([bar_chart("chart-instructions", f'Instructions per op ({profile["where"]}, {summary["target"]})',
                     labels, [op["instructions"] for op in ops], "instructions")] if qemu else []),
        bar_chart("chart-flash", "Flash per op (constant data its step reads)", labels,
                  [op["flash_bytes"] for op in ops], "bytes"),
    ])
    op_columns = _OPS + ([_INSTRUCTIONS] if qemu else [])
    if qemu:
        time_note = (f'Instructions counted by QEMU on {escape(profile["where"])} ({escape(summary["target"])}\'s '
                     f'kernels); ns = instructions at {profile["cpu_mhz"]:g} MHz, one instruction a cycle.')
    else:
        time_note = (f'Host wall time (CLOCK_MONOTONIC) of the generated C, {profile["runs"]} runs averaged: '
                     'relative shares; use <code>mcugen report --target cortex-m4 --qemu</code> for '
                     'instruction counts on the core.')
    title = f'mcugen report: {summary["model"]}'
    sections = [
        f"<h1>{escape(title)}</h1>",
        '<h2 id="summary">Model</h2>', _summary_table(summary),
        "<h3>Inputs</h3>", _table("inputs-table", _IO, _io_rows(data["inputs"])),
        "<h3>Outputs</h3>", _table("outputs-table", _IO, _io_rows(data["outputs"])),
        '<h2 id="ops">Per op</h2>',
        ('<p class="note">The ops of a tiled chain (run in stripes, see <code>mcugen plan</code>) are timed '
         'together, on the chain\'s last op.</p>'),
        charts, _table("ops-table", op_columns, ops),
        '<h2 id="time">Where the time goes</h2>',
        f'<p class="note">{time_note}</p>',
        _table("profile-table", _KINDS, profile["by_kind"]),
        '<h2 id="memory">Where the memory goes</h2>', _table("memory-table", _MEMORY, [data["memory"]]),
        f'<div id="plan-picture">{data["plan_svg"]}</div>',
        '<h3 id="ram-over-schedule">RAM over the schedule</h3>',
        ('<p class="note">Arena bytes live while each step runs (every pool, scratch included), one point per '
         'step of the execution order, labelled with its op.</p>'),
        bar_chart("chart-ram", "RAM per step", [p["label"] for p in data["ram_steps"]],
                  [p["ram_bytes"] for p in data["ram_steps"]], "bytes"),
        _table("ram-table", _RAM_STEPS, data["ram_steps"]),
        '<h2 id="accuracy">Where the accuracy goes</h2>', _accuracy_section(data["accuracy"], profile["where"]),
    ]
    body = "\n".join(sections)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
            f"<style>{_CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def write_report(model: Path, options: Any, out: Path, runs: int = 3, reference: str = "runtime",
                 case: Sequence[np.ndarray] | None = None, qemu: bool = False) -> dict[str, Any]:
    """Build, profile and check `model`, and write the HTML report to `out` (with a progress bar
    on a terminal); returns the report's data."""
    from .progress import progress_steps

    with progress_steps(f"{model.name} report", REPORT_STEPS) as advance:
        data = report_data(model, options, runs, reference, case, advance, qemu)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_html(data))
        advance("render")
    return data
