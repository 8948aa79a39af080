"""DENSIFY and sparse constants (mcugen/frontend/sparsity.py): models whose weights the
converter stored sparse (CSR of rows, 1x4 blocks, a permuted traversal, uint8/uint16 index
vectors) behind a DENSIFY, built and run exact against LiteRT (which densifies at run time),
and in TFLM mode against TFLM running the same weights stored dense (TFLM has no DENSIFY).
The decoded constant itself is held to LiteRT's DENSIFY output for int8 and float32. The op
folds away at build time. Malformed sparsity (indices out of range, segments not monotonic or
of the wrong length, counts that disagree, bad traversal orders and block maps) is refused in
one line that names the tensor, exit 2 from the command line.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from modelbuilder import ModelBuilder, Sparsity
from oracles import assert_exact, litert_all_tensors, run_litert, run_tflm
from sparse_models import (
    BLOCK_1X4,
    CONV_CSR,
    CSR_ROWS,
    conv,
    encode,
    fully_connected,
    sparse_weights,
)

from mcugen.cli import main
from mcugen.errors import ModelError
from mcugen.frontend.tflite import parse_model
from mcugen.ir import OpKind
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.support import graph_problems
from mcugen.toolchain.host import run_tflite_bytes

LAYOUTS = {
    "csr-rows": CSR_ROWS,
    "block-1x4": BLOCK_1X4,
    "csr-csr-columns-first": {"formats": ["SPARSE_CSR", "SPARSE_CSR"], "traversal_order": [1, 0]},
    "csr-uint8": {**CSR_ROWS, "index_type": "uint8"},
    "block-uint16": {**BLOCK_1X4, "index_type": "uint16"},
}


def _input(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, size=shape).astype(np.int8)


def _check(sparse_model: bytes, dense_model: bytes, x: np.ndarray, sanitize: bool = False) -> None:
    """LiteRT runs the sparse model; TFLM the dense one (it has no DENSIFY); mcugen's reference
    and compiled C run the sparse one in each mode."""
    oracles = {Rounding.LITERT: run_litert(sparse_model, [x]), Rounding.TFLM: run_tflm(dense_model, [x])}
    assert_exact(run_litert(dense_model, [x])[0], oracles[Rounding.LITERT][0])  # the encoding is right
    for rounding, expected in oracles.items():
        assert_exact(run_outputs(parse_model(sparse_model, "sparse"), [x], rounding)[0], expected[0])
        assert_exact(run_tflite_bytes(sparse_model, [x], rounding, sanitize=sanitize)[0], expected[0])
    assert len(np.unique(oracles[Rounding.TFLM][0])) > 8, "output has no spread"


@pytest.mark.parametrize("layout", list(LAYOUTS), ids=list(LAYOUTS))
def test_sparse_fully_connected_matches_litert_and_tflm(layout: str) -> None:
    sparse = fully_connected(np.random.default_rng(3), 2, 32, 16, 0.8, LAYOUTS[layout])
    dense = fully_connected(np.random.default_rng(3), 2, 32, 16, 0.8, None)
    _check(sparse, dense, _input((2, 32), 4), sanitize=layout == "csr-rows")


def test_sparse_conv_matches_litert_and_tflm() -> None:
    sparse = conv(np.random.default_rng(5), 0.8, CONV_CSR)
    dense = conv(np.random.default_rng(5), 0.8, None)
    _check(sparse, dense, _input((1, 6, 6, 8), 6), sanitize=True)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("layout", list(LAYOUTS), ids=list(LAYOUTS))
def test_decoded_constant_is_litert_densify_output(layout: str, dtype: str) -> None:
    model = fully_connected(np.random.default_rng(8), 1, 16, 12, 0.7, LAYOUTS[layout], dtype)
    x = _input((1, 16), 9).astype(dtype)
    graph = parse_model(model, "m")
    stored = next(t for t in graph.tensors if t.name == "w_sparse")
    densified = litert_all_tensors(model, [x])[next(t.index for t in graph.tensors if t.name == "w")]
    assert stored.data is not None
    np.testing.assert_array_equal(stored.data.view(np.uint8), densified.view(np.uint8))
    assert np.count_nonzero(densified) > 0


def test_densify_folds_away(tmp_path: Path) -> None:
    model = tmp_path / "sparse_fc.tflite"
    model.write_bytes(fully_connected(np.random.default_rng(3), 2, 32, 16, 0.8, CSR_ROWS))
    result = CliRunner().invoke(main, ["build", str(model), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    sources = "".join(p.read_text() for p in (tmp_path / "out").glob("*.c"))
    assert "mcugen_move" not in sources and "fully_connected" in sources
    assert any(op.kind is OpKind.DENSIFY for op in parse_model(model.read_bytes(), "m").ops)


def test_all_zero_sparse_weights_have_no_values() -> None:
    """Fully pruned weights: CSR with empty segments and an empty buffer, densified to zeros."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1, zero_point=0)
    values, layout = encode(np.zeros((3, 4), np.int8), **CSR_ROWS)
    assert values.size == 0
    w_sparse = b.add_tensor("w_sparse", [3, 4], "int8", scale=0.1, data=values, sparsity=layout)
    w = b.add_tensor("w", [3, 4], "int8", scale=0.1)
    y = b.add_tensor("y", [1, 3], "int8", scale=0.1, zero_point=0)
    b.add_op("DENSIFY", [w_sparse], [w])
    b.add_op("FULLY_CONNECTED", [x, w, -1], [y])
    b.set_io([x], [y])
    stored = next(t for t in parse_model(b.build(), "m").tensors if t.name == "w_sparse")
    assert stored.data is not None and stored.shape == (3, 4) and not np.any(stored.data)


def test_densify_of_a_non_constant_is_refused_by_its_rules() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [2, 3], "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", [2, 3], "int8", scale=0.1, zero_point=0)
    b.add_op("DENSIFY", [x], [y])
    b.set_io([x], [y])
    problems = " ".join(graph_problems(parse_model(b.build(), "m")))
    assert "DENSIFY" in problems and "not a constant" in problems


# --- malformed sparsity ---------------------------------------------------------------------

Mutation = Callable[[np.ndarray, Sparsity], tuple[np.ndarray, Sparsity]]


def _level(layout: Sparsity, number: int, segments: list[int] | None = None,
           indices: list[int] | None = None) -> Sparsity:
    changed = copy.deepcopy(layout)
    _, old_segments, old_indices = changed.levels[number]
    changed.levels[number] = ("SPARSE_CSR", old_segments if segments is None else segments,
                              old_indices if indices is None else indices)
    return changed


def _swap_first_segments(layout: Sparsity) -> list[int]:
    segments = list(layout.levels[1][1])
    segments[1], segments[2] = segments[2] + 1, segments[1]
    return segments


MUTANTS: dict[str, tuple[Mutation, str]] = {
    "index-out-of-range": (lambda v, s: (v, _level(s, 1, indices=[*s.levels[1][2][:-1], 16])),
                           "outside the dimension of 16"),
    "segments-not-monotonic": (lambda v, s: (v, _level(s, 1, segments=_swap_first_segments(s))),
                               "not monotonic"),
    "segments-too-short": (lambda v, s: (v, _level(s, 1, segments=s.levels[1][1][:-1])),
                           "array_segments for 8 parent"),
    "segments-end-short": (lambda v, s: (v, _level(s, 1, segments=[*s.levels[1][1][:-1],
                                                                   s.levels[1][1][-1] - 1])),
                           "not monotonic"),
    "segments-not-from-zero": (lambda v, s: (v, _level(s, 1, segments=[1, *s.levels[1][1][1:]])),
                               "not monotonic"),
    "repeated-index": (lambda v, s: (v, _level(s, 1, indices=[s.levels[1][2][1], *s.levels[1][2][1:]])),
                       "not increasing"),
    "one-value-missing": (lambda v, s: (v[:-1], s), "buffer stores"),
    "traversal-not-a-permutation": (lambda v, s: (v, Sparsity([0, 0], s.block_map, s.levels)),
                                    "traversal_order"),
    "traversal-too-short": (lambda v, s: (v, Sparsity([0], s.block_map, s.levels)), "traversal levels"),
    "dense-size-wrong": (lambda v, s: (v, Sparsity(s.traversal_order, s.block_map,
                                                    [("DENSE", 7), *s.levels[1:]])), "has size 7"),
    "block-map-outside-rank": (lambda v, s: (v, Sparsity([0, 1, 2], [5], [*s.levels, ("DENSE", 1)])),
                               "block_map"),
    "block-size-not-dividing": (lambda v, s: (v, Sparsity([0, 1, 2], [1], [*s.levels, ("DENSE", 3)])),
                                "divides dimension 1"),
}


def _mutant(mutation: Mutation) -> bytes:
    dense = sparse_weights(np.random.default_rng(11), (8, 16), "int8", 0.7)
    values, layout = mutation(*encode(dense, **CSR_ROWS))
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 16], "int8", scale=0.1, zero_point=0)
    stored = b.add_tensor("pruned_kernel", [8, 16], "int8", scale=0.01, data=values, sparsity=layout)
    w = b.add_tensor("w", [8, 16], "int8", scale=0.01)
    y = b.add_tensor("y", [1, 8], "int8", scale=0.5, zero_point=0)
    b.add_op("DENSIFY", [stored], [w])
    b.add_op("FULLY_CONNECTED", [x, w, -1], [y])
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("name", list(MUTANTS), ids=list(MUTANTS))
def test_malformed_sparsity_is_refused_in_one_line(name: str, tmp_path: Path) -> None:
    mutation, expected = MUTANTS[name]
    model = _mutant(mutation)
    with pytest.raises(ModelError) as error:
        parse_model(model, "mutant.tflite")
    message = str(error.value)
    assert expected in message and "'pruned_kernel'" in message and "\n" not in message
    path = tmp_path / "mutant.tflite"
    path.write_bytes(model)
    result = CliRunner().invoke(main, ["build", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "'pruned_kernel'" in result.output, result.output


def test_unmutated_model_is_accepted() -> None:
    """The mutants' base model parses: each refusal above comes from its mutation."""
    parse_model(_mutant(lambda v, s: (v, s)), "base.tflite")
