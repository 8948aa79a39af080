"""Helpers for the activation, unary, quantize and softmax tests: single-op and multi-output
models, random quantization, every-value inputs, and a bit-exact comparison that also holds
float32 outputs to the bit (NaN and -0.0 included)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from modelbuilder import ModelBuilder

Quant = tuple[float, int] | None

INT8_ALL = np.arange(-128, 128, dtype=np.int8)
# Every 7th int16 value plus both ends, zero and its neighbours.
INT16_GRID = np.concatenate([np.arange(-32768, 32768, 7), [32767, -32768, 0, 1, -1]]).astype(np.int16)


@dataclass(frozen=True)
class Unary:
    """One single-input, single-output op with its tensors' dtypes and quantization."""

    op: str
    in_dtype: str
    out_dtype: str
    in_quant: Quant = None
    out_quant: Quant = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        def q(quant: Quant) -> str:
            return "" if quant is None else f"[{quant[0]:.3g},{quant[1]}]"

        extra = "".join(f"-{k}{v:.3g}" for k, v in self.options.items())
        return f"{self.op}-{self.in_dtype}{q(self.in_quant)}-{self.out_dtype}{q(self.out_quant)}{extra}"


def _tensor(b: ModelBuilder, name: str, shape: Sequence[int], dtype: str, quant: Quant) -> int:
    if quant is None:
        return b.add_tensor(name, shape, dtype)
    return b.add_tensor(name, shape, dtype, scale=quant[0], zero_point=quant[1])


def unary_model(case: Unary, shape: Sequence[int]) -> bytes:
    b = ModelBuilder(case.id)
    x = _tensor(b, "x", shape, case.in_dtype, case.in_quant)
    y = _tensor(b, "y", shape, case.out_dtype, case.out_quant)
    b.add_op(case.op, [x], [y], case.options or None)
    b.set_io([x], [y])
    return b.build()


def fan_out_model(name: str, in_dtype: str, in_quant: Quant, cases: Sequence[Unary],
                  shape: Sequence[int]) -> bytes:
    """One input feeding every case's op, each op's result a graph output (in case order)."""
    b = ModelBuilder(name)
    x = _tensor(b, "x", shape, in_dtype, in_quant)
    outputs = []
    for i, case in enumerate(cases):
        assert case.in_dtype == in_dtype and case.in_quant == in_quant
        y = _tensor(b, f"y{i}_{case.op.lower()}", shape, case.out_dtype, case.out_quant)
        b.add_op(case.op, [x], [y], case.options or None)
        outputs.append(y)
    b.set_io([x], outputs)
    return b.build()


def random_scale(rng: np.random.Generator, low: float, high: float) -> float:
    return float(np.exp(rng.uniform(np.log(low), np.log(high))))


def random_int8_quant(rng: np.random.Generator, low: float = 0.005, high: float = 0.3) -> tuple[float, int]:
    return random_scale(rng, low, high), int(rng.integers(-128, 128))


def random_int16_quant(rng: np.random.Generator, low: float = 2e-5, high: float = 1e-3) -> tuple[float, int]:
    return random_scale(rng, low, high), 0


def bits(array: np.ndarray) -> np.ndarray:
    """The array to compare exactly: float32 as its bit patterns."""
    return array.view(np.int32) if array.dtype == np.float32 else array


def assert_same_bits(actual: np.ndarray, expected: np.ndarray, what: str = "") -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, what
    mismatches = int(np.sum(bits(actual) != bits(expected)))
    assert mismatches == 0, f"{what}: {mismatches} of {expected.size} outputs differ"


def assert_spread(expected: np.ndarray, minimum: int, what: str = "") -> None:
    """The oracle's output takes several values, so that a match is not vacuous."""
    assert len(np.unique(expected)) >= minimum, f"{what}: oracle output has no spread"
