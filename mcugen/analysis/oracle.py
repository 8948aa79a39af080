"""Every intermediate tensor of a model as TFLite computes it, for per-layer comparisons.

`--rounding tflm` is held to TensorFlow Lite Micro (its Python interpreter with
kPreserveAllTensors), `--rounding litert` to LiteRT's reference kernels (BUILTIN_REF with
experimental_preserve_all_tensors): the same runtimes the test suite holds the C to. Both
return tensors by their index in the .tflite file, which is also the index of mcugen's IR
tensors, so folded and aliased tensors are matched by tensor, not by op.

The runtimes are optional dependencies of mcugen: a missing one is a one-line BuildError that
names the package, and `--reference python` (mcugen's numpy reference) needs neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import BuildError, UnsupportedError
from ..ir import CustomOptions
from ..quantization import Rounding

# TFLM plans its own arena: room for every tensor at 8 bytes an element, plus its own tables.
_TFLM_ARENA_SLACK = 256 * 1024


def _missing(package: str, what: str) -> BuildError:
    return BuildError(f"{what} needs the Python package '{package}' (pip install {package}), "
                      f"or use --reference python")


def _litert_interpreter(model: bytes, inputs: Sequence[np.ndarray], reference_kernels: bool) -> Any:
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise _missing("ai-edge-litert", "comparing with LiteRT") from None
    resolver = OpResolverType.BUILTIN_REF if reference_kernels else OpResolverType.AUTO
    interpreter = Interpreter(model_content=model, experimental_op_resolver_type=resolver,
                              experimental_preserve_all_tensors=True)
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    if len(details) != len(inputs):
        raise BuildError(f"the model has {len(details)} inputs, {len(inputs)} given")
    for detail, value in zip(details, inputs):
        interpreter.set_tensor(detail["index"], np.ascontiguousarray(value, dtype=detail["dtype"]))
    interpreter.invoke()
    return interpreter


def _valued(interpreter: Any) -> list[dict[str, Any]]:
    """The tensor details of tensors with values: not the resource handles of a stateful model
    (dtype object), whose get_tensor reads no value and can crash the interpreter."""
    return [d for d in interpreter.get_tensor_details() if np.dtype(d["dtype"]) != np.dtype(object)]


def litert_tensors(model: bytes, inputs: Sequence[np.ndarray],
                   reference_kernels: bool = True) -> dict[int, np.ndarray]:
    """Every tensor LiteRT holds after one inference, by tensor index."""
    interpreter = _litert_interpreter(model, inputs, reference_kernels)
    values: dict[int, np.ndarray] = {}
    for detail in _valued(interpreter):
        try:
            values[detail["index"]] = np.array(interpreter.get_tensor(detail["index"]), copy=True)
        except ValueError:  # a tensor without data
            continue
    return values


def litert_tensor_names(model: bytes, inputs: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor of a (float) model after one LiteRT inference, by tensor name."""
    interpreter = _litert_interpreter(model, inputs, reference_kernels=True)
    values: dict[str, np.ndarray] = {}
    for detail in _valued(interpreter):
        try:
            values[detail["name"]] = np.array(interpreter.get_tensor(detail["index"]), copy=True)
        except ValueError:
            continue
    return values


def _tflm_arena_size(model: bytes, tensor_count: int, elements: int) -> int:
    return 2 * (8 * elements + 16 * tensor_count) + len(model) + _TFLM_ARENA_SLACK


def tflm_tensors(model: bytes, inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """Every tensor TensorFlow Lite Micro holds after one inference, by tensor index."""
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        raise _missing("tflite-micro", "comparing with TensorFlow Lite Micro") from None
    from ..frontend.tflite import parse_model

    graph = parse_model(model, "model.tflite")
    elements = sum(t.num_elements for t in graph.tensors)
    interpreter = runtime.Interpreter.from_bytes(
        model, arena_size=_tflm_arena_size(model, len(graph.tensors), elements),
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    for index, value in enumerate(inputs):
        interpreter.set_input(np.ascontiguousarray(value), index)
    interpreter.invoke()
    values: dict[int, np.ndarray] = {}
    for tensor in graph.tensors:
        if tensor.variable is not None:  # a resource handle in the file: TFLM's GetTensor crashes on one
            continue
        found = interpreter.GetTensor(tensor.index, 0)
        if isinstance(found, dict) and found.get("tensor_data") is not None:
            values[tensor.index] = np.array(found["tensor_data"], copy=True)
    return values


def check_no_custom_ops(model: bytes) -> None:
    """TFLM and LiteRT run no user's C kernel: a model with a CUSTOM op is compared with mcugen's
    numpy reference, which runs the custom op's Python reference, instead."""
    from ..frontend.tflite import parse_model

    custom = [op for op in parse_model(model, "model.tflite").ops if isinstance(op.options, CustomOptions)]
    if custom:
        first = custom[0]
        assert isinstance(first.options, CustomOptions)
        raise UnsupportedError(f"{first.where()}: custom code '{first.options.code}': TFLM and LiteRT cannot run "
                               "a custom op's C kernel; compare with --reference python (mcugen's reference, with "
                               "the custom op's Python reference)")


def reference_tensors(model: bytes, inputs: Sequence[np.ndarray], rounding: Rounding) -> dict[int, np.ndarray]:
    """The runtime that `rounding` reproduces, every tensor by index."""
    check_no_custom_ops(model)
    if rounding is Rounding.TFLM:
        return tflm_tensors(model, inputs)
    return litert_tensors(model, inputs)


REFERENCE_NAMES = {Rounding.TFLM: "TensorFlow Lite Micro", Rounding.LITERT: "LiteRT (reference kernels)"}
