"""`mcugen verify --per-layer`: every intermediate tensor of the compiled C against TFLite.

Oracles: TensorFlow Lite Micro and LiteRT with all tensors preserved (read here through
tests/oracles.py and the tflite_micro runtime directly, not through mcugen's wrapper), and
LiteRT on the float original of a quantized fixture (tests/fixtures_float/, made by
make_fixtures.py with the TensorFlow converter).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import public_model
from oracles import litert_all_tensors, run_litert
from tflite_micro.python.tflite_micro import runtime as tflm_runtime

import mcugen.toolchain.host
from mcugen.analysis.per_layer import PerLayerResult, compare_layers, dump_layers, per_layer
from mcugen.cli import main
from mcugen.driver import BuildOptions, Compiled, load_graph
from mcugen.quantization import Rounding

FIXTURES = Path(__file__).resolve().parent / "fixtures_float"
INT8_MODEL = FIXTURES / "small_cnn_int8.tflite"
FLOAT_MODEL = FIXTURES / "small_cnn_float.tflite"


def _random_case(model: Path, seed: int = 0) -> list[np.ndarray]:
    graph = load_graph(model)
    rng = np.random.default_rng(seed)
    info = np.iinfo(np.int8)
    return [rng.integers(info.min, info.max, size=t.shape, endpoint=True, dtype=np.int8) for t in graph.inputs]


def _tflm_tensors(model: bytes, inputs: list[np.ndarray]) -> dict[int, np.ndarray]:
    interpreter = tflm_runtime.Interpreter.from_bytes(
        model, arena_size=4 * 1024 * 1024, intrepreter_config=tflm_runtime.InterpreterConfig.kPreserveAllTensors)
    for index, value in enumerate(inputs):
        interpreter.set_input(value, index)
    interpreter.invoke()
    graph = load_graph(model)
    return {t.index: np.array(interpreter.GetTensor(t.index, 0)["tensor_data"]) for t in graph.tensors
            if not t.is_constant}


def _oracle_tensors(model: bytes, inputs: list[np.ndarray], rounding: Rounding) -> dict[int, np.ndarray]:
    return _tflm_tensors(model, inputs) if rounding is Rounding.TFLM else litert_all_tensors(model, inputs)


@pytest.mark.parametrize(("name", "rounding"), [("fixture", Rounding.TFLM), ("kws_dscnn", Rounding.TFLM),
                                                ("ad_autoencoder", Rounding.LITERT)])
def test_every_layer_matches_the_oracle(name: str, rounding: Rounding) -> None:
    model = INT8_MODEL if name == "fixture" else public_model(name)
    inputs = _random_case(model)
    result = per_layer(model, inputs, BuildOptions(rounding=rounding))
    graph = load_graph(model)
    produced = [t for op in graph.ops for t in op.outputs if not t.is_constant]
    assert {r.tensor_index for r in result.rows} == {t.index for t in produced}
    assert not result.unmatched and result.first_divergence is None
    oracle = _oracle_tensors(model.read_bytes(), inputs, rounding)
    spread = 0
    for row in result.rows:
        assert row.mismatches == 0 and row.max_abs_diff == 0 and row.cosine == pytest.approx(1.0)
        spread += len(np.unique(oracle[row.tensor_index])) > 4
    assert spread >= len(result.rows) // 2, "the oracle's tensors have no spread"


def test_wrong_rounding_diverges_where_the_runtimes_first_differ() -> None:
    """C built for LiteRT, held to TFLM: the first diverging tensor is the first one (in execution
    order) where the two runtimes themselves differ, as read from both oracles directly."""
    model = public_model("ad_autoencoder")
    data = model.read_bytes()
    inputs = _random_case(model, seed=1)
    _, dumped = dump_layers(model, inputs, BuildOptions(rounding=Rounding.LITERT))
    tflm = _tflm_tensors(data, inputs)
    litert = litert_all_tensors(data, inputs)
    differing = [t.index for _, t, _ in dumped if not np.array_equal(tflm[t.index], litert[t.index])]
    assert differing, "the two runtimes agree on this case: the test would be vacuous"
    result = compare_layers(PerLayerResult(model.name, "TFLM", "litert"), dumped, tflm)
    assert result.first_divergence is not None
    assert result.first_divergence.tensor_index == differing[0]
    first_step = result.first_divergence.step
    assert all(r.mismatches == 0 for r in result.rows if r.step < first_step)


def _patch_first_weight(compiled: Compiled, op_index: int) -> None:
    """Change the first element of `op_index`'s weights in the generated C (by 100, saturating)."""
    op = next(o for o in compiled.order if o.index == op_index)
    weights = op.inputs[1]
    assert weights is not None and weights.is_constant
    name = f"{compiled.prefix}_model.c"
    text = compiled.code.files[name]
    pattern = re.compile(rf"({compiled.prefix}_t{weights.index}(?:_\w*)?\[\d+\][^=]*= \{{\s*)(-?\d+)")
    match = pattern.search(text)
    assert match is not None, "weights array not found in the generated C"
    value = int(match.group(2))
    patched = value - 100 if value >= 0 else value + 100
    compiled.code.files[name] = text[: match.start(2)] + str(patched) + text[match.end(2):]


def test_a_patched_weight_is_found_at_its_layer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCUGEN_CACHE_DIR", str(tmp_path))  # the patched program must not be cached
    target_op = 2  # the 1x1 CONV_2D after the depthwise
    original = mcugen.toolchain.host.compile_model

    def patched(*args: object, **kwargs: object) -> Compiled:
        compiled = original(*args, **kwargs)  # type: ignore[arg-type]
        _patch_first_weight(compiled, target_op)
        return compiled

    monkeypatch.setattr(mcugen.toolchain.host, "compile_model", patched)
    inputs = _random_case(INT8_MODEL, seed=2)
    result = per_layer(INT8_MODEL, inputs, BuildOptions())
    first = result.first_divergence
    assert first is not None and first.op_index == target_op and first.kind == "CONV_2D"
    assert all(r.mismatches == 0 for r in result.rows if r.step < first.step)
    # The oracle itself agrees with the unpatched build: the divergence is the patch's.
    final = result.rows[-1]
    assert final.tensor_index == load_graph(INT8_MODEL).outputs[0].index


def test_cli_per_layer_json_and_exit_status() -> None:
    runner = CliRunner()
    done = runner.invoke(main, ["verify", str(INT8_MODEL), "--per-layer", "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["all_exact"] and data["first_divergence"] is None
    assert len(data["layers"]) == len(load_graph(INT8_MODEL).ops)
    text = runner.invoke(main, ["verify", str(INT8_MODEL), "--per-layer", "--reference", "python"])
    assert text.exit_code == 0 and "no divergence: every tensor is bit-exact" in text.output
    assert runner.invoke(main, ["verify", str(INT8_MODEL), "--json"]).exit_code == 2  # --json needs --per-layer


def test_float_comparison_matches_litert_float_and_int8() -> None:
    """Quantized C (litert mode, so bit-exact with LiteRT int8) against the float original: the
    output row's cosine is that of LiteRT's int8 output (dequantized) against LiteRT's float output."""
    runner = CliRunner()
    done = runner.invoke(main, ["verify", str(INT8_MODEL), "--float", str(FLOAT_MODEL), "--rounding", "litert",
                                "--seed", "4", "--json", "--threshold", "0.5"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    graph = load_graph(INT8_MODEL)
    assert not data["unmatched"] and len(data["layers"]) == len(graph.ops)
    assert all(0.9 < layer["cosine"] < 1.0 for layer in data["layers"])

    quantized_input = _random_case(INT8_MODEL, seed=4)[0]  # the CLI's random case for this seed
    tensor = graph.inputs[0]
    real = ((quantized_input.astype(np.float64) - tensor.quant.single_zero_point)
            * tensor.quant.single_scale).astype(np.float32)
    (int8_out,) = run_litert(INT8_MODEL.read_bytes(), [quantized_input])
    (float_out,) = run_litert(FLOAT_MODEL.read_bytes(), [real])
    out = graph.outputs[0].quant
    deq = (int8_out.astype(np.float64) - out.single_zero_point) * out.single_scale
    ref = float_out.astype(np.float64).ravel()
    want = float(np.dot(deq.ravel(), ref) / (np.linalg.norm(deq) * np.linalg.norm(ref)))
    assert data["layers"][-1]["cosine"] == pytest.approx(want, rel=1e-9)

    strict = runner.invoke(main, ["verify", str(INT8_MODEL), "--float", str(FLOAT_MODEL), "--seed", "4",
                                  "--threshold", "1.0"])
    assert strict.exit_code == 1
    assert "first divergence: step 0, op 0 CONV_2D" in strict.output
