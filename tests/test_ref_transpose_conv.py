"""TRANSPOSE_CONV, int8 and int16x8: the numpy reference and the C kernels against TFLite.

Seeded random single-op models cover kernel sizes 1..5, strides 1..3, SAME and VALID (with
output sizes that leave a remainder, so SAME pads and VALID crops), per-channel and per-tensor
weights, every clamp activation, batch 2, input zero points from -128 to 127 (int8; int16 uses
0 as TFLite requires), with and without bias (int32 for int8, int64 for int16). Every
comparison is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
INPUT_ZERO_POINTS = (-128, 0, 7, 127, -40, 55)


@dataclass(frozen=True)
class Case:
    dtype: str  # int8 or int16
    batch: int
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    in_channels: int
    out_channels: int
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: str
    activation: str
    per_channel: bool
    bias: bool
    input_zero_point: int
    output_zero_point: int
    seed: int

    @property
    def id(self) -> str:
        quant = "pc" if self.per_channel else "pt"
        return (
            f"tc{self.seed}-{self.dtype}-{self.batch}x{self.in_hw[0]}x{self.in_hw[1]}x"
            f"{self.in_channels}-o{self.out_hw[0]}x{self.out_hw[1]}x{self.out_channels}"
            f"-k{self.kernel[0]}{self.kernel[1]}-s{self.stride[0]}{self.stride[1]}-{self.padding}"
            f"-{self.activation}-{quant}{'' if self.bias else '-nobias'}-zp{self.input_zero_point}"
        )


def _output_size(size: int, k: int, s: int, padding: str, extra: int) -> int:
    """An output size whose forward conv gives back `size`: SAME takes s * size - extra
    (extra < s), VALID s * (size - 1) + k + extra (extra < s)."""
    return s * size - extra if padding == "SAME" else s * (size - 1) + k + extra


def random_cases(dtype: str, count: int, first_seed: int) -> list[Case]:
    cases = []
    for i in range(count):
        rng = np.random.default_rng(first_seed + i)
        kernel = (1 + i % 5, 1 + (i + 2) % 4)
        stride = (1 + i % 3, 1 + (i // 3) % 3)
        padding = ("SAME", "VALID")[i % 2]
        in_hw = (int(rng.integers(2, 6)), int(rng.integers(2, 7)))
        out_hw = tuple(
            _output_size(n, k, s, padding, int(rng.integers(0, s)))
            for n, k, s in zip(in_hw, kernel, stride, strict=True)
        )
        int16 = dtype == "int16"
        cases.append(
            Case(
                dtype=dtype,
                batch=1 + (i % 4 == 3),
                in_hw=in_hw,
                out_hw=out_hw,  # type: ignore[arg-type]
                in_channels=int(rng.integers(1, 6)),
                out_channels=int(rng.integers(1, 7)),
                kernel=kernel,
                stride=stride,
                padding=padding,
                activation=ACTIVATIONS[i % 4],
                per_channel=i % 3 != 2,
                bias=i % 5 != 4,
                input_zero_point=0 if int16 else INPUT_ZERO_POINTS[i % len(INPUT_ZERO_POINTS)],
                output_zero_point=0 if int16 else int(rng.integers(-20, 21)),
                seed=first_seed + i,
            )
        )
    return cases


CASES = random_cases("int8", 24, 100) + random_cases("int16", 18, 200)


def build_model(case: Case) -> bytes:
    rng = np.random.default_rng(case.seed)
    kh, kw = case.kernel
    w_shape = (case.out_channels, kh, kw, case.in_channels)
    weights = rng.integers(-127, 128, size=w_shape, dtype=np.int8)
    # Each output sums about (kh / sh) * (kw / sw) * in_c taps.
    taps = max(1.0, kh / case.stride[0]) * max(1.0, kw / case.stride[1]) * case.in_channels
    weight_rms = float(np.sqrt(np.mean(weights.astype(np.float64) ** 2)))
    int16 = case.dtype == "int16"
    x_rms = 18918.0 if int16 else math.sqrt(74.0**2 + (case.input_zero_point + 0.5) ** 2)
    acc_std = math.sqrt(taps) * weight_rms * x_rms
    channels = case.out_channels
    weight = rng.uniform(0.003, 0.02) * (
        rng.uniform(0.5, 2.0, channels) if case.per_channel else np.ones(channels)
    )
    steps = 25000.0 if int16 else 100.0
    if int16:
        output_scale = 1.0 / 20000 if case.activation == "RELU_N1_TO_1" else rng.uniform(1e-4, 1e-3)
    else:
        output_scale = 0.01 if case.activation == "RELU_N1_TO_1" else rng.uniform(0.01, 0.08)
    input_scale = output_scale * steps / (3.0 * acc_std * float(np.mean(weight)))
    b = ModelBuilder(case.id)
    out_shape = (case.batch, *case.out_hw, case.out_channels)
    shape = b.add_tensor("output_shape", (4,), "int32", data=np.array(out_shape, np.int32))
    w_scale = weight if case.per_channel else weight[:1]
    w = b.add_tensor("weights", w_shape, "int8", scale=w_scale, zero_point=0, data=weights)
    x = b.add_tensor("input", (case.batch, *case.in_hw, case.in_channels), case.dtype,
                     scale=input_scale, zero_point=case.input_zero_point)
    inputs = [shape, w, x]
    if case.bias:
        mean = weights.reshape(channels, -1).sum(axis=1) * (-0.5 - case.input_zero_point)
        mean *= taps / (kh * kw * case.in_channels)
        spread = 200_000 if int16 else 3000
        values = np.round(-mean) + rng.integers(-spread, spread + 1, size=channels)
        bias_type = "int64" if int16 else "int32"
        inputs.append(b.add_tensor("bias", (channels,), bias_type, zero_point=0,
                                   scale=np.float32(input_scale) * np.asarray(w_scale, np.float32),
                                   data=values.astype(bias_type)))
    y = b.add_tensor("output", out_shape, case.dtype, scale=output_scale,
                     zero_point=case.output_zero_point)
    options = {"padding": case.padding, "stride_h": case.stride[0], "stride_w": case.stride[1],
               "fused_activation_function": case.activation}
    b.add_op("TRANSPOSE_CONV", inputs, [y], options)
    b.set_io([x], [y])
    return b.build()


def random_input(case: Case) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    info = np.iinfo(case.dtype)
    shape = (case.batch, *case.in_hw, case.in_channels)
    return rng.integers(info.min, info.max + 1, size=shape, dtype=case.dtype)


@pytest.mark.parametrize("rounding", list(Rounding), ids=lambda r: r.value)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_matches_oracle(case: Case, rounding: Rounding) -> None:
    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding, min_distinct=4)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert_exact(actual, expected)


def c_cases() -> list:
    """Generated C for four models in both roundings: int8 SAME per tensor with stride 3; int8
    SAME 5x3 kernel, stride 2, no bias (sanitized); int16 VALID per tensor with strides 3x2;
    int16 VALID with batch 2 and stride 3 (sanitized)."""
    chosen = {102: False, 104: True, 205: False, 211: True}
    return [
        pytest.param(c, r, chosen[c.seed], id=f"{c.id}-{r.value}" + ("-asan" if chosen[c.seed] else ""))
        for c in CASES if c.seed in chosen for r in Rounding
    ]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernels_match_oracle(case: Case, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding, min_distinct=4)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)


@pytest.mark.parametrize("case", [CASES[0], CASES[5], CASES[30]], ids=lambda c: c.id)
def test_macs(case: Case) -> None:
    """The scatter's multiplies: input elements times kh * kw * out_c, which is also the
    number of (input pixel, tap, output channel, input channel) products TFLite forms."""
    from mcugen.ops.registry import op_macs

    (op,) = parse_model(build_model(case), "macs.tflite").ops
    expected = (case.batch * case.in_hw[0] * case.in_hw[1] * case.in_channels
                * case.kernel[0] * case.kernel[1] * case.out_channels)
    assert op_macs(op) == expected


def test_support_rejects() -> None:
    """int16 with an int32 bias (TFLM reads it as int64) and an output_shape that disagrees
    with the output are refused by rules that name them."""
    from mcugen.ir import DType
    from mcugen.support import check_op

    int16 = next(c for c in CASES if c.dtype == "int16" and c.bias)
    (op,) = parse_model(build_model(int16), "rules.tflite").ops
    bias = op.inputs[3]
    assert bias is not None and bias.data is not None
    bias.dtype, bias.data = DType.INT32, bias.data.astype(np.int32)
    assert any("int64 for int16" in p for p in check_op(op)), check_op(op)
    (op,) = parse_model(build_model(CASES[0]), "rules.tflite").ops
    shape = op.inputs[0]
    assert shape is not None and shape.data is not None
    shape.data = shape.data + 1
    assert any("output_shape" in p for p in check_op(op)), check_op(op)


def _aligned(n: int) -> int:
    return (n + 15) // 16 * 16


@pytest.mark.parametrize("case", CASES[::3], ids=lambda c: c.id)
def test_c_kernels_need_no_scratch(case: Case) -> None:
    """The gathering kernels (mcugen_transpose_conv.c) against TFLM, sanitized, on a third of
    the cases (kernels 1..5, strides 1..3, SAME and VALID, odd sizes, batch 2, int8 and int16),
    built for cortex-m4 with --optimize ram: the arena holds the input and the output and no
    scratch, where TFLM's kernel asks for an accumulator per output element."""
    from mcugen.driver import BuildOptions, compile_model
    from mcugen.toolchain.host import build_program, run_program

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], Rounding.TFLM, min_distinct=4)
    options = BuildOptions(rounding=Rounding.TFLM, target="cortex-m4", optimize="ram")
    plan = compile_model(model, options, "tconv.tflite").plan
    assert not [b for b in plan.buffers if b.scratch_of is not None]
    out_bytes = int(np.prod(expected.shape)) * expected.itemsize
    assert plan.arena_size <= _aligned(x.nbytes) + _aligned(out_bytes)
    (actual,) = run_program(build_program(model, options, "tconv.tflite", sanitize=True), [[x]])[0]
    assert_exact(actual, expected)
