"""Elementwise binary ops (ADD int16, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU;
int8, int16, float32): the numpy reference and the generated C against TFLite, both roundings.

Seeded random single-op models cover equal shapes and broadcasts up to rank 6, a constant
operand on either side, zero points across the int8 range (0 for int16, as TFLite requires),
every clamp activation, and power-of-two scales whose ties pin the rounding. Every comparison
is exact, against TFLM (Rounding.TFLM) or LiteRT's reference kernels (Rounding.LITERT).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, run_litert, run_tflm, single_rounding_requantize

from mcugen.errors import ModelError, UnsupportedError
from mcugen.frontend.tflite import parse_model
from mcugen.ops.base import DEFAULT_SETTING, Setting
from mcugen.ops.elementwise.prepare import broadcast_loop, checked_log2, mul_params, prelu_params
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.support import check_op

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
FUSED = ("ADD", "SUB", "MUL")  # ops with a fused activation
# (shape 1, shape 2); PRELU uses shape 2 as alpha's shape (it must broadcast into shape 1).
SHAPES = [
    ((2, 5, 6), (2, 5, 6)),
    ((1, 5, 4, 6), (6,)),
    ((6,), (1, 5, 4, 6)),
    ((2, 4, 1, 3), (1, 1, 5, 3)),
    ((1, 3, 4, 5), (1,)),
    ((2, 3, 1, 2, 4), (3, 2, 1, 4)),
    ((2, 1, 2, 1, 2, 3), (2, 1, 2, 1, 3)),
]
PRELU_SHAPES = [
    ((2, 5, 6), (2, 5, 6)),
    ((1, 5, 4, 6), (6,)),
    ((1, 5, 4, 6), (1, 1, 6)),
    ((2, 4, 5, 3), (4, 1, 3)),
    ((2, 3, 2, 2, 4), (3, 1, 1, 4)),
]


@dataclass(frozen=True)
class Case:
    op: str
    dtype: str
    shape1: tuple[int, ...]
    shape2: tuple[int, ...]
    scales: tuple[float, float, float]
    zero_points: tuple[int, int, int]
    seed: int
    activation: str = "NONE"
    constant: int | None = None  # which input (0 or 1) is a constant tensor
    pot: bool = False  # ADD/SUB pot_scale_int16
    input_range: int | None = None  # integers drawn from [-range, range]; float magnitude
    grid: bool = False  # int8 inputs: every pair of values ((256, 1) and (1, 256); PRELU
    # (256, 256) and (256,))

    @property
    def output_shape(self) -> tuple[int, ...]:
        if self.op == "PRELU":
            return self.shape1
        return tuple(np.broadcast_shapes(self.shape1, self.shape2))

    @property
    def second_dtype(self) -> str:
        return "int8" if self.op == "PRELU" and self.dtype == "int16" else self.dtype

    @property
    def id(self) -> str:
        dims = lambda s: "x".join(map(str, s))
        extra = (f"-const{self.constant}" if self.constant is not None else "") + \
            ("-pot" if self.pot else "")
        return (f"{self.op.lower()}-{self.dtype}-{self.seed}-{dims(self.shape1)}+{dims(self.shape2)}"
                f"-{self.activation}{extra}")


def _output_scale(op: str, dtype: str, s1: float, s2: float, rng: np.random.Generator) -> float:
    """An output scale whose range holds most of the op's results (a spread, little clipping)."""
    span = 127.0 if dtype == "int8" else 32767.0
    u = float(rng.uniform(0.6, 1.4))
    if op in ("ADD", "SUB"):
        return 1.2 * (s1 + s2) * u
    if op == "MUL":
        return s1 * s2 * span * u / 1.5
    if op == "SQUARED_DIFFERENCE":
        return max(s1, s2) ** 2 * span * u * 1.5
    return s1 * u  # MAXIMUM, MINIMUM, PRELU: the first input's range


def random_case(op: str, dtype: str, seed: int, index: int) -> Case:
    rng = np.random.default_rng(seed)
    shapes = PRELU_SHAPES if op == "PRELU" else SHAPES
    shape1, shape2 = shapes[index % len(shapes)]
    activation = ACTIVATIONS[index % 4] if op in FUSED else "NONE"
    if dtype == "float32":
        return Case(op, dtype, shape1, shape2, (1.0, 1.0, 1.0), (0, 0, 0), seed, activation,
                    constant=(None, 1, 0)[index % 3])
    s1 = float(rng.uniform(0.01, 0.1)) / (1 if dtype == "int8" else 256)
    s2 = s1 / float(10.0 ** rng.uniform(-1.0, 1.0))
    if op == "PRELU":
        s2 = float(rng.uniform(0.5, 1.0)) / 128  # alpha in about [-1, 1]
    if op in ("MAXIMUM", "MINIMUM") and index % 2 == 0:
        s2 = s1
    so = _output_scale(op, dtype, s1, s2, rng)
    span = 127.0 if dtype == "int8" else 32767.0
    if activation != "NONE" and op in ("ADD", "SUB") and \
            (np.prod(shape1) >= np.prod(shape2)) != (s1 >= s2):
        s1, s2 = s2, s1  # the input with more elements drives the clamped output's spread
    if activation == "RELU6":
        so = 6.0 / (200.0 if dtype == "int8" else 30000.0)
        if op == "MUL":
            s1, s2 = 3.0 / span, 2.5 / span
    if activation == "RELU_N1_TO_1":
        so = 1.0 / (100.0 if dtype == "int8" else 20000.0)
        s1, s2 = (so * 2, so * 1.5) if op != "MUL" else (1.5 / span, 1.2 / span)
    if dtype == "int16":
        zps = (0, 0, 0)
        if op == "PRELU":
            zps = (0, int(rng.integers(-20, 21)), 0)
    else:
        zps = tuple(int(rng.integers(-100, 101)) for _ in range(3))
        if op == "SQUARED_DIFFERENCE":
            zps = (zps[0], zps[1], -128 + int(rng.integers(0, 20)))
        if activation != "NONE":  # inputs centred near zero, so the clamp keeps a spread
            zps = (zps[0] // 5, zps[1] // 5, -100 if activation != "RELU_N1_TO_1" else 0)
    constant = (None, None, 1, 0)[index % 4] if len(shape1) <= 4 else None
    return Case(op, dtype, shape1, shape2, (s1, s2, so), zps, seed, activation, constant)  # type: ignore[arg-type]


def random_inputs(case: Case) -> list[np.ndarray]:
    rng = np.random.default_rng(case.seed + 10_000)
    if case.grid:
        values = np.arange(-128, 128, dtype=np.int8)
        if case.op == "PRELU":  # alpha must broadcast into the input's shape
            return [np.repeat(values.reshape(256, 1), 256, axis=1), values]
        return [values.reshape(256, 1), values.reshape(1, 256)]
    arrays = []
    for shape, dtype in ((case.shape1, case.dtype), (case.shape2, case.second_dtype)):
        if dtype == "float32":
            magnitude = 3.0 if case.input_range is None else float(case.input_range)
            arrays.append((rng.standard_normal(shape) * magnitude).astype(np.float32))
        else:
            info = np.iinfo(dtype)
            low, high = (info.min, info.max) if case.input_range is None else \
                (-case.input_range, case.input_range)
            arrays.append(rng.integers(low, high + 1, size=shape).astype(dtype))
    if case.op in ("MAXIMUM", "MINIMUM") and case.dtype != "float32":
        # A narrower second input (a broadcast scalar, say) leaves both inputs in the result.
        arrays[1] = (arrays[1] // 8).astype(case.dtype)
    return arrays


def build_model(case: Case, values: list[np.ndarray]) -> bytes:
    b = ModelBuilder(case.id)

    def quant(i: int) -> dict:
        if case.dtype == "float32":
            return {}
        return {"scale": case.scales[i], "zero_point": case.zero_points[i]}

    tensors = [
        b.add_tensor(name, shape, dtype, **quant(i),
                     data=values[i] if case.constant == i else None)
        for i, (name, shape, dtype) in enumerate(
            (("a", case.shape1, case.dtype), ("b", case.shape2, case.second_dtype)))
    ]
    y = b.add_tensor("y", case.output_shape, case.dtype, **quant(2))
    options: dict | None = None
    if case.op in FUSED:
        options = {"fused_activation_function": case.activation}
        if case.op != "MUL":
            options["pot_scale_int16"] = case.pot
    b.add_op(case.op, tensors, [y], options)
    b.set_io([t for i, t in enumerate(tensors) if case.constant != i], [y])
    return b.build()


def model_and_inputs(case: Case) -> tuple[bytes, list[np.ndarray]]:
    values = random_inputs(case)
    model = build_model(case, values)
    return model, [v for i, v in enumerate(values) if case.constant != i]


def _cases() -> list[Case]:
    plan = {
        "ADD": ("int8", "int16", "float32"),
        "SUB": ("int8", "int16", "float32"),
        "MUL": ("int8", "int16", "float32"),
        "SQUARED_DIFFERENCE": ("int8", "int16", "float32"),
        "MAXIMUM": ("int8", "int16", "float32"),
        "MINIMUM": ("int8", "int16", "float32"),
        "PRELU": ("int8", "int16", "float32"),
    }
    cases, seed = [], 700
    for op, dtypes in plan.items():
        for dtype in dtypes:
            count = 4 if dtype == "float32" else 9
            for index in range(count):
                case = random_case(op, dtype, seed, index)
                if op == "PRELU" and dtype == "float32" and len(case.shape1) > 4:
                    case = replace(case, shape1=(2, 4, 5, 3), shape2=(4, 1, 3))
                cases.append(case)
                seed += 1
    return cases


def tie_cases() -> list[Case]:
    """Power-of-two scales: exact rescales whose halves tell double from single rounding."""
    return [
        Case("SUB", "int8", (16, 16), (16, 16), (2**-4, 2**-4, 2**-2), (0, 0, 0), 90),
        Case("MUL", "int8", (16, 16), (16, 16), (2**-4, 2**-4, 2**-6), (3, -5, 1), 91),
        Case("MUL", "int16", (8, 32), (8, 32), (2**-8, 2**-8, 2**-14), (0, 0, 0), 92,
             input_range=400),
        Case("SQUARED_DIFFERENCE", "int8", (256, 1), (1, 256), (0.05, 0.037, 0.35),
             (3, -2, -128), 93, grid=True),
        Case("PRELU", "int8", (256, 256), (256,), (2**-4, 2**-7, 2**-3), (0, 0, 0), 94,
             grid=True),
        Case("ADD", "int16", (8, 32), (8, 32), (2**-10, 2**-10, 2**-8), (0, 0, 0), 95),
        Case("SUB", "int16", (8, 32), (8, 32), (2**-10, 2**-10, 2**-8), (0, 0, 0), 96),
    ]


def pot_cases() -> list[Case]:
    """int16 ADD/SUB with pot_scale_int16: LiteRT's power-of-two path, TFLM's general path."""
    return [
        Case("ADD", "int16", (4, 64), (4, 64), (2**-12, 2**-10, 2**-10), (0, 0, 0), 97, pot=True),
        Case("SUB", "int16", (4, 64), (4, 64), (2**-10, 2**-13, 2**-10), (0, 0, 0), 98, pot=True,
             activation="RELU"),
        Case("SUB", "int16", (3, 4, 64), (64,), (2**-10, 2**-12, 2**-10), (0, 0, 0), 99, pot=True),
        # pot_scale_int16 set but a scale that is no power of two: the general path in both.
        Case("ADD", "int16", (3, 4, 64), (64,), (2**-10, 0.0003, 2**-10), (0, 0, 0), 89, pot=True),
    ]


def overflow_cases() -> list[Case]:
    """float32 results beyond FLT_MAX: ADD/SUB/MUL clamp infinities to +-FLT_MAX even with no
    activation (ActivationFunctionWithMinMax over [lowest, max]); SQUARED_DIFFERENCE does not."""
    one = (1.0, 1.0, 1.0)
    return [
        Case("MUL", "float32", (8, 16), (8, 16), one, (0, 0, 0), 80, input_range=10**19),
        Case("ADD", "float32", (8, 16), (16,), one, (0, 0, 0), 81, input_range=10**38),
        Case("SQUARED_DIFFERENCE", "float32", (8, 16), (8, 16), one, (0, 0, 0), 82,
             input_range=10**19),
    ]


def precision_cases() -> list[Case]:
    """Large int16 tensors, where a multiplier one unit off shows in the outputs: MUL and PRELU
    differ between TFLM (double) and LiteRT (float32 scale arithmetic); SUB's ratios are double
    in both (a float32 division misses 25 elements of the TFLM output here)."""
    big = (256, 256)
    return [
        Case("SUB", "int16", big, big, (0.00013953955203760415, 5.802251325803809e-05,
                                        0.00017384062812197953), (0, 0, 0), 101),
        Case("MUL", "int16", big, big, (0.0003903353645000607, 0.0002684110077098012,
                                        0.002746406959688138), (0, 0, 0), 100),
        Case("PRELU", "int16", big, (256,), (0.00027696110191754997, 0.0036287096271806095,
                                             0.00023438925563823432), (0, 0, 0), 100),
        Case("ADD", "int16", big, big, (0.00021, 0.00017, 0.00031), (0, 0, 0), 102),
        Case("SQUARED_DIFFERENCE", "int16", big, big, (0.00021, 0.00017, 0.00031), (0, 0, 0), 103),
    ]


CASES = _cases() + tie_cases() + pot_cases() + overflow_cases() + precision_cases()


def _reference(case: Case, model: bytes, inputs: list[np.ndarray], rounding: Rounding) -> np.ndarray:
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), inputs, rounding)
    return actual


def _modes(case: Case) -> list[Rounding]:
    """LiteRT has no int16 SQUARED_DIFFERENCE kernel (mcugen refuses it in that mode)."""
    if case.op == "SQUARED_DIFFERENCE" and case.dtype == "int16":
        return [Rounding.TFLM]
    return list(Rounding)


@pytest.mark.parametrize("case, rounding", [pytest.param(c, r, id=f"{c.id}-{r.value}")
                                            for c in CASES for r in _modes(c)])
def test_reference_matches_oracle(case: Case, rounding: Rounding) -> None:
    model, inputs = model_and_inputs(case)
    graph = parse_model(model, f"{case.id}.tflite")
    assert [p for op in graph.ops for p in check_op(op)] == []
    expected = oracle_output(model, inputs, rounding)
    assert_exact(_reference(case, model, inputs, rounding), expected)


def test_ties_need_double_rounding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Single rounding of MultiplyByQuantizedMultiplier misses the tie cases' oracle outputs:
    MUL, SQUARED_DIFFERENCE, PRELU and int16 ADD/SUB round twice in both runtimes."""
    from mcugen.ops.elementwise import reference as elementwise

    for case in tie_cases():
        model, inputs = model_and_inputs(case)
        for rounding in _modes(case):
            expected = oracle_output(model, inputs, rounding)
            monkeypatch.setattr(elementwise, "multiply_by_quantized_multiplier",
                                single_rounding_requantize)
            single = _reference(case, model, inputs, rounding)
            monkeypatch.undo()
            assert np.sum(single != expected) > 0, (case.id, rounding)


def test_pot_path_differs_between_runtimes() -> None:
    """With pot_scale_int16, LiteRT rounds the finer input once by a shift while TFLM rescales it
    by the general path; their outputs differ, and each mode matches its own runtime."""
    case = pot_cases()[0]
    model, inputs = model_and_inputs(case)
    tflm, litert = run_tflm(model, inputs)[0], run_litert(model, inputs)[0]
    assert np.sum(tflm != litert) > 0
    assert_exact(_reference(case, model, inputs, Rounding.TFLM), tflm)
    assert_exact(_reference(case, model, inputs, Rounding.LITERT), litert)


def test_add_without_options_table_takes_the_general_path() -> None:
    """An int16 ADD written with no options table: LiteRT keeps pot_scale_int16 false (its
    zero-initialised params), not the schema default true, so it takes the general path."""
    case = pot_cases()[0]
    values = random_inputs(case)
    b = ModelBuilder(case.id)
    a, c = (b.add_tensor(n, case.shape1, "int16", scale=s, zero_point=0)
            for n, s in (("a", case.scales[0]), ("b", case.scales[1])))
    y = b.add_tensor("y", case.output_shape, "int16", scale=case.scales[2], zero_point=0)
    b.add_op("ADD", [a, c], [y], options_table=False)
    b.set_io([a, c], [y])
    model = b.build()
    graph = parse_model(model, "no_table.tflite")
    assert graph.ops[0].options.pot_scale_int16 is False
    litert = run_litert(model, values)[0]
    pot_model, _ = model_and_inputs(case)
    assert np.sum(run_litert(pot_model, values)[0] != litert) > 0  # the flag matters here
    assert_exact(run_outputs(graph, values, Rounding.LITERT)[0], litert)


def test_mul_and_prelu_differ_between_runtimes() -> None:
    """The precision cases' MUL and PRELU outputs differ between TFLM and LiteRT (so each mode
    needs its own multipliers; test_reference_matches_oracle holds each mode to its runtime)."""
    for case in precision_cases()[1:3]:
        model, inputs = model_and_inputs(case)
        assert np.sum(run_tflm(model, inputs)[0] != run_litert(model, inputs)[0]) > 0, case.id


def test_litert_forms_mul_and_prelu_multipliers_in_float32() -> None:
    """LiteRT computes s1 * s2 / s_out in float32 (mul.cc, activations.cc PreluPrepare), TFLM in
    double: for these scales the two give different int32 multipliers."""
    case = Case("MUL", "int8", (4,), (4,), (0.0731, 0.0193, 0.00117), (0, 0, 0), 1)
    graph = parse_model(build_model(case, random_inputs(case)), "m.tflite")
    differ = mul_params(graph.ops[0], Rounding.TFLM) != mul_params(graph.ops[0], Rounding.LITERT)
    prelu = Case("PRELU", "int8", (4,), (4,), (0.0731, 0.0193, 0.00117), (0, 0, 0), 1)
    graph = parse_model(build_model(prelu, random_inputs(prelu)), "p.tflite")
    differ_prelu = prelu_params(graph.ops[0], Rounding.TFLM) != prelu_params(graph.ops[0], Rounding.LITERT)
    assert differ and differ_prelu


def test_checked_log2_matches_litert_tolerance() -> None:
    """CheckedLog2 accepts scales within 1e-3 (in log2) of a power of two."""
    assert checked_log2(2.0**-10) == (True, -10)
    assert checked_log2(2.0**-10 * 1.0005)[0]
    assert not checked_log2(2.0**-10 * 1.01)[0]


def test_unsupported_combinations_are_refused() -> None:
    """int16 SQUARED_DIFFERENCE in LiteRT mode, non-zero int16 zero points and mixed dtypes."""
    from mcugen.reference import run_op

    sqd = Case("SQUARED_DIFFERENCE", "int16", (4,), (4,), (0.001, 0.001, 0.01), (0, 0, 0), 1)
    graph = parse_model(build_model(sqd, random_inputs(sqd)), "s.tflite")
    with pytest.raises(UnsupportedError, match="int16 SQUARED_DIFFERENCE"):
        run_op(graph.ops[0], random_inputs(sqd), Rounding.LITERT)
    zp = Case("MUL", "int16", (4,), (4,), (0.001, 0.001, 0.01), (0, 3, 0), 1)
    graph = parse_model(build_model(zp, random_inputs(zp)), "z.tflite")
    assert any("zero point 3" in p for p in check_op(graph.ops[0]))
    wide = Case("ADD", "int8", (1, 1, 1, 1, 1, 1, 4), (4,), (0.1, 0.1, 0.1), (0, 0, 0), 1)
    with pytest.raises(ModelError, match="rank 7"):  # the validation stage's shape rule, first
        parse_model(build_model(wide, random_inputs(wide)), "w.tflite")



def test_prepare_refusals_are_reported_as_rules() -> None:
    """What TFLite's Prepare refuses (a rescale that is not below 1, LiteRT's power-of-two path
    outside its limits, int16 SQUARED_DIFFERENCE in LiteRT mode) and a float constant the C
    cannot write are support rules: check_op names them, in the build's rounding mode."""
    litert = Setting(rounding=Rounding.LITERT)

    def problems(case: Case, setting: Setting = DEFAULT_SETTING, values: list | None = None) -> list[str]:
        model = build_model(case, values if values is not None else random_inputs(case))
        return check_op(parse_model(model, "m.tflite").ops[0], setting)

    tiny_output = Case("ADD", "int8", (4,), (4,), (0.1, 0.1, 1e-9), (0, 0, 0), 1)
    assert any("rescales are below 1" in p and "output rescale" in p and "outside (0, 1)" in p
               for p in problems(tiny_output))
    sqd = Case("SQUARED_DIFFERENCE", "int16", (4,), (4,), (0.001, 0.001, 0.01), (0, 0, 0), 1)
    assert problems(sqd) == []
    assert any("no int16 SQUARED_DIFFERENCE kernel" in p for p in problems(sqd, litert))
    pot = pot_cases()[0]  # ADD, one input 4x finer than the output, the other at its scale
    assert problems(pot, litert) == []
    both_finer = replace(pot, scales=(2**-12, 2**-12, 2**-10))
    assert any("power-of-two path" in p and "exponents -2 and -2" in p
               for p in problems(both_finer, litert))
    too_fine = replace(pot, scales=(2**-30, 2**-10, 2**-10))
    assert any("power-of-two shift -20" in p for p in problems(too_fine, litert))
    broadcast = replace(pot, shape1=(3, 4, 64), shape2=(64,))
    assert problems(broadcast) == []
    assert any("same shape" in p for p in problems(broadcast, litert))
    assert problems(replace(broadcast, op="SUB"), litert) == []
    infinite = Case("MUL", "float32", (4,), (4,), (1.0, 1.0, 1.0), (0, 0, 0), 1, constant=1)
    values = random_inputs(infinite)
    values[1][2] = np.inf
    assert any("no infinity or NaN" in p and "'b'" in p for p in problems(infinite, values=values))


def _c_picks() -> list:
    """Three or four models per op kind through the generated C, in both roundings: the
    quantized dtypes with a constant operand, broadcasts up to rank 6, LiteRT's int16
    power-of-two path, float32; two of them sanitized (mcugen_elementwise.c's integer
    and float paths)."""
    wanted = [("ADD", "int16", False), ("ADD", "float32", False), ("ADD", "int16", True),
              ("SUB", "int8", False), ("SUB", "float32", False),
              ("MUL", "int8", False), ("MUL", "int16", False), ("MUL", "float32", False),
              ("SQUARED_DIFFERENCE", "int8", False), ("SQUARED_DIFFERENCE", "int16", False),
              ("SQUARED_DIFFERENCE", "float32", False),
              ("MAXIMUM", "int8", False), ("MAXIMUM", "float32", False),
              ("MINIMUM", "int16", False), ("MINIMUM", "float32", False),
              ("PRELU", "int8", False), ("PRELU", "int16", False), ("PRELU", "float32", False)]
    sanitized = {("SUB", "int8"), ("ADD", "float32")}  # one integer and one float kernel
    params = []
    for op, dtype, pot in wanted:
        pool = pot_cases() if pot else CASES
        case = next(c for c in pool if c.op == op and c.dtype == dtype and c.pot == pot and
                    (pot or c.constant is not None or len(c.shape1) > 4))
        sanitize = (op, dtype) in sanitized and not pot
        for rounding in _modes(case):
            params.append(pytest.param(case, rounding, sanitize,
                                       id=f"{case.id}-{rounding.value}{'-asan' if sanitize else ''}"))
    return params


@pytest.mark.parametrize("case, rounding, sanitize", _c_picks())
def test_c_kernel_matches_oracle(case: Case, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, inputs = model_and_inputs(case)
    expected = oracle_output(model, inputs, rounding)
    (actual,) = run_tflite_bytes(model, inputs, rounding, sanitize=sanitize)
    assert_exact(actual, expected)


# Shapes whose broadcast no two adjacent dimensions can merge: rank 6 fills all six loop levels
# of mcugen_elementwise.c's broadcast_rows, rank 5 the five inner ones (level 0 has extent 1).
DEEP_BROADCASTS = [((2, 1, 3, 1, 2, 1), (1, 3, 1, 2, 1, 4), 6), ((3, 1, 2, 1, 5), (4, 1, 3, 5), 5)]


def _deep_broadcast_params() -> list:
    params = []
    for seed, (op, dtype) in enumerate([("ADD", "int8"), ("MUL", "int16"), ("SUB", "float32"),
                                        ("MAXIMUM", "int8")]):
        for shape1, shape2, levels in DEEP_BROADCASTS:
            case = replace(random_case(op, dtype, 7000 + seed, 0), shape1=shape1, shape2=shape2,
                           constant=None)
            params += [pytest.param(case, levels, r, id=f"{case.id}-{r.value}") for r in _modes(case)]
    return params


@pytest.mark.parametrize("case, levels, rounding", _deep_broadcast_params())
def test_c_kernel_rank5_and_rank6_broadcasts_match_oracle(case: Case, levels: int,
                                                          rounding: Rounding) -> None:
    """The generated C on broadcasts that really use the outer loop levels (the C picks above
    may all be rank <= 4): every level's extent above one, both inputs with distinct strides."""
    from mcugen.toolchain.host import run_tflite_bytes

    loop = broadcast_loop(case.shape1, case.shape2, case.output_shape)
    used = [n > 1 for n in loop.extent]
    assert used == [False] * (6 - levels) + [True] * levels, loop
    model, inputs = model_and_inputs(case)
    expected = oracle_output(model, inputs, rounding)
    (actual,) = run_tflite_bytes(model, inputs, rounding)
    assert_exact(actual, expected)
