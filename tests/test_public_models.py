"""The public MLPerf Tiny models, every case, through the compiled C, in both roundings.

Oracles: `tflm_outputK` (TensorFlow Lite Micro) for --rounding tflm and `outputK` (LiteRT's
reference kernels) for --rounding litert, as stored in the case files.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, public_model

from mcugen.driver import BuildOptions, load_graph
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.toolchain.host import build_program, run_program

ORACLE_KEY = {Rounding.TFLM: "tflm_output", Rounding.LITERT: "output"}


def _cases(name: str) -> list[dict[str, np.ndarray]]:
    model = public_model(name)
    return [dict(np.load(model.with_name(f"{name}.case{k}.npz"))) for k in range(3)]


def _inputs(case: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [case[k] for k in sorted(case) if k.startswith("input")]


@pytest.mark.parametrize("rounding", list(Rounding), ids=lambda r: r.value)
@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_compiled_c_is_bit_exact(name: str, rounding: Rounding) -> None:
    model = public_model(name)
    cases = _cases(name)
    program = build_program(model.read_bytes(), BuildOptions(rounding=rounding), model.name)
    results = run_program(program, [_inputs(c) for c in cases])
    for k, (case, outputs) in enumerate(zip(cases, results)):
        expected = case[f"{ORACLE_KEY[rounding]}0"]
        assert outputs[0].dtype == expected.dtype
        mismatched = int(np.count_nonzero(outputs[0].reshape(expected.shape) != expected))
        assert mismatched == 0, f"{name} case{k} ({rounding.value}): {mismatched} elements differ"


@pytest.mark.parametrize("rounding", list(Rounding), ids=lambda r: r.value)
@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_python_reference_is_bit_exact(name: str, rounding: Rounding) -> None:
    graph = load_graph(public_model(name))
    for k, case in enumerate(_cases(name)):
        expected = case[f"{ORACLE_KEY[rounding]}0"]
        got = run_outputs(graph, _inputs(case), rounding)[0]
        assert np.array_equal(got.reshape(expected.shape), expected), f"{name} case{k}"


def test_the_two_oracles_really_differ() -> None:
    """Guards the point of two modes: on the autoencoder TFLM and LiteRT disagree."""
    cases = _cases("ad_autoencoder")
    assert any(np.any(c["output0"] != c["tflm_output0"]) for c in cases)


@pytest.mark.parametrize("name", ["kws_dscnn", "ic_resnet8"])
def test_sanitizers_are_clean(name: str) -> None:
    """AddressSanitizer and UndefinedBehaviorSanitizer on the whole generated program."""
    model = public_model(name)
    case = _cases(name)[0]
    program = build_program(model.read_bytes(), BuildOptions(), model.name, sanitize=True)
    outputs = run_program(program, [_inputs(case)])[0]
    assert np.array_equal(outputs[0].reshape(case["tflm_output0"].shape), case["tflm_output0"])
