"""ADD (int8): the numpy reference and the C kernel against TFLite.

Seeded random single-op models cover equal shapes and every broadcast form (per-channel
[C] and [1,1,1,C], scalar-like [1] on either side, [1,H,W,1], both inputs broadcasting at
once, ranks 1 to 5), input scales that differ by up to three orders of magnitude, a constant
second input, zero points across the int8 range and every clamp activation. Power-of-two
scales make the rescales exact, so that ties tell the roundings apart. Every comparison is
exact, in both roundings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, single_rounding_requantize

from mcugen.frontend.tflite import parse_model
from mcugen.ops.elementwise.prepare import broadcast_loop
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")

# (input 1 shape, input 2 shape): the output is their broadcast.
SHAPES = [
    ((1, 8, 8, 6), (1, 8, 8, 6)),
    ((1, 7, 5, 8), (8,)),
    ((1, 7, 5, 8), (1, 1, 1, 8)),
    ((1, 6, 9, 4), (1,)),
    ((1,), (1, 6, 9, 4)),
    ((1, 1, 1, 8), (1, 7, 5, 8)),
    ((2, 5, 6, 3), (1, 5, 6, 1)),
    ((1, 6, 1, 5), (1, 1, 7, 5)),
    ((2, 1, 6, 4), (1, 3, 1, 4)),
    ((9, 10), (10,)),
    ((4, 1, 6), (5, 1)),
    ((40,), (40,)),
    ((2, 3, 1, 4, 5), (3, 2, 1, 5)),
]


@dataclass(frozen=True)
class AddCase:
    shape1: tuple[int, ...]
    shape2: tuple[int, ...]
    scale1: float
    scale2: float
    output_scale: float
    zero_points: tuple[int, int, int]
    activation: str
    seed: int
    constant2: bool = False

    @property
    def output_shape(self) -> tuple[int, ...]:
        return tuple(np.broadcast_shapes(self.shape1, self.shape2))

    @property
    def id(self) -> str:
        dims = lambda s: "x".join(map(str, s))
        const = "-const" if self.constant2 else ""
        return (f"add{self.seed}-{dims(self.shape1)}+{dims(self.shape2)}-s{self.scale1:.3g}"
                f"+{self.scale2:.3g}-{self.activation}{const}")


# The larger input scale per activation: its int8 span roughly fills the clamp range.
BIG_SCALE = {"NONE": (0.01, 0.1), "RELU": (0.01, 0.1), "RELU6": (0.04, 0.05),
             "RELU_N1_TO_1": (0.007, 0.009)}


def random_cases(count: int, first_seed: int) -> list[AddCase]:
    cases = []
    for i in range(count):
        seed = first_seed + i
        rng = np.random.default_rng(seed)
        shape1, shape2 = SHAPES[i % len(SHAPES)]
        activation = ACTIVATIONS[i % 4]
        # Input scales 1 to 1000 apart; the input with more elements gets the larger one, so
        # that it drives the output's spread.
        big = float(rng.uniform(*BIG_SCALE[activation]))
        small = big / float(10.0 ** rng.uniform(0.0, 3.0))
        scale1, scale2 = (big, small) if np.prod(shape1) >= np.prod(shape2) else (small, big)
        # The output covers the sum's range in about 200 steps (the clamped ones: 6.0 in 150
        # steps, +-1.0 in 160).
        output_scale = {"RELU6": 6.0 / 150.0, "RELU_N1_TO_1": 1.0 / 80.0}.get(
            activation, 256.0 * (scale1 + scale2) / 200.0 * float(rng.uniform(0.7, 1.3)))
        output_zero_point = {"RELU": -100, "RELU6": -120, "RELU_N1_TO_1": 0}.get(
            activation, int(rng.integers(-30, 31)))
        # Clamped outputs need inputs centred near zero; unclamped ones take any zero point.
        zp_limit = 128 if activation == "NONE" else 40
        zero_points = (int(rng.integers(-zp_limit, zp_limit)), int(rng.integers(-zp_limit, zp_limit)),
                       output_zero_point)
        # A constant per-channel second input (a folded bias) on some of the [C] broadcasts.
        cases.append(AddCase(shape1, shape2, scale1, scale2, output_scale, zero_points,
                             activation, seed, constant2=(i // len(SHAPES)) % 2 == 0 and i % len(SHAPES) in (1, 2)))
    return cases


def tie_cases() -> list[AddCase]:
    """Power-of-two scales: the output is (a + b) / 4 exactly, so a quarter of all pairs are
    ties (x.5), where double rounding goes away from zero and single rounding goes up."""
    return [
        AddCase((16, 16), (16, 16), 2.0**-4, 2.0**-4, 2.0**-2, (0, 0, 0), "NONE", 90),
        AddCase((1, 8, 8, 8), (8,), 2.0**-5, 2.0**-3, 2.0**-1, (3, -7, 1), "NONE", 91),
    ]


CASES = random_cases(40, 500) + tie_cases()


def random_inputs(case: AddCase) -> list[np.ndarray]:
    rng = np.random.default_rng(case.seed + 10_000)
    return [rng.integers(-128, 128, size=s, dtype=np.int8) for s in (case.shape1, case.shape2)]


def build_model(case: AddCase, constant: np.ndarray | None = None) -> bytes:
    b = ModelBuilder(case.id)
    zp1, zp2, zpo = case.zero_points
    a = b.add_tensor("a", case.shape1, "int8", scale=case.scale1, zero_point=zp1)
    c = b.add_tensor("b", case.shape2, "int8", scale=case.scale2, zero_point=zp2, data=constant)
    y = b.add_tensor("y", case.output_shape, "int8", scale=case.output_scale, zero_point=zpo)
    b.add_op("ADD", [a, c], [y], {"fused_activation_function": case.activation})
    b.set_io([a] if constant is not None else [a, c], [y])
    return b.build()


def model_and_inputs(case: AddCase) -> tuple[bytes, list[np.ndarray]]:
    first, second = random_inputs(case)
    if case.constant2:
        return build_model(case, constant=second), [first]
    return build_model(case), [first, second]




@pytest.mark.parametrize("case, rounding",
                         [pytest.param(c, r, id=f"{c.id}-{r.value}") for c in CASES for r in Rounding])
def test_reference_matches_oracle(case: AddCase, rounding: Rounding) -> None:
    model, inputs = model_and_inputs(case)
    expected = oracle_output(model, inputs, rounding)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), inputs, rounding)
    assert_exact(actual, expected)


def test_both_runtimes_round_add_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteRT 2.3.0's int8 ADD rounds twice like TFLM; single rounding misses its ties.

    Guards the measured fact behind elementwise's double-rounding rescales in both modes.
    """
    from mcugen.ops.elementwise import reference as elementwise

    for case in tie_cases():
        model, inputs = model_and_inputs(case)
        graph = parse_model(model, "ties.tflite")
        for rounding in Rounding:
            expected = oracle_output(model, inputs, rounding)
            (double,) = run_outputs(graph, inputs, rounding)
            monkeypatch.setattr(elementwise, "multiply_by_quantized_multiplier", single_rounding_requantize)
            (single,) = run_outputs(graph, inputs, rounding)
            monkeypatch.undo()
            assert np.array_equal(double, expected), case.id
            assert np.sum(single != expected) > 0, case.id


@pytest.mark.parametrize("shape1, shape2, levels", [
    ((1, 8, 8, 6), (1, 8, 8, 6), [(384, 1, 1)]),
    ((1, 7, 5, 8), (8,), [(35, 8, 0), (8, 1, 1)]),
    ((1, 6, 9, 4), (1,), [(216, 1, 0)]),
    ((2, 5, 6, 3), (1, 5, 6, 1), [(2, 90, 0), (30, 3, 1), (3, 1, 0)]),
    ((1, 6, 1, 5), (1, 1, 7, 5), [(6, 5, 0), (7, 0, 5), (5, 1, 1)]),
    ((1,), (1,), [(1, 0, 0)]),
])
def test_broadcast_loop_merges_levels(shape1, shape2, levels) -> None:
    """Broadcasts collapse to few loop levels, each with the inputs' element strides."""
    loop = broadcast_loop(shape1, shape2, np.broadcast_shapes(shape1, shape2))
    used = [(n, a, b) for n, a, b in zip(loop.extent, loop.input1_stride, loop.input2_stride)
            if n != 1 or (a, b) != (0, 0)] or [(1, 0, 0)]
    assert used == levels


def c_cases() -> list:
    """Three models through the generated C, both roundings: per-channel broadcast with a
    constant, both inputs broadcasting (sanitized), and the tie case."""
    four_d = [c for c in CASES if len(c.shape1) <= 4 and len(c.shape2) <= 4]
    picked = [(four_d[1], False), (four_d[8], True), (tie_cases()[1], False)]
    return [pytest.param(c, r, s, id=f"{c.id}-{r.value}{'-asan' if s else ''}")
            for c, s in picked for r in Rounding]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernel_matches_oracle(case: AddCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, inputs = model_and_inputs(case)
    expected = oracle_output(model, inputs, rounding)
    (actual,) = run_tflite_bytes(model, inputs, rounding, sanitize=sanitize)
    assert_exact(actual, expected)
