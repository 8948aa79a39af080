"""CONV_2D and DEPTHWISE_CONV_2D: the numpy reference and the C kernels against TFLite.

Random single-op models (seeded) cover kernel sizes 1..5, strides 1..3, dilation 1..2, SAME
and VALID, depth multipliers 1..3, every clamp activation, per-tensor and per-channel weights,
batch 1 and 2, input zero points from -128 to 127, odd sizes, grouped convolution and missing
bias. Scales are chosen so that outputs spread over many values (checked, so no test passes on
an all-saturated output); a few cases use power-of-two scales, whose exact ties tell the
rounding modes apart. Every comparison is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, run_oracle, single_rounding_requantize

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
INPUT_ZERO_POINTS = (-128, 0, 5, 127, -37, 64)


@dataclass(frozen=True)
class ConvCase:
    """One random single-op convolution model."""

    depthwise: bool
    batch: int
    height: int
    width: int
    in_channels: int
    out_channels: int  # depthwise: in_channels * depth multiplier
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    padding: str
    activation: str
    per_channel: bool
    input_zero_point: int
    output_zero_point: int
    seed: int
    bias: bool = True
    groups: int = 1
    pow2_scales: bool = False
    rescale: tuple[float, float] | None = None  # input * weight / output scale drawn from it

    @property
    def id(self) -> str:
        kind = "dw" if self.depthwise else "conv"
        quant = "pc" if self.per_channel else "pt"
        extra = ("-nobias" if not self.bias else "") + (
            f"-g{self.groups}" if self.groups > 1 else ""
        )
        extra += "-pow2" if self.pow2_scales else ""
        extra += f"-m{self.rescale[0]}" if self.rescale else ""
        return (
            f"{kind}{self.seed}-{self.batch}x{self.height}x{self.width}x{self.in_channels}"
            f"-o{self.out_channels}-k{self.kernel[0]}x{self.kernel[1]}"
            f"-s{self.stride[0]}{self.stride[1]}"
            f"-d{self.dilation[0]}{self.dilation[1]}-{self.padding}-{self.activation}-{quant}"
            f"-zp{self.input_zero_point}{extra}"
        )

    def output_hw(self) -> tuple[int, int]:
        """TFLite's ComputeOutSize."""
        sizes = []
        for size, k, s, d in zip(
            (self.height, self.width), self.kernel, self.stride, self.dilation, strict=True
        ):
            effective = (k - 1) * d + 1
            sizes.append(
                (size + s - 1) // s if self.padding == "SAME" else (size - effective + s) // s
            )
        return sizes[0], sizes[1]


def random_cases(depthwise: bool, count: int, first_seed: int) -> list[ConvCase]:
    """Seeded cases that cycle through every option value, random sizes in between."""
    cases = []
    for i in range(count):
        seed = first_seed + i
        rng = np.random.default_rng(seed)
        kernel = (1 + i % 5, 1 + (i + 2 + int(rng.integers(0, 2))) % 5)
        stride = (1 + i % 3, 1 + (i // 3) % 3)
        dilation = (1 + (i // 2) % 2, 1 + (i // 4) % 2)
        padding = ("SAME", "VALID")[i % 2]
        in_channels = int(rng.integers(1, 6))
        multiplier = 1 + i % 3
        out_channels = in_channels * multiplier if depthwise else int(rng.integers(2, 9))
        # At least three output rows and columns, so that every case has a spread of outputs.
        min_h = (kernel[0] - 1) * dilation[0] + 1 + 2 * stride[0]
        min_w = (kernel[1] - 1) * dilation[1] + 1 + 2 * stride[1]
        cases.append(
            ConvCase(
                depthwise=depthwise,
                batch=1 + (i % 4 == 3),
                height=max(min_h, int(rng.integers(5, 12))) | 1,
                width=max(min_w, int(rng.integers(5, 14))) | 1,
                in_channels=in_channels,
                out_channels=out_channels,
                kernel=kernel,
                stride=stride,
                dilation=dilation,
                padding=padding,
                activation=ACTIVATIONS[i % 4],
                per_channel=i % 3 != 2,
                input_zero_point=INPUT_ZERO_POINTS[i % len(INPUT_ZERO_POINTS)],
                output_zero_point=int(rng.integers(-20, 21)),
                seed=seed,
            )
        )
    return cases


def special_cases() -> list[ConvCase]:
    base = ConvCase(
        False, 1, 9, 7, 4, 6, (3, 3), (1, 1), (1, 1), "SAME", "NONE", True, -128, 3, 900
    )
    return [
        # Power-of-two scales make the rescale exact, so ties (x.5) are common: they tell
        # round-half-away (double rounding) from round-half-up (single rounding).
        replace(base, seed=901, pow2_scales=True),
        replace(base, seed=902, pow2_scales=True, per_channel=False, input_zero_point=11),
        replace(base, seed=903, depthwise=True, out_channels=8, pow2_scales=True),
        # Grouped convolution: filter depth 2 on 4 input channels.
        replace(base, seed=904, groups=2),
        replace(base, seed=905, groups=4, out_channels=8, kernel=(2, 3), stride=(2, 1)),
        # A 1x1 "pointwise" conv on a wide input, and a kernel that covers the whole input.
        replace(base, seed=906, kernel=(1, 1), height=5, width=17, in_channels=16, out_channels=8),
        replace(
            base,
            seed=907,
            kernel=(5, 5),
            height=5,
            width=5,
            padding="VALID",
            activation="RELU6",
            batch=2,
            out_channels=16,
        ),
        # No bias (TFLM only: LiteRT's CONV_2D insists on one, its DEPTHWISE_CONV_2D does not).
        replace(base, seed=908, bias=False),
        replace(base, seed=909, depthwise=True, out_channels=8, bias=False, stride=(2, 2)),
    ]


CONV_CASES = random_cases(False, 28, 100) + [c for c in special_cases() if not c.depthwise]
DW_CASES = random_cases(True, 24, 200) + [c for c in special_cases() if c.depthwise]


def _scales(
    case: ConvCase, rng: np.random.Generator, weights: np.ndarray
) -> tuple[float, np.ndarray, float]:
    """(input scale, weight scales per output channel, output scale) for a spread output."""
    channels = case.out_channels
    taps = (
        case.kernel[0] * case.kernel[1] * (1 if case.depthwise else case.in_channels // case.groups)
    )
    weight_rms = float(np.sqrt(np.mean(weights.astype(np.float64) ** 2)))
    if case.pow2_scales:
        # The bias centres the accumulator, whose spread is then about sqrt(taps) * rms(w) * 74.
        # A rescale of 2^-k puts ~30 output steps in one standard deviation, with a tie (x.5)
        # on one accumulator value in 2^k.
        k = round(math.log2(math.sqrt(taps) * weight_rms * 74.0 / 30.0))
        jitter = rng.integers(-1, 2, channels) if case.per_channel else np.zeros(channels, np.int64)
        return 2.0**-4, 2.0 ** (2 - k + jitter).astype(np.float64), 2.0**-2
    if case.rescale:
        # in [0.5, 1): shift 0, the doubling high multiply's rounding is the output's (no later
        # rounding shift hides a wrong nudge); in [1, 2): shift 1, a left shift before it
        return 2.0**-4, 4.0 * rng.uniform(*case.rescale, channels), 2.0**-2
    rms_input = math.sqrt(74.0**2 + (case.input_zero_point + 0.5) ** 2)  # E[(q - zp)^2]^0.5
    acc_std = math.sqrt(taps) * weight_rms * rms_input
    weight = rng.uniform(0.003, 0.02) * (
        rng.uniform(0.5, 2.0, channels) if case.per_channel else np.ones(channels)
    )
    # RELU_N1_TO_1 clamps at +-1.0: a small output scale keeps that many steps wide.
    output_scale = (
        rng.uniform(0.008, 0.012) if case.activation == "RELU_N1_TO_1" else rng.uniform(0.01, 0.08)
    )
    # Three standard deviations of the accumulator land about 100 steps from the zero point.
    input_scale = output_scale * 100.0 / (3.0 * acc_std * float(np.mean(weight)))
    return input_scale, weight, output_scale


def build_model(case: ConvCase) -> bytes:
    rng = np.random.default_rng(case.seed)
    kh, kw = case.kernel
    if case.depthwise:
        weights_shape = (1, kh, kw, case.out_channels)
    else:
        weights_shape = (case.out_channels, kh, kw, case.in_channels // case.groups)
    # Small weights with power-of-two scales keep the exact rescale large: ties are common.
    limit = 2 if case.pow2_scales or case.rescale else 127
    weights = rng.integers(-limit, limit + 1, size=weights_shape, dtype=np.int8)
    input_scale, weight_scales, output_scale = _scales(case, rng, weights)
    b = ModelBuilder(case.id)
    x = b.add_tensor(
        "input",
        (case.batch, case.height, case.width, case.in_channels),
        "int8",
        scale=input_scale,
        zero_point=case.input_zero_point,
    )
    w_scale = weight_scales if case.per_channel else weight_scales[:1]
    w = b.add_tensor(
        "weights",
        weights_shape,
        "int8",
        scale=w_scale,
        zero_point=0,
        quantized_dimension=3 if case.depthwise else 0,
        data=weights,
    )
    inputs = [x, w]
    if case.bias:
        # Cancel most of each channel's mean (sum of weights times the mean offset input) so
        # that outputs centre on the zero point instead of saturating.
        taps_sum = (
            weights.reshape(-1, case.out_channels).sum(axis=0)
            if case.depthwise
            else weights.reshape(case.out_channels, -1).sum(axis=1)
        )
        mean_offset = -0.5 - case.input_zero_point
        jitter = 20 if case.rescale else 3000  # with a rescale near 1, outputs move 1:1
        bias = (
            np.round(-taps_sum * mean_offset) + rng.integers(-jitter, jitter + 1, size=case.out_channels)
        ).astype(np.int32)
        bias_scale = np.float32(input_scale) * np.asarray(w_scale, np.float32)
        inputs.append(
            b.add_tensor(
                "bias", (case.out_channels,), "int32", scale=bias_scale, zero_point=0, data=bias
            )
        )
    oh, ow = case.output_hw()
    y = b.add_tensor(
        "output",
        (case.batch, oh, ow, case.out_channels),
        "int8",
        scale=output_scale,
        zero_point=case.output_zero_point,
    )
    options = {
        "padding": case.padding,
        "stride_h": case.stride[0],
        "stride_w": case.stride[1],
        "dilation_h_factor": case.dilation[0],
        "dilation_w_factor": case.dilation[1],
        "fused_activation_function": case.activation,
    }
    if case.depthwise:
        options["depth_multiplier"] = case.out_channels // case.in_channels
    b.add_op("DEPTHWISE_CONV_2D" if case.depthwise else "CONV_2D", inputs, [y], options)
    b.set_io([x], [y])
    return b.build()


def random_input(case: ConvCase) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    shape = (case.batch, case.height, case.width, case.in_channels)
    return rng.integers(-128, 128, size=shape, dtype=np.int8)



def with_oracle(cases: list[ConvCase]) -> list[tuple[ConvCase, Rounding]]:
    """Every (case, rounding) with an oracle. LiteRT's CONV_2D refuses a missing bias
    ("has_bias was not true", conv.cc Prepare), so bias-less convs are checked against TFLM only."""
    return [
        (case, rounding)
        for case in cases
        for rounding in Rounding
        if case.bias or case.depthwise or rounding is Rounding.TFLM
    ]


@pytest.mark.parametrize(
    "case, rounding",
    [pytest.param(c, r, id=f"{c.id}-{r.value}") for c, r in with_oracle(CONV_CASES + DW_CASES)],
)
def test_reference_matches_oracle(case: ConvCase, rounding: Rounding) -> None:
    model = build_model(case)
    x = random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert actual.dtype == np.int8 and actual.shape == expected.shape
    mismatches = int(np.sum(actual != expected))
    assert mismatches == 0, f"{mismatches} of {expected.size} outputs differ"


def test_litert_conv_rounds_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteRT 2.3.0's reference convs round twice: single rounding misses its ties.

    Guards the one surprising fact the kernels rely on (conv's double-rounding rescale in both
    modes): with power-of-two scales the rescale is exact, and single rounding sends x.5 up
    where LiteRT sends it away from zero.
    """
    from mcugen.ops.conv import reference as conv_module

    for case in [c for c in special_cases() if c.pow2_scales]:
        model, x = build_model(case), random_input(case)
        (litert,) = run_oracle(model, [x], Rounding.LITERT)
        graph = parse_model(model, "ties.tflite")
        (double,) = run_outputs(graph, [x], Rounding.LITERT)
        monkeypatch.setattr(conv_module, "multiply_by_quantized_multiplier", single_rounding_requantize)
        (single,) = run_outputs(graph, [x], Rounding.LITERT)
        monkeypatch.undo()
        assert np.array_equal(double, litert)
        assert np.sum(single != litert) > 0, case.id


def rounding_cases() -> list[ConvCase]:
    """Cases whose outputs sit on the requantization's rounding decisions: power-of-two scales
    (exact ties x.5, negative ones included), a rescale in [0.5, 1) (the doubling high
    multiply's nudge decides) and one in [1, 2) (shift 1: a left shift first), conv and
    depthwise."""
    pow2 = [c for c in special_cases() if c.pow2_scales]
    base = ConvCase(False, 1, 7, 9, 2, 6, (1, 1), (1, 1), (1, 1), "SAME", "NONE", True, 3, -5,
                    920, rescale=(0.52, 0.95))
    return pow2 + [base, replace(base, seed=921, depthwise=True, out_channels=4, kernel=(2, 2)),
                   replace(base, seed=922, in_channels=1, rescale=(1.05, 1.9))]


def c_cases() -> list:
    """Fifteen models through the whole pipeline (generated C, host compiler), both roundings:
    kernels 1..4, strides 1..3, dilation 2, batch 2, both paddings, every activation, the
    rounding cases (ties, negative ones too, must reach the C, not only the reference); the
    sanitizer builds add a missing bias and stride 3 with dilation. Grouped convolution is
    left out: mcugen's support rules do not accept it yet."""
    plain = CONV_CASES[1:4] + DW_CASES[1:4] + rounding_cases()
    sanitized = [c for c in special_cases() if c.seed in (908, 909)] + [CONV_CASES[5]]
    return [pytest.param(c, r, False, id=f"{c.id}-{r.value}") for c, r in with_oracle(plain)] + [
        pytest.param(c, r, True, id=f"{c.id}-{r.value}-asan") for c, r in with_oracle(sanitized)
    ]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernels_match_oracle(case: ConvCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)
