"""RESIZE_NEAREST_NEIGHBOR (int8, int16, float32) and RESIZE_BILINEAR (int8, float32): the numpy
reference and the C kernels against TFLite, in both roundings.

Seeded random single-op models up- and down-sample by integer and non-integer ratios (also to
and from size 1), with every allowed combination of align_corners and half_pixel_centers;
bilinear int8 inputs include exact ties of the 2^20 division. int16 bilinear is refused: TFLM
has no kernel for it (checked below against the interpreter itself).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, oracle_output, run_oracle, run_tflm

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.support import check_op

FLAGS = [(False, False), (True, False), (False, True), (True, True)]
# (input h, w) -> (output h, w)
SIZES = [((4, 5), (8, 10)), ((6, 7), (3, 4)), ((5, 3), (7, 11)), ((3, 8), (5, 5)),
         ((1, 4), (3, 7)), ((7, 6), (1, 2)), ((9, 4), (4, 9)), ((2, 2), (6, 6))]


@dataclass(frozen=True)
class ResizeCase:
    kind: str
    dtype: str
    batch: int
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    channels: int
    align_corners: bool
    half_pixel_centers: bool
    seed: int

    @property
    def id(self) -> str:
        kind = "nearest" if self.kind == "RESIZE_NEAREST_NEIGHBOR" else "bilinear"
        flags = ("a" if self.align_corners else "") + ("h" if self.half_pixel_centers else "")
        return (f"{kind}{self.seed}-{self.dtype}-{self.batch}x{self.in_hw[0]}x{self.in_hw[1]}x"
                f"{self.channels}-to{self.out_hw[0]}x{self.out_hw[1]}-{flags or 'plain'}")


def cases(kind: str, dtypes: tuple[str, ...], flags: list[tuple[bool, bool]], first_seed: int
          ) -> list[ResizeCase]:
    result = []
    for i, (in_hw, out_hw) in enumerate(SIZES * 2):
        align, half = flags[i % len(flags)]
        result.append(ResizeCase(kind, dtypes[i % len(dtypes)], 1 + (i % 3 == 2), in_hw, out_hw,
                                 2 + i % 3, align, half, first_seed + i))
    return result


NEAREST = cases("RESIZE_NEAREST_NEIGHBOR", ("int8", "int16", "float32"), FLAGS, 700)
BILINEAR = cases("RESIZE_BILINEAR", ("int8", "float32"), FLAGS[:3], 800)


def build_model(case: ResizeCase, dtype: str | None = None) -> bytes:
    dtype = dtype or case.dtype
    zero_point = 0 if dtype == "int16" else 3
    quant = {} if dtype == "float32" else {"scale": 0.05, "zero_point": zero_point}
    b = ModelBuilder(case.id)
    x = b.add_tensor("x", (case.batch, *case.in_hw, case.channels), dtype, **quant)
    size = b.add_tensor("size", (2,), "int32", data=np.array(case.out_hw, np.int32))
    y = b.add_tensor("y", (case.batch, *case.out_hw, case.channels), dtype, **quant)
    b.add_op(case.kind, [x, size], [y], {"align_corners": case.align_corners,
                                         "half_pixel_centers": case.half_pixel_centers})
    b.set_io([x], [y])
    return b.build()


def random_input(case: ResizeCase) -> np.ndarray:
    rng = np.random.default_rng(case.seed + 10_000)
    shape = (case.batch, *case.in_hw, case.channels)
    if case.dtype == "float32":
        return (rng.standard_normal(shape) * 10).astype(np.float32)
    info = np.iinfo(case.dtype)
    values = rng.integers(info.min, info.max, size=shape, endpoint=True)
    if case.kind == "RESIZE_BILINEAR":
        # Odd/even neighbours half a step apart make exact .5 results at midpoints.
        parity = np.indices(shape[:-1]).sum(0) % 2
        values[..., 0] = rng.integers(-3, 4, size=shape[:-1]) * 2 + parity
    return values.astype(case.dtype)


def spread(case: ResizeCase) -> int:
    """Outputs so small that they cannot hold six distinct values ask for less spread."""
    return min(6, case.batch * case.out_hw[0] * case.out_hw[1] * case.channels)


@pytest.mark.parametrize("case, rounding", [pytest.param(c, r, id=f"{c.id}-{r.value}")
                                            for c in NEAREST + BILINEAR for r in Rounding])
def test_reference_matches_oracle(case: ResizeCase, rounding: Rounding) -> None:
    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding, min_distinct=spread(case))
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), [x], rounding)
    assert_exact(actual, expected)


def test_both_runtimes_round_bilinear_ties_away_from_zero() -> None:
    """Guards the rounding of the integer path: on these inputs a single rounding
    ((sum + 2^19) >> 20, TFLITE_SINGLE_ROUNDING) differs from both runtimes, mcugen does not."""
    from mcugen.ops.resize.reference import bilinear_sum_20

    differing = 0
    for case in (c for c in BILINEAR if c.dtype == "int8"):
        model, x = build_model(case), random_input(case)
        graph = parse_model(model, f"{case.id}.tflite")
        single = (bilinear_sum_20(x, graph.ops[0]) + (1 << 19)) >> 20
        for rounding in Rounding:
            (expected,) = run_oracle(model, [x], rounding)
            (actual,) = run_outputs(graph, [x], rounding)
            assert_exact(actual, expected)
            differing += int(np.sum(single != expected))
    assert differing > 0


def test_int16_bilinear_is_refused_like_tflm() -> None:
    """TFLM has no int16 RESIZE_BILINEAR: its interpreter fails, and support.py says no."""
    case = BILINEAR[0]
    model = build_model(case, dtype="int16")
    x = np.zeros((case.batch, *case.in_hw, case.channels), np.int16)
    with pytest.raises(Exception, match="[Ii]nvo"):
        run_tflm(model, [x])
    (op,) = parse_model(model, "int16.tflite").ops
    assert any("int16" in problem for problem in check_op(op))


def test_resize_that_changes_batch_or_channels_is_refused() -> None:
    """Only height and width are resized: an output with other channels breaks a rule (it
    used to be refused by an error in the tables' code)."""
    case = NEAREST[0]
    (op,) = parse_model(build_model(case), "nearest.tflite").ops
    assert check_op(op) == []
    y = op.outputs[0]
    y.shape = (*y.shape[:3], y.shape[3] + 1)
    problems = check_op(op)
    assert len(problems) == 1 and "batch and channels" in problems[0], problems


def c_cases() -> list:
    """Five models through the generated C: nearest int8 (align_corners), int16 (sanitized) and
    float32 (half_pixel_centers), one rounding each (nearest copies values, the same in both
    modes); bilinear int8 (half_pixel_centers, sanitized) and float32 (align_corners), both
    roundings."""
    both = tuple(Rounding)
    picked = [(NEAREST[1], False, (Rounding.TFLM,)), (NEAREST[4], True, (Rounding.LITERT,)),
              (NEAREST[2], False, (Rounding.TFLM,)), (BILINEAR[2], True, both),
              (BILINEAR[4], False, both)]
    return [pytest.param(c, r, s, id=f"{c.id}-{r.value}{'-asan' if s else ''}")
            for c, s, roundings in picked for r in roundings]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernels_match_oracle(case: ResizeCase, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, x = build_model(case), random_input(case)
    expected = oracle_output(model, [x], rounding, min_distinct=spread(case))
    (actual,) = run_tflite_bytes(model, [x], rounding, sanitize=sanitize)
    assert_exact(actual, expected)
