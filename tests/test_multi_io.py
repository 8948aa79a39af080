"""Several inputs and outputs of several dtypes, in the model's order, end to end: the header
API, report.json, the host harness, `mcugen run` (input0.. / output0.. in the .npz), against
TensorFlow Lite Micro and LiteRT."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from modelbuilder import ModelBuilder
from oracles import assert_exact, run_oracle

from mcugen.cli import main
from mcugen.quantization import Rounding
from mcugen.toolchain.host import compiler, run_tflite_bytes

# (name, dtype, shape) of the model's inputs, in its order.
INPUTS = [("a", "int8", (1, 4, 4, 3)), ("b", "int8", (1, 4, 4, 3)), ("h", "int16", (2, 6)),
          ("f", "float32", (5,)), ("flags", "bool", (2, 2)), ("ids", "int32", (3, 2))]
# Outputs in the model's order, deliberately not the order the ops produce them.
# "a" is a graph input listed as an output too: no op may write over it.
OUTPUT_NAMES = ["a_plus_b_real", "a_times_b", "ids_flat", "h_plus_c", "flags_flat", "f_quantized",
                "a_plus_b", "table", "a"]
OUTPUT_DTYPES = ["float32", "int8", "int32", "int16", "bool", "int8", "int8", "float32", "int8"]


def multi_io_model(seed: int) -> bytes:
    """ADD and MUL of two int8 inputs, DEQUANTIZE of the sum to float32, an int16 ADD, a float32
    input QUANTIZEd to int8, bool and int32 inputs reshaped (aliases straight from a graph input
    to a graph output) and a float32 constant output folded at build time."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    t = {}
    quant = {"a": {"scale": 0.05, "zero_point": -3}, "b": {"scale": 0.04, "zero_point": 5},
             "h": {"scale": 0.001, "zero_point": 0}}
    for name, dtype, shape in INPUTS:
        t[name] = b.add_tensor(name, shape, dtype, **quant.get(name, {}))
    t["a_plus_b"] = b.add_tensor("a_plus_b", [1, 4, 4, 3], "int8", scale=0.07, zero_point=2)
    b.add_op("ADD", [t["a"], t["b"]], [t["a_plus_b"]])
    t["a_times_b"] = b.add_tensor("a_times_b", [1, 4, 4, 3], "int8", scale=0.03, zero_point=-6)
    b.add_op("MUL", [t["a"], t["b"]], [t["a_times_b"]])
    t["a_plus_b_real"] = b.add_tensor("a_plus_b_real", [1, 4, 4, 3], "float32")
    b.add_op("DEQUANTIZE", [t["a_plus_b"]], [t["a_plus_b_real"]])
    c16 = b.add_tensor("c16", [6], "int16", scale=0.002, zero_point=0,
                       data=rng.integers(-20000, 20000, 6, dtype=np.int16))
    t["h_plus_c"] = b.add_tensor("h_plus_c", [2, 6], "int16", scale=0.003, zero_point=0)
    b.add_op("ADD", [t["h"], c16], [t["h_plus_c"]])
    t["f_quantized"] = b.add_tensor("f_quantized", [5], "int8", scale=0.02, zero_point=1)
    b.add_op("QUANTIZE", [t["f"]], [t["f_quantized"]])
    t["flags_flat"] = b.add_tensor("flags_flat", [4], "bool")
    b.add_op("RESHAPE", [t["flags"]], [t["flags_flat"]], {"new_shape": [4]})
    t["ids_flat"] = b.add_tensor("ids_flat", [6], "int32")
    b.add_op("RESHAPE", [t["ids"]], [t["ids_flat"]], {"new_shape": [6]})
    raw = b.add_tensor("raw_table", [2, 3], "float32", data=rng.standard_normal((2, 3)).astype(np.float32))
    t["table"] = b.add_tensor("table", [6], "float32")
    b.add_op("RESHAPE", [raw], [t["table"]], {"new_shape": [6]})
    b.set_io([t[name] for name, _, _ in INPUTS], [t[name] for name in OUTPUT_NAMES])
    return b.build()


def random_inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    values = []
    for _, dtype, shape in INPUTS:
        if dtype == "bool":
            values.append(rng.integers(0, 2, size=shape).astype(bool))
        elif dtype == "float32":
            values.append((rng.standard_normal(shape) * 2).astype(np.float32))
        else:
            info = np.iinfo(dtype)
            values.append(rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype))
    return values


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("multi") / "multi.tflite"
    path.write_bytes(multi_io_model(1))
    return path


def check_outputs(actual: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert [str(e.dtype) for e in expected] == OUTPUT_DTYPES
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert_exact(got, want)
    for want in expected:
        assert len(np.unique(want)) >= 2


def test_mcugen_run_takes_numbered_inputs_and_writes_numbered_outputs(model_path: Path, tmp_path: Path) -> None:
    inputs = random_inputs(2)
    case = tmp_path / "case.npz"
    np.savez(case, **{f"input{i}": v for i, v in enumerate(inputs)})
    out = tmp_path / "out.npz"
    result = CliRunner().invoke(main, ["run", str(model_path), "--input", str(case), "--output", str(out)])
    assert result.exit_code == 0, result.output
    with np.load(out) as saved:
        assert sorted(saved.files) == sorted(f"output{i}" for i in range(len(OUTPUT_NAMES)))
        actual = [saved[f"output{i}"] for i in range(len(OUTPUT_NAMES))]
    check_outputs(actual, run_oracle(model_path.read_bytes(), inputs, Rounding.TFLM))
    assert [line.split()[0] for line in result.output.splitlines()] == [f"output{i}" for i in range(9)]


def test_litert_mode_with_sanitizers(model_path: Path) -> None:
    inputs = random_inputs(3)
    actual = run_tflite_bytes(model_path.read_bytes(), inputs, Rounding.LITERT, sanitize=True)
    check_outputs(actual, run_oracle(model_path.read_bytes(), inputs, Rounding.LITERT))


def test_run_rejects_a_gap_in_the_input_numbering(model_path: Path, tmp_path: Path) -> None:
    inputs = random_inputs(4)
    case = tmp_path / "gap.npz"
    np.savez(case, **{f"input{i if i < 2 else i + 1}": v for i, v in enumerate(inputs)})
    result = CliRunner().invoke(main, ["run", str(model_path), "--input", str(case)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {case}: inputs must be input0..input5, found input0, input1, input3, input4, input5, input6"]


def test_header_and_report_describe_every_io_in_model_order(model_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "gen"
    result = CliRunner().invoke(main, ["build", str(model_path), "-o", str(out), "--prefix", "mm"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert [(i["name"], i["dtype"], i["shape"]) for i in report["inputs"]] == [
        (name, dtype, list(shape)) for name, dtype, shape in INPUTS]
    assert [(o["name"], o["dtype"]) for o in report["outputs"]] == list(zip(OUTPUT_NAMES, OUTPUT_DTYPES))
    assert report["outputs"][3]["scale"] == pytest.approx(0.003) and report["outputs"][4]["scale"] is None
    assert [o["bytes"] for o in report["outputs"]] == [192, 48, 24, 24, 4, 5, 48, 24, 48]
    # A user program written against the header alone: macros, typed pointers, sizes.
    user = out / "user.c"
    user.write_text(USER_PROGRAM)
    sources = sorted(str(p.name) for p in out.glob("*.c"))
    subprocess.run([compiler(), "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I.", *sources,
                    "-o", "user", "-lm"], cwd=out, check=True, capture_output=True)
    printed = subprocess.run([str(out / "user")], capture_output=True, text=True, check=True).stdout.split()
    values = dict(item.split("=") for item in printed)
    assert values["inputs"] == "6" and values["outputs"] == "9"
    assert values["in2_rank"] == "2" and values["in2_dims"] == "2x6" and values["in2_type_bytes"] == "2"
    assert values["in4_type_bytes"] == "1" and values["out0_type_bytes"] == "4"
    assert values["out3_scale"] == f"{0.003:.6g}" and values["out4_bytes"] == "4"
    for i, (_, dtype, shape) in enumerate(INPUTS):
        assert values[f"in{i}_bytes"] == str(int(np.prod(shape)) * np.dtype(dtype).itemsize)
    header = (out / "mm_model.h").read_text()
    assert re.search(r"#define MM_INPUT4_TYPE bool\b", header)
    assert re.search(r'#define MM_OUTPUT0_DTYPE "float32"', header)


USER_PROGRAM = r"""
#include <stdio.h>
#include "mm_model.h"

int main(void)
{
    static const int32_t in2_dims[] = MM_INPUT2_DIMS;
    MM_INPUT4_TYPE *flags = (MM_INPUT4_TYPE *)mm_input(4);
    MM_OUTPUT0_TYPE *real = (MM_OUTPUT0_TYPE *)mm_output(0);
    int i;
    if (mm_init() != MCUGEN_OK || flags == NULL || real == NULL || mm_input(6) != NULL) {
        return 1;
    }
    printf("inputs=%d outputs=%d\n", MM_NUM_INPUTS, MM_NUM_OUTPUTS);
    printf("in2_rank=%d in2_dims=%dx%d in2_type_bytes=%d\n", MM_INPUT2_RANK, (int)in2_dims[0],
           (int)in2_dims[1], (int)sizeof(MM_INPUT2_TYPE));
    printf("in4_type_bytes=%d out0_type_bytes=%d\n", (int)sizeof(MM_INPUT4_TYPE), (int)sizeof(MM_OUTPUT0_TYPE));
    printf("out3_scale=%.6g out4_bytes=%d\n", (double)MM_OUTPUT3_SCALE, (int)mm_output_bytes(4));
    for (i = 0; i < MM_NUM_INPUTS; ++i) {
        printf("in%d_bytes=%d\n", i, (int)mm_input_bytes(i));
    }
    return 0;
}
"""
