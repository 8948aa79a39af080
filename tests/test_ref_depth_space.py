"""DEPTH_TO_SPACE and SPACE_TO_DEPTH: the numpy reference and the generated C against LiteRT's
reference kernels and TFLite Micro, exact, for block sizes 1 to 4, int8 and float32 (the
dtypes TFLM has kernels for; neither runtime has int16), batches above 1 and odd depths; the
C under ASan/UBSan; and the models TFLite refuses (depth or spatial size not a multiple of the
block, rank 3, int16, block size 0) refused by mcugen's rules or prepare.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import run_litert
from singleop import Case, Operand, check_compiled, check_reference, random_array

from mcugen.errors import ModelError
from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.support import graph_problems

BOTH = (Rounding.TFLM, Rounding.LITERT)

# (op, input shape, block size): depths and sizes chosen so that the output is valid.
GEOMETRIES = [
    ("DEPTH_TO_SPACE", (1, 2, 3, 8), 2),
    ("DEPTH_TO_SPACE", (2, 3, 2, 27), 3),
    ("DEPTH_TO_SPACE", (1, 2, 2, 16), 4),
    ("DEPTH_TO_SPACE", (1, 3, 1, 4), 1),
    ("DEPTH_TO_SPACE", (1, 1, 4, 4), 2),
    ("SPACE_TO_DEPTH", (1, 4, 6, 2), 2),
    ("SPACE_TO_DEPTH", (2, 6, 3, 3), 3),
    ("SPACE_TO_DEPTH", (1, 8, 4, 1), 4),
    ("SPACE_TO_DEPTH", (1, 2, 5, 3), 1),
    ("SPACE_TO_DEPTH", (3, 2, 2, 5), 2),
]


def cases() -> list[Case]:
    out = []
    for seed, (op, shape, block) in enumerate(GEOMETRIES):
        for dtype in ("int8", "float32"):
            rng = np.random.default_rng(700 + seed)
            value = random_array(rng, shape, dtype)
            out.append(Case(f"{op.lower()}-{dtype}-{'x'.join(map(str, shape))}-b{block}", op,
                            [Operand(value)], {"block_size": block}))
    return out


CASES = cases()


@pytest.mark.parametrize("rounding", BOTH, ids=lambda r: r.value)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_matches_tflite(case: Case, rounding: Rounding) -> None:
    check_reference(case, rounding)


COMPILED = [(c, r, False) for c in CASES for r in BOTH] + [(c, Rounding.TFLM, True) for c in CASES[::3]]


@pytest.mark.parametrize(("case", "rounding", "sanitize"), COMPILED,
                         ids=lambda v: v.id if isinstance(v, Case) else str(getattr(v, "value", v)))
def test_compiled_matches_tflite(case: Case, rounding: Rounding, sanitize: bool) -> None:
    check_compiled(case, rounding, sanitize=sanitize)


def test_the_two_ops_are_inverses_in_litert_and_in_mcugen() -> None:
    """A case whose meaning does not rest on the reference's reading of TFLite alone: S2D then
    D2S with the same block size gives the input back in LiteRT, and mcugen's S2D equals
    LiteRT's."""
    rng = np.random.default_rng(7)
    value = random_array(rng, (1, 4, 6, 3), "int8")
    s2d = Case("s2d", "SPACE_TO_DEPTH", [Operand(value)], {"block_size": 2})
    packed = run_litert(s2d.model, [value])[0]
    d2s = Case("d2s", "DEPTH_TO_SPACE", [Operand(packed)], {"block_size": 2})
    np.testing.assert_array_equal(run_litert(d2s.model, [packed])[0], value)
    check_compiled(s2d, Rounding.TFLM)


def _problems(case: Case) -> str:
    graph = parse_model(case.model, case.id)
    return "; ".join(str(p) for p in graph_problems(graph))


REFUSED = [
    # op, input shape, output shape, dtype, block size, what the refusal names
    ("DEPTH_TO_SPACE", (1, 2, 2, 6), (1, 4, 4, 1), "int8", 2, "multiple of block_size"),
    ("SPACE_TO_DEPTH", (1, 3, 4, 2), (1, 1, 2, 8), "int8", 2, "multiples of block_size"),
    ("DEPTH_TO_SPACE", (2, 2, 8), (4, 4, 2), "int8", 2, "shape"),
    ("DEPTH_TO_SPACE", (1, 2, 2, 8), (1, 4, 4, 2), "int16", 2, "int16"),
    ("SPACE_TO_DEPTH", (1, 2, 2, 2), (1, 2, 2, 2), "float32", 0, "block_size 0"),
    ("DEPTH_TO_SPACE", (1, 2, 2, 8), (1, 4, 4, 3), "int8", 2, "the op gives"),
]


@pytest.mark.parametrize(("op", "shape", "out_shape", "dtype", "block", "named"), REFUSED,
                         ids=[f"{r[0]}-{r[5]}" for r in REFUSED])
def test_invalid_models_are_refused(op: str, shape: tuple[int, ...], out_shape: tuple[int, ...],
                                    dtype: str, block: int, named: str) -> None:
    value = random_array(np.random.default_rng(1), shape, dtype)
    case = Case("bad", op, [Operand(value)], {"block_size": block}, shapes=[list(out_shape)])
    try:
        problems = _problems(case)
    except ModelError as error:
        problems = str(error)
    assert named in problems
