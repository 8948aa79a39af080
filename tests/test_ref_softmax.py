"""SOFTMAX (int8 -> int8, int8 -> int16, int16 -> int16, float32): the numpy reference and the
C kernel against TFLite.

Seeded random single-op models cover ranks 1 to 4 (softmax over the last axis), betas 1.0,
0.5 and 2.0, input scales from 0.01 to 0.5 (where the converter puts them) and a few very
large ones (beta * scale > 16, where TFLM's and LiteRT's Prepare cap the multiplier
differently), zero points across the int8 range, int8 output with TFLite's fixed
quantization (scale 1/256, zero point -128) and int16 output (1/65536, -32768). The
fixed-point exp and reciprocal are also checked directly against their real values.
int16 input (scales 1e-4 to 3e-3, betas 0.5 to 2) uses TFLite's exp and 1/(1+x) tables, which
TFLM builds in float and LiteRT in double (they differ in a few entries, and the input
multiplier differs too: TFLM forms scale * beta in double, LiteRT in float). float32 softmax
is compared bit for bit. Every comparison with TFLite is exact, in both roundings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output

from mcugen.errors import ModelError
from mcugen.frontend.tflite import parse_model
from mcugen.ops.activation.reference import exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

SHAPES = [(10,), (4, 12), (2, 5, 7), (1, 2, 3, 16), (8, 100), (3, 1001)]
BETAS = (1.0, 0.5, 2.0)


@dataclass(frozen=True)
class SoftmaxCase:
    shape: tuple[int, ...]
    beta: float
    input_scale: float
    zero_point: int
    output_type: str  # "int8" or "int16"
    seed: int
    min_distinct: int = 5

    @property
    def output_quant(self) -> tuple[float, int]:
        return (1.0 / 256.0, -128) if self.output_type == "int8" else (1.0 / 65536.0, -32768)

    @property
    def id(self) -> str:
        dims = "x".join(map(str, self.shape))
        return (f"softmax{self.seed}-{dims}-beta{self.beta}-s{self.input_scale:.3g}"
                f"-zp{self.zero_point}-{self.output_type}")


def random_cases(count: int, first_seed: int) -> list[SoftmaxCase]:
    cases = []
    for i in range(count):
        seed = first_seed + i
        rng = np.random.default_rng(seed)
        cases.append(SoftmaxCase(
            shape=SHAPES[i % len(SHAPES)],
            beta=BETAS[i % len(BETAS)],
            input_scale=float(np.exp(rng.uniform(np.log(0.01), np.log(0.5)))),
            zero_point=int(rng.integers(-128, 128)),
            output_type="int16" if i % 4 == 3 else "int8",
            seed=seed,
        ))
    return cases


def special_cases() -> list[SoftmaxCase]:
    return [
        # beta * scale above 16 and 32: TFLM caps the multiplier at 2^31 - 1, LiteRT at
        # 2^30 - 1 (diff_min 0 vs -1); only the row maxima survive, so few distinct outputs.
        SoftmaxCase((6, 4), 1.0, 20.0, 0, "int8", 790, min_distinct=2),
        SoftmaxCase((6, 4), 2.0, 30.0, 5, "int16", 791, min_distinct=2),
        # Rows that are constant, or hold several tied maxima.
        SoftmaxCase((9, 6), 1.0, 0.1, -128, "int8", 792, min_distinct=3),
    ]


CASES = random_cases(30, 700) + special_cases()


def build_model(case: SoftmaxCase) -> bytes:
    b = ModelBuilder(case.id)
    x = b.add_tensor("x", case.shape, "int8", scale=case.input_scale, zero_point=case.zero_point)
    scale, zero_point = case.output_quant
    y = b.add_tensor("y", case.shape, case.output_type, scale=scale, zero_point=zero_point)
    b.add_op("SOFTMAX", [x], [y], {"beta": case.beta})
    b.set_io([x], [y])
    return b.build()


def random_input(case: SoftmaxCase) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    if case.seed == 792:  # constant rows and rows of tied maxima
        rows = rng.integers(-128, 128, size=(case.shape[0], 1)).repeat(case.shape[1], axis=1)
        rows[::3, ::2] -= 40
        return np.clip(rows, -128, 127).astype(np.int8)
    if case.beta * case.input_scale > 1.0:  # one step is worth e^-16 or less: near-ties only
        return rng.integers(-3, 4, size=case.shape).astype(np.int8)
    # Logits whose beta-scaled spread is a few units, as in a classifier (more for long rows,
    # so that some elements still stand out), within the int8 range.
    real_spread = 2.0 if case.shape[-1] <= 100 else 5.0
    steps = min(real_spread / (case.beta * case.input_scale), 50.0)
    values = rng.normal(0.0, steps, size=case.shape)
    return np.clip(np.round(values), -128, 127).astype(np.int8)




@pytest.mark.parametrize("case, rounding",
                         [pytest.param(c, r, id=f"{c.id}-{r.value}") for c in CASES for r in Rounding])
def test_reference_matches_oracle(case: SoftmaxCase, rounding: Rounding) -> None:
    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding, case.min_distinct)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert_exact(actual, expected)


def test_exp_on_negative_values_is_exp() -> None:
    """gemmlowp's exp, Q5.26 -> Q0.31, is within 5e-7 of exp(x) (a sanity check: the
    bits are held to TFLite by the oracle tests)."""
    raw = np.concatenate([-np.arange(0, 1 << 14) * 8192, [-(1 << 31) + 1, -1, -(1 << 26)]])
    exact = np.exp(raw / 2.0**26)
    assert np.max(np.abs(exp_on_negative_values(raw) / 2.0**31 - exact)) < 5e-7
    assert exp_on_negative_values(np.array([0]))[0] == (1 << 31) - 1


def test_one_over_one_plus_x_is_reciprocal() -> None:
    raw = np.arange(0, 1 << 31, 1 << 17)
    exact = 1.0 / (1.0 + raw / 2.0**31)
    assert np.max(np.abs(one_over_one_plus_x_for_x_in_0_1(raw) / 2.0**31 - exact)) < 1e-8


def c_cases() -> list:
    """Four int8-input models through the generated C, both roundings: a classifier row, rank 3
    (sanitized), the capped multiplier, and int16 output."""
    int8 = [c for c in CASES if c.output_type == "int8"]
    int16 = [c for c in CASES if c.output_type == "int16"]
    picked = [(int8[1], False), (int8[2], True), (special_cases()[0], False), (int16[0], False)]
    return [pytest.param(c, r, s, id=f"{c.id}-{r.value}{'-asan' if s else ''}")
            for c, s in picked for r in Rounding]



def test_rules_refuse_float_rows_beyond_the_kernels_int() -> None:
    """float32 rows longer than 2^30 are a support rule (the emitter used to refuse them only
    when writing the C). Validation refuses such a tensor first (over 2^31 bytes); the rule
    itself is checked on the decoded graph, before validation."""
    from mcugen.frontend.tflite import decode_model
    from mcugen.support import check_op

    b = ModelBuilder("wide_float")
    x = b.add_tensor("x", [1, (1 << 30) + 1], "float32")
    y = b.add_tensor("y", [1, (1 << 30) + 1], "float32")
    b.add_op("SOFTMAX", [x], [y], {"beta": 1.0})
    b.set_io([x], [y])
    with pytest.raises(ModelError, match="4294967300 bytes"):
        parse_model(b.build(), "wide_float.tflite")
    problems = check_op(decode_model(b.build(), "wide_float.tflite").ops[0])
    assert len(problems) == 1 and problems[0].endswith(f"Got: rows of {(1 << 30) + 1} elements")


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernel_matches_oracle(case: SoftmaxCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding, case.min_distinct)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)


# --- int16 and float32 softmax -------------------------------------------------------------


@dataclass(frozen=True)
class WideCase:
    shape: tuple[int, ...]
    beta: float
    dtype: str  # "int16" or "float32"
    input_scale: float
    seed: int

    @property
    def id(self) -> str:
        return f"softmax-{self.dtype}-{'x'.join(map(str, self.shape))}-beta{self.beta}-s{self.input_scale:.3g}"


def wide_cases() -> list[WideCase]:
    rng = np.random.default_rng(880)
    cases = []
    for i in range(8):
        shape = SHAPES[i % len(SHAPES)]
        beta = BETAS[i % len(BETAS)]
        scale = float(np.exp(rng.uniform(np.log(1e-4), np.log(3e-3))))
        cases += [WideCase(shape, beta, "int16", scale, 880 + i), WideCase(shape, beta, "float32", 1.0, 890 + i)]
    return cases


def wide_model(case: WideCase) -> bytes:
    b = ModelBuilder(case.id)
    if case.dtype == "int16":
        x = b.add_tensor("x", case.shape, "int16", scale=case.input_scale, zero_point=0)
        y = b.add_tensor("y", case.shape, "int16", scale=1.0 / 32768.0, zero_point=0)
    else:
        x = b.add_tensor("x", case.shape, "float32")
        y = b.add_tensor("y", case.shape, "float32")
    b.add_op("SOFTMAX", [x], [y], {"beta": case.beta})
    b.set_io([x], [y])
    return b.build()


def wide_input(case: WideCase) -> np.ndarray:
    """Logits spread over a few units of beta-scaled input, with ties at the row maxima."""
    rng = np.random.default_rng(case.seed)
    spread = (2.0 if case.shape[-1] <= 100 else 5.0) / (case.beta * case.input_scale)
    values = rng.normal(0.0, spread, size=case.shape)
    values[..., 1] = values.max(axis=-1)
    if case.dtype == "float32":
        return values.astype(np.float32)
    return np.clip(np.round(values), -32768, 32767).astype(np.int16)


@pytest.mark.parametrize("case, rounding",
                         [pytest.param(c, r, id=f"{c.id}-{r.value}") for c in wide_cases() for r in Rounding])
def test_wide_reference_matches_oracle(case: WideCase, rounding: Rounding) -> None:
    model, x = wide_model(case), wide_input(case)
    expected = oracle_output(model, [x], rounding, min(5, case.shape[-1] - 1))
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert np.array_equal(actual.view(np.int32) if actual.dtype == np.float32 else actual,
                          expected.view(np.int32) if expected.dtype == np.float32 else expected)


def test_int16_tables_differ_between_runtimes() -> None:
    """TFLM's float-built 1/(1+x) table and LiteRT's double-built one are not the same table:
    each mode must use its own."""
    from mcugen.ops.activation.prepare import softmax_int16_params

    op = parse_model(wide_model(wide_cases()[0]), "t.tflite").ops[0]
    tflm = softmax_int16_params(op, Rounding.TFLM)
    litert = softmax_int16_params(op, Rounding.LITERT)
    assert not np.array_equal(tflm.one_over_one_plus_x_lut, litert.one_over_one_plus_x_lut)


@pytest.mark.parametrize("case, rounding, sanitize",
                         [pytest.param(wide_cases()[2], Rounding.TFLM, True, id="int16-tflm-asan"),
                          pytest.param(wide_cases()[2], Rounding.LITERT, False, id="int16-litert"),
                          pytest.param(wide_cases()[5], Rounding.TFLM, False, id="float32")])
def test_wide_c_kernel_matches_oracle(case: WideCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = wide_model(case), wide_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert actual.dtype == expected.dtype
    assert np.array_equal(actual.view(np.int32) if actual.dtype == np.float32 else actual,
                          expected.view(np.int32) if expected.dtype == np.float32 else expected)


def test_int8_rows_whose_exponentials_sum_past_512_give_the_rounded_answer() -> None:
    """A 1000-class int8 classifier with close logits (input scale 0.005): the row's sum of
    exponentials reaches 512, where TFLM and LiteRT fail their `exponent <= 31` check and abort
    (so no runtime is run here) and mcugen's kernel once returned MCUGEN_ARG_ERROR at invoke.
    Every probability is then at most 1/512, which the output scale of 1/256 rounds to 0: the
    C and the reference both give that, and agree with a float softmax to the step."""
    from mcugen.toolchain.host import run_tflite_bytes

    b = ModelBuilder()
    x = b.add_tensor("logits", [2, 1000], "int8", scale=0.005, zero_point=0)
    y = b.add_tensor("probs", [2, 1000], "int8", scale=1 / 256, zero_point=-128)
    b.add_op("SOFTMAX", [x], [y], {"beta": 1.0})
    b.set_io([x], [y])
    model = b.build()
    logits = np.random.default_rng(1000).integers(-128, 128, size=(2, 1000)).astype(np.int8)
    exact = np.exp(logits * 0.005) / np.exp(logits * 0.005).sum(axis=-1, keepdims=True)
    assert exact.max() < 1 / 512  # past TFLite's limit
    for rounding in Rounding:
        (reference,) = run_outputs(parse_model(model, "softmax.tflite"), [logits], rounding)
        (compiled,) = run_tflite_bytes(model, [logits], rounding, sanitize=True)
        assert_exact(compiled, reference)
        assert np.array_equal(reference, (np.round(exact * 256) - 128).astype(np.int8))
