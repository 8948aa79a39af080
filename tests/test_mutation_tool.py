"""The mutation campaign's tool (benchmarks/mutation): every mutant's original text is still in
the sources exactly once (the list cannot rot), its tests name files that exist, and the tool
applies a mutation to a scratch copy and restores it byte for byte, leaving the working tree
alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "mutation"))
import run as mutation_run
from mutants import MUTANTS


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.id for m in MUTANTS])
def test_each_original_text_occurs_once_and_its_tests_exist(mutant) -> None:  # type: ignore[no-untyped-def]
    text = (REPO / mutant.file).read_text()
    assert text.count(mutant.original) == 1, f"{mutant.id}: the original is gone or ambiguous"
    assert mutant.original != mutant.replacement
    files = [t for t in mutant.tests if t.startswith("tests/")]
    assert files and all((REPO / f).is_file() for f in files), mutant.tests


def test_ids_are_unique() -> None:
    ids = [m.id for m in MUTANTS]
    assert len(ids) == len(set(ids))


def test_apply_and_revert_touch_only_the_scratch_copy(tmp_path: Path) -> None:
    mutant = next(m for m in MUTANTS if m.id == "rsqrt-int8-output-clamp")
    before = (REPO / mutant.file).read_bytes()
    root = mutation_run.copy_repository(REPO, tmp_path)
    copy = root / mutant.file
    assert copy.read_bytes() == before
    assert (root / "mcugen" / "templates").is_symlink()  # the package's links are kept
    original = mutation_run.apply(root, mutant)
    mutated = copy.read_text()
    assert mutant.original not in mutated and mutated.count(mutant.replacement) == 1
    assert mutated == before.decode().replace(mutant.original, mutant.replacement)
    assert (REPO / mutant.file).read_bytes() == before  # the working tree is untouched
    mutation_run.revert(root, mutant, original)
    assert copy.read_bytes() == before
