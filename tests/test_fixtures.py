"""Every committed fixture (tests/fixtures/, made by tests/fixtures/generate.py from TensorFlow's
converter) through the compiled C and through the numpy reference, in both roundings, compared
to the bit with the outputs stored beside it: `tflm_output*` (TensorFlow Lite Micro) for
--rounding tflm, `litert_output*` (LiteRT's BUILTIN_REF kernels) for --rounding litert.

Where a mode has nothing to be exact with, mcugen must refuse the model in that mode instead:
- TFLM has no kernel for the op in that dtype (the manifest's tflm_error: int16 REDUCE_MAX,
  GATHER and RESIZE_BILINEAR). support.py rejects such dtypes, in both modes, by the project's
  rule; the stored LiteRT outputs still guard the oracle and serve if that rule ever changes.
- LiteRT's output is a defect (the manifest's litert_error: its reference SUM treats int8 and
  int16 data as uint8): refused in litert mode, exact with TFLM in tflm mode.

Each program is compiled once per rounding, by two worker processes that start compiling every
selected fixture when the first compiled-C test runs; all cases of a fixture go through one run.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oracles import run_litert, run_tflm

from mcugen.driver import BuildOptions, compile_model, load_graph
from mcugen.errors import UnsupportedError
from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.toolchain.host import HostProgram, build_program, run_program

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MANIFEST: dict[str, dict[str, Any]] = json.loads((FIXTURES / "manifest.json").read_text())
ORACLE = {Rounding.TFLM: "tflm", Rounding.LITERT: "litert"}
BUILD_WORKERS = max(1, min(2, os.cpu_count() or 1))
MAX_TOTAL_BYTES = 4 * 1024 * 1024  # "a few MB in all"
SANITIZED = "model_transformer_block"  # the fixture with the most op kinds


def _checkable(entry: dict[str, Any], rounding: Rounding) -> bool:
    """Whether mcugen should build the fixture in this mode: there is an oracle output to be
    exact with, and TFLM has the kernels (support.py follows TFLM in both modes)."""
    return bool(entry["tflm"] and entry[ORACLE[rounding]])


def _params(checkable: bool) -> list[Any]:
    return [pytest.param(name, rounding, id=f"{name}-{rounding.value}")
            for name, entry in MANIFEST.items() for rounding in Rounding
            if _checkable(entry, rounding) == checkable]


PARAMS = _params(checkable=True)
REFUSED = _params(checkable=False)


def _model(name: str) -> bytes:
    return (FIXTURES / f"{name}.tflite").read_bytes()


def _stored(name: str) -> dict[str, np.ndarray]:
    with np.load(FIXTURES / f"{name}.npz") as data:
        return dict(data)


def _cases(name: str) -> list[list[np.ndarray]]:
    stored, entry = _stored(name), MANIFEST[name]
    return [[stored[f"input{i}_{k}"] for i in range(len(entry["inputs"]))]
            for k in range(entry["cases"])]


def _expected(name: str, oracle: str) -> list[list[np.ndarray]]:
    stored, entry = _stored(name), MANIFEST[name]
    return [[stored[f"{oracle}_output{o}_{k}"] for o in range(len(entry["outputs"]))]
            for k in range(entry["cases"])]


def _assert_same(actual: list[np.ndarray], expected: list[np.ndarray], where: str) -> None:
    assert len(actual) == len(expected), f"{where}: {len(actual)} outputs, expected {len(expected)}"
    for o, (got, want) in enumerate(zip(actual, expected)):
        got = np.asarray(got)
        assert got.dtype == want.dtype, f"{where} output{o}: dtype {got.dtype}, expected {want.dtype}"
        assert got.size == want.size, f"{where} output{o}: {got.size} elements, expected {want.size}"
        differ = np.flatnonzero(got.reshape(want.shape) != want)
        assert differ.size == 0, (
            f"{where} output{o}: {differ.size} of {want.size} elements differ, first at flat index "
            f"{differ[0]}: {got.reshape(-1)[differ[0]]} != {want.reshape(-1)[differ[0]]}"
        )


@pytest.fixture(scope="module")
def programs(request: pytest.FixtureRequest) -> Iterator[dict[tuple[str, Rounding], Future]]:
    """Compile every selected fixture's program in the background, in test order."""
    wanted = [
        (item.callspec.params["name"], item.callspec.params["rounding"])
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_compiled_c_is_bit_exact"
        and hasattr(item, "callspec") and Path(str(item.fspath)) == Path(__file__)
    ]
    # spawn, not fork: the parent holds LiteRT's and TFLM's native state.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=BUILD_WORKERS, mp_context=context) as pool:
        futures = {
            key: pool.submit(build_program, _model(key[0]), BuildOptions(rounding=key[1]),
                             f"{key[0]}.tflite")
            for key in dict.fromkeys(wanted)
        }
        yield futures
        for future in futures.values():
            future.cancel()


@pytest.mark.parametrize(("name", "rounding"), PARAMS)
def test_compiled_c_is_bit_exact(name: str, rounding: Rounding,
                                 programs: dict[tuple[str, Rounding], Future]) -> None:
    program: HostProgram = programs[(name, rounding)].result()
    results = run_program(program, _cases(name))
    for k, (outputs, expected) in enumerate(zip(results, _expected(name, ORACLE[rounding]))):
        _assert_same(outputs, expected, f"{name} case{k} ({rounding.value})")


@pytest.mark.parametrize(("name", "rounding"), PARAMS)
def test_python_reference_is_bit_exact(name: str, rounding: Rounding) -> None:
    graph = load_graph(_model(name), f"{name}.tflite")
    for k, (inputs, expected) in enumerate(zip(_cases(name), _expected(name, ORACLE[rounding]))):
        _assert_same(run_outputs(graph, inputs, rounding), expected,
                     f"{name} case{k} ({rounding.value}, numpy reference)")


@pytest.mark.parametrize(("name", "rounding"), REFUSED)
def test_modes_without_a_reference_are_refused(name: str, rounding: Rounding) -> None:
    """No oracle to be exact with (see the module docstring): a one-line UnsupportedError that
    names the op, not C that nothing can check."""
    with pytest.raises(UnsupportedError) as caught:
        compile_model(_model(name), BuildOptions(rounding=rounding), f"{name}.tflite")
    message = str(caught.value)
    assert "\n" not in message
    assert any(op in message for op in MANIFEST[name]["named_ops"]), message


def test_sanitizers_are_clean_on_a_whole_model() -> None:
    """AddressSanitizer and UndefinedBehaviorSanitizer over the fixture with the most kernels."""
    program = build_program(_model(SANITIZED), BuildOptions(), f"{SANITIZED}.tflite",
                            sanitize=True)
    for k, (outputs, expected) in enumerate(zip(run_program(program, _cases(SANITIZED)),
                                                _expected(SANITIZED, "tflm"))):
        _assert_same(outputs, expected, f"{SANITIZED} case{k} (sanitized)")


@pytest.mark.parametrize("name", list(MANIFEST))
def test_stored_outputs_are_what_the_oracles_give(name: str) -> None:
    """Guards the oracles: LiteRT and TFLM still compute the stored outputs (a new package
    version, or a kernel that reads uninitialized memory, would show here first)."""
    model = _model(name)
    for k, inputs in enumerate(_cases(name)):
        if MANIFEST[name]["litert"]:
            _assert_same(run_litert(model, inputs), _expected(name, "litert")[k], f"{name} LiteRT")
        if MANIFEST[name]["tflm"]:
            _assert_same(run_tflm(model, inputs), _expected(name, "tflm")[k], f"{name} TFLM")


def test_the_two_oracles_differ_on_some_fixtures() -> None:
    """Guards the point of two modes: some stored LiteRT and TFLM outputs disagree."""
    def differ(name: str) -> bool:
        pairs = zip(_expected(name, "tflm"), _expected(name, "litert"))
        return any(not np.array_equal(t, r) for tc, rc in pairs for t, r in zip(tc, rc))

    differing = [name for name, entry in MANIFEST.items()
                 if entry["tflm"] and entry["litert"] and differ(name)]
    assert differing == [n for n, e in MANIFEST.items() if e["litert_tflm_differ"]]
    assert differing


def test_fixture_set_is_complete_and_small() -> None:
    """Every manifest entry has its files and contains the ops it is named for; no stray
    files; the set stays a few MB."""
    stems = {p.stem for p in FIXTURES.glob("*.tflite")}
    assert stems == set(MANIFEST), f"unlisted or missing: {sorted(stems ^ set(MANIFEST))}"
    assert {p.stem for p in FIXTURES.glob("*.npz")} == stems
    total = 0
    for name, entry in MANIFEST.items():
        model = _model(name)
        total += len(model) + (FIXTURES / f"{name}.npz").stat().st_size
        kinds = {op.kind.name for op in parse_model(model, f"{name}.tflite").ops}
        missing = set(entry["named_ops"]) - kinds
        assert not missing, f"{name} lacks {sorted(missing)}"
    assert total <= MAX_TOTAL_BYTES, f"fixtures take {total} bytes"
