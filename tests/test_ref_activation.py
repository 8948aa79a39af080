"""LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU, RSQRT, NEG and ABS: the numpy reference
and the generated C against TFLite, bit-exact in both roundings.

int8 ops see every input value, with seeded random scales and zero points; int16 ops a grid of
every 7th value plus the ends; float ops normal values plus zeros, signs and saturation points.
Pinned cases: scale ratios of exactly 1/2 (rounding ties), a negative LEAKY_RELU alpha, equal
input and output scales for ABS (no rescale), power-of-two int16 scales (the table's fast
path), an int16 scale ratio where TFLM's double and LiteRT's float quotient round differently,
and RELU6 with different input and output quantization (TFLM clamps without rescaling).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import run_litert, run_oracle, run_tflm
from unary_models import (
    INT8_ALL,
    INT16_GRID,
    Unary,
    assert_same_bits,
    assert_spread,
    random_int8_quant,
    random_int16_quant,
    random_scale,
    unary_model,
)

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.support import check_op

LOGISTIC_OUT8, TANH_OUT8, SIGMOID_OUT16 = (1 / 256, -128), (1 / 128, 0), (2.0**-15, 0)


def int8_cases() -> list[Unary]:
    rng = np.random.default_rng(1100)
    cases = []
    for _ in range(6):
        q_in = random_int8_quant(rng, 0.003, 0.5)
        q_out = random_int8_quant(rng)
        cases += [
            Unary("LOGISTIC", "int8", "int8", q_in, LOGISTIC_OUT8),
            Unary("TANH", "int8", "int8", q_in, TANH_OUT8),
            Unary("HARD_SWISH", "int8", "int8", q_in, q_out),
            Unary("RELU", "int8", "int8", q_in, q_out),
            Unary("RELU6", "int8", "int8", q_in, q_out),
            Unary("LEAKY_RELU", "int8", "int8", q_in, q_out, {"alpha": float(rng.uniform(-1.5, 1.5))}),
            Unary("ABS", "int8", "int8", q_in, q_out),
            # Outputs up to 1 / sqrt(input scale): an output scale that spans them.
            Unary("RSQRT", "int8", "int8", (q_in[0], int(rng.integers(-128, 0))),
                  (float(q_in[0] ** -0.5 / rng.uniform(60, 250)), int(rng.integers(-128, -60)))),
        ]
    tie = (0.02, 3)
    half = (0.04, -5)  # out scale twice the input scale: x / 2 lands on halves
    cases += [
        Unary("RELU", "int8", "int8", tie, half),
        Unary("RELU6", "int8", "int8", tie, half),
        Unary("RELU6", "int8", "int8", tie, tie),
        Unary("ABS", "int8", "int8", tie, half),
        Unary("ABS", "int8", "int8", tie, (0.02, -100)),  # equal scales: no rescale
        Unary("LEAKY_RELU", "int8", "int8", tie, tie, {"alpha": 0.5}),
        Unary("LEAKY_RELU", "int8", "int8", tie, half, {"alpha": -0.25}),
        Unary("HARD_SWISH", "int8", "int8", (0.1, 0), (0.05, 0)),
        # An output exponent of -16: gemmlowp's int16 mask wraps, outputs are zp +- 1.
        Unary("HARD_SWISH", "int8", "int8", (0.0010490850826970607, 48), (0.83247347472679, -115)),
        Unary("LOGISTIC", "int8", "int8", (1 / 16, 0), LOGISTIC_OUT8),
        Unary("TANH", "int8", "int8", (1 / 32, 0), TANH_OUT8),
        Unary("LOGISTIC", "int8", "int8", (1.7, 10), LOGISTIC_OUT8),  # radius of a few steps
        Unary("TANH", "int8", "int8", (0.0015, -3), TANH_OUT8),  # never saturates
    ]
    return cases


def int16_cases() -> list[Unary]:
    rng = np.random.default_rng(1600)
    cases = []
    for scale in (2.0**-12, 2.0**-11, 2.0**-13, 1 / 3000, random_scale(rng, 1e-4, 1e-3)):
        cases += [Unary("LOGISTIC", "int16", "int16", (scale, 0), SIGMOID_OUT16),
                  Unary("TANH", "int16", "int16", (scale, 0), SIGMOID_OUT16)]
    for _ in range(4):
        q_in, q_out = random_int16_quant(rng), random_int16_quant(rng)
        cases += [
            Unary("RELU", "int16", "int16", q_in, q_out),
            Unary("RELU6", "int16", "int16", q_in, q_out),
            Unary("LEAKY_RELU", "int16", "int16", q_in, q_out, {"alpha": float(rng.uniform(-1, 1))}),
            Unary("ABS", "int16", "int16", q_in, q_out),
        ]
    for _ in range(3):
        scale = random_scale(rng, 1e-5, 1e-2)
        cases.append(Unary("RSQRT", "int16", "int16", (scale, 0),
                           (float(scale ** -0.5 / rng.uniform(100, 30000)), 0)))
    cases.append(Unary("RSQRT", "int16", "int16", (0.001, 0), (0.001, 0)))  # TFLM's double scale
    ratio = ((0.00026099228538879716, 0), (0.000320127222727021, 0))
    cases += [Unary(op, "int16", "int16", *ratio) for op in ("RELU", "ABS")]
    return cases


FLOAT_OPS = [Unary(op, "float32", "float32") for op in
             ("NEG", "ABS", "RSQRT", "RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH")]
FLOAT_OPS.append(Unary("LEAKY_RELU", "float32", "float32", options={"alpha": 0.3}))


def float_input(op: str, seed: int = 1900) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = np.concatenate([
        rng.normal(0.0, 4.0, 600), rng.uniform(-20.0, 20.0, 200),
        [0.0, -0.0, 3.0, -3.0, 6.0, -9.0, 16.619047164916992188, 16.62, -9.0001, 1e-30],
    ]).astype(np.float32)
    return np.abs(values) + np.float32(1e-3) if op == "RSQRT" else values


def case_input(case: Unary) -> np.ndarray:
    if case.in_dtype == "float32":
        return float_input(case.op)
    if case.in_dtype == "int16":
        return INT16_GRID[INT16_GRID >= 0] if case.op == "RSQRT" else INT16_GRID
    if case.op == "RSQRT":  # TFLite fails the op on inputs below the zero point
        assert case.in_quant is not None
        return np.arange(case.in_quant[1], 128, dtype=np.int8)
    return INT8_ALL


def reference_output(model: bytes, x: np.ndarray, rounding: Rounding) -> np.ndarray:
    (actual,) = run_outputs(parse_model(model, "case.tflite"), [x], rounding)
    return actual


CASES = int8_cases() + int16_cases() + FLOAT_OPS


@pytest.mark.parametrize("case, rounding", [pytest.param(c, r, id=f"{c.id}-{r.value}")
                                            for c in CASES for r in Rounding])
def test_reference_matches_oracle(case: Unary, rounding: Rounding) -> None:
    x = case_input(case)
    model = unary_model(case, x.shape)
    (expected,) = run_oracle(model, [x], rounding)
    assert_spread(expected, 2, case.id)
    assert_same_bits(reference_output(model, x, rounding), expected, case.id)


def test_the_two_runtimes_differ_where_the_reference_says_so() -> None:
    """RELU6 (TFLM clamps in the input's domain), int16 ABS (TFLM's double scale ratio) and
    int16 RSQRT (TFLM per element, LiteRT a table) give different outputs in TFLM and LiteRT: both modes matter. (int8 LOGISTIC and TANH are
    computed differently, gemmlowp fixed point vs a float table, but agreed on every input for
    600 random input scales: no difference to assert.)"""
    differing = {}
    for case in CASES:
        if case.in_dtype == "float32":
            continue
        x = case_input(case)
        model = unary_model(case, x.shape)
        tflm, litert = run_tflm(model, [x])[0], run_litert(model, [x])[0]
        differing.setdefault(case.op, []).append(bool(np.any(tflm != litert)))
    assert any(differing["RELU6"]) and any(differing["ABS"]) and any(differing["RSQRT"])


@pytest.mark.parametrize("case, tflm_rejects", [
    (Unary("NEG", "int8", "int8", (0.1, 0), (0.1, 0)), True),
    (Unary("RSQRT", "int16", "int16", (0.001, 5), (0.001, 0)), True),
    (Unary("HARD_SWISH", "int16", "int16", (0.001, 0), (0.001, 0)), True),
    (Unary("LOGISTIC", "int8", "int8", (0.1, 0), (1 / 256, 0)), True),
    (Unary("LOGISTIC", "int16", "int16", (0.001, 0), (2.0**-14, 0)), True),
    (Unary("RELU", "int16", "int16", (0.001, 3), (0.001, 0)), True),
    (Unary("TANH", "int8", "int8", (0.1, 0), (1 / 256, 0)), False),  # TFLM ignores it
], ids=lambda v: v.id if isinstance(v, Unary) else str(v))
def test_rules_reject_what_tflm_cannot_run(case: Unary, tflm_rejects: bool) -> None:
    x = np.zeros(8, dtype=np.dtype(case.in_dtype))
    model = unary_model(case, x.shape)
    problems = check_op(parse_model(model, "case.tflite").ops[0])
    assert problems and all(case.op in p for p in problems)
    if tflm_rejects:
        with pytest.raises(Exception):  # noqa: B017 - any interpreter failure will do
            run_tflm(model, [x])



def test_prepare_rule_names_op_rule_and_value() -> None:
    """A refusal that needs the computed parameters is a PrepareRule: it reads 'where: rule
    Got: value', like the plain rules. (The plain rule hard_swish_scales refuses this model
    first; prepare runs only when the plain rules hold.)"""
    from mcugen.ops.activation.prepare import HARD_SWISH_OUTPUT_EXPONENT, prepare_hard_swish
    from mcugen.ops.base import DEFAULT_SETTING, RuleViolation

    case = Unary("HARD_SWISH", "int8", "int8", (0.5, 0), (0.001, 0))  # 0.5 / 128 / 0.001 > 1
    op = parse_model(unary_model(case, (8,)), "case.tflite").ops[0]
    assert any("input scale / 128 / output scale" in p for p in check_op(op))
    with pytest.raises(RuleViolation) as refused:
        prepare_hard_swish(op, DEFAULT_SETTING)
    assert refused.value.rule is HARD_SWISH_OUTPUT_EXPONENT
    assert str(refused.value).startswith(f"{op.where()}: {HARD_SWISH_OUTPUT_EXPONENT.text} Got: input scale 0.5")

# --- the generated C -------------------------------------------------------------------------


def int8_fan_out(rounding_seed: int) -> tuple[bytes, np.ndarray]:
    """Every int8 kernel in one model: x feeds each op; RSQRT reads RELU's output (>= its zero
    point, as TFLite requires)."""
    from modelbuilder import ModelBuilder

    rng = np.random.default_rng(rounding_seed)
    b = ModelBuilder("int8_activations")
    q_in = (0.06, -10)
    x = b.add_tensor("x", [256], "int8", scale=q_in[0], zero_point=q_in[1])
    specs = [("LOGISTIC", LOGISTIC_OUT8, None), ("TANH", TANH_OUT8, None),
             ("HARD_SWISH", random_int8_quant(rng), None), ("RELU", (0.03, -60), None),
             ("RELU6", random_int8_quant(rng), None), ("LEAKY_RELU", random_int8_quant(rng), {"alpha": -0.3}),
             ("ABS", random_int8_quant(rng), None)]
    outputs = []
    for i, (op, (scale, zp), options) in enumerate(specs):
        y = b.add_tensor(f"y{i}", [256], "int8", scale=scale, zero_point=zp)
        b.add_op(op, [x], [y], options)
        outputs.append(y)
    r = b.add_tensor("rsqrt", [256], "int8", scale=0.05, zero_point=-100)
    b.add_op("RSQRT", [outputs[3]], [r])
    b.set_io([x], [*outputs, r])
    return b.build(), INT8_ALL


def int16_fan_out() -> tuple[bytes, np.ndarray]:
    """Every int16 kernel in one model; RSQRT reads RELU's output."""
    from modelbuilder import ModelBuilder

    b = ModelBuilder("int16_activations")
    x = b.add_tensor("x", [INT16_GRID.size], "int16", scale=2.0**-11, zero_point=0)
    specs = [("LOGISTIC", SIGMOID_OUT16, None), ("TANH", SIGMOID_OUT16, None),
             ("RELU", (3e-4, 0), None), ("RELU6", (2e-4, 0), None),
             ("LEAKY_RELU", (4e-4, 0), {"alpha": 0.2}), ("ABS", (6e-4, 0), None)]
    outputs = []
    for i, (op, (scale, zp), options) in enumerate(specs):
        y = b.add_tensor(f"y{i}", [INT16_GRID.size], "int16", scale=scale, zero_point=zp)
        b.add_op(op, [x], [y], options)
        outputs.append(y)
    r = b.add_tensor("rsqrt", [INT16_GRID.size], "int16", scale=2e-3, zero_point=0)
    b.add_op("RSQRT", [outputs[2]], [r])  # RELU's output: no negative input
    b.set_io([x], [*outputs, r])
    return b.build(), INT16_GRID


def float_fan_out() -> tuple[bytes, np.ndarray]:
    from modelbuilder import ModelBuilder

    values = float_input("ABS")
    b = ModelBuilder("float_activations")
    x = b.add_tensor("x", [values.size], "float32")
    outputs = []
    for i, case in enumerate(FLOAT_OPS):
        y = b.add_tensor(f"y{i}", [values.size], "float32")
        b.add_op(case.op, [x], [y], case.options or None)
        outputs.append(y)
    b.set_io([x], outputs)
    return b.build(), values


def _compare_c(model: bytes, x: np.ndarray, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    expected = run_oracle(model, [x], rounding)
    actual = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    reference = run_outputs(parse_model(model, "fan_out.tflite"), [x], rounding)
    assert len(actual) == len(expected)
    for i, (a, e, ref) in enumerate(zip(actual, expected, reference)):
        if x.dtype != np.float32 or i != 2:  # RSQRT of a float 0 is +inf: few values
            assert_spread(e, 3, f"output {i}")
        assert_same_bits(a, e, f"C output {i}")
        assert_same_bits(ref, e, f"reference output {i}")


@pytest.mark.parametrize("rounding, sanitize", [(Rounding.TFLM, True), (Rounding.LITERT, False)],
                         ids=["tflm-asan", "litert"])
def test_c_int8_kernels_match_oracle(rounding: Rounding, sanitize: bool) -> None:
    _compare_c(*int8_fan_out(2200), rounding, sanitize)


@pytest.mark.parametrize("rounding, sanitize", [(Rounding.TFLM, False), (Rounding.LITERT, True)],
                         ids=["tflm", "litert-asan"])
def test_c_int16_kernels_match_oracle(rounding: Rounding, sanitize: bool) -> None:
    _compare_c(*int16_fan_out(), rounding, sanitize)


def test_c_float_kernels_match_oracle() -> None:
    """Float kernels are the same C in both modes; LOGISTIC and TANH call this libm's
    expf/tanhf, as TFLite does, so they are exact on this host."""
    _compare_c(*float_fan_out(), Rounding.TFLM, sanitize=True)


@pytest.mark.parametrize("rounding", list(Rounding), ids=lambda r: r.value)
def test_c_int8_rsqrt_saturates_like_tflite(rounding: Rounding) -> None:
    """int8 RSQRT whose small inputs give 1/sqrt beyond the output's range: the C clamps them to
    127 as TFLite does (the fan-out above never leaves the range). Every input value, from the
    zero point up (below it TFLite fails the op)."""
    from modelbuilder import ModelBuilder

    from mcugen.toolchain.host import run_tflite_bytes

    b = ModelBuilder("rsqrt_saturating")
    x = b.add_tensor("x", [256], "int8", scale=0.001, zero_point=-128)
    y = b.add_tensor("y", [256], "int8", scale=0.05, zero_point=-100)
    b.add_op("RSQRT", [x], [y])
    b.set_io([x], [y])
    model = b.build()
    (expected,) = run_oracle(model, [INT8_ALL], rounding)
    saturated = int(np.sum(expected[1:] == 127))  # input 0 (the zero point) is 127 by definition
    assert saturated >= 5, f"only {saturated} outputs saturate"
    assert_spread(expected, 50, "rsqrt")
    (actual,) = run_tflite_bytes(model, [INT8_ALL], rounding)
    assert_same_bits(actual, expected, "C rsqrt")
