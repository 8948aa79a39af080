"""`mcugen plan`: the memory plan of a model as a table, as JSON, and as an SVG picture.

The numbers are those of report.json (memory/plan.py's plan_report): per pool the bytes used
and the capacity, the whole-tensor lower bounds of TFLite's order and of the chosen order, the
gap of the plan to the latter, and each buffer's size, lifetime, pool and offset. The picture is
plain SVG written here (no plotting library): time (steps) across, address up, one box per
buffer, one panel per pool.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from ..ir import Graph, Op
from ..memory.plan import Plan, plan_report, tiling_report
from ..records import dataclass


@dataclass
class PlannedModel:
    label: str
    graph: Graph
    order: list[Op]
    plan: Plan
    target: str = "host"  # the --target whose kernels' scratch the plan holds


def planned(model: Path, options: Any) -> PlannedModel:
    """Read, rewrite, schedule and plan a model, as a build would, without generating C."""
    from ..driver import load_graph, schedule_and_plan

    graph = load_graph(model, None, options.rounding, options.target, custom_ops=options.custom_ops)
    order, plan = schedule_and_plan(graph, options, model.name)
    return PlannedModel(model.name, graph, order, plan, options.target.name)


def plan_json(planned_model: PlannedModel) -> dict[str, Any]:
    file_positions = {id(op): i for i, op in enumerate(planned_model.graph.ops)}
    reordered = [file_positions[id(op)] for op in planned_model.order] != list(range(len(planned_model.order)))
    return {"model": planned_model.label, "target": planned_model.target, "steps": planned_model.plan.steps, "reordered": reordered,
            "order": [op.index for op in planned_model.order], **plan_report(planned_model.plan),
            "tiling": tiling_report(planned_model.plan.tiling)}


def plan_lines(planned_model: PlannedModel, as_json: bool = False) -> list[str]:
    data = plan_json(planned_model)
    if as_json:
        return [json.dumps(data, indent=2, sort_keys=True)]
    plan = planned_model.plan
    lines = [(f"{planned_model.label}: {plan.steps} ops, {len(plan.buffers)} buffers, "
             f"{plan.arena_size} bytes of RAM in {len(plan.pools)} pool(s), --target {planned_model.target}")]
    for pool in data["pools"]:
        capacity = "unlimited" if pool["capacity"] is None else f"{pool['capacity']}"
        proof = "optimal for this order and these buffers" if pool["optimal"] else "not proven optimal"
        lines.append(f"  pool {pool['name']} ({pool['speed']}): {pool['bytes']} bytes used of {capacity} "
                     f"[{pool['algorithm']}; {proof}]")
    order = "reordered" if data["reordered"] else "TFLite's order"
    search = "exact search" if data["schedule_exact"] else "bounded search"
    lines.append(f"  whole-tensor lower bound: {data['lower_bound_bytes']} bytes for the chosen order "
                 f"({order}, {search}), {data['lower_bound_tflite_order_bytes']} for TFLite's order; "
                 f"gap of the plan {data['gap_percent']:+.2f}%")
    for chain in data["tiling"]["chains"]:
        lines.append(f"  tiled: ops {chain['ops'][0]}..{chain['ops'][-1]} in {chain['stripes']} stripes "
                     f"(halo rows {chain['halos']}), {chain['stripe_bytes']} bytes of stripe slots, "
                     f"{chain['extra_macs']} extra MACs")
    if not data["tiling"]["chains"]:
        lines.append("  tiled: nothing (no chain of spatial ops lowers the arena, or --no-tiling)")
    if plan.trade_off is not None:
        lines.append(f"  {plan.trade_off.line()}")
    for choice in plan.kernel_choices:  # the kernel variants (memory/kernel_variants.py)
        lines.append(f"  op {choice.op.index} {choice.op.kind.name}: {choice.variant} kernel "
                     f"(fast path's scratch: {choice.fast_scratch_bytes} bytes): {choice.why}")
    lines.append(f"  {'buffer':<40} {'bytes':>8} {'first':>5} {'last':>5}  {'pool':<8} {'offset':>8}  notes")
    for entry in sorted(data["buffers"], key=lambda b: (b["pool"], b["offset"], b["first"])):
        notes = []
        if entry["scratch"]:
            notes.append("scratch")
        if len(entry["tensors"]) > 1:
            notes.append(f"{len(entry['tensors'])} tensors share it")
        if entry["in_place_ops"]:
            notes.append("in place: op " + ", ".join(str(i) for i in entry["in_place_ops"]))
        if entry["concat_ops"]:
            notes.append("inputs written in place by the producers of concatenation op "
                         + ", ".join(str(i) for i in entry["concat_ops"]))
        name = entry["name"] if len(entry["name"]) <= 40 else entry["name"][:37] + "..."
        lines.append(f"  {name:<40} {entry['bytes']:>8} {entry['first']:>5} {entry['last']:>5}  "
                     f"{entry['pool']:<8} {entry['offset']:>8}  {'; '.join(notes)}")
    return lines


_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
            "#9c755f", "#bab0ac")


def plan_svg(planned_model: PlannedModel, width: int = 960, panel_height: int = 360) -> str:
    """A self-contained SVG of the plan: one panel per pool, time across, address up."""
    plan = planned_model.plan
    steps = plan.steps + 1
    left, right, top, gap = 90, 20, 40, 50
    plot_w = width - left - right
    height = top + len(plan.pools) * (panel_height + gap)
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'),
             f'<rect width="{width}" height="{height}" fill="white"/>',
             (f'<text x="{left}" y="20" font-size="14">{escape(planned_model.label)}: {plan.arena_size} bytes; '
             f'lower bound {plan.lower_bound} (TFLite order {plan.file_lower_bound}); '
             f'gap {plan.gap_percent:+.2f}%</text>')]
    step_w = plot_w / steps
    for number, pool in enumerate(plan.pools):
        y0 = top + number * (panel_height + gap)
        bottom = y0 + panel_height
        scale = panel_height / max(pool.size, 1)
        parts.append(f'<rect x="{left}" y="{y0}" width="{plot_w}" height="{panel_height}" fill="#f6f6f6" '
                     f'stroke="#888"/>')
        parts.append(f'<text x="{left - 8}" y="{y0 + 12}" text-anchor="end">{pool.size}</text>')
        parts.append(f'<text x="{left - 8}" y="{bottom}" text-anchor="end">0</text>')
        capacity = "unlimited" if pool.spec.capacity is None else f"capacity {pool.spec.capacity}"
        parts.append(f'<text x="{left}" y="{bottom + 16}">pool {escape(pool.name)} ({pool.spec.speed}, '
                     f'{capacity}): {pool.size} bytes; step 0 .. {plan.steps} across, address up</text>')
        for index, buffer in enumerate(b for b in plan.buffers if b.pool == pool.name):
            x = left + buffer.first * step_w
            w = max(1.0, (buffer.last - buffer.first + 1) * step_w - 1)
            h = max(1.0, buffer.size * scale)
            y = bottom - (buffer.offset + buffer.size) * scale
            colour = "#cccccc" if buffer.scratch_of is not None else _COLOURS[index % len(_COLOURS)]
            label = (f"{buffer.name}: {buffer.size} bytes at {buffer.offset}, "
                     f"steps {buffer.first}..{buffer.last}")
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{colour}" '
                         f'fill-opacity="0.8" stroke="#333" stroke-width="0.5"><title>{escape(label)}</title></rect>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
