"""QUANTIZE and DEQUANTIZE: the numpy reference and the generated C against TFLite, bit-exact
in both roundings.

float32 -> int8/int16 with values on exact halves of the output step (ties go away from zero)
and beyond the output range; int8/int16 -> int8/int16 requantization over every int8 value and
an int16 grid, with random scales and zero points and a ratio of exactly 1/2; int8/int16 ->
float32 compared bit for bit; int8 <-> uint8 (TFLM's only uint8 conversions) and uint8 ->
float32.
"""

from __future__ import annotations

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import run_oracle
from unary_models import (
    INT8_ALL,
    INT16_GRID,
    Unary,
    assert_same_bits,
    assert_spread,
    random_int8_quant,
    random_int16_quant,
    unary_model,
)

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.support import check_op


def cases() -> list[Unary]:
    rng = np.random.default_rng(2400)
    result = []
    for _ in range(5):
        q8a, q8b = random_int8_quant(rng), random_int8_quant(rng)
        q16a, q16b = random_int16_quant(rng), random_int16_quant(rng)
        result += [
            Unary("QUANTIZE", "float32", "int8", None, q8a),
            Unary("QUANTIZE", "float32", "int16", None, q16a),
            Unary("QUANTIZE", "int8", "int8", q8a, q8b),
            Unary("QUANTIZE", "int8", "int16", q8a, q16a),
            Unary("QUANTIZE", "int16", "int8", q16a, q8b),
            Unary("QUANTIZE", "int16", "int16", q16a, q16b),
            Unary("DEQUANTIZE", "int8", "float32", q8a, None),
            Unary("DEQUANTIZE", "int16", "float32", q16a, None),
        ]
    for _ in range(3):
        q8, u8 = random_int8_quant(rng), random_int8_quant(rng)
        u8 = (u8[0], u8[1] + 128)
        result += [Unary("QUANTIZE", "int8", "uint8", q8, u8), Unary("QUANTIZE", "uint8", "int8", u8, q8),
                   Unary("DEQUANTIZE", "uint8", "float32", u8, None)]
    result += [
        Unary("QUANTIZE", "int8", "uint8", (0.02, 3), (0.02, 131)),  # TFLite's XOR 0x80 shortcut
        Unary("QUANTIZE", "uint8", "int8", (0.02, 131), (0.02, 3)),
        Unary("QUANTIZE", "int8", "int8", (0.02, 3), (0.04, -7)),  # halves
        Unary("QUANTIZE", "int8", "int8", (0.02, 3), (0.02, -7)),  # equal scales
        Unary("QUANTIZE", "int16", "int16", (1e-4, 0), (2e-4, 0)),
        Unary("QUANTIZE", "int16", "int8", (1e-3, 0), (0.002, 0)),
    ]
    return result


def case_input(case: Unary) -> np.ndarray:
    if case.in_dtype == "int8":
        return INT8_ALL
    if case.in_dtype == "uint8":
        return np.arange(256, dtype=np.uint8)
    if case.in_dtype == "int16":
        return INT16_GRID
    assert case.out_quant is not None
    scale = case.out_quant[0]
    rng = np.random.default_rng(2500)
    steps = 120 if case.out_dtype == "int8" else 30000
    ties = (np.arange(-steps, steps, max(1, steps // 60)) + 0.5).astype(np.float32) * np.float32(scale)
    spread = rng.uniform(-1.3, 1.3, 500) * steps * scale
    # +-1e4 saturate the output but stay inside int32 after the division: beyond it TFLite's
    # float-to-int32 cast is undefined (x86 gives INT32_MIN) and mcugen saturates instead.
    return np.concatenate([ties, spread, [0.0, -0.0, 1e4, -1e4]]).astype(np.float32)


@pytest.mark.parametrize("case, rounding", [pytest.param(c, r, id=f"{c.id}-{r.value}")
                                            for c in cases() for r in Rounding])
def test_reference_matches_oracle(case: Unary, rounding: Rounding) -> None:
    x = case_input(case)
    model = unary_model(case, x.shape)
    (expected,) = run_oracle(model, [x], rounding)
    assert_spread(expected, 3, case.id)
    (actual,) = run_outputs(parse_model(model, "case.tflite"), [x], rounding)
    assert_same_bits(actual, expected, case.id)


@pytest.mark.parametrize("case", [
    Unary("QUANTIZE", "float32", "uint8", None, (0.1, 128)),
    Unary("QUANTIZE", "uint8", "int16", (0.1, 128), (0.01, 0)),
    Unary("QUANTIZE", "int8", "int32", (0.1, 0), (0.01, 0)),
    Unary("DEQUANTIZE", "int32", "float32", (0.1, 0), None),
], ids=lambda c: c.id)
def test_rules_reject_other_types(case: Unary) -> None:
    model = unary_model(case, (4,))
    problems = check_op(parse_model(model, "case.tflite").ops[0])
    assert len(problems) == 1 and "dtypes" in problems[0]


def conversion_model() -> tuple[bytes, list[np.ndarray]]:
    """Every conversion in one model: float32 in, quantized to int8 and int16, each requantized
    to both, int8 to uint8 and back, and all three dequantized."""
    b = ModelBuilder("conversions")
    n = 700
    x = b.add_tensor("x", [n], "float32")
    q8 = b.add_tensor("q8", [n], "int8", scale=0.05, zero_point=-9)
    q16 = b.add_tensor("q16", [n], "int16", scale=2e-4, zero_point=0)
    b.add_op("QUANTIZE", [x], [q8])
    b.add_op("QUANTIZE", [x], [q16])
    outputs = [q8, q16]
    for name, source, dtype, scale, zp in [("r8_8", q8, "int8", 0.1, 20), ("r8_16", q8, "int16", 1e-4, 0),
                                           ("r16_8", q16, "int8", 0.03, -3), ("r16_16", q16, "int16", 3e-4, 0)]:
        t = b.add_tensor(name, [n], dtype, scale=scale, zero_point=zp)
        b.add_op("QUANTIZE", [source], [t])
        outputs.append(t)
    u8 = b.add_tensor("u8", [n], "uint8", scale=0.07, zero_point=100)
    b.add_op("QUANTIZE", [q8], [u8])
    back = b.add_tensor("back", [n], "int8", scale=0.04, zero_point=5)
    b.add_op("QUANTIZE", [u8], [back])
    outputs += [u8, back]
    for name, source in [("d8", q8), ("d16", q16), ("du8", u8)]:
        t = b.add_tensor(name, [n], "float32")
        b.add_op("DEQUANTIZE", [source], [t])
        outputs.append(t)
    b.set_io([x], outputs)
    rng = np.random.default_rng(2600)
    values = np.concatenate([(np.arange(-200, 200) + 0.5) * np.float32(0.05),
                             rng.uniform(-8.0, 8.0, n - 400)]).astype(np.float32)
    return b.build(), [values]


@pytest.mark.parametrize("rounding, sanitize", [(Rounding.TFLM, False), (Rounding.LITERT, True)],
                         ids=["tflm", "litert-asan"])
def test_c_kernels_match_oracle(rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, inputs = conversion_model()
    expected = run_oracle(model, inputs, rounding)
    actual = run_tflite_bytes(model, inputs, rounding, sanitize=sanitize)
    reference = run_outputs(parse_model(model, "conversions.tflite"), inputs, rounding)
    for i, (a, e, r) in enumerate(zip(actual, expected, reference)):
        assert_spread(e, 50, f"output {i}")
        assert_same_bits(a, e, f"C output {i}")
        assert_same_bits(r, e, f"reference output {i}")


def test_c_float_island_matches_oracle() -> None:
    """int8 -> DEQUANTIZE -> float HARD_SWISH -> float SOFTMAX -> QUANTIZE -> int8, with the
    float intermediate as a second output: the float island runs in C exactly as in TFLite."""
    from mcugen.toolchain.host import run_tflite_bytes

    b = ModelBuilder("float_island")
    shape = [2, 128]
    x = b.add_tensor("x", shape, "int8", scale=0.05, zero_point=3)
    d, h, s = (b.add_tensor(name, shape, "float32") for name in ("d", "h", "s"))
    y = b.add_tensor("y", shape, "int8", scale=1 / 256, zero_point=-128)
    b.add_op("DEQUANTIZE", [x], [d])
    b.add_op("HARD_SWISH", [d], [h])
    b.add_op("SOFTMAX", [h], [s], {"beta": 1.0})
    b.add_op("QUANTIZE", [s], [y])
    b.set_io([x], [y, h])
    model, inputs = b.build(), [INT8_ALL.reshape(shape)]
    expected = run_oracle(model, inputs, Rounding.TFLM)
    actual = run_tflite_bytes(model, inputs, Rounding.TFLM)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert_spread(e, 10, f"output {i}")
        assert_same_bits(a, e, f"C output {i}")
