"""The pipeline, top to bottom: read, check, rewrite, schedule, plan, generate.

    model.tflite -> reader -> IR -> support -> passes -> scheduler -> planner -> codegen

verify_graph() runs between the stages that change the graph. Everything is computed in memory
first; files are written only when every stage has succeeded, so a failed build never leaves
partial output that looks good.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from . import __version__
from .analysis.macs import op_macs
from .codegen import load_emitters
from .codegen.cnames import default_prefix, is_valid_prefix
from .codegen.emit import op_scratch_bytes
from .codegen.generate import GeneratedCode, generate
from .errors import BuildError, McugenError
from .frontend.tflite import parse_model, read_model
from .ir import Graph, Op, verify_graph
from .passes import run_passes
from .planner import Plan, plan_memory
from .quantization import Rounding
from .schedule import schedule
from .support import check_graph

TARGETS = ("host", "cortex-m4", "cortex-m7", "cortex-m55")


@dataclass(frozen=True)
class BuildOptions:
    rounding: Rounding = Rounding.TFLM
    prefix: Optional[str] = None
    target: str = "host"

    def key(self) -> str:
        return f"{self.rounding.value}-{self.prefix or ''}-{self.target}"


@dataclass
class Compiled:
    graph: Graph
    order: list[Op]
    plan: Plan
    code: GeneratedCode
    prefix: str
    options: BuildOptions
    model_label: str

    def report(self) -> dict[str, Any]:
        graph, plan = self.graph, self.plan
        return {
            "mcugen_version": __version__,
            "model": self.model_label,
            "model_sha256": graph.sha256,
            "prefix": self.prefix,
            "rounding": self.options.rounding.value,
            "target": self.options.target,
            "arena_bytes": plan.arena_size,
            "weights_bytes": self.code.weights_bytes,
            "lower_bound_bytes": plan.lower_bound,
            "macs": sum(op_macs(op) for op in self.order),
            "inputs": [_io_report(t) for t in graph.inputs],
            "outputs": [_io_report(t) for t in graph.outputs],
            "ops": [
                {"index": op.index, "kind": op.kind.name, "name": op.name,
                 "macs": op_macs(op), "backend": op.backend}
                for op in self.order
            ],
            "buffers": [
                {"name": b.name, "offset": b.offset, "bytes": b.size, "first": b.first,
                 "last": b.last, "scratch": b.scratch_of is not None}
                for b in plan.buffers
            ],
            "files": sorted(self.code.files),
        }


def _io_report(tensor: Any) -> dict[str, Any]:
    quant = tensor.quant
    return {
        "name": tensor.name,
        "shape": list(tensor.shape),
        "dtype": tensor.dtype.short,
        "scale": quant.single_scale if quant else None,
        "zero_point": quant.single_zero_point if quant else None,
    }


def load_graph(model: Path | bytes, label: Optional[str] = None) -> Graph:
    """Read, check support, and rewrite: the graph every later stage works on."""
    if isinstance(model, bytes):
        graph = parse_model(model, label or "model.tflite")
    else:
        graph = read_model(model)
    verify_graph(graph)
    check_graph(graph)
    run_passes(graph)
    verify_graph(graph)
    return graph


def resolve_prefix(graph: Graph, prefix: Optional[str]) -> str:
    if prefix is None:
        return default_prefix(graph.name)
    if not is_valid_prefix(prefix):
        raise McugenError(f"--prefix '{prefix}' is not a C identifier (letters, digits, '_', not a keyword)")
    return prefix


def compile_model(model: Path | bytes, options: BuildOptions, label: Optional[str] = None) -> Compiled:
    if options.target not in TARGETS:
        raise McugenError(f"--target '{options.target}' is not one of {', '.join(TARGETS)}")
    load_emitters()
    graph = load_graph(model, label)
    model_label = label or (model.name if isinstance(model, Path) else "model.tflite")
    prefix = resolve_prefix(graph, options.prefix)
    order = schedule(graph)
    plan = plan_memory(graph, order, op_scratch_bytes)
    code = generate(graph, order, plan, prefix, options.rounding, model_label, options.target)
    return Compiled(graph, order, plan, code, prefix, options, model_label)


def write_files(compiled: Compiled, directory: Path) -> None:
    """The generated C, mcugen.mk and report.json, into an existing directory."""
    for name, text in compiled.code.files.items():
        (directory / name).write_text(text)
    report = json.dumps(compiled.report(), indent=2, sort_keys=True) + "\n"
    (directory / "report.json").write_text(report)


def write_output(compiled: Compiled, out_dir: Path) -> None:
    """Write the generated files and report.json into out_dir, replacing what mcugen wrote there.

    Files are written to a temporary directory beside out_dir first and moved into place only
    when all of them are written.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise BuildError(f"{out_dir}: exists and is not a directory")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".mcugen-", dir=out_dir.parent))
    try:
        write_files(compiled, staging)
        out_dir.mkdir(exist_ok=True)
        for entry in sorted(staging.iterdir()):
            os.replace(entry, out_dir / entry.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def build(model: Path, out_dir: Path, options: BuildOptions) -> Compiled:
    compiled = compile_model(model, options)
    write_output(compiled, out_dir)
    return compiled
