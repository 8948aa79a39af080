"""MEAN, SUM and REDUCE_MAX: the numpy reference and the C kernels against TFLite.

The first part covers int8 MEAN in depth (below); the second repeats most geometries, plus
reductions over every axis, for SUM (int8, int16, float32), MEAN (int16, float32) and
REDUCE_MAX (int8, float32), keep_dims alternating. Float outputs compare as bit patterns.
Quantized SUM runs against TFLM only: LiteRT 2.3.0's reference SUM misreads its input (shown
by a test), and mcugen refuses that mode. Float edge cases pin down where the runtimes seed
their accumulators differently.

int8 MEAN:

Seeded random single-op models reduce over [1, 2] (keep_dims both ways, also written [2, 1]
and [-3, 2]), [1], [2], [3], [-1], [1, 2, 3], [0, 3] and a duplicated axis, on 4-D NHWC inputs,
plus 2-D and 3-D inputs; input and output scales and zero points differ. Power-of-two scales
and counts make the rescale exact, so that ties tell the roundings apart. Every comparison is
exact, in both roundings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, run_oracle, single_rounding_requantize

from mcugen.frontend.tflite import parse_model
from mcugen.ops.reduce.prepare import loop_nest
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

# (input shape, axes) pairs, each tried with keep_dims true and false.
GEOMETRIES = [
    ((1, 6, 7, 8), (1, 2)),
    ((2, 5, 4, 6), (2, 1)),
    ((1, 3, 3, 16), (-3, 2)),
    ((1, 9, 5, 6), (1,)),
    ((2, 4, 9, 5), (2,)),
    ((1, 5, 6, 24), (3,)),
    ((1, 4, 5, 12), (-1,)),
    ((16, 3, 2, 5), (1, 2, 3)),
    ((3, 4, 5, 6), (0, 3)),
    ((1, 7, 6, 5), (1, 1)),
    ((24, 20), (1,)),
    ((6, 11, 4), (0, 2)),
]


@dataclass(frozen=True)
class MeanCase:
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    keep_dims: bool
    input_scale: float
    output_scale: float
    input_zero_point: int
    output_zero_point: int
    seed: int

    @property
    def reduced(self) -> tuple[int, ...]:
        return tuple(sorted({a % len(self.shape) for a in self.axes}))

    @property
    def count(self) -> int:
        return math.prod(self.shape[a] for a in self.reduced)

    @property
    def output_shape(self) -> tuple[int, ...]:
        if self.keep_dims:
            return tuple(1 if a in self.reduced else d for a, d in enumerate(self.shape))
        return tuple(d for a, d in enumerate(self.shape) if a not in self.reduced)

    @property
    def id(self) -> str:
        dims = "x".join(map(str, self.shape))
        axes = ",".join(map(str, self.axes))
        return f"mean{self.seed}-{dims}-axes{axes}-{'keep' if self.keep_dims else 'drop'}"


def random_cases(first_seed: int) -> list[MeanCase]:
    cases = []
    for i, (shape, axes) in enumerate(GEOMETRIES * 2):
        seed = first_seed + i
        rng = np.random.default_rng(seed)
        count = math.prod(shape[a % len(shape)] for a in set(axes))
        input_scale = float(rng.uniform(0.01, 0.1))
        input_zero_point = int(rng.integers(-128, 128))
        # A mean of `count` uniform int8 values lies about -0.5 - input_zero_point input steps
        # from zero and spreads about 74 / sqrt(count) steps. The output scale puts the spread
        # over about 20 output steps, or fewer where the offset would otherwise saturate; the
        # output zero point re-centres the offset.
        ratio = max(74.0 / math.sqrt(count) / 20.0, (abs(input_zero_point) + 0.5) / 100.0)
        output_scale = input_scale * ratio * float(rng.uniform(0.8, 1.25))
        offset = round((input_zero_point + 0.5) * input_scale / output_scale)
        output_zero_point = int(np.clip(offset + int(rng.integers(-10, 11)), -128, 127))
        cases.append(MeanCase(shape, axes, keep_dims=i < len(GEOMETRIES), input_scale=input_scale,
                              output_scale=output_scale, input_zero_point=input_zero_point,
                              output_zero_point=output_zero_point, seed=seed))
    return cases


def tie_cases() -> list[MeanCase]:
    """Equal power-of-two scales and 4 reduced elements: the output is sum / 4 exactly, so
    a quarter of the sums are ties (x.5), which double rounding sends away from zero and
    single rounding up."""
    return [
        MeanCase((1, 2, 2, 64), (1, 2), True, 2.0**-4, 2.0**-4, 3, -5, 90),
        MeanCase((2, 16, 4), (2,), False, 2.0**-6, 2.0**-6, 0, 0, 91),
    ]


CASES = random_cases(600) + tie_cases()


def build_model(case: MeanCase) -> bytes:
    b = ModelBuilder(case.id)
    x = b.add_tensor("x", case.shape, "int8", scale=case.input_scale, zero_point=case.input_zero_point)
    axes = b.add_tensor("axes", (len(case.axes),), "int32", data=np.array(case.axes, np.int32))
    y = b.add_tensor("y", case.output_shape, "int8", scale=case.output_scale,
                     zero_point=case.output_zero_point)
    b.add_op("MEAN", [x, axes], [y], {"keep_dims": case.keep_dims})
    b.set_io([x], [y])
    return b.build()


def random_input(case: MeanCase) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    return rng.integers(-128, 128, size=case.shape, dtype=np.int8)




@pytest.mark.parametrize("case, rounding",
                         [pytest.param(c, r, id=f"{c.id}-{r.value}") for c in CASES for r in Rounding])
def test_reference_matches_oracle(case: MeanCase, rounding: Rounding) -> None:
    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert_exact(actual, expected)


def test_both_runtimes_round_mean_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteRT 2.3.0's int8 MEAN rounds twice like TFLM; single rounding misses its ties.

    Guards the measured fact behind reduce's double-rounding rescale in both modes.
    """
    from mcugen.ops.reduce import reference as reduce

    for case in tie_cases():
        model, x = build_model(case), random_input(case)
        graph = parse_model(model, "ties.tflite")
        for rounding in Rounding:
            expected = oracle_output(model, [x], rounding)
            (double,) = run_outputs(graph, [x], rounding)
            monkeypatch.setattr(reduce, "multiply_by_quantized_multiplier", single_rounding_requantize)
            (single,) = run_outputs(graph, [x], rounding)
            monkeypatch.undo()
            assert np.array_equal(double, expected), case.id
            assert np.sum(single != expected) > 0, case.id


@pytest.mark.parametrize("shape, axes, levels", [
    ((1, 6, 7, 8), (1, 2), [(42, 8)]),
    ((1, 6, 7, 8), (0, 3), [(8, 1)]),
    ((2, 6, 7, 8), (0, 1, 2), [(84, 8)]),
    ((2, 6, 7, 8), (0, 2), [(2, 336), (7, 8)]),
    ((2, 4, 5, 6), (1, 2, 3), [(120, 1)]),
    ((3, 4, 5, 6), (0, 3), [(3, 120), (6, 1)]),
    ((2, 4, 9, 5), (2,), [(9, 5)]),
])
def test_loop_nest_merges_contiguous_dimensions(shape, axes, levels) -> None:
    assert loop_nest(shape, axes) == levels


def c_cases() -> list:
    """Three models through the generated C, both roundings: the NHWC global mean, two
    separated axes (sanitized), and the tie case."""
    picked = [(CASES[0], False), (CASES[8], True), (tie_cases()[0], False)]
    return [pytest.param(c, r, s, id=f"{c.id}-{r.value}{'-asan' if s else ''}")
            for c, s in picked for r in Rounding]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernel_matches_oracle(case: MeanCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding)
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)


# --- SUM, REDUCE_MAX, int16 and float32 MEAN ------------------------------------------------

@dataclass(frozen=True)
class ReduceCase:
    """A single-op MEAN, SUM or REDUCE_MAX model in int8, int16 or float32."""

    kind: str
    dtype: str
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    keep_dims: bool
    seed: int

    @property
    def reduced(self) -> tuple[int, ...]:
        return tuple(sorted({a % len(self.shape) for a in self.axes}))

    @property
    def count(self) -> int:
        return math.prod(self.shape[a] for a in self.reduced)

    @property
    def output_shape(self) -> tuple[int, ...]:
        if self.keep_dims:
            return tuple(1 if a in self.reduced else d for a, d in enumerate(self.shape))
        return tuple(d for a, d in enumerate(self.shape) if a not in self.reduced)

    @property
    def input_quant(self) -> dict:
        if self.dtype == "float32":
            return {}
        return {"scale": 0.02, "zero_point": 0 if self.dtype == "int16" else -7}

    @property
    def output_quant(self) -> dict:
        """Scales that keep the outputs spread: a sum of n values grows like sqrt(n)."""
        if self.dtype == "float32" or self.kind == "REDUCE_MAX":
            return self.input_quant
        ratio = math.sqrt(self.count) if self.kind == "SUM" else 1 / math.sqrt(self.count)
        return {"scale": 0.02 * ratio * 1.37, "zero_point": 0 if self.dtype == "int16" else 5}

    @property
    def id(self) -> str:
        dims = "x".join(map(str, self.shape))
        axes = ",".join(map(str, self.axes))
        return (f"{self.kind.lower()}{self.seed}-{self.dtype}-{dims}-axes{axes}-"
                f"{'keep' if self.keep_dims else 'drop'}")


KIND_DTYPES = [("SUM", "int8"), ("SUM", "int16"), ("SUM", "float32"), ("MEAN", "int16"),
               ("MEAN", "float32"), ("REDUCE_MAX", "int8"), ("REDUCE_MAX", "float32")]
# Geometries for these kinds add reductions over every axis (LiteRT's ReduceAllDims path).
MORE_GEOMETRIES = [*GEOMETRIES[:10], ((3, 4, 5), (0, 1, 2)), ((2, 3, 4, 5), (-1, 0, 1, 2))]
REDUCE_CASES = [ReduceCase(kind, dtype, shape, axes, (i + j) % 2 == 0, 1000 + 20 * j + i)
                for j, (kind, dtype) in enumerate(KIND_DTYPES)
                for i, (shape, axes) in enumerate(MORE_GEOMETRIES)]


def build_reduce_model(case: ReduceCase) -> bytes:
    b = ModelBuilder(case.id)
    x = b.add_tensor("x", case.shape, case.dtype, **case.input_quant)
    axes = b.add_tensor("axes", (len(case.axes),), "int32", data=np.array(case.axes, np.int32))
    y = b.add_tensor("y", case.output_shape, case.dtype, **case.output_quant)
    b.add_op(case.kind, [x, axes], [y], {"keep_dims": case.keep_dims})
    b.set_io([x], [y])
    return b.build()


def reduce_input(case: ReduceCase) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    if case.dtype == "float32":
        # Values of mixed magnitude, so that the order of float additions shows in the bits.
        values = rng.standard_normal(case.shape) * 10.0 ** rng.integers(-3, 4, size=case.shape)
        return values.astype(np.float32)
    info = np.iinfo(case.dtype)
    return rng.integers(info.min, info.max, size=case.shape, endpoint=True).astype(case.dtype)


def reduce_spread(case: ReduceCase) -> int:
    return min(6, math.prod(case.output_shape))


def litert_refuses(case: ReduceCase, rounding: Rounding) -> bool:
    """LiteRT 2.3.0's reference SUM misreads int8/int16 data (see test below): not reproduced."""
    return case.kind == "SUM" and case.dtype != "float32" and rounding is Rounding.LITERT


@pytest.mark.parametrize("case, rounding", [pytest.param(c, r, id=f"{c.id}-{r.value}")
                                            for c in REDUCE_CASES for r in Rounding
                                            if not litert_refuses(c, r)])
def test_reductions_match_oracle(case: ReduceCase, rounding: Rounding) -> None:
    model, x = build_reduce_model(case), reduce_input(case)
    expected = oracle_output(model, [x], rounding, min_distinct=reduce_spread(case))
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    if case.dtype == "float32":  # bit patterns, so that -0.0 and NaN compare too
        actual, expected = actual.view(np.int32), expected.view(np.int32)
    assert_exact(actual, expected)


def test_float_sums_are_not_exact() -> None:
    """Guards the point of the float tests: on these inputs TFLite's float32 sums differ from
    the exactly rounded sums, so matching them bit for bit needs TFLite's order of additions."""
    differing = 0
    for case in (c for c in REDUCE_CASES if c.kind == "SUM" and c.dtype == "float32"):
        model, x = build_reduce_model(case), reduce_input(case)
        (expected,) = run_oracle(model, [x], Rounding.TFLM)
        exact = x.astype(np.float64).sum(axis=case.reduced, keepdims=case.keep_dims)
        differing += int(np.sum(exact.astype(np.float32).reshape(expected.shape) != expected))
    assert differing > 0


def test_litert_reference_sum_misreads_int8_as_uint8() -> None:
    """LiteRT 2.3.0's BUILTIN_REF SUM for int8 calls QuantizedMeanOrSum on uint8 views of the
    tensors; its output equals that misreading, not the sum. mcugen refuses LITERT mode here."""
    from mcugen.errors import UnsupportedError
    from mcugen.ops.base import Setting
    from mcugen.ops.fixedpoint import multiply_by_quantized_multiplier
    from mcugen.ops.reduce.prepare import quant_reduce_params
    from mcugen.support import check_op

    case = next(c for c in REDUCE_CASES if c.kind == "SUM" and c.dtype == "int8")
    model, x = build_reduce_model(case), reduce_input(case)
    graph = parse_model(model, "sum.tflite")
    p = quant_reduce_params(graph.ops[0])
    as_uint8 = np.moveaxis(x.view(np.uint8).astype(np.int64), case.reduced,
                           range(-len(case.reduced), 0))
    total = as_uint8.reshape(*as_uint8.shape[:x.ndim - len(case.reduced)], -1).sum(-1)
    misread = np.clip(multiply_by_quantized_multiplier(total - p.input_zero_point * case.count,
                                                       p.multiplier, p.shift)
                      + p.output_zero_point, 0, 255).astype(np.uint8).view(np.int8)
    (litert,) = run_oracle(model, [x], Rounding.LITERT)
    assert np.array_equal(litert.reshape(-1), misread.reshape(-1))
    with pytest.raises(UnsupportedError, match="uint8"):
        run_outputs(graph, [x], Rounding.LITERT)
    # The refusal is a support rule of litert mode, shown by inspect and the docs.
    (op,) = graph.ops
    assert any("uint8" in problem for problem in check_op(op, Setting(Rounding.LITERT)))
    assert check_op(op, Setting(Rounding.TFLM)) == []


def reduce_c_cases() -> list:
    """Five more models through the generated C: int16 MEAN, float32 MEAN over H and W with
    keep_dims (TFLM's 4-D special case), int8 SUM (TFLM only), float32 SUM over every axis
    (LiteRT seeds with the first element; sanitized) and float32 REDUCE_MAX (sanitized)."""
    def pick(kind: str, dtype: str, index: int) -> ReduceCase:
        return [c for c in REDUCE_CASES if c.kind == kind and c.dtype == dtype][index]

    picked = [(pick("MEAN", "int16", 1), False), (pick("MEAN", "float32", 0), False),
              (pick("SUM", "int8", 3), False), (pick("SUM", "float32", 11), True),
              (pick("REDUCE_MAX", "float32", 8), True), (pick("REDUCE_MAX", "int8", 2), False)]
    return [pytest.param(c, r, s, id=f"{c.id}-{r.value}{'-asan' if s else ''}")
            for c, s in picked for r in Rounding if not litert_refuses(c, r)]


@pytest.mark.parametrize("case, rounding, sanitize", reduce_c_cases())
def test_reduction_c_kernels_match_oracle(case: ReduceCase, rounding: Rounding,
                                          sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_reduce_model(case), reduce_input(case)
    expected = oracle_output(model, [x], rounding, min_distinct=reduce_spread(case))
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    if case.dtype == "float32":
        actual, expected = actual.view(np.int32), expected.view(np.int32)
    assert_exact(actual, expected)


def edge_cases() -> list:
    """Float inputs on which the runtimes' seeds show: an all-(-0.0) SUM (TFLM's 0.0f seed
    gives +0.0, LiteRT's first-element seed -0.0), a REDUCE_MAX led by NaN (LiteRT keeps it)
    and one over -inf only (TFLM's lowest() seed gives -FLT_MAX)."""
    minus_zero = np.full((2, 3), -0.0, np.float32)
    nan_inf = np.array([[np.nan, 1.0, 2.0], [-np.inf, -np.inf, -np.inf]], np.float32)
    return [("SUM", (0, 1), minus_zero), ("REDUCE_MAX", (0, 1), nan_inf),
            ("REDUCE_MAX", (1,), nan_inf)]


@pytest.mark.parametrize("kind, axes, x", [pytest.param(*e, id=f"{e[0]}-axes{e[1]}")
                                           for e in edge_cases()])
def test_float_seeds_follow_each_runtime(kind: str, axes: tuple[int, ...], x: np.ndarray) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model = build_reduce_model(ReduceCase(kind, "float32", x.shape, axes, False, 0))
    graph = parse_model(model, "edge.tflite")
    bits = {}
    for rounding in Rounding:
        (expected,) = run_oracle(model, [x], rounding)
        (reference,) = run_outputs(graph, [x], rounding)
        assert_exact(reference.view(np.int32), expected.view(np.int32))
        if len(axes) == x.ndim and rounding is Rounding.LITERT:  # the seeded C path
            (compiled,) = run_tflite_bytes(model, [x], rounding)
            assert_exact(compiled.view(np.int32), expected.view(np.int32))
        bits[rounding] = expected.view(np.int32).tolist()
    if len(axes) == x.ndim:  # the modes differ exactly where every axis is reduced
        assert bits[Rounding.TFLM] != bits[Rounding.LITERT]


def test_int16_reduce_max_is_refused_like_tflm() -> None:
    """TFLM has no int16 REDUCE_MAX: its interpreter fails, and support.py says no."""
    from oracles import run_tflm

    from mcugen.support import check_op

    case = ReduceCase("REDUCE_MAX", "int16", (2, 3, 4), (1,), False, 0)
    model = build_reduce_model(case)
    with pytest.raises(Exception, match="[Ii]nvo"):
        run_tflm(model, [np.zeros(case.shape, np.int16)])
    (op,) = parse_model(model, "int16.tflite").ops
    assert any("int16" in problem for problem in check_op(op))


def test_inspect_shows_the_litert_sum_rule(tmp_path: Path) -> None:
    """The refusal of quantized SUM in litert mode is a rule `inspect --rounding litert` lists."""
    from click.testing import CliRunner

    from mcugen.cli import main

    case = next(c for c in REDUCE_CASES if c.kind == "SUM" and c.dtype == "int8")
    path = tmp_path / "sum.tflite"
    path.write_bytes(build_reduce_model(case))
    litert = CliRunner().invoke(main, ["inspect", str(path), "--rounding", "litert"])
    assert litert.exit_code == 2 and "reads int8 and int16 data as uint8" in litert.output, litert.output
    tflm = CliRunner().invoke(main, ["inspect", str(path)])
    assert tflm.exit_code == 0, tflm.output
