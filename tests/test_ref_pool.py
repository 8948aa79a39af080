"""AVERAGE_POOL_2D and MAX_POOL_2D (int8, int16): the numpy reference and the C kernels
against TFLite.

Seeded random single-op models cycle through filter sizes 1..4 (height and width apart),
strides 1..3, SAME and VALID padding (windows clipped on every side), every clamp activation,
batch 1 and 2, odd sizes and zero points across the int8 range, plus a global average pool;
the int16 cases repeat the geometries with zero point 0 and values spread over thousands of
steps.
Pooling involves no requantization, so both roundings must give identical results; each case
still runs against both oracles. Every comparison is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, run_litert, run_tflm

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
# Zero points per activation that leave a wide unclamped range (RELU6 spans 120 steps of 0.05,
# RELU_N1_TO_1 160 steps of 0.0125 around the zero point).
ZERO_POINTS = {
    "NONE": (-128, 127, 0, 33),
    "RELU": (-128, -60, 0, -5),
    "RELU6": (-128, -100, -73),
    "RELU_N1_TO_1": (0, -20, 17),
}


@dataclass(frozen=True)
class PoolCase:
    kind: str  # "AVERAGE_POOL_2D" or "MAX_POOL_2D"
    batch: int
    height: int
    width: int
    channels: int
    filter: tuple[int, int]  # (h, w)
    stride: tuple[int, int]  # (h, w)
    padding: str
    activation: str
    zero_point: int
    seed: int
    dtype: str = "int8"

    @property
    def id(self) -> str:
        kind = "avg" if self.kind == "AVERAGE_POOL_2D" else "max"
        return (f"{kind}{self.seed}-{self.dtype}-{self.batch}x{self.height}x{self.width}x{self.channels}"
                f"-f{self.filter[0]}x{self.filter[1]}-s{self.stride[0]}{self.stride[1]}"
                f"-{self.padding}-{self.activation}-zp{self.zero_point}")

    def output_hw(self) -> tuple[int, int]:
        """TFLite's ComputeOutSize."""
        return tuple(  # type: ignore[return-value]
            (size + s - 1) // s if self.padding == "SAME" else (size - f + s) // s
            for size, f, s in zip((self.height, self.width), self.filter, self.stride)
        )

    @property
    def scale(self) -> float:
        # RELU_N1_TO_1 clamps at +-1.0 and RELU6 at 6.0: keep many steps inside the clamp.
        steps = 1.0 if self.dtype == "int8" else 1.0 / 256
        return steps * {"RELU_N1_TO_1": 0.0125, "RELU6": 0.05}.get(self.activation, 0.1)


def random_cases(kind: str, count: int, first_seed: int) -> list[PoolCase]:
    cases = []
    for i in range(count):
        seed = first_seed + i
        rng = np.random.default_rng(seed)
        filt = (1 + i % 4, 1 + (i + 1 + int(rng.integers(0, 2))) % 4)
        stride = (1 + i % 3, 1 + (i // 3) % 3)
        padding = ("SAME", "VALID")[(i // 2) % 2]
        cases.append(PoolCase(
            kind=kind,
            batch=1 + (i % 5 == 4),
            # At least four output rows and columns, so that every case has a spread of outputs.
            height=max(filt[0] + 3 * stride[0], int(rng.integers(5, 14))),
            width=max(filt[1] + 3 * stride[1], int(rng.integers(5, 14))),
            channels=int(rng.integers(2, 7)),
            filter=filt,
            stride=stride,
            padding=padding,
            activation=ACTIVATIONS[i % 4],
            zero_point=ZERO_POINTS[ACTIVATIONS[i % 4]][(i // 4) % len(ZERO_POINTS[ACTIVATIONS[i % 4]])],
            seed=seed,
        ))
    return cases


AVG_CASES = random_cases("AVERAGE_POOL_2D", 24, 300) + [
    # A global average pool (the window is the whole image) and a window larger than the
    # stride with SAME padding on every side.
    PoolCase("AVERAGE_POOL_2D", 1, 7, 5, 8, (7, 5), (1, 1), "VALID", "NONE", -3, 380),
    PoolCase("AVERAGE_POOL_2D", 1, 9, 9, 3, (5, 5), (2, 2), "SAME", "RELU", 9, 381),
]
MAX_CASES = random_cases("MAX_POOL_2D", 16, 400)


def int16_cases(cases: list[PoolCase]) -> list[PoolCase]:
    """The same geometries in int16, zero point 0 (int16 activations are symmetric)."""
    return [replace(c, dtype="int16", zero_point=0, seed=c.seed + 1000) for c in cases]


AVG16_CASES = int16_cases(AVG_CASES[::2] + AVG_CASES[-2:])
MAX16_CASES = int16_cases(MAX_CASES[::2])


def build_model(case: PoolCase) -> bytes:
    b = ModelBuilder(case.id)
    x = b.add_tensor("input", (case.batch, case.height, case.width, case.channels), case.dtype,
                     scale=case.scale, zero_point=case.zero_point)
    oh, ow = case.output_hw()
    y = b.add_tensor("output", (case.batch, oh, ow, case.channels), case.dtype,
                     scale=case.scale, zero_point=case.zero_point)
    b.add_op(case.kind, [x], [y], {
        "padding": case.padding,
        "stride_h": case.stride[0],
        "stride_w": case.stride[1],
        "filter_height": case.filter[0],
        "filter_width": case.filter[1],
        "fused_activation_function": case.activation,
    })
    b.set_io([x], [y])
    return b.build()


def random_input(case: PoolCase) -> np.ndarray:
    """Values spread around the zero point, so that maxima of windows do not all clamp."""
    rng = np.random.default_rng(case.seed + 10_000)
    shape = (case.batch, case.height, case.width, case.channels)
    steps = 1 if case.dtype == "int8" else 256
    info = np.iinfo(case.dtype)
    values = rng.normal(case.zero_point + 20 * steps, 45 * steps, size=shape)
    return np.clip(np.round(values), info.min, info.max).astype(case.dtype)




@pytest.mark.parametrize("case, rounding", [pytest.param(c, r, id=f"{c.id}-{r.value}")
                                            for c in AVG_CASES + MAX_CASES + AVG16_CASES
                                            + MAX16_CASES for r in Rounding])
def test_reference_matches_oracle(case: PoolCase, rounding: Rounding) -> None:
    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert_exact(actual, expected)


def c_cases() -> list:
    """Five models through the generated C; the sanitizer builds have padding on every side of
    a strided window. The int8 ones run in both roundings; pooling involves no rounding-mode
    dependent arithmetic (the reference tests show both oracles agree), so the int16 ones run
    in one rounding each."""
    picked = [(AVG_CASES[1], False, tuple(Rounding)), (AVG_CASES[-1], True, tuple(Rounding)),
              (MAX_CASES[2], False, tuple(Rounding)), (AVG16_CASES[-1], True, (Rounding.TFLM,)),
              (MAX16_CASES[1], False, (Rounding.LITERT,))]
    return [
        pytest.param(c, r, s, id=f"{c.id}-{r.value}{'-asan' if s else ''}")
        for c, s, roundings in picked for r in roundings
    ]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernels_match_oracle(case: PoolCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)


def _wrapping_pool_model() -> bytes:
    """A global int16 AVERAGE_POOL_2D over 256 x 257 taps: the int32 window sum of 32767s
    passes 2^31, which TFLM and LiteRT wrap (two's complement) and C must not overflow."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 256, 257, 1], "int16", scale=0.01, zero_point=0)
    y = b.add_tensor("y", [1, 1, 1, 1], "int16", scale=0.01, zero_point=0)
    b.add_op("AVERAGE_POOL_2D", [x], [y], {"padding": "VALID", "filter_height": 256,
                                           "filter_width": 257, "stride_h": 1, "stride_w": 1})
    b.set_io([x], [y])
    return b.build()


def test_int16_pool_sum_wraps_like_tflite_without_undefined_behaviour() -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model = _wrapping_pool_model()
    x = np.full((1, 256, 257, 1), 32767, np.int16)
    oracles = {Rounding.TFLM: run_tflm, Rounding.LITERT: run_litert}
    for rounding in Rounding:
        (expected,) = oracles[rounding](model, [x])
        assert int(expected.reshape(-1)[0]) == -32514  # the wrapped sum, in both runtimes
        (reference,) = run_outputs(parse_model(model, "pool.tflite"), [x], rounding)
        assert_exact(reference, expected)
        (compiled,) = run_tflite_bytes(model, [x], rounding, sanitize=True)  # UBSan: no overflow
        assert_exact(compiled, expected)


def test_inspect_warns_that_the_int16_pool_sum_wraps(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from mcugen.cli import main

    path = tmp_path / "pool.tflite"
    path.write_bytes(_wrapping_pool_model())
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert result.exit_code == 0, result.output
    assert "wraps" in result.output and "65792 taps" in result.output, result.output
