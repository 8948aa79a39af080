"""BATCH_MATMUL, int8 and int16: the numpy reference and the C kernel against TFLite, exactly.

Seeded random models cover ranks 2 to 5 for either input, broadcast batch dimensions (a 1
against n, and missing leading dimensions), adj_x and adj_y, a constant right-hand side,
int8 zero points from -128 to 127 on all three tensors and int16 with zero points 0.
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

ZERO_POINTS = (-128, 0, 17, 127, -60, 33)


@dataclass(frozen=True)
class Case:
    dtype: str
    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    m: int
    k: int
    n: int
    adj_x: bool
    adj_y: bool
    rhs_constant: bool
    zero_points: tuple[int, int, int]  # lhs, rhs, output
    seed: int

    @property
    def lhs_shape(self) -> tuple[int, ...]:
        return (*self.lhs_batch, *((self.k, self.m) if self.adj_x else (self.m, self.k)))

    @property
    def rhs_shape(self) -> tuple[int, ...]:
        return (*self.rhs_batch, *((self.n, self.k) if self.adj_y else (self.k, self.n)))

    def output_shape(self) -> tuple[int, ...]:
        rank = max(len(self.lhs_batch), len(self.rhs_batch))
        a = (1,) * (rank - len(self.lhs_batch)) + self.lhs_batch
        b = (1,) * (rank - len(self.rhs_batch)) + self.rhs_batch
        return (*(max(x, y) for x, y in zip(a, b)), self.m, self.n)

    @property
    def id(self) -> str:
        def shape(s: tuple[int, ...]) -> str:
            return "x".join(map(str, s))

        flags = ("-ax" if self.adj_x else "") + ("-ay" if self.adj_y else "")
        flags += "-const" if self.rhs_constant else ""
        return (f"bmm{self.seed}-{self.dtype}-{shape(self.lhs_shape)}-by-{shape(self.rhs_shape)}"
                f"{flags}-zp{self.zero_points[0]}_{self.zero_points[1]}")


BATCHES = (
    ((), ()),
    ((3,), (3,)),
    ((2,), ()),
    ((), (2,)),
    ((2, 3), (2, 1)),
    ((1, 3), (2, 3)),
    ((2, 1, 2), (1, 3, 2)),
    ((4,), (2, 1, 4)),
    ((2, 1, 3), (3,)),
)


def random_cases(dtype: str, count: int, first_seed: int) -> list[Case]:
    cases = []
    for i in range(count):
        rng = np.random.default_rng(first_seed + i)
        lhs_batch, rhs_batch = BATCHES[i % len(BATCHES)]
        int16 = dtype == "int16"
        zps = (0, 0, 0) if int16 else (ZERO_POINTS[i % 6], ZERO_POINTS[(i + 2) % 6],
                                       int(rng.integers(-20, 21)))
        cases.append(Case(
            dtype=dtype, lhs_batch=lhs_batch, rhs_batch=rhs_batch,
            m=int(rng.integers(1, 6)), k=int(rng.integers(1, 24)), n=int(rng.integers(2, 7)),
            adj_x=i % 2 == 1, adj_y=(i // 2) % 2 == 1, rhs_constant=i % 3 == 2,
            zero_points=zps, seed=first_seed + i,
        ))
    return cases


CASES = random_cases("int8", 27, 100) + random_cases("int16", 18, 200)


def _values(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape, dtype=dtype)


def build_model(case: Case) -> bytes:
    rng = np.random.default_rng(case.seed)
    int16 = case.dtype == "int16"
    rms = (18918.0 if int16 else 74.0 * math.sqrt(2.0)) ** 2  # rms of the offset product
    lhs_scale, rhs_scale = rng.uniform(0.01, 0.05), rng.uniform(0.01, 0.05)
    acc_std = math.sqrt(case.k) * rms
    steps = 12000.0 if int16 else 50.0
    output_scale = lhs_scale * rhs_scale * acc_std / steps
    b = ModelBuilder(case.id)
    lz, rz, oz = case.zero_points
    lhs = b.add_tensor("lhs", case.lhs_shape, case.dtype, scale=lhs_scale, zero_point=lz)
    data = _values(rng, case.dtype, case.rhs_shape) if case.rhs_constant else None
    rhs = b.add_tensor("rhs", case.rhs_shape, case.dtype, scale=rhs_scale, zero_point=rz, data=data)
    y = b.add_tensor("output", case.output_shape(), case.dtype, scale=output_scale, zero_point=oz)
    b.add_op("BATCH_MATMUL", [lhs, rhs], [y], {"adj_x": case.adj_x, "adj_y": case.adj_y})
    b.set_io([lhs] if case.rhs_constant else [lhs, rhs], [y])
    return b.build()


def random_inputs(case: Case) -> list[np.ndarray]:
    rng = np.random.default_rng(case.seed + 10_000)
    values = [_values(rng, case.dtype, case.lhs_shape)]
    if not case.rhs_constant:
        values.append(_values(rng, case.dtype, case.rhs_shape))
    return values


@pytest.mark.parametrize("rounding", list(Rounding), ids=lambda r: r.value)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_matches_oracle(case: Case, rounding: Rounding) -> None:
    model, inputs = build_model(case), random_inputs(case)
    expected = oracle_output(model, inputs, rounding, min_distinct=3)
    (actual,) = run_outputs(parse_model(model, f"{case.id}.tflite"), inputs, rounding)
    assert_exact(actual, expected)


def c_cases() -> list:
    """Generated C for five models in both roundings: int8 rank 2; int8 rank 5 against rank 5
    with broadcasts both ways and adj_y (sanitized); int8 with a constant rank-3 rhs under a
    rank-5 lhs; int16 rank 2 against rank 3 with adj_x and adj_y (sanitized); int16 rank 3
    against a constant rank 2 with adj_x and adj_y."""
    chosen = {100: False, 106: True, 108: False, 203: True, 211: False}
    return [
        pytest.param(c, r, chosen[c.seed], id=f"{c.id}-{r.value}" + ("-asan" if chosen[c.seed] else ""))
        for c in CASES if c.seed in chosen for r in Rounding
    ]


@pytest.mark.parametrize("case, rounding, sanitize", c_cases())
def test_c_kernel_matches_oracle(case: Case, rounding: Rounding, sanitize: bool) -> None:
    from mcugen.toolchain.host import run_tflite_bytes

    model, inputs = build_model(case), random_inputs(case)
    expected = oracle_output(model, inputs, rounding, min_distinct=3)
    (actual,) = run_tflite_bytes(model, inputs, rounding, sanitize=sanitize)
    assert_exact(actual, expected)


@pytest.mark.parametrize("case", [CASES[1], CASES[6], CASES[19]], ids=lambda c: c.id)
def test_macs(case: Case) -> None:
    """One multiply-accumulate per output element and contracted index."""
    from mcugen.ops.registry import op_macs

    (op,) = parse_model(build_model(case), "macs.tflite").ops
    assert op_macs(op) == int(np.prod(case.output_shape())) * case.k


def test_support_rejects() -> None:
    """Mixed int16 x int8 (LiteRT has it, TFLM does not) and batch dimensions that do not
    broadcast are refused by rules that name them."""
    from mcugen.ir import DType
    from mcugen.support import check_op

    int16 = next(c for c in CASES if c.dtype == "int16" and not c.rhs_constant)
    (op,) = parse_model(build_model(int16), "rules.tflite").ops
    assert op.inputs[1] is not None
    op.inputs[1].dtype = DType.INT8
    assert any("all int16" in p for p in check_op(op)), check_op(op)
    case = next(c for c in CASES if c.lhs_batch == (3,) and not c.rhs_constant)
    (op,) = parse_model(build_model(case), "rules.tflite").ops
    assert op.inputs[1] is not None
    op.inputs[1].shape = (2, *op.inputs[1].shape[1:])
    assert any("do not broadcast" in p for p in check_op(op)), check_op(op)
