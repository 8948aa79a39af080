"""The two TFLite interpreters that mcugen's output is held to, behind one small API.

LiteRT runs with its reference kernels (BUILTIN_REF), which round MultiplyByQuantizedMultiplier
twice like TensorFlow Lite Micro but rescale FULLY_CONNECTED in double precision.
``run_oracle`` picks the one a Rounding mode reproduces.
With BUILTIN_REF (no XNNPACK delegate) neither interpreter prints INFO lines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tflite
from ai_edge_litert.interpreter import Interpreter as LiteRTInterpreter
from ai_edge_litert.interpreter import OpResolverType
from tflite_micro.python.tflite_micro import runtime as tflm_runtime

from mcugen.driver import BuildOptions
from mcugen.quantization import Rounding
from mcugen.toolchain.host import build_program, run_program

# TFLM's default arena (10x the model size) is far too small for tiny models with large
# activations; tensors' total size bounds what the planner can need, plus room for its tables.
_TFLM_ARENA_SLACK = 64 * 1024


def _litert(model: bytes, inputs: Sequence[np.ndarray], preserve: bool) -> LiteRTInterpreter:
    interpreter = LiteRTInterpreter(
        model_content=model,
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
        experimental_preserve_all_tensors=preserve,
    )
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    if len(details) != len(inputs):
        raise ValueError(f"model has {len(details)} inputs, {len(inputs)} given")
    for detail, value in zip(details, inputs):
        interpreter.set_tensor(detail["index"], np.ascontiguousarray(value))
    interpreter.invoke()
    return interpreter


def run_litert(model: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run LiteRT's reference kernels; outputs in the model's output order."""
    interpreter = _litert(model, inputs, preserve=False)
    return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]


def litert_all_tensors(model: bytes, inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """Run LiteRT's reference kernels and return every tensor's value by tensor index."""
    interpreter = _litert(model, inputs, preserve=True)
    values: dict[int, np.ndarray] = {}
    for index in range(_subgraph(model).TensorsLength()):
        try:
            values[index] = np.array(interpreter.get_tensor(index), copy=True)
        except ValueError:  # a tensor with no data (never allocated)
            continue
    return values


def run_tflm(model: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run TensorFlow Lite Micro; outputs in the model's output order."""
    subgraph = _subgraph(model)
    if subgraph.InputsLength() != len(inputs):
        raise ValueError(f"model has {subgraph.InputsLength()} inputs, {len(inputs)} given")
    interpreter = tflm_runtime.Interpreter.from_bytes(model, arena_size=_tflm_arena_size(model))
    for index, value in enumerate(inputs):
        interpreter.set_input(np.ascontiguousarray(value), index)
    interpreter.invoke()
    return [np.array(interpreter.get_output(i), copy=True) for i in range(subgraph.OutputsLength())]


def run_litert_sequence(model: bytes, steps: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
    """Successive invokes of one LiteRT interpreter (reference kernels): it keeps resource
    variables between invoke() calls. Outputs per step."""
    interpreter = LiteRTInterpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    results = []
    for step in steps:
        for detail, value in zip(interpreter.get_input_details(), step):
            interpreter.set_tensor(detail["index"], np.ascontiguousarray(value))
        interpreter.invoke()
        results.append([interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()])
    return results


def run_tflm_sequence(model: bytes, steps: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
    """Successive invokes of one TFLM interpreter (its Python wrapper counts the model's
    resource variables and keeps them between invoke() calls). Outputs per step."""
    subgraph = _subgraph(model)
    interpreter = tflm_runtime.Interpreter.from_bytes(model, arena_size=_tflm_arena_size(model))
    results = []
    for step in steps:
        for index, value in enumerate(step):
            interpreter.set_input(np.ascontiguousarray(value), index)
        interpreter.invoke()
        results.append([np.array(interpreter.get_output(i), copy=True) for i in range(subgraph.OutputsLength())])
    return results


def run_oracle_sequence(model: bytes, steps: Sequence[Sequence[np.ndarray]],
                        rounding: Rounding) -> list[list[np.ndarray]]:
    """The sequence on the interpreter whose rounding `rounding` reproduces."""
    return run_tflm_sequence(model, steps) if rounding is Rounding.TFLM else run_litert_sequence(model, steps)


def run_oracle(model: bytes, inputs: Sequence[np.ndarray], rounding: Rounding) -> list[np.ndarray]:
    """The interpreter whose rounding `rounding` reproduces to the bit."""
    if rounding is Rounding.TFLM:
        return run_tflm(model, inputs)
    if rounding is Rounding.LITERT:
        return run_litert(model, inputs)
    raise ValueError(f"no oracle for rounding {rounding}")


def _subgraph(model: bytes) -> tflite.SubGraph:
    return tflite.Model.GetRootAsModel(model, 0).Subgraphs(0)


def _tflm_arena_size(model: bytes) -> int:
    subgraph = _subgraph(model)
    total = 0
    for index in range(subgraph.TensorsLength()):
        tensor = subgraph.Tensors(index)
        count = int(np.prod(tensor.ShapeAsNumpy())) if tensor.ShapeLength() else 1
        total += count * 8 + 16  # 8 bytes per element covers every type, 16 for alignment
    return 2 * total + len(model) + _TFLM_ARENA_SLACK


MIN_DISTINCT_OUTPUTS = 6


def oracle_output(model: bytes, inputs: Sequence[np.ndarray], rounding: Rounding,
                  min_distinct: int = MIN_DISTINCT_OUTPUTS) -> np.ndarray:
    """The oracle's single output, asserted to have a spread of values so that a comparison
    with it cannot pass vacuously (an all-saturated output matches almost anything)."""
    (expected,) = run_oracle(model, inputs, rounding)
    assert len(np.unique(expected)) >= min_distinct, "oracle output has no spread"
    return expected


def assert_exact(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    mismatches = int(np.sum(actual != expected))
    assert mismatches == 0, f"{mismatches} of {expected.size} outputs differ"


def assert_sanitized_build_equals_tflm(model: bytes, options: BuildOptions, label: str,
                                       shape: Sequence[int], seed: int) -> None:
    """The model built with `options` under ASan/UBSan gives TFLM's output on three random int8
    inputs of `shape`."""
    rng = np.random.default_rng(seed)
    cases = [[rng.integers(-128, 128, shape).astype(np.int8)] for _ in range(3)]
    program = build_program(model, options, label, sanitize=True)
    for case, (actual,) in zip(cases, run_program(program, cases), strict=True):
        (expected,) = run_tflm(model, case)
        assert np.array_equal(actual.reshape(expected.shape), expected)


def single_rounding_requantize(
    x: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int
) -> np.ndarray:
    """MultiplyByQuantizedMultiplier as a TFLITE_SINGLE_ROUNDING build would compute it: the
    64-bit product rounded once (half up) by 31 - shift bits. Test-only: no runtime mcugen
    reproduces uses it (LiteRT 2.3.0's reference kernels measurably round twice)."""
    x, multiplier, shift = (np.asarray(v, dtype=np.int64) for v in (x, multiplier, shift))
    total_shift = 31 - shift
    return (x * multiplier + (np.int64(1) << (total_shift - 1))) >> total_shift
