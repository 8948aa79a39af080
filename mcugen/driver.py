"""The pipeline, top to bottom: read, check, rewrite, schedule, plan, generate.

    model.tflite -> reader -> IR -> passes -> support -> scheduler -> planner -> codegen

verify_graph() runs between the stages that change the graph. Everything is computed in memory
first; files are written only when every stage has succeeded, so a failed build never leaves
partial output that looks good.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .codegen.cnames import default_prefix, is_valid_prefix
from .codegen.generate import GeneratedCode, generate
from .errors import BuildError, McugenError
from .frontend.tflite import parse_model, read_model
from .frontend.validate import DEFAULT_LIMITS, DEFAULT_MAX_TENSOR_BYTES, Limits
from .ir import Graph, Op, verify_graph
from .memory.plan import Plan, plan_model, plan_report, tiling_report
from .memory.pools import PoolSpec
from .ops.base import Setting
from .ops.registry import op_macs, scratch_bytes
from .passes import PassReport, run_passes
from .quantization import Rounding
from .schedule import schedule
from .support import check_graph
from .targets import HOST, Target, target


@dataclass(frozen=True)
class BuildOptions:
    rounding: Rounding = Rounding.TFLM
    prefix: str | None = None
    target: Target = HOST  # a --target name is looked up (targets.target())
    pools: tuple[PoolSpec, ...] = ()  # --pool; () is the one unlimited arena
    guard: int = 0  # canary bytes after every buffer and around every pool (tests only)
    tiling: bool = True  # stripe memory-peak chains (memory/tiling.py) where that lowers the arena
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES  # --max-tensor-bytes (frontend/validate.py)

    def __post_init__(self) -> None:
        if isinstance(self.target, str):  # BuildOptions(target="cortex-m4"): the same as target(...)
            object.__setattr__(self, "target", target(self.target))

    def key(self) -> str:
        pools = ",".join(f"{p.name}:{p.capacity}:{p.speed}" for p in self.pools)
        tiling = "" if self.tiling else "-notiling"
        limit = "" if self.max_tensor_bytes == DEFAULT_MAX_TENSOR_BYTES else f"-max{self.max_tensor_bytes}"
        return f"{self.rounding.value}-{self.prefix or ''}-{self.target.name}-{pools}-{self.guard}{tiling}{limit}"


@dataclass
class Compiled:
    graph: Graph
    order: list[Op]
    plan: Plan
    code: GeneratedCode
    prefix: str
    options: BuildOptions
    model_label: str
    # report.json's "code_size" (toolchain/cross.py); only `build` measures it (analysis/measure.py)
    code_size: dict[str, Any] = field(default_factory=lambda: {"measured": False, "reason": "not measured"})
    # report.json's "instructions" (analysis/profile.py, QEMU); only `build --instructions` runs it
    instructions: dict[str, Any] = field(default_factory=lambda: {
        "measured": False, "reason": "not asked: mcugen build --instructions runs the model on QEMU"})

    def report(self) -> dict[str, Any]:
        graph, plan = self.graph, self.plan
        return {
            "mcugen_version": __version__,
            "model": self.model_label,
            "model_sha256": graph.sha256,
            "prefix": self.prefix,
            "rounding": self.options.rounding.value,
            "target": self.options.target.name,
            "arena_bytes": plan.arena_size,
            "weights_bytes": self.code.weights_bytes,
            "lower_bound_bytes": plan.lower_bound,
            **plan_report(plan),
            "macs": sum(op_macs(op) for op in self.order),
            "tiling": tiling_report(plan.tiling, self.options.tiling),
            "inputs": [_io_report(t) for t in graph.inputs],
            "outputs": [_io_report(t) for t in graph.outputs],
            "ops": [
                {"index": op.index, "kind": op.kind.name, "name": op.name,
                 "macs": op_macs(op), "backend": op.backend}
                for op in self.order
            ],
            "files": sorted(self.code.files),
            "code_size": self.code_size,
            "instructions": self.instructions,
        }


def _io_report(tensor: Any) -> dict[str, Any]:
    quant = tensor.quant
    return {
        "name": tensor.name,
        "shape": list(tensor.shape),
        "dtype": tensor.dtype.short,
        "scale": quant.single_scale if quant else None,
        "zero_point": quant.single_zero_point if quant else None,
        "bytes": tensor.nbytes,
        # Axes the model leaves open (shape_signature -1), fixed at the extents in "shape".
        "dynamic_axes": list(tensor.dynamic_axes),
    }


def prepare_graph(graph: Graph, rounding: Rounding = Rounding.TFLM) -> PassReport:
    """Check the IR, rewrite it (fold, alias, drop ops that do nothing), check it again."""
    verify_graph(graph)
    report = run_passes(graph, rounding)
    verify_graph(graph)
    return report


def load_graph(model: Path | bytes, label: str | None = None,
               rounding: Rounding = Rounding.TFLM, target: Target = HOST, limits: Limits = DEFAULT_LIMITS) -> Graph:
    """Read, rewrite, and check support: the graph every later stage works on.

    Unknown builtins are reported by the reader, all at once; the support rules run after the
    passes, because an op folded into a constant at build time needs no kernel on the device.
    Folding evaluates reference kernels, so it needs the build's rounding mode; some rules
    depend on the mode or the target.
    """
    if isinstance(model, bytes):
        graph = parse_model(model, label or "model.tflite", limits)
    else:
        graph = read_model(model, limits)
    prepare_graph(graph, rounding)
    check_graph(graph, Setting(rounding, target))
    return graph


def resolve_prefix(graph: Graph, prefix: str | None) -> str:
    if prefix is None:
        return default_prefix(graph.name)
    if not is_valid_prefix(prefix):
        raise McugenError(f"--prefix '{prefix}' is not a C identifier (letters, digits, '_', not a keyword)")
    return prefix


def compile_model(model: Path | bytes, options: BuildOptions, label: str | None = None) -> Compiled:
    graph = load_graph(model, label, options.rounding, options.target, Limits(options.max_tensor_bytes))
    model_label = label or (model.name if isinstance(model, Path) else "model.tflite")
    prefix = resolve_prefix(graph, options.prefix)
    chosen = schedule(graph, scratch_bytes(options.target))
    order = chosen.order
    plan = plan_model(graph, order, scratch_bytes(options.target), options.pools, options.guard,
                      options.tiling)
    plan.schedule_exact = chosen.exact
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
