"""Vela's placement of a model's ops, as the oracle for mcugen's NPU support rules.

`vela_cpu_outputs` compiles a model with Vela 5.2 in this process (its `main`, as the `vela` CLI
runs it; a process per model would cost a third of a second each) for one Ethos-U55 size, and
reads Vela's output model: every op that is not the `ethos-u` custom op stayed on the CPU, and the
names of the tensors those ops write identify the original ops (Vela keeps the names). An
original op whose output is not among them is on the NPU (inside an `ethos-u` op, or dissolved
into one, as a reshape is). Results are cached per process: each model and size compiles once.
"""

from __future__ import annotations

import contextlib
import functools
import io
import tempfile
from pathlib import Path

import tflite
from ethosu.vela import vela


class VelaRefused(Exception):
    """Vela could not compile the model (its message)."""


@functools.cache
def vela_cpu_outputs(model: Path, vela_config: str) -> frozenset[str]:
    """The names of the tensors that the CPU ops of Vela's compilation of `model` write."""
    with tempfile.TemporaryDirectory() as out:
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            try:
                vela.main([str(model), "--accelerator-config", vela_config, "--output-dir", out])
            except Exception as error:  # Vela raises RuntimeError or its own errors for a model it refuses
                raise VelaRefused(f"{model.name}: {error}") from error
        written = Path(out) / f"{model.stem}_vela.tflite"
        if not written.exists():
            raise VelaRefused(f"{model.name}: Vela wrote no model ({quiet.getvalue()[-200:]})")
        buf = written.read_bytes()
    compiled = tflite.Model.GetRootAsModel(buf, 0)
    graph = compiled.Subgraphs(0)
    names = set()
    for i in range(graph.OperatorsLength()):
        op = graph.Operators(i)
        if compiled.OperatorCodes(op.OpcodeIndex()).CustomCode() == b"ethos-u":
            continue
        names.update(graph.Tensors(int(t)).Name().decode() for t in op.OutputsAsNumpy())
    return frozenset(names)
