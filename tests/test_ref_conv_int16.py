"""int16x8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED against TFLM and LiteRT, exactly.

int16 activations (zero point 0, as TFLite requires), int8 weights per channel or per tensor,
and the bias kinds: int64 (what the converter writes; int64 accumulator and the int64
MultiplyByQuantizedMultiplier), int32 (int32 accumulator and the int8 rescale; LiteRT honours
it only when the op's quantized_bias_type option says INT32, which these models set), none
(int64 accumulator) and none with quantized_bias_type INT32 (int32 accumulator).
Seeded random shapes cover kernel sizes, strides, dilations, both paddings, every clamp
activation and batch 2; power-of-two scales make ties common, which tell the int64 rescale's
single half-up rounding from the int32 one's double rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest
import tflite
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, run_oracle

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
KINDS = ("conv", "dw", "fc")


@dataclass(frozen=True)
class Case:
    kind: str  # conv, dw, fc
    batch: int
    size: tuple[int, int]  # input h, w (fc: rows and depth of a [batch, rows, depth] input)
    in_channels: int
    out_channels: int  # fc: units
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    padding: str
    activation: str
    per_channel: bool
    bias: str  # int64, int32, none, none32 (no bias, quantized_bias_type INT32)
    seed: int
    pow2_scales: bool = False

    @property
    def id(self) -> str:
        quant = "pc" if self.per_channel else "pt"
        geometry = (
            ""
            if self.kind == "fc"
            else f"-k{self.kernel[0]}{self.kernel[1]}-s{self.stride[0]}{self.stride[1]}"
            f"-d{self.dilation[0]}{self.dilation[1]}-{self.padding}"
        )
        extra = "-pow2" if self.pow2_scales else ""
        return (
            f"{self.kind}{self.seed}-{self.batch}x{self.size[0]}x{self.size[1]}x{self.in_channels}"
            f"-o{self.out_channels}{geometry}-{self.activation}-{quant}-{self.bias}{extra}"
        )

    def input_shape(self) -> tuple[int, ...]:
        if self.kind == "fc":
            return (self.batch, self.size[0], self.in_channels)
        return (self.batch, *self.size, self.in_channels)

    def output_shape(self) -> tuple[int, ...]:
        if self.kind == "fc":
            return (self.batch * self.size[0], self.out_channels)
        hw = []
        for size, k, s, d in zip(self.size, self.kernel, self.stride, self.dilation, strict=True):
            effective = (k - 1) * d + 1
            hw.append((size + s - 1) // s if self.padding == "SAME" else (size - effective + s) // s)
        return (self.batch, hw[0], hw[1], self.out_channels)

    def weights_shape(self) -> tuple[int, ...]:
        kh, kw = self.kernel
        if self.kind == "fc":
            return (self.out_channels, self.in_channels)
        if self.kind == "dw":
            return (1, kh, kw, self.out_channels)
        return (self.out_channels, kh, kw, self.in_channels)


def random_cases(kind: str, count: int, first_seed: int) -> list[Case]:
    cases = []
    for i in range(count):
        rng = np.random.default_rng(first_seed + i)
        kernel = (1 + i % 4, 1 + (i + 1 + int(rng.integers(0, 2))) % 4)
        stride = (1 + i % 3, 1 + (i // 3) % 2)
        dilation = (1 + (i // 2) % 2, 1 + (i // 5) % 2)
        in_channels = int(rng.integers(1, 5))
        if kind == "dw":
            out_channels = in_channels * (1 + i % 3)
        elif kind == "fc":
            in_channels, out_channels = int(rng.integers(8, 70)), int(rng.integers(4, 20))
        else:
            out_channels = int(rng.integers(2, 8))
        min_h = (kernel[0] - 1) * dilation[0] + 1 + 2 * stride[0]
        min_w = (kernel[1] - 1) * dilation[1] + 1 + 2 * stride[1]
        size = (max(min_h, int(rng.integers(4, 10))), max(min_w, int(rng.integers(4, 11))))
        if kind == "fc":
            size = (int(rng.integers(1, 4)), 1)
        # int32 bias is not a depthwise option in either runtime.
        biases = ("int64", "none") if kind == "dw" else ("int64", "int32", "none")
        cases.append(
            Case(
                kind=kind,
                batch=1 + (i % 4 == 3),
                size=size,
                in_channels=in_channels,
                out_channels=out_channels,
                kernel=kernel,
                stride=stride,
                dilation=dilation,
                padding=("SAME", "VALID")[i % 2],
                activation=ACTIVATIONS[i % 4],
                per_channel=i % 3 != 2,
                bias=biases[i % len(biases)],
                seed=first_seed + i,
            )
        )
    return cases


def special_cases() -> list[Case]:
    conv = Case("conv", 1, (7, 6), 3, 5, (3, 3), (1, 1), (1, 1), "SAME", "NONE", True, "int64",
                700, pow2_scales=True)
    return [
        conv,
        replace(conv, seed=701, bias="int32"),
        replace(conv, seed=702, bias="none", per_channel=False),
        # No bias, but quantized_bias_type INT32: the int32 accumulator and rescale.
        replace(conv, seed=706, bias="none32"),
        replace(conv, seed=707, kind="fc", size=(3, 1), in_channels=40, out_channels=12,
                bias="none32"),
        replace(conv, seed=703, kind="dw", out_channels=6),
        replace(conv, seed=704, kind="fc", size=(3, 1), in_channels=40, out_channels=12),
        replace(conv, seed=705, kind="fc", size=(2, 1), in_channels=40, out_channels=12,
                bias="int32", per_channel=False),
    ]


CASES = (
    random_cases("conv", 18, 100)
    + random_cases("dw", 15, 200)
    + random_cases("fc", 15, 300)
    + special_cases()
)


def _scales(case: Case, rng: np.random.Generator, weights: np.ndarray) -> tuple[float, np.ndarray, float]:
    channels = case.out_channels
    if case.kind == "fc":
        taps = case.in_channels
    else:
        taps = case.kernel[0] * case.kernel[1] * (1 if case.kind == "dw" else case.in_channels)
    weight_rms = float(np.sqrt(np.mean(weights.astype(np.float64) ** 2)))
    acc_std = math.sqrt(taps) * weight_rms * 18918.0  # rms of a uniform int16
    if case.pow2_scales:
        # A rescale of 2^-k with ~2000 output steps per standard deviation: ties (x.5) on one
        # accumulator value in 2^k.
        k = max(1, round(math.log2(acc_std / 2000.0)))
        jitter = rng.integers(-1, 2, channels) if case.per_channel else np.zeros(channels, np.int64)
        return 2.0**-8, 2.0 ** (-k + jitter).astype(np.float64), 2.0**-8
    weight = rng.uniform(0.003, 0.02) * (
        rng.uniform(0.5, 2.0, channels) if case.per_channel else np.ones(channels)
    )
    output_scale = 1.0 / 20000 if case.activation == "RELU_N1_TO_1" else rng.uniform(1e-4, 1e-3)
    # Three standard deviations land near 25000 output steps.
    input_scale = output_scale * 25000.0 / (3.0 * acc_std * float(np.mean(weight)))
    return input_scale, weight, output_scale


def build_model(case: Case) -> bytes:
    rng = np.random.default_rng(case.seed)
    limit = 3 if case.pow2_scales else 127
    weights = rng.integers(-limit, limit + 1, size=case.weights_shape(), dtype=np.int8)
    input_scale, weight_scales, output_scale = _scales(case, rng, weights)
    b = ModelBuilder(case.id)
    x = b.add_tensor("input", case.input_shape(), "int16", scale=input_scale, zero_point=0)
    w_scale = weight_scales if case.per_channel else weight_scales[:1]
    w = b.add_tensor("weights", case.weights_shape(), "int8", scale=w_scale, zero_point=0,
                     quantized_dimension=3 if case.kind == "dw" else 0, data=weights)
    inputs = [x, w]
    options: dict = {"fused_activation_function": case.activation}
    if case.bias in ("int32", "none32") and case.kind != "dw":
        options["quantized_bias_type"] = tflite.TensorType.INT32
    if not case.bias.startswith("none"):
        bias = rng.integers(-200_000, 200_001, size=case.out_channels).astype(case.bias)
        bias_scale = np.float32(input_scale) * np.asarray(w_scale, np.float32)
        inputs.append(b.add_tensor("bias", (case.out_channels,), case.bias, scale=bias_scale,
                                   zero_point=0, data=bias))
    elif case.kind == "fc":
        inputs.append(-1)
    y = b.add_tensor("output", case.output_shape(), "int16", scale=output_scale, zero_point=0)
    if case.kind != "fc":
        options.update({
            "padding": case.padding,
            "stride_h": case.stride[0],
            "stride_w": case.stride[1],
            "dilation_h_factor": case.dilation[0],
            "dilation_w_factor": case.dilation[1],
        })
    if case.kind == "dw":
        options["depth_multiplier"] = case.out_channels // case.in_channels
    builtin = {"conv": "CONV_2D", "dw": "DEPTHWISE_CONV_2D", "fc": "FULLY_CONNECTED"}[case.kind]
    b.add_op(builtin, inputs, [y], options)
    b.set_io([x], [y])
    return b.build()


def random_input(case: Case) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    return rng.integers(-32768, 32768, size=case.input_shape(), dtype=np.int16)


def with_oracle(cases: list[Case]) -> list[tuple[Case, Rounding]]:
    """LiteRT's CONV_2D insists on a bias (conv.cc Prepare): bias-less convs are TFLM only."""
    return [
        (case, rounding)
        for case in cases
        for rounding in Rounding
        if not (case.kind == "conv" and case.bias.startswith("none") and rounding is Rounding.LITERT)
    ]


@pytest.mark.parametrize(
    "case, rounding", [pytest.param(c, r, id=f"{c.id}-{r.value}") for c, r in with_oracle(CASES)]
)
def test_reference_matches_oracle(case: Case, rounding: Rounding) -> None:
    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert_exact(actual, expected)


def test_int16_fully_connected_modes_differ() -> None:
    """LiteRT's int16 FULLY_CONNECTED rescales in double precision like its int8 one, TFLM
    with the int64 fixed-point multiplier: each mode matches its runtime and the two differ
    (on a few elements in total; per model they usually agree), so neither path stands in
    for the other."""
    differing = 0
    for case in [c for c in CASES if c.kind == "fc"]:
        model, x = build_model(case), random_input(case)
        graph = parse_model(model, "fc.tflite")
        (tflm_mode,) = run_outputs(graph, [x], Rounding.TFLM)
        (litert_mode,) = run_outputs(graph, [x], Rounding.LITERT)
        (litert,) = run_oracle(model, [x], Rounding.LITERT)
        assert_exact(litert_mode, litert)
        differing += int(np.sum(tflm_mode != litert))
    assert differing > 0


def c_cases() -> list:
    """Generated C for six models in both roundings (bias-less conv: TFLM only): conv with
    int64 bias, int32 bias and no bias with quantized_bias_type INT32, depthwise, and fully
    connected per channel (int64 bias) and per tensor (int32 bias). The sanitizer builds cover
    every s16 kernel and the three rescale kinds."""
    chosen = {700: False, 701: True, 703: True, 704: False, 705: True, 706: False}
    return [
        pytest.param(c, r, chosen[c.seed], id=f"{c.id}-{r.value}" + ("-asan" if chosen[c.seed] else ""))
        for c, r in with_oracle([c for c in special_cases() if c.seed in chosen])
    ]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernels_match_oracle(case: Case, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)


def _problems(case: Case, edit: dict) -> list[str]:
    """The support problems of `case`'s model after changing tensor fields in the IR."""
    from mcugen.ir import DType, Quant
    from mcugen.support import check_op

    graph = parse_model(build_model(case), "rules.tflite")
    (op,) = graph.ops
    for index, change in edit.items():
        tensor = op.inputs[index] if index != "out" else op.outputs[0]
        assert tensor is not None
        if "dtype" in change:
            tensor.dtype = DType[change["dtype"]]
            if tensor.data is not None:
                tensor.data = tensor.data.astype(tensor.dtype.numpy)
        if "zero_point" in change:
            assert tensor.quant is not None
            tensor.quant = Quant(tensor.quant.scale, (change["zero_point"],), tensor.quant.axis)
    return check_op(op)


@pytest.mark.parametrize(
    "seed, edit, rule",
    [
        (703, {2: {"dtype": "INT32"}}, "int64 for int16"),  # depthwise int16: int64 bias only
        (700, {0: {"zero_point": 3}}, "zero point 0"),
        (700, {"out": {"zero_point": -1}}, "zero point 0"),
        (704, {2: {"dtype": "INT16"}}, "int64 or int32 for int16"),
        (700, {"out": {"dtype": "INT8"}}, "output has the dtype of the first input"),
    ],
)
def test_support_rejects(seed: int, edit: dict, rule: str) -> None:
    """What the int16x8 kernels cannot do is refused by a rule that names it."""
    (case,) = [c for c in special_cases() if c.seed == seed]
    problems = _problems(case, edit)
    assert any(rule in p for p in problems), problems


def test_litert_int32_bias_needs_the_option() -> None:
    """Without quantized_bias_type INT32, LiteRT reads an int16 op's int32 bias as int64 (its
    outputs then differ from TFLM's everywhere): LITERT mode refuses such a model, TFLM mode
    takes it."""
    from mcugen.errors import UnsupportedError

    (case,) = [c for c in special_cases() if c.seed == 701]
    graph = parse_model(build_model(case), "bias.tflite")
    (op,) = graph.ops
    op.options = replace(op.options, quantized_bias_type=None)  # type: ignore[type-var]
    x = random_input(case)
    run_outputs(graph, [x], Rounding.TFLM)
    with pytest.raises(UnsupportedError, match="quantized_bias_type INT32"):
        run_outputs(graph, [x], Rounding.LITERT)
