"""Sequences of invokes of one model instance: how stateful (streaming) models are run and
checked.

A stateful model's output depends on every input before it, so one case is a sequence: step t
is the t-th invoke of one instance, its variables carried over from step t-1. In an .npz,
axis 0 of every input indexes the steps (`mcugen run --sequence`), and outputs are stacked
the same way. `verify_sequences` runs random sequences through the compiled C (one harness
process per sequence: the harness invokes its cases in order on one instance), mcugen's numpy
reference, and the TFLite runtime that the rounding mode reproduces: TensorFlow Lite Micro
(its Python interpreter counts the model's resource variables itself) or LiteRT's reference
kernels (its Interpreter keeps variables between invoke() calls). Every step must agree to the
bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BuildError, ModelError
from ..ir import Graph
from ..quantization import Rounding
from ..reference import run_sequence
from .oracle import REFERENCE_NAMES, _missing, _tflm_arena_size

Steps = list[list[np.ndarray]]  # steps[t][i]: input (or output) i of invoke t

# Random sequences of `mcugen verify` on a stateful model are at least this long, so that a
# state carried wrongly has time to show (a ring buffer of K frames needs K steps to fill).
MIN_SEQUENCE_STEPS = 20


def split_steps(inputs: Sequence[np.ndarray], where: str) -> Steps:
    """An .npz's inputs with the steps on axis 0 -> one list of inputs per step."""
    lengths = {int(np.asarray(value).shape[0]) if np.ndim(value) else -1 for value in inputs}
    if len(lengths) != 1 or min(lengths) < 1:
        shown = ", ".join(f"input{i} {list(np.shape(v))}" for i, v in enumerate(inputs))
        raise ModelError(f"{where}: --sequence needs every input with the same number of steps (>= 1) on "
                         f"axis 0, got {shown}")
    (count,) = lengths
    return [[np.asarray(value)[t] for value in inputs] for t in range(count)]


def stack_steps(outputs: Steps) -> list[np.ndarray]:
    """Per-step outputs -> each output stacked over the steps on axis 0."""
    return [np.stack([step[i] for step in outputs]) for i in range(len(outputs[0]))]


def runtime_sequence(model: bytes, steps: Steps, rounding: Rounding) -> Steps:
    """The outputs of each step on one instance of the runtime that `rounding` reproduces."""
    if rounding is Rounding.TFLM:
        return _tflm_sequence(model, steps)
    return _litert_sequence(model, steps)


def _litert_sequence(model: bytes, steps: Steps) -> Steps:
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise _missing("ai-edge-litert", "comparing with LiteRT") from None
    interpreter = Interpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    inputs, outputs = interpreter.get_input_details(), interpreter.get_output_details()
    results = []
    for step in steps:
        for detail, value in zip(inputs, step):
            interpreter.set_tensor(detail["index"], np.ascontiguousarray(value, dtype=detail["dtype"]))
        interpreter.invoke()
        results.append([np.array(interpreter.get_tensor(d["index"]), copy=True) for d in outputs])
    return results


def _tflm_sequence(model: bytes, steps: Steps) -> Steps:
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        raise _missing("tflite-micro", "comparing with TensorFlow Lite Micro") from None
    from ..frontend.tflite import parse_model

    graph = parse_model(model, "model.tflite")
    elements = sum(t.num_elements for t in graph.tensors)
    interpreter = runtime.Interpreter.from_bytes(model, arena_size=_tflm_arena_size(model, len(graph.tensors), elements))
    results = []
    for step in steps:
        for index, value in enumerate(step):
            interpreter.set_input(np.ascontiguousarray(value), index)
        interpreter.invoke()
        results.append([np.array(interpreter.get_output(i), copy=True) for i in range(len(graph.outputs))])
    return results


def _differences(name: str, got: Steps, want: Steps) -> list[str]:
    lines = []
    for t, (got_step, want_step) in enumerate(zip(got, want)):
        for i, (a, b) in enumerate(zip(got_step, want_step)):
            differ = int(np.count_nonzero(a.reshape(b.shape) != b))
            if differ:
                worst = int(np.max(np.abs(a.reshape(b.shape).astype(np.int64) - b.astype(np.int64))))
                lines.append(f"step {t} output{i}: {differ} of {b.size} elements differ from {name} (max |diff| {worst})")
    return lines


def verify_sequences(model: Path, graph: Graph, sequences: Sequence[Steps], options: Any) -> tuple[list[str], int]:
    """(message lines, sequences with a mismatch): each sequence through the compiled C, the
    numpy reference and the rounding's runtime."""
    from ..toolchain.host import build_program, run_program

    data = model.read_bytes()
    program = build_program(data, options, model.name)
    runtime_name = REFERENCE_NAMES[options.rounding]
    lines: list[str] = []
    failed = 0
    for number, steps in enumerate(sequences):
        c_outputs = run_program(program, steps)
        found = (_differences(runtime_name, c_outputs, runtime_sequence(data, steps, options.rounding))
                 + _differences("mcugen's reference", c_outputs, run_sequence(graph, steps, options.rounding)))
        lines += [f"sequence {number} {line}" for line in found]
        failed += bool(found)
    if not sequences:
        raise BuildError("no sequence to verify")
    return lines, failed
