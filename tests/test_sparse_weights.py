"""`mcugen build --sparse` (mcugen/ops/matmul/sparse.py, mcugen_fully_connected_sparse.c):
int8 FULLY_CONNECTED weights kept as mask rows and non-zero values, exact against LiteRT
(which densifies the converter's sparse weights at run time) and TFLM (on the dense twin), in
both modes, under ASan/UBSan; the flash figures in report.json; the ops that stay dense and
why; and the generated C cross-compiled for Cortex-M55 warning-free.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from oracles import assert_exact, run_litert, run_tflm
from sparse_models import BLOCK_1X4, CONV_CSR, CSR_ROWS, conv, fully_connected

from mcugen.cli import main
from mcugen.driver import BuildOptions, compile_model
from mcugen.quantization import Rounding
from mcugen.toolchain.host import build_program, run_program

SPARSE_KERNEL = "mcugen_fully_connected_sparse_s8"


def _run_sparse(model: bytes, x: np.ndarray, rounding: Rounding, sanitize: bool = True) -> np.ndarray:
    program = build_program(model, BuildOptions(rounding=rounding, sparse_weights=True), "m.tflite", sanitize)
    return run_program(program, [[x]])[0][0]


def _input(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, size=shape).astype(np.int8)


@pytest.mark.parametrize(("layout", "zeros", "batch", "depth", "units"), [
    ("csr-rows", 0.8, 3, 64, 16),
    ("block-1x4", 0.8, 1, 36, 9),  # a depth that is no multiple of 8: the last mask byte is partial
    ("dense-file", 0.9, 2, 20, 24),  # weights stored dense in the file, sparse in flash all the same
    ("dense-file", 1.0, 2, 16, 4),  # fully pruned: no stored values (LiteRT's DENSIFY refuses an empty buffer)
])
def test_sparse_fully_connected_is_exact(layout: str, zeros: float, batch: int, depth: int, units: int) -> None:
    form = {"csr-rows": CSR_ROWS, "block-1x4": BLOCK_1X4, "dense-file": None}[layout]
    model = fully_connected(np.random.default_rng(21), batch, depth, units, zeros, form)
    dense_twin = fully_connected(np.random.default_rng(21), batch, depth, units, zeros, None)
    x = _input((batch, depth), 22)
    options = BuildOptions(sparse_weights=True)
    source = compile_model(model, options, "m.tflite").code.files["m_model.c"]
    assert SPARSE_KERNEL in source, "the sparse kernel is not the one under test"
    expected = {Rounding.LITERT: run_litert(model, [x])[0], Rounding.TFLM: run_tflm(dense_twin, [x])[0]}
    for rounding, want in expected.items():
        assert_exact(_run_sparse(model, x, rounding), want)
    if zeros < 1.0:
        assert len(np.unique(expected[Rounding.TFLM])) > 5, "output has no spread"


def _report(model: bytes, tmp_path: Path, *flags: str) -> tuple[dict, str]:
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    out = tmp_path / f"out{len(flags)}"
    result = CliRunner().invoke(main, ["build", str(path), "-o", str(out), *flags])
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text()), result.output


def test_report_gives_flash_dense_and_as_built(tmp_path: Path) -> None:
    rng = np.random.default_rng(31)
    model = fully_connected(rng, 1, 128, 32, 0.8, CSR_ROWS)
    dense_report, _ = _report(model, tmp_path)
    report, log = _report(model, tmp_path, "--sparse")
    assert "sparse_weights" not in dense_report
    sparse = report["sparse_weights"]
    (op,) = sparse["ops"]
    nonzero = op["sparse_bytes"] - 32 * (128 // 8)
    assert op["built"] == "sparse" and op["dense_bytes"] == 32 * 128 == sparse["dense_bytes"]
    assert 0.1 * 4096 < nonzero < 0.3 * 4096  # about 20% of the weights are stored
    assert sparse["built_bytes"] == op["sparse_bytes"]
    assert dense_report["weights_bytes"] - report["weights_bytes"] == sparse["saved_bytes"] > 0
    assert "1 op(s) sparse" in log


def test_ops_without_a_saving_stay_dense_and_say_why(tmp_path: Path) -> None:
    conv_report, log = _report(conv(np.random.default_rng(41), 0.8, CONV_CSR), tmp_path, "--sparse")
    (op,) = conv_report["sparse_weights"]["ops"]
    assert op["built"] == "dense" and "no sparse kernel for CONV_2D" in op["reason"] and "CONV_2D" in log
    fc_report, _ = _report(fully_connected(np.random.default_rng(42), 1, 32, 8, 0.0, None), tmp_path, "--sparse")
    (op,) = fc_report["sparse_weights"]["ops"]
    assert op["built"] == "dense" and "would take" in op["reason"] and op["sparse_bytes"] > op["dense_bytes"]
    assert fc_report["sparse_weights"]["saved_bytes"] == 0


def test_sparse_conv_model_builds_dense_and_exact_with_sparse_option() -> None:
    model = conv(np.random.default_rng(43), 0.8, CONV_CSR)
    x = _input((1, 6, 6, 8), 44)
    assert_exact(_run_sparse(model, x, Rounding.LITERT, sanitize=False), run_litert(model, [x])[0])


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc not installed")
def test_generated_c_compiles_for_cortex_m55(tmp_path: Path) -> None:
    model = fully_connected(np.random.default_rng(51), 2, 48, 16, 0.8, CSR_ROWS)
    for rounding in (Rounding.TFLM, Rounding.LITERT):
        options = BuildOptions(rounding=rounding, sparse_weights=True, target="cortex-m55")
        files = compile_model(model, options, "m.tflite").code.files
        assert "mcugen_fully_connected_sparse.c" in files
        work = tmp_path / rounding.value
        work.mkdir()
        for name, text in files.items():
            (work / name).write_text(text)
        for source in sorted(n for n in files if n.endswith(".c")):
            command = ["arm-none-eabi-gcc", *options.target.core_flags, "-std=c99", "-O2", "-Wall",
                       "-Wextra", "-Werror", "-I.", "-c", source, "-o", source[:-2] + ".o"]
            result = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
            assert result.returncode == 0, result.stderr


KERNEL_HARNESS = r"""
#include <stdio.h>
#include "mcugen_fully_connected_sparse.h"

/* 2 units x depth 10: row 0 stores weights 1 and 9, row 1 weight 4. */
static const uint8_t mask_ok[4] = { 0x02, 0x02, 0x10, 0x00 };
static const uint8_t mask_past_depth[4] = { 0x02, 0x06, 0x10, 0x00 }; /* bit 10: past the depth */
static const int8_t values[3] = { 3, -2, 5 };

int main(void)
{
    const int8_t input[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    int8_t output[2] = { 0, 0 };
    const int32_t multiplier[1] = { 1073741824 }, shift[1] = { 1 }; /* x 1.0 */
    const mcugen_per_channel_quant_params quant = { multiplier, shift };
    mcugen_fc_params params = { 0, 0, 0, { -128, 127 }, 0, NULL, NULL, 0, 0 };
    const mcugen_dims in = { 1, 1, 1, 10 }, filter = { 10, 1, 1, 2 }, out = { 1, 1, 1, 2 };
    const mcugen_context ctx = { NULL, 0 };
    const mcugen_sparse_weights good = { mask_ok, values, 2, 3 };
    const mcugen_sparse_weights miscounted = { mask_ok, values, 2, 2 };
    const mcugen_sparse_weights past_depth = { mask_past_depth, values, 2, 3 };
    const mcugen_sparse_weights no_values = { mask_ok, NULL, 2, 3 };
    int status[5];
    status[0] = mcugen_fully_connected_sparse_s8(&ctx, &params, &quant, &in, input, &filter, &good,
                                                 NULL, NULL, &out, output);
    printf("%d %d\n", output[0], output[1]);
    status[1] = mcugen_fully_connected_sparse_s8(&ctx, &params, &quant, &in, input, &filter, &miscounted,
                                                 NULL, NULL, &out, output);
    status[2] = mcugen_fully_connected_sparse_s8(&ctx, &params, &quant, &in, input, &filter, &past_depth,
                                                 NULL, NULL, &out, output);
    status[3] = mcugen_fully_connected_sparse_s8(&ctx, &params, &quant, &in, input, &filter, &no_values,
                                                 NULL, NULL, &out, output);
    params.filter_offset = 1; /* a zero weight would add: refused */
    status[4] = mcugen_fully_connected_sparse_s8(&ctx, &params, &quant, &in, input, &filter, &good,
                                                 NULL, NULL, &out, output);
    printf("%d %d %d %d %d\n", status[0], status[1] == MCUGEN_ARG_ERROR, status[2] == MCUGEN_ARG_ERROR,
           status[3] == MCUGEN_ARG_ERROR, status[4] == MCUGEN_ARG_ERROR);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no host C compiler")
def test_sparse_kernel_refuses_inconsistent_weights(tmp_path: Path) -> None:
    """The kernel's own checks, under ASan/UBSan: masks that set more bits than values are
    stored, a bit past the depth, missing values, a filter offset; and the sum of a known case
    (3 * 2 - 2 * 10 = -14, 5 * 5 = 25)."""
    kernels = Path(__file__).resolve().parents[1] / "templates" / "runtime" / "kernels"
    (tmp_path / "harness.c").write_text(KERNEL_HARNESS)
    command = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
               "-fno-sanitize-recover=all", f"-I{kernels}", "harness.c",
               str(kernels / "mcugen_fully_connected_sparse.c"), str(kernels / "mcugen_rescale.c"), "-lm",
               "-o", "harness"]
    subprocess.run(command, cwd=tmp_path, check=True, capture_output=True)
    result = subprocess.run([str(tmp_path / "harness")], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:2] == ["-14 25", "0 1 1 1 1"], result.stdout + result.stderr
