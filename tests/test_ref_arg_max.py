"""ARG_MAX (int8, float32 -> int32): the numpy reference and the C kernel against TFLite.

Seeded random single-op models over ranks 1 to 4 and every axis (negative ones too). int8
inputs are drawn from a handful of values so that most rows hold tied maxima (TFLite keeps the
first index); float rows get ties by repeating values. A NaN case pins down the one place the
runtimes differ (TFLM's plain '>' against LiteRT's NaN-skipping compare). int16 and int64
outputs are refused, as TFLM has no kernel for them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, run_oracle, run_tflm

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.support import check_op

GEOMETRIES = [((7,), 0), ((5, 9), 1), ((6, 4), 0), ((3, 5, 7), -1), ((4, 6, 5), 1),
              ((2, 5, 4, 6), 3), ((2, 5, 4, 6), -3), ((3, 4, 5, 2), 0), ((2, 3, 8, 4), 2)]


@dataclass(frozen=True)
class ArgMaxCase:
    shape: tuple[int, ...]
    axis: int
    dtype: str
    seed: int

    @property
    def output_shape(self) -> tuple[int, ...]:
        axis = self.axis % len(self.shape)
        return self.shape[:axis] + self.shape[axis + 1:]

    @property
    def id(self) -> str:
        return f"argmax{self.seed}-{self.dtype}-{'x'.join(map(str, self.shape))}-axis{self.axis}"


CASES = [ArgMaxCase(shape, axis, dtype, 900 + 10 * i + j)
         for i, (shape, axis) in enumerate(GEOMETRIES)
         for j, dtype in enumerate(("int8", "float32"))]


def build_model(case: ArgMaxCase, output_type: str = "int32", dtype: str | None = None) -> bytes:
    dtype = dtype or case.dtype
    quant = {} if dtype == "float32" else {"scale": 0.1, "zero_point": -2}
    b = ModelBuilder(case.id)
    x = b.add_tensor("x", case.shape, dtype, **quant)
    axis = b.add_tensor("axis", (1,), "int32", data=np.array([case.axis], np.int32))
    y = b.add_tensor("y", case.output_shape, output_type.lower())
    b.add_op("ARG_MAX", [x, axis], [y], {"output_type": output_type.upper()})
    b.set_io([x], [y])
    return b.build()


def random_input(case: ArgMaxCase) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    if case.dtype == "float32":
        pool = (rng.standard_normal(5) * 3).astype(np.float32)  # repeated values: ties
        return rng.choice(pool, size=case.shape)
    return rng.integers(-3, 3, size=case.shape).astype(np.int8) * 40


def spread(case: ArgMaxCase) -> int:
    size = case.shape[case.axis % len(case.shape)]
    outputs = int(np.prod(case.output_shape, dtype=np.int64))
    return min(3 if outputs >= 10 else 2, size, outputs)


@pytest.mark.parametrize("case, rounding", [pytest.param(c, r, id=f"{c.id}-{r.value}")
                                            for c in CASES for r in Rounding])
def test_reference_matches_oracle(case: ArgMaxCase, rounding: Rounding) -> None:
    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding, min_distinct=spread(case))
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert_exact(actual, expected)


def nan_case() -> tuple[ArgMaxCase, np.ndarray]:
    """Rows led by NaN, with NaN inside, and all NaN."""
    case = ArgMaxCase((4, 3), 1, "float32", 990)
    x = np.array([[np.nan, 1.0, 2.0], [0.5, np.nan, 3.0], [np.nan, np.nan, np.nan],
                  [1.0, 4.0, np.nan]], np.float32)
    return case, x


def test_nan_handling_differs_between_runtimes() -> None:
    """TFLM keeps a leading NaN (index 0); LiteRT skips NaNs (index 2). Each mode follows its
    runtime, in the reference and in the generated C."""
    from mcugen.toolchain.host import run_tflite_bytes

    case, x = nan_case()
    model = build_model(case)
    graph = parse_model(model, "nan.tflite")
    results = {}
    for rounding in Rounding:
        (expected,) = run_oracle(model, [x], rounding)
        (reference,) = run_outputs(graph, [x], rounding)
        (compiled,) = run_tflite_bytes(model, [x], rounding)
        assert_exact(reference, expected)
        assert_exact(compiled, expected)
        results[rounding] = expected
    assert results[Rounding.TFLM][0] == 0 and results[Rounding.LITERT][0] == 2


@pytest.mark.parametrize("dtype, output_type", [("int16", "INT32"), ("int8", "INT64")])
def test_unsupported_types_are_refused_like_tflm(dtype: str, output_type: str) -> None:
    case = CASES[2]
    model = build_model(case, output_type=output_type, dtype=dtype)
    x = np.zeros(case.shape, np.dtype(dtype))
    with pytest.raises(Exception, match="[Ii]nvo"):
        run_tflm(model, [x])
    (op,) = parse_model(model, "refused.tflite").ops
    assert check_op(op)


def c_cases() -> list:
    """Three models through the generated C: int8 over the middle axis of a 4-D tensor
    (sanitized) and over the last axis, one rounding each (the int8 compare is the same in both
    modes), and float32 over axis 0 in both (the NaN test covers the modes' difference)."""
    picked = [(CASES[12], True, (Rounding.TFLM,)), (CASES[6], False, (Rounding.LITERT,)),
              (CASES[15], False, tuple(Rounding))]
    return [pytest.param(c, r, s, id=f"{c.id}-{r.value}{'-asan' if s else ''}")
            for c, s, roundings in picked for r in roundings]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernel_matches_oracle(case: ArgMaxCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding, min_distinct=spread(case))
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)
