"""MEAN (int8): the numpy reference and the C kernel against TFLite.

Seeded random single-op models reduce over [1, 2] (keep_dims both ways, also written [2, 1]
and [-3, 2]), [1], [2], [3], [-1], [1, 2, 3], [0, 3] and a duplicated axis, on 4-D NHWC inputs,
plus 2-D and 3-D inputs; input and output scales and zero points differ. Power-of-two scales
and counts make the rescale exact, so that ties tell the roundings apart. Every comparison is
exact, in both roundings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, single_rounding_requantize

from mcugen.codegen.ops_reduce import loop_nest
from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

# (input shape, axes) pairs, each tried with keep_dims true and false.
GEOMETRIES = [
    ((1, 6, 7, 8), (1, 2)),
    ((2, 5, 4, 6), (2, 1)),
    ((1, 3, 3, 16), (-3, 2)),
    ((1, 9, 5, 6), (1,)),
    ((2, 4, 9, 5), (2,)),
    ((1, 5, 6, 24), (3,)),
    ((1, 4, 5, 12), (-1,)),
    ((16, 3, 2, 5), (1, 2, 3)),
    ((3, 4, 5, 6), (0, 3)),
    ((1, 7, 6, 5), (1, 1)),
    ((24, 20), (1,)),
    ((6, 11, 4), (0, 2)),
]


@dataclass(frozen=True)
class MeanCase:
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    keep_dims: bool
    input_scale: float
    output_scale: float
    input_zero_point: int
    output_zero_point: int
    seed: int

    @property
    def reduced(self) -> tuple[int, ...]:
        return tuple(sorted({a % len(self.shape) for a in self.axes}))

    @property
    def count(self) -> int:
        return math.prod(self.shape[a] for a in self.reduced)

    @property
    def output_shape(self) -> tuple[int, ...]:
        if self.keep_dims:
            return tuple(1 if a in self.reduced else d for a, d in enumerate(self.shape))
        return tuple(d for a, d in enumerate(self.shape) if a not in self.reduced)

    @property
    def id(self) -> str:
        dims = "x".join(map(str, self.shape))
        axes = ",".join(map(str, self.axes))
        return f"mean{self.seed}-{dims}-axes{axes}-{'keep' if self.keep_dims else 'drop'}"


def random_cases(first_seed: int) -> list[MeanCase]:
    cases = []
    for i, (shape, axes) in enumerate(GEOMETRIES * 2):
        seed = first_seed + i
        rng = np.random.default_rng(seed)
        count = math.prod(shape[a % len(shape)] for a in set(axes))
        input_scale = float(rng.uniform(0.01, 0.1))
        input_zero_point = int(rng.integers(-128, 128))
        # A mean of `count` uniform int8 values lies about -0.5 - input_zero_point input steps
        # from zero and spreads about 74 / sqrt(count) steps. The output scale puts the spread
        # over about 20 output steps, or fewer where the offset would otherwise saturate; the
        # output zero point re-centres the offset.
        ratio = max(74.0 / math.sqrt(count) / 20.0, (abs(input_zero_point) + 0.5) / 100.0)
        output_scale = input_scale * ratio * float(rng.uniform(0.8, 1.25))
        offset = round((input_zero_point + 0.5) * input_scale / output_scale)
        output_zero_point = int(np.clip(offset + int(rng.integers(-10, 11)), -128, 127))
        cases.append(MeanCase(shape, axes, keep_dims=i < len(GEOMETRIES), input_scale=input_scale,
                              output_scale=output_scale, input_zero_point=input_zero_point,
                              output_zero_point=output_zero_point, seed=seed))
    return cases


def tie_cases() -> list[MeanCase]:
    """Equal power-of-two scales and 4 reduced elements: the output is sum / 4 exactly, so
    a quarter of the sums are ties (x.5), which double rounding sends away from zero and
    single rounding up."""
    return [
        MeanCase((1, 2, 2, 64), (1, 2), True, 2.0**-4, 2.0**-4, 3, -5, 90),
        MeanCase((2, 16, 4), (2,), False, 2.0**-6, 2.0**-6, 0, 0, 91),
    ]


CASES = random_cases(600) + tie_cases()


def build_model(case: MeanCase) -> bytes:
    b = ModelBuilder(case.id)
    x = b.add_tensor("x", case.shape, "int8", scale=case.input_scale, zero_point=case.input_zero_point)
    axes = b.add_tensor("axes", (len(case.axes),), "int32", data=np.array(case.axes, np.int32))
    y = b.add_tensor("y", case.output_shape, "int8", scale=case.output_scale,
                     zero_point=case.output_zero_point)
    b.add_op("MEAN", [x, axes], [y], {"keep_dims": case.keep_dims})
    b.set_io([x], [y])
    return b.build()


def random_input(case: MeanCase) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    return rng.integers(-128, 128, size=case.shape, dtype=np.int8)




@pytest.mark.parametrize("case, rounding",
                         [pytest.param(c, r, id=f"{c.id}-{r.value}") for c in CASES for r in Rounding])
def test_reference_matches_oracle(case: MeanCase, rounding: Rounding) -> None:
    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert_exact(actual, expected)


def test_both_runtimes_round_mean_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteRT 2.3.0's int8 MEAN rounds twice like TFLM; single rounding misses its ties.

    Guards the measured fact behind reduce's double-rounding rescale in both modes.
    """
    from mcugen.reference import reduce

    for case in tie_cases():
        model, x = build_model(case), random_input(case)
        graph = parse_model(model, "ties.tflite")
        for rounding in Rounding:
            expected = oracle_output(model, [x], rounding)
            (double,) = run_outputs(graph, [x], rounding)
            monkeypatch.setattr(reduce, "multiply_by_quantized_multiplier", single_rounding_requantize)
            (single,) = run_outputs(graph, [x], rounding)
            monkeypatch.undo()
            assert np.array_equal(double, expected), case.id
            assert np.sum(single != expected) > 0, case.id


@pytest.mark.parametrize("shape, axes, levels", [
    ((1, 6, 7, 8), (1, 2), [(42, 8)]),
    ((1, 6, 7, 8), (0, 3), [(8, 1)]),
    ((2, 6, 7, 8), (0, 1, 2), [(84, 8)]),
    ((2, 6, 7, 8), (0, 2), [(2, 336), (7, 8)]),
    ((2, 4, 5, 6), (1, 2, 3), [(120, 1)]),
    ((3, 4, 5, 6), (0, 3), [(3, 120), (6, 1)]),
    ((2, 4, 9, 5), (2,), [(9, 5)]),
])
def test_loop_nest_merges_contiguous_dimensions(shape, axes, levels) -> None:
    assert loop_nest(shape, axes) == levels


def c_cases() -> list:
    """Three models through the generated C, both roundings: the NHWC global mean, two
    separated axes (sanitized), and the tie case."""
    picked = [(CASES[0], False), (CASES[8], True), (tie_cases()[0], False)]
    return [pytest.param(c, r, s, id=f"{c.id}-{r.value}{'-asan' if s else ''}")
            for c, s in picked for r in Rounding]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernel_matches_oracle(case: MeanCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.harness import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)
