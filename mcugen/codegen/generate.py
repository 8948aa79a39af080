"""Build the plain data the templates render, and render them.

Python computes every value (offsets, multipliers, names); the templates hold only layout.
The output is deterministic: the same graph, plan and options give byte-identical files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from .. import __version__
from ..errors import BuildError
from ..ir import Graph, Op, Tensor
from ..planner import ALIAS_KINDS, Plan
from ..quantization import Rounding
from . import emit
from .cnames import c_array_body, c_float, comment, identifier

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
RUNTIME = TEMPLATES / "runtime" / "kernels"
# Headers every generated model includes, whatever its ops.
COMMON_RUNTIME = ("mcugen_nn_types.h", "mcugen_fixedpoint.h", "mcugen_platform.h")


@dataclass
class ConstArray:
    name: str
    ctype: str
    values: np.ndarray
    note: str

    @property
    def nbytes(self) -> int:
        return int(self.values.size * self.values.dtype.itemsize)


@dataclass
class Step:
    op: Op
    title: str
    declarations: list[str]
    calls: list[str]


@dataclass
class _Context:
    """The EmitContext the emitters write against, collecting flash constants as they ask."""

    prefix: str
    plan: Plan
    rounding: Rounding
    constants: list[ConstArray] = field(default_factory=list)
    _by_tensor: dict[int, str] = field(default_factory=dict)

    def ptr(self, tensor: Tensor) -> str:
        if tensor.is_constant:
            return self._weights(tensor)
        return f"(({tensor.dtype.ctype} *)({self.prefix}_arena + {self.plan.offset_of(tensor)}))"

    def _weights(self, tensor: Tensor) -> str:
        if tensor.index not in self._by_tensor:
            assert tensor.data is not None
            name = f"{self.prefix}_t{tensor.index}"
            suffix = identifier(tensor.name, 32)
            if suffix:
                name += f"_{suffix}"
            values = np.ascontiguousarray(tensor.data, dtype=tensor.dtype.numpy)
            self.constants.append(ConstArray(name, tensor.dtype.ctype, values, comment(tensor.name)))
            self._by_tensor[tensor.index] = name
        return self._by_tensor[tensor.index]

    def constant(self, hint: str, values: np.ndarray, ctype: str) -> str:
        name = f"{self.prefix}_c{len(self.constants)}_{identifier(hint, 24) or 'data'}"
        self.constants.append(ConstArray(name, ctype, np.ascontiguousarray(values), comment(hint)))
        return name

    def scratch(self, op: Op) -> tuple[str, int]:
        buffer = self.plan.scratch_of(op)
        if buffer is None:
            return "NULL", 0
        return f"((void *)({self.prefix}_arena + {buffer.offset}))", buffer.size


@dataclass
class GeneratedCode:
    files: dict[str, str]  # file name -> content, including the copied runtime
    weights_bytes: int
    runtime: list[str]


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def _io_entry(tensor: Tensor, index: int, plan: Plan) -> dict[str, Any]:
    quant = tensor.quant
    return {
        "index": index,
        "name": comment(tensor.name),
        "offset": plan.offset_of(tensor),
        "bytes": tensor.nbytes,
        "ctype": tensor.dtype.ctype,
        "dtype": tensor.dtype.short,
        "shape": list(tensor.shape) or [1],
        "scale": c_float(quant.single_scale) if quant else "0.0f",
        "zero_point": quant.single_zero_point if quant else 0,
    }


def _step_title(op: Op) -> str:
    return f"op {op.index}: {op.kind.name} '{comment(op.name)}'"


def generate(graph: Graph, order: list[Op], plan: Plan, prefix: str, rounding: Rounding,
             model_label: str, target: str = "host") -> GeneratedCode:
    ctx = _Context(prefix=prefix, plan=plan, rounding=rounding)
    steps: list[Step] = []
    runtime: set[str] = set()
    for op in order:
        if op.kind in ALIAS_KINDS and plan.buffer_of(op.outputs[0]) is plan.buffer_of(op.inputs[0]):  # type: ignore[arg-type]
            steps.append(Step(op, _step_title(op) + " (alias of its input, no code)", [], []))
            continue
        call = emit.emit(op, ctx)
        runtime |= call.runtime
        steps.append(Step(op, _step_title(op), call.declarations, call.calls))

    kernel_files = sorted(f"{stem}{ext}" for stem in runtime for ext in (".c", ".h"))
    runtime_files = sorted(set(COMMON_RUNTIME) | set(kernel_files))
    weights_bytes = sum(c.nbytes for c in ctx.constants)
    data: dict[str, Any] = {
        "version": __version__,
        "model": comment(model_label),
        "sha256": graph.sha256,
        "prefix": prefix,
        "PREFIX": prefix.upper(),
        "rounding": rounding.value,
        "target": target,
        "arena_size": plan.arena_size,
        "weights_bytes": weights_bytes,
        "constants": [
            {"name": c.name, "ctype": c.ctype, "count": c.values.size, "note": c.note,
             "body": c_array_body(c.values)}
            for c in ctx.constants
        ],
        "steps": steps,
        "inputs": [_io_entry(t, i, plan) for i, t in enumerate(graph.inputs)],
        "outputs": [_io_entry(t, i, plan) for i, t in enumerate(graph.outputs)],
        "kernel_headers": sorted(f for f in kernel_files if f.endswith(".h")),
        "sources": [f"{prefix}_model.c"] + sorted(f for f in kernel_files if f.endswith(".c")),
    }
    env = _environment()
    files = {
        f"{prefix}_model.h": env.get_template("model.h.j2").render(data),
        f"{prefix}_model.c": env.get_template("model.c.j2").render(data),
        "mcugen.mk": env.get_template("mcugen.mk.j2").render(data),
    }
    for name in runtime_files:
        path = RUNTIME / name
        if not path.exists():
            raise BuildError(f"runtime file {name} is missing from {RUNTIME}")
        files[name] = path.read_text()
    return GeneratedCode(files=files, weights_bytes=weights_bytes, runtime=runtime_files)


def render_harness(prefix: str, model_label: str, graph: Graph) -> str:
    """The host test program: reads input cases from a file, writes outputs to another."""
    data = {"version": __version__, "model": comment(model_label), "sha256": graph.sha256,
            "prefix": prefix, "PREFIX": prefix.upper()}
    return _environment().get_template("harness_main.c.j2").render(data)
