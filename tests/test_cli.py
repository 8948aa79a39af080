"""The command line: builds, runs, verifies; bad input gets one line, exit 2, no traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import assert_one_line_error, invoke
from conftest import REPO
from modelbuilder import ModelBuilder

KWS = REPO / "examples" / "kws" / "kws_dscnn.tflite"
KWS_CASE = REPO / "examples" / "kws" / "case0.npz"


def small_conv_model(tensor_name: str = "conv_out", dtype: str = "int8") -> bytes:
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    quant = {"scale": 0.05, "zero_point": 2} if dtype == "int8" else {}
    x = b.add_tensor("input", [1, 6, 6, 3], dtype, **quant)
    w = b.add_tensor("weights", [4, 3, 3, 3], "int8", scale=[0.02, 0.03, 0.01, 0.04],
                     data=rng.integers(-127, 128, size=(4, 3, 3, 3), dtype=np.int8))
    bias = b.add_tensor("bias", [4], "int32", scale=[0.001, 0.0015, 0.0005, 0.002],
                        data=rng.integers(-500, 500, size=4, dtype=np.int32))
    y = b.add_tensor(tensor_name, [1, 6, 6, 4], dtype, **({"scale": 0.1, "zero_point": -3} if quant else {}))
    b.add_op("CONV_2D", [x, w, bias], [y], {"padding": "SAME", "fused_activation_function": "RELU"})
    b.set_io([x], [y])
    return b.build()


# --- the main job ---------------------------------------------------------------------------


def test_run_prints_and_saves_the_reference_result(tmp_path: Path) -> None:
    out = tmp_path / "out.npz"
    result = invoke("run", KWS, "--input", KWS_CASE, "--output", out)
    assert result.exit_code == 0, result.output
    expected = np.load(KWS_CASE)["output0"]
    assert np.array_equal(np.load(out)["output0"], expected)
    assert f"argmax {int(np.argmax(expected))}" in result.output


def test_build_writes_sources_makefile_and_report(tmp_path: Path) -> None:
    result = invoke("build", KWS, "-o", tmp_path / "gen")
    assert result.exit_code == 0, result.output
    names = {p.name for p in (tmp_path / "gen").iterdir()}
    assert {"kws_dscnn_model.c", "kws_dscnn_model.h", "mcugen.mk", "report.json"} <= names
    import json

    report = json.loads((tmp_path / "gen" / "report.json").read_text())
    # Tiling (on by default) goes below the whole-tensor bound; whole tensors cannot.
    assert report["tiling"]["chains"] and report["tiling"]["extra_macs"] >= 0
    assert 0 < report["arena_bytes"] < report["lower_bound_bytes"]
    assert report["arena_bytes"] % 16 == 0
    assert [op["kind"] for op in report["ops"]][:2] == ["CONV_2D", "DEPTHWISE_CONV_2D"]
    assert sum(op["macs"] for op in report["ops"]) == report["macs"] > 2_000_000
    header = (tmp_path / "gen" / "kws_dscnn_model.h").read_text()
    assert f"#define KWS_DSCNN_ARENA_SIZE {report['arena_bytes']}" in header


def test_generation_is_deterministic(tmp_path: Path) -> None:
    for out in ("a", "b"):
        assert invoke("build", KWS, "-o", tmp_path / out, "--rounding", "litert").exit_code == 0
    first = sorted((tmp_path / "a").iterdir())
    second = sorted((tmp_path / "b").iterdir())
    assert [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_verify_reports_bit_exact(tmp_path: Path) -> None:
    result = invoke("verify", KWS, "--cases", "3", "--input", KWS_CASE)
    assert result.exit_code == 0, result.output
    assert "4 cases" in result.output and "bit-exact" in result.output


def test_inspect_lists_ops_and_macs() -> None:
    result = invoke("inspect", KWS)
    assert result.exit_code == 0, result.output
    assert "DEPTHWISE_CONV_2D" in result.output and "every op is supported" in result.output


def test_entry_point_runs_without_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "nope.tflite"
    proc = subprocess.run([sys.executable, "-m", "mcugen.cli", "build", str(missing), "-o", str(tmp_path / "o")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {missing}: no such file"


# --- bad input --------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    assert_one_line_error(invoke("build", tmp_path / "missing.tflite", "-o", tmp_path / "o"), "no such file")


def test_not_a_flatbuffer(tmp_path: Path) -> None:
    path = tmp_path / "text.tflite"
    path.write_text("this is not a model at all\n")
    assert_one_line_error(invoke("build", path, "-o", tmp_path / "o"), "not a TFLite flatbuffer")


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9])
def test_truncated_file(tmp_path: Path, keep: float) -> None:
    data = KWS.read_bytes()
    path = tmp_path / "cut.tflite"
    path.write_bytes(data[: int(len(data) * keep)])
    result = invoke("build", path, "-o", tmp_path / "o")
    assert_one_line_error(result, "cut.tflite")
    assert not (tmp_path / "o").exists()


def test_corrupt_files_never_crash(tmp_path: Path) -> None:
    """Random byte damage: either a valid (different) model or a one-line error, never a traceback."""
    data = bytearray(KWS.read_bytes())
    rng = np.random.default_rng(1)
    errors = 0
    for trial in range(12):
        damaged = bytearray(data)
        # Damage the flatbuffer's tables, which sit before and after the weight data.
        for position in rng.integers(0, 2048, size=8):
            damaged[int(position)] = int(rng.integers(0, 256))
        path = tmp_path / f"damaged{trial}.tflite"
        path.write_bytes(bytes(damaged))
        result = invoke("inspect", path)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        if result.exit_code != 0:
            assert_one_line_error(result)
            errors += 1
    assert errors > 0


def test_unsupported_schema_version(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1)
    y = b.add_tensor("y", [1, 4], "int8", scale=0.1)
    b.add_op("RESHAPE", [x], [y], {"new_shape": [1, 4]})
    b.set_io([x], [y])
    path = tmp_path / "v2.tflite"
    path.write_bytes(b.build(version=2))
    assert_one_line_error(invoke("build", path, "-o", tmp_path / "o"), "schema version 2")


def test_unsupported_ops_are_all_listed(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "float32")
    y = b.add_tensor("y", [1, 8], "float32")
    z = b.add_tensor("z", [1, 8], "float32")
    b.add_op("SIN", [x], [y])
    b.add_op("SQRT", [y], [z])
    b.set_io([x], [z])
    path = tmp_path / "ops.tflite"
    path.write_bytes(b.build())
    assert_one_line_error(invoke("build", path, "-o", tmp_path / "o"),
                          "2 unsupported op(s)", "op 0 SIN ('y')", "op 1 SQRT ('z')")


def test_unsupported_dtype_names_op_and_rule(tmp_path: Path) -> None:
    """float32 activations with int8 weights (TFLite's hybrid form) have no kernel."""
    path = tmp_path / "float.tflite"
    path.write_bytes(small_conv_model(dtype="float32"))
    assert_one_line_error(invoke("build", path, "-o", tmp_path / "o"),
                          "CONV_2D (op 0, 'conv_out')", "float32 ops: the weights are a constant float32",
                          "weights 'weights' int8")


def test_a_float_model_builds(tmp_path: Path) -> None:
    """The converter's float32 model builds (its results: tests/test_float16_models.py)."""
    result = invoke("build", REPO / "tests" / "fixtures_float" / "small_cnn_float.tflite", "-o", tmp_path / "o")
    assert result.exit_code == 0, result.output


def test_float_ops_that_break_rules_are_one_short_line(tmp_path: Path) -> None:
    """A float model whose ops break rules once got a 4 KB line listing every rule."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4, 4, 2], "float32")
    for i in range(8):  # a fused TANH has no float clamp: each conv breaks a rule
        w = b.add_tensor(f"w{i}", [2, 1, 1, 2], "float32", data=np.ones((2, 1, 1, 2), np.float32))
        c = b.add_tensor(f"b{i}", [2], "float32", data=np.zeros(2, np.float32))
        y = b.add_tensor(f"y{i}", [1, 4, 4, 2], "float32")
        b.add_op("CONV_2D", [x, w, c], [y], {"fused_activation_function": "TANH"})
        x = y
    b.set_io([0], [x])
    path = tmp_path / "tanh.tflite"
    path.write_bytes(b.build())
    result = invoke("build", path, "-o", tmp_path / "o")
    assert_one_line_error(result, "8 op(s) with float32 weights break rules (CONV_2D)", "fused activation TANH",
                          "mcugen inspect", "full-integer quantization")
    assert len(result.stderr) < 600, result.stderr


def test_many_broken_rules_are_counted_in_one_short_line(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int16", scale=0.1)
    outputs = []
    for i in range(6):  # int16 REDUCE_MAX has no TFLM kernel: each op breaks a rule
        axis = b.add_tensor(f"axis{i}", [1], "int32", data=np.array([1], np.int32))
        outputs.append(b.add_tensor(f"y{i}", [1], "int16", scale=0.1))
        b.add_op("REDUCE_MAX", [x, axis], [outputs[-1]])
    b.set_io([x], outputs)
    path = tmp_path / "many.tflite"
    path.write_bytes(b.build())
    result = invoke("build", path, "-o", tmp_path / "o")
    assert_one_line_error(result, "6 broken rules in 6 op(s)", "the first:", "mcugen inspect")
    assert len(result.stderr) < 600, result.stderr


def test_inconsistent_quantization(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1)
    w = b.add_tensor("w", [3, 4], "int8", scale=[0.1, 0.2], data=np.ones((3, 4), np.int8))
    y = b.add_tensor("y", [1, 3], "int8", scale=0.1)
    b.add_op("FULLY_CONNECTED", [x, w, -1], [y])
    b.set_io([x], [y])
    path = tmp_path / "quant.tflite"
    path.write_bytes(b.build())
    assert_one_line_error(invoke("build", path, "-o", tmp_path / "o"), "tensor 1 'w'", "2 per-channel scales")


def test_unsupported_model_leaves_no_output(tmp_path: Path) -> None:
    path = tmp_path / "float.tflite"
    path.write_bytes(small_conv_model(dtype="float32"))
    out = tmp_path / "out"
    assert_one_line_error(invoke("build", path, "-o", out))
    assert not out.exists()


@pytest.mark.parametrize("prefix", ["1abc", "int", "a-b", "x */", ""])
def test_prefix_must_be_a_c_identifier(tmp_path: Path, prefix: str) -> None:
    assert_one_line_error(invoke("build", KWS, "-o", tmp_path / "o", "--prefix", prefix), "not a C identifier")


def test_run_rejects_inputs_of_the_wrong_shape(tmp_path: Path) -> None:
    path = tmp_path / "bad.npz"
    np.savez(path, input0=np.zeros((1, 10), np.int8))
    assert_one_line_error(invoke("run", KWS, "--input", path), "input0 has shape [1, 10]")


def test_run_rejects_inputs_of_another_shape_with_as_many_elements(tmp_path: Path) -> None:
    """490 int8 values are kws's input bytes, but not its [1, 49, 10, 1] shape: once accepted."""
    path = tmp_path / "flat.npz"
    np.savez(path, input0=np.zeros(490, np.int8))
    assert_one_line_error(invoke("run", KWS, "--input", path), "flat.npz", "input0 has shape [490]",
                          "[1, 49, 10, 1]")


def test_run_input_must_be_an_npz(tmp_path: Path) -> None:
    path = tmp_path / "in.npy"
    np.save(path, np.load(KWS_CASE)["input0"])
    assert_one_line_error(invoke("run", KWS, "--input", path), "in.npy", ".npz")


@pytest.mark.parametrize("where", ["missing/out.npz", "a_file/out.npz"])
def test_run_output_needs_a_directory(tmp_path: Path, where: str) -> None:
    (tmp_path / "a_file").write_text("not a directory")
    out = tmp_path / where
    assert_one_line_error(invoke("run", KWS, "--input", KWS_CASE, "--output", out), str(out))
    assert not out.exists()


def test_build_output_under_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("not a directory")
    for out in (tmp_path / "a_file", tmp_path / "a_file" / "gen"):
        assert_one_line_error(invoke("build", KWS, "-o", out), str(out))
    assert (tmp_path / "a_file").read_text() == "not a directory"


def test_report_and_plan_outputs_are_files(tmp_path: Path) -> None:
    assert_one_line_error(invoke("report", KWS, "-o", tmp_path), "is a directory")
    (tmp_path / "a_file").write_text("")
    picture = tmp_path / "a_file" / "plan.svg"
    assert_one_line_error(invoke("plan", KWS, "--picture", picture), str(picture))


@pytest.mark.parametrize(("cases", "fragment"), [("-1", "--cases -1"), ("0", "nothing to verify")])
def test_verify_needs_cases(cases: str, fragment: str) -> None:
    """--cases -1 once printed success after checking nothing."""
    assert_one_line_error(invoke("verify", KWS, "--cases", cases), fragment)


# --- names are data, not code -----------------------------------------------------------------

EVIL_NAMES = ["x */ evil(); /*", "line1\nline2 */ #define int float", "??/\n\\", "*/", "/* nested"]


@pytest.mark.parametrize("name", EVIL_NAMES)
def test_names_cannot_inject_c(tmp_path: Path, name: str) -> None:
    from oracles import run_tflm

    from mcugen.quantization import Rounding
    from mcugen.toolchain.host import run_tflite_bytes

    model = small_conv_model(tensor_name=name)
    path = tmp_path / "named.tflite"
    path.write_bytes(model)
    assert invoke("build", path, "-o", tmp_path / "gen").exit_code == 0
    generated = sorted((tmp_path / "gen").glob("named_model.[ch]"))
    assert len(generated) == 2
    for path in generated:
        text = path.read_text()
        # What the compiler reads as code: comments and string literals (the profile table's op
        # names, built from the same safe character set) are data.
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
        code = re.sub(r'"[^"\\\n]*"', '""', code)
        assert "evil" not in code and "#define int" not in code and "line2" not in code
        assert "??" not in text and "\\\n" not in text
    x = np.random.default_rng(3).integers(-128, 128, size=(1, 6, 6, 3), dtype=np.int8)
    got = run_tflite_bytes(model, [x], Rounding.TFLM)[0]
    assert np.array_equal(got, run_tflm(model, [x])[0])
