"""FULLY_CONNECTED: the numpy reference and the C kernel against TFLM and LiteRT, exactly.

Random single-op models cover inputs of rank 2 to 4 (flattened as TFLite does), keep_num_dims,
batch 1 and 2, per-channel and per-tensor weights (per-tensor with a non-zero weight zero
point, which both runtimes subtract), every clamp activation, input zero points from -128 to
127 and a missing bias. Power-of-two scales make the rescale exact, so ties are common: LiteRT
rounds them away from zero in double precision, single rounding would send them up.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, run_oracle, single_rounding_requantize

from mcugen.frontend.tflite import parse_model
from mcugen.ir import Op
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
INPUT_ZERO_POINTS = (-128, 0, 9, 127, -61, 40)


@dataclass(frozen=True)
class FcCase:
    input_shape: tuple[int, ...]
    units: int
    keep_num_dims: bool
    activation: str
    per_channel: bool
    input_zero_point: int
    weight_zero_point: int  # per-tensor weights only
    output_zero_point: int
    seed: int
    bias: bool = True
    pow2_scales: bool = False

    @property
    def depth(self) -> int:
        return self.input_shape[-1]

    @property
    def id(self) -> str:
        quant = "pc" if self.per_channel else f"pt{self.weight_zero_point}"
        extra = ("-keep" if self.keep_num_dims else "") + ("-nobias" if not self.bias else "")
        extra += "-pow2" if self.pow2_scales else ""
        shape = "x".join(map(str, self.input_shape))
        zero_point = self.input_zero_point
        return (
            f"fc{self.seed}-{shape}-u{self.units}-{self.activation}-{quant}-zp{zero_point}{extra}"
        )

    def output_shape(self) -> tuple[int, ...]:
        if self.keep_num_dims:
            return (*self.input_shape[:-1], self.units)
        batch = int(np.prod(self.input_shape)) // self.depth
        return (batch, self.units)


INPUT_SHAPES = ((1, 37), (2, 64), (1, 3, 5, 8), (2, 7, 9), (1, 4, 4, 2), (3, 16), (1, 1, 1, 130))


def random_cases(count: int, first_seed: int) -> list[FcCase]:
    cases = []
    for i in range(count):
        rng = np.random.default_rng(first_seed + i)
        shape = INPUT_SHAPES[i % len(INPUT_SHAPES)]
        per_channel = i % 3 != 1
        cases.append(
            FcCase(
                input_shape=shape,
                units=int(rng.integers(12, 33)),
                keep_num_dims=len(shape) > 2 and i % 2 == 0,
                activation=ACTIVATIONS[i % 4],
                per_channel=per_channel,
                input_zero_point=INPUT_ZERO_POINTS[i % len(INPUT_ZERO_POINTS)],
                weight_zero_point=0 if per_channel else int(rng.integers(-9, 10)),
                output_zero_point=int(rng.integers(-20, 21)),
                seed=first_seed + i,
            )
        )
    return cases


def special_cases() -> list[FcCase]:
    base = FcCase((2, 40), 16, False, "NONE", True, -128, 0, 5, 500, pow2_scales=True)
    return [
        base,
        replace(base, seed=501, per_channel=False, weight_zero_point=0, input_zero_point=3),
        replace(base, seed=502, per_channel=False, weight_zero_point=-2, input_zero_point=-5),
        replace(base, seed=503, pow2_scales=False, bias=False, activation="RELU"),
        replace(
            base, seed=504, pow2_scales=False, bias=False, per_channel=False, weight_zero_point=4
        ),
        # A deep accumulation, as in the autoencoder (640 inputs).
        replace(
            base, seed=505, pow2_scales=False, input_shape=(1, 640), units=32, activation="RELU"
        ),
    ]


CASES = random_cases(24, 400) + special_cases()


def build_model(case: FcCase) -> bytes:
    rng = np.random.default_rng(case.seed)
    limit = 2 if case.pow2_scales else 127
    weights = rng.integers(-limit, limit + 1, size=(case.units, case.depth), dtype=np.int8)
    input_scale, weight_scales, output_scale = _scales(case, rng, weights)
    b = ModelBuilder(case.id)
    x = b.add_tensor(
        "input", case.input_shape, "int8", scale=input_scale, zero_point=case.input_zero_point
    )
    w_scale = weight_scales if case.per_channel else weight_scales[:1]
    w = b.add_tensor(
        "weights",
        weights.shape,
        "int8",
        scale=w_scale,
        zero_point=0 if case.per_channel else case.weight_zero_point,
        data=weights,
    )
    inputs = [x, w]
    if case.bias:
        # Cancel most of each unit's mean so that outputs centre on the zero point.
        offset_weights = weights.astype(np.int64) - (
            0 if case.per_channel else case.weight_zero_point
        )
        mean = offset_weights.sum(axis=1) * (-0.5 - case.input_zero_point)
        bias = (np.round(-mean) + rng.integers(-3000, 3001, size=case.units)).astype(np.int32)
        bias_scale = np.float32(input_scale) * np.asarray(w_scale, np.float32)
        inputs.append(
            b.add_tensor("bias", (case.units,), "int32", scale=bias_scale, zero_point=0, data=bias)
        )
    else:
        inputs.append(-1)  # an omitted optional input, as the converter writes it
    y = b.add_tensor(
        "output", case.output_shape(), "int8", scale=output_scale, zero_point=case.output_zero_point
    )
    options = {"fused_activation_function": case.activation, "keep_num_dims": case.keep_num_dims}
    b.add_op("FULLY_CONNECTED", inputs, [y], options)
    b.set_io([x], [y])
    return b.build()


def _scales(
    case: FcCase, rng: np.random.Generator, weights: np.ndarray
) -> tuple[float, np.ndarray, float]:
    """(input scale, weight scales per unit, output scale) for a spread output."""
    w = weights.astype(np.float64) - (0 if case.per_channel else case.weight_zero_point)
    weight_rms = float(np.sqrt(np.mean(w**2)))
    if case.pow2_scales:
        # rescale 2^-k: ~30 output steps per standard deviation, a tie on one value in 2^k.
        k = round(math.log2(math.sqrt(case.depth) * weight_rms * 74.0 / 30.0))
        jitter = (
            rng.integers(-1, 2, case.units) if case.per_channel else np.zeros(case.units, np.int64)
        )
        return 2.0**-4, 2.0 ** (2 - k + jitter).astype(np.float64), 2.0**-2
    rms_input = math.sqrt(74.0**2 + (case.input_zero_point + 0.5) ** 2)
    acc_std = math.sqrt(case.depth) * weight_rms * rms_input
    weight = rng.uniform(0.003, 0.02) * (
        rng.uniform(0.5, 2.0, case.units) if case.per_channel else np.ones(case.units)
    )
    output_scale = (
        rng.uniform(0.008, 0.012) if case.activation == "RELU_N1_TO_1" else rng.uniform(0.01, 0.08)
    )
    input_scale = output_scale * 100.0 / (3.0 * acc_std * float(np.mean(weight)))
    return input_scale, weight, output_scale


def random_input(case: FcCase) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    return rng.integers(-128, 128, size=case.input_shape, dtype=np.int8)



@pytest.mark.parametrize("rounding", list(Rounding), ids=lambda r: r.value)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_matches_oracle(case: FcCase, rounding: Rounding) -> None:
    model = build_model(case)
    x = random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert actual.dtype == np.int8 and actual.shape == expected.shape == case.output_shape()
    mismatches = int(np.sum(actual != expected))
    assert mismatches == 0, f"{mismatches} of {expected.size} outputs differ"


def test_litert_requantizes_in_double(monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteRT's reference FC rescales in double: neither fixed-point rounding reproduces it.

    With power-of-two scales the exact ties go away from zero in LiteRT; single rounding sends
    them up. (The TFLM double rounding also goes away from zero, but differs near ties, as the
    public autoencoder shows.)
    """
    from mcugen.ops.matmul import reference as fc_module

    differing = 0
    for case in [c for c in special_cases() if c.pow2_scales]:
        model, x = build_model(case), random_input(case)
        (litert,) = run_oracle(model, [x], Rounding.LITERT)
        graph = parse_model(model, "ties.tflite")
        (real,) = run_outputs(graph, [x], Rounding.LITERT)
        monkeypatch.setattr(fc_module, "requantize_real", _single_rounding(graph.ops[0]))
        (single,) = run_outputs(graph, [x], Rounding.LITERT)
        monkeypatch.undo()
        assert np.array_equal(real, litert)
        differing += int(np.sum(single != litert))
    assert differing > 0


def _single_rounding(op: Op) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A stand-in for requantize_real: TFLITE_SINGLE_ROUNDING's fixed-point rescale."""
    from mcugen.ops.matmul.prepare import fc_multipliers

    multipliers, shifts = fc_multipliers(op)

    def rescale(acc: np.ndarray, scales: np.ndarray) -> np.ndarray:
        return single_rounding_requantize(acc, multipliers, shifts)

    return rescale



def c_cases() -> list:
    """Four models through the whole pipeline (generated C, host compiler) in both roundings:
    per-channel, a 640-deep accumulation; the sanitizer builds add per-tensor weights with a
    zero point and power-of-two ties, and a rank-4 input kept as rank 4 (keep_num_dims)."""
    plain = [CASES[0]] + [c for c in special_cases() if c.seed == 505]
    sanitized = [c for c in special_cases() if c.seed == 502] + [CASES[2]]
    return [pytest.param(c, r, False, id=f"{c.id}-{r.value}") for c in plain for r in Rounding] + [
        pytest.param(c, r, True, id=f"{c.id}-{r.value}-asan") for c in sanitized for r in Rounding
    ]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernel_matches_oracle(case: FcCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)


def overflow_model(output_zero_point: int) -> tuple[bytes, np.ndarray]:
    """A rescale factor of 1e6: many results leave int32 before the zero point is added."""
    rng = np.random.default_rng(77)
    weights = rng.integers(-127, 128, size=(8, 16), dtype=np.int8)
    b = ModelBuilder("overflow")
    x = b.add_tensor("input", (4, 16), "int8", scale=1.0, zero_point=0)
    w = b.add_tensor("weights", weights.shape, "int8", scale=[1.0] * 8, data=weights)
    k = b.add_tensor("bias", (8,), "int32", scale=[1.0] * 8, data=np.zeros(8, np.int32))
    y = b.add_tensor("output", (4, 8), "int8", scale=1e-6, zero_point=output_zero_point)
    b.add_op("FULLY_CONNECTED", [x, w, k], [y])
    b.set_io([x], [y])
    return b.build(), rng.integers(-128, 128, size=(4, 16), dtype=np.int8)


@pytest.mark.parametrize("output_zero_point", [0, -5])
def test_out_of_range_rescale(output_zero_point: int) -> None:
    """Where the rescaled value leaves int32 both runtimes wrap rather than saturate: TFLM's
    left shift wraps in int32, and LiteRT's double -> int32 conversion gives INT32_MIN on
    x86-64, so a huge positive result comes out as -128 (or, with a negative zero point that
    wraps it again, 127)."""
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = overflow_model(output_zero_point)
    graph = parse_model(model, "overflow.tflite")
    for rounding in Rounding:
        (expected,) = run_oracle(model, [x], rounding)
        (actual,) = run_outputs(graph, [x], rounding)
        assert np.array_equal(actual, expected), rounding
    assert set(np.unique(expected)) <= {-128, 127} and len(np.unique(expected)) == 2
    (compiled,) = run_tflite_bytes(model, [x], Rounding.LITERT, sanitize=output_zero_point == 0)
    assert np.array_equal(compiled, run_oracle(model, [x], Rounding.LITERT)[0])


def test_support_reports_prepare_rules() -> None:
    """Refusals that need the computed parameters are rules too: support runs prepare and
    reports a rescale shift outside TFLite's range the same way as a plain rule, and the
    reference refuses the op with the same message."""
    from mcugen.errors import UnsupportedError
    from mcugen.ir import Quant
    from mcugen.support import check_op

    model, x = overflow_model(0)
    graph = parse_model(model, "overflow.tflite")
    (op,) = graph.ops
    y = op.outputs[0]
    assert y.quant is not None
    y.quant = replace(y.quant, scale=(1e-12,))
    (problem,) = check_op(op)
    assert "needs a shift in [-31, 30]" in problem and problem.endswith("Got: shifts 40..40")
    with pytest.raises(UnsupportedError, match="needs a shift"):
        run_outputs(graph, [x], Rounding.TFLM)
    y.quant = Quant((1.0,), (200,))
    assert any("zero points in [-128, 127]" in p and "zero point 200" in p for p in check_op(op))
