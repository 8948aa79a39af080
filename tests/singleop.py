"""Single-op models for the data-movement and shape tests: operands given by value, output
shapes taken from LiteRT (whose Prepare computes them from constant shape operands), and one
check of mcugen against the oracle of a rounding mode for every output of the op."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from modelbuilder import ModelBuilder
from oracles import assert_exact, run_oracle

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

# Quantization given to int8/int16 tensors unless a test says otherwise.
DEFAULT_QUANT = {"int8": (0.05, -3), "int16": (0.001, 0)}


@dataclass
class Operand:
    """An op input: a graph input (const=False) or a constant; quant (scale, zero point)
    defaults to DEFAULT_QUANT for int8/int16 and none otherwise."""

    value: np.ndarray
    const: bool = False
    quant: tuple[float, int] | None = None
    omit_quant: bool = False

    def quantization(self) -> tuple[float, int] | None:
        if self.omit_quant:
            return None
        return self.quant or DEFAULT_QUANT.get(self.value.dtype.name)


@dataclass
class Case:
    id: str
    op: str
    operands: list[Operand]
    options: dict[str, Any] = field(default_factory=dict)
    outputs: int = 1
    out_dtype: str | None = None  # default: the first operand's dtype
    out_quant: tuple[float, int] | None = None  # default: the first operand's
    modes: tuple[Rounding, ...] = (Rounding.TFLM, Rounding.LITERT)
    shapes: list[list[int]] | None = None  # output shapes; default: LiteRT's

    def __post_init__(self) -> None:
        self.model = build(self)

    @property
    def inputs(self) -> list[np.ndarray]:
        return [o.value for o in self.operands if not o.const]


def _tensor(b: ModelBuilder, name: str, shape: Sequence[int], dtype: str,
            quant: tuple[float, int] | None, data: np.ndarray | None = None) -> int:
    scale, zero_point = quant if quant else (None, None)
    return b.add_tensor(name, shape, dtype, scale=scale, zero_point=zero_point, data=data)


def _model(case: Case, shapes: list[Sequence[int]]) -> bytes:
    b = ModelBuilder(case.id)
    first = case.operands[0]
    out_dtype = case.out_dtype or first.value.dtype.name
    out_quant = case.out_quant or (first.quantization() if out_dtype == first.value.dtype.name else None)
    ins = [_tensor(b, f"in{i}", o.value.shape, o.value.dtype.name, o.quantization(),
                   o.value if o.const else None) for i, o in enumerate(case.operands)]
    outs = [_tensor(b, f"out{i}", shapes[i], out_dtype, out_quant) for i in range(case.outputs)]
    b.add_op(case.op, ins, outs, case.options)
    b.set_io([t for t, o in zip(ins, case.operands) if not o.const], outs)
    return b.build()


def build(case: Case) -> bytes:
    """The model with the given output shapes, or the ones LiteRT computes for it."""
    if case.shapes is not None:
        return _model(case, case.shapes)
    draft = _model(case, [[1]] * case.outputs)
    interpreter = Interpreter(model_content=draft, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    shapes = [list(d["shape"]) for d in interpreter.get_output_details()]
    return _model(case, shapes)


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return rng.normal(0.0, 3.0, size=shape).astype(np.float32)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dtype)
    low, high = max(int(info.min), -(2**40)), min(int(info.max), 2**40)
    return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)


def check_reference(case: Case, rounding: Rounding) -> None:
    """mcugen's numpy reference gives the oracle's outputs exactly, and the outputs have a
    spread (a sliced-away or constant output would compare equal vacuously)."""
    expected = run_oracle(case.model, case.inputs, rounding)
    actual = run_outputs(parse_model(case.model, case.id), case.inputs, rounding)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_exact(a, e)
    values = np.concatenate([e.ravel() for e in expected])
    wanted = min(6 if values.dtype != bool else 2, (values.size + 1) // 4 + 1)
    assert len(np.unique(values)) >= wanted, "oracle output has no spread"


def check_compiled(case: Case, rounding: Rounding, sanitize: bool = False) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    expected = run_oracle(case.model, case.inputs, rounding)
    actual = run_tflite_bytes(case.model, case.inputs, rounding, sanitize=sanitize)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_exact(a, e)
