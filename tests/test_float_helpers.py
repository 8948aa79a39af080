"""<prefix>_quantize_input and <prefix>_dequantize_output: float at the model's edges with
TFLite's QUANTIZE and DEQUANTIZE arithmetic, checked against LiteRT running those two ops on the
same values and scales (the oracle), in a host program under ASan and UBSan."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
from modelbuilder import ModelBuilder
from oracles import run_litert

from mcugen.driver import BuildOptions, compile_model, write_files
from mcugen.toolchain.host import SANITIZE_FLAGS, WARNING_FLAGS, compiler

INPUTS = [("int8", (1, 64), 0.05, -3), ("int16", (1, 32), 0.001, 0), ("float32", (1, 4), None, None)]

MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include "edges_model.h"

/* Reads each input's floats from argv[1], quantizes them in, runs, dequantizes the outputs;
 * writes every input's bytes, every output's bytes and every output's floats to argv[2]. */
int main(int argc, char **argv)
{
    static float values[4096];
    FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
    if (argc != 3 || in == NULL || out == NULL || edges_init() != MCUGEN_OK) return 3;
    for (int32_t i = 0; i < EDGES_NUM_INPUTS; ++i) {
        const size_t count = (size_t)edges_input_bytes(i) / (i == 1 ? 2u : (i == 2 ? 4u : 1u));
        if (fread(values, sizeof(float), count, in) != count) return 4;
        if (edges_quantize_input(i, values) != MCUGEN_OK) return 5;
        fwrite(edges_input(i), 1, (size_t)edges_input_bytes(i), out);
    }
    if (edges_invoke() != MCUGEN_OK) return 6;
    for (int32_t i = 0; i < EDGES_NUM_OUTPUTS; ++i) {
        const size_t count = (size_t)edges_output_bytes(i) / (i == 1 ? 2u : (i == 2 ? 4u : 1u));
        fwrite(edges_output(i), 1, (size_t)edges_output_bytes(i), out);
        if (edges_dequantize_output(i, values) != MCUGEN_OK) return 7;
        fwrite(values, sizeof(float), count, out);
    }
    /* The refusals: an index out of range and a NULL pointer. */
    if (edges_quantize_input(EDGES_NUM_INPUTS, values) != MCUGEN_ARG_ERROR) return 8;
    if (edges_dequantize_output(-1, values) != MCUGEN_ARG_ERROR) return 9;
    if (edges_quantize_input(0, NULL) != MCUGEN_ARG_ERROR) return 10;
    return fclose(out) == 0 ? 0 : 11;
}
"""


def edges_model() -> bytes:
    """Three inputs (int8, int16, float32), each through one op to an output of its dtype."""
    b = ModelBuilder()
    inputs, outputs = [], []
    for i, (dtype, shape, scale, zero_point) in enumerate(INPUTS):
        quant = {} if scale is None else {"scale": scale, "zero_point": zero_point}
        out_quant = {} if scale is None else {"scale": scale * 2, "zero_point": zero_point}
        inputs.append(b.add_tensor(f"x{i}", shape, dtype, **quant))
        outputs.append(b.add_tensor(f"y{i}", shape, dtype, **out_quant))
        b.add_op("NEG" if dtype == "float32" else "ABS", [inputs[-1]], [outputs[-1]])
    b.set_io(inputs, outputs)
    return b.build()


def single_op_model(op: str, dtype: str, shape: tuple[int, ...], scale: float, zero_point: int) -> bytes:
    """QUANTIZE (float32 -> dtype) or DEQUANTIZE (dtype -> float32) at one scale: the oracle."""
    b = ModelBuilder()
    quantized = b.add_tensor("q", shape, dtype, scale=scale, zero_point=zero_point)
    real = b.add_tensor("f", shape, "float32")
    if op == "QUANTIZE":
        b.add_op(op, [real], [quantized])
        b.set_io([real], [quantized])
    else:
        b.add_op(op, [quantized], [real])
        b.set_io([quantized], [real])
    return b.build()


def float_cases(rng: np.random.Generator, shape: tuple[int, ...], scale: float | None) -> np.ndarray:
    """Values on rounding ties, beyond the dtype's range, and at random."""
    count = int(np.prod(shape))
    step = scale or 1.0
    ties = (np.arange(count) - count // 2 + 0.5) * step
    values = np.where(rng.random(count) < 0.5, ties, rng.normal(0, 300 * step, count))
    values[:2] = [1e5 * step, -1e5 * step]  # saturate (value / scale still fits int32)
    values[2:4] = [3e38, -3e38]  # beyond int32: TFLite's cast is undefined, mcugen saturates
    return values.astype(np.float32).reshape(shape)


def run_edges(tmp_path: Path, values: list[np.ndarray]) -> bytes:
    compiled = compile_model(edges_model(), BuildOptions(prefix="edges"), label="edges.tflite")
    write_files(compiled, tmp_path)
    (tmp_path / "main.c").write_text(MAIN)
    sources = [str(tmp_path / name) for name in compiled.code.files if name.endswith(".c")]
    program = tmp_path / "edges"
    subprocess.run([compiler(), *WARNING_FLAGS, *SANITIZE_FLAGS, "-I", str(tmp_path), *sources,
                    str(tmp_path / "main.c"), "-lm", "-o", str(program)], check=True, timeout=300)
    (tmp_path / "in.bin").write_bytes(b"".join(v.tobytes() for v in values))
    result = subprocess.run([str(program), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    return (tmp_path / "out.bin").read_bytes()


def test_float_helpers_match_tflite_quantize_and_dequantize(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    values = [float_cases(rng, shape, scale) for _, shape, scale, _ in INPUTS]
    data = run_edges(tmp_path, values)
    at = 0

    def take(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
        nonlocal at
        array = np.frombuffer(data, dtype=dtype, count=int(np.prod(shape)), offset=at).reshape(shape)
        at += array.nbytes
        return array

    for (dtype, shape, scale, zero_point), given in zip(INPUTS, values):
        quantized = take(dtype, shape)
        if scale is None:
            assert np.array_equal(quantized, given)
        else:
            (expected,) = run_litert(single_op_model("QUANTIZE", dtype, shape, scale, zero_point), [given])
            limits = np.iinfo(dtype)
            assert list(quantized.reshape(-1)[:4]) == [limits.max, limits.min, limits.max, limits.min]
            assert np.array_equal(quantized.reshape(-1)[4:], expected.reshape(-1)[4:]), dtype
            assert len(np.unique(expected)) > 10 and expected.reshape(-1)[1] == limits.min
    for dtype, shape, scale, zero_point in INPUTS:
        raw, floats = take(dtype, shape), take("float32", shape)
        if scale is None:
            assert np.array_equal(floats, raw)
        else:
            oracle = single_op_model("DEQUANTIZE", dtype, shape, scale * 2, zero_point)
            (expected,) = run_litert(oracle, [raw])
            assert np.array_equal(floats.view(np.int32), expected.view(np.int32)), dtype
    assert at == len(data)
