"""Custom ops (--custom-op NAME=kernel.c[:reference.py]): the user's kernel built into the model,
held to TFLite through the builtin it imitates, its arguments held to the model file, and every
misuse refused in one line."""

from __future__ import annotations

import importlib.util
import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from cli_run import assert_one_line_error, invoke
from conftest import REPO
from modelbuilder import ModelBuilder
from oracles import run_oracle

from mcugen.custom_ops import parse_custom_ops
from mcugen.driver import BuildOptions
from mcugen.errors import BuildError, McugenError
from mcugen.quantization import Rounding
from mcugen.toolchain.host import build_program, run_program

EXAMPLE = REPO / "examples" / "custom_op"
KERNEL = EXAMPLE / "my_relu.c"
REFERENCE = EXAMPLE / "my_relu_reference.py"
MY_RELU = f"my_relu={KERNEL}:{REFERENCE}"


def _example_models() -> tuple[bytes, bytes]:
    """The example's model (CUSTOM 'my_relu') and the same model with TFLite's RELU."""
    spec = importlib.util.spec_from_file_location("make_model", EXAMPLE / "make_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build(False), module.build(True)


def _cases(count: int, seed: int = 0) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [[rng.integers(-128, 128, size=(1, 8, 8, 3), dtype=np.int8)] for _ in range(count)]


def test_the_committed_example_model_is_the_scripts_output() -> None:
    custom, _ = _example_models()
    assert (EXAMPLE / "my_relu.tflite").read_bytes() == custom


@pytest.mark.parametrize("rounding", list(Rounding))
def test_custom_relu_is_bit_exact_with_tflite_running_relu(rounding: Rounding) -> None:
    """The oracle: TFLM (tflm) or LiteRT (litert) on the same model with the builtin RELU that the
    custom kernel imitates; the C runs under ASan and UBSan."""
    custom, builtin = _example_models()
    options = BuildOptions(rounding=rounding, custom_ops=parse_custom_ops([MY_RELU]))
    program = build_program(custom, options, "my_relu.tflite", sanitize=True)
    cases = _cases(12)
    results = run_program(program, cases)
    for inputs, (got,) in zip(cases, results):
        (expected,) = run_oracle(builtin, inputs, rounding)
        np.testing.assert_array_equal(got, expected)
    assert len({r[0].tobytes() for r in results}) > 1  # the cases differ, so the comparison means something


def test_verify_compares_the_kernel_with_its_python_reference(tmp_path: Path) -> None:
    result = invoke("verify", EXAMPLE / "my_relu.tflite", "--custom-op", MY_RELU, "--cases", "8")
    assert result.exit_code == 0, result.output
    assert "8 cases, all 8 outputs bit-exact" in result.output
    # a reference that disagrees with the kernel (it forgets the RELU) fails verify
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def reference(inputs, custom_options, outputs_like):\n    return [inputs[0].copy()]\n")
    result = invoke("verify", EXAMPLE / "my_relu.tflite", "--custom-op", f"my_relu={KERNEL}:{wrong}", "--cases", "4")
    assert result.exit_code == 1, result.output
    assert "differ from mcugen's Python reference" in result.output


def test_verify_without_a_reference_refuses_in_one_line() -> None:
    result = invoke("verify", EXAMPLE / "my_relu.tflite", "--custom-op", f"my_relu={KERNEL}")
    assert_one_line_error(result, "CUSTOM (op 1, 'my_relu')", "custom code 'my_relu' has no Python reference",
                          "--custom-op my_relu=my_relu.c:path/to/reference.py")


def test_run_with_the_kernel_writes_tflites_outputs(tmp_path: Path) -> None:
    _, builtin = _example_models()
    (inputs,) = _cases(1, seed=3)
    np.savez(tmp_path / "in.npz", input0=inputs[0])
    result = invoke("run", EXAMPLE / "my_relu.tflite", "--input", tmp_path / "in.npz", "--output",
                    tmp_path / "out.npz", "--custom-op", MY_RELU)
    assert result.exit_code == 0, result.output
    (expected,) = run_oracle(builtin, inputs, Rounding.TFLM)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["output0"], expected)


def test_build_copies_the_kernel_and_lists_it_for_make_and_cmake(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    result = invoke("build", EXAMPLE / "my_relu.tflite", "-o", out, "--custom-op", MY_RELU)
    assert result.exit_code == 0, result.output
    copy = (out / "mcugen_custom_my_relu.c").read_text()
    assert KERNEL.read_text() in copy and '#line 1 "my_relu.c"' in copy
    assert "$(MCUGEN_DIR)/mcugen_custom_my_relu.c" in (out / "mcugen.mk").read_text()
    assert " mcugen_custom_my_relu.c" in (out / "CMakeLists.txt").read_text()
    assert (out / "mcugen_custom.h").exists()
    report = json.loads((out / "report.json").read_text())
    assert [op["kind"] for op in report["ops"]] == ["CONV_2D", "CUSTOM", "AVERAGE_POOL_2D"]


def test_the_kernel_compiles_for_cortex_m55(tmp_path: Path) -> None:
    """build for a Cortex-M target measures code size with arm-none-eabi-gcc: the kernel is in it."""
    result = invoke("build", EXAMPLE / "my_relu.tflite", "-o", tmp_path / "m55", "--target", "cortex-m55",
                    "--size", "--custom-op", MY_RELU)
    assert result.exit_code == 0, result.output
    code_size = json.loads((tmp_path / "m55" / "report.json").read_text())["code_size"]
    assert code_size["measured"], code_size


def test_plan_reserves_the_declared_scratch() -> None:
    result = invoke("plan", EXAMPLE / "my_relu.tflite", "--json", "--custom-op", MY_RELU)
    assert result.exit_code == 0, result.output
    assert "scratch" in result.output and "256" in result.output


# --- the arguments, held to the model file ----------------------------------------------------

# Writes what it receives into its int32 output, in a fixed order, so that the test can hold
# every field to the values it wrote into the model; fills its scratch (ASan sees overruns).
ECHO_KERNEL = r"""
#include <string.h>
#include "mcugen_custom.h"
/* mcugen: scratch 100 */
mcugen_status echo_args_kernel(const mcugen_custom_args *args);

static void put_info(int32_t *out, int32_t *n, const mcugen_custom_tensor_info *info)
{
    out[(*n)++] = (int32_t)info->dtype;
    out[(*n)++] = info->rank;
    for (int32_t d = 0; d < MCUGEN_CUSTOM_MAX_RANK; ++d) {
        out[(*n)++] = info->dims[d];
    }
    out[(*n)++] = info->quant_count;
    out[(*n)++] = info->quant_axis;
    for (int32_t q = 0; q < info->quant_count; ++q) {
        int32_t bits;
        memcpy(&bits, &info->scale[q], sizeof bits);
        out[(*n)++] = bits;
        out[(*n)++] = info->zero_point[q];
    }
}

mcugen_status echo_args_kernel(const mcugen_custom_args *args)
{
    int32_t *out = (int32_t *)args->outputs[0].data;
    int32_t n = 0;
    memset(args->scratch, 0x5A, (size_t)args->scratch_size);
    out[n++] = args->op_index;
    out[n++] = args->input_count;
    out[n++] = args->output_count;
    out[n++] = args->scratch_size;
    out[n++] = args->options_size;
    for (int32_t i = 0; i < args->options_size; ++i) {
        out[n++] = args->options[i];
    }
    for (int32_t i = 0; i < args->input_count; ++i) {
        put_info(out, &n, &args->inputs[i].info);
    }
    put_info(out, &n, &args->outputs[0].info);
    const int16_t *weights = (const int16_t *)args->inputs[1].data;
    for (int32_t i = 0; i < 6; ++i) {
        out[n++] = weights[i];
    }
    const int8_t *x = (const int8_t *)args->inputs[0].data;
    out[n++] = x[0] + x[3];
    return n <= args->outputs[0].info.dims[0] ? MCUGEN_OK : MCUGEN_ARG_ERROR;
}
"""
OPTIONS = b"\x07\x01hello"  # any bytes: the kernel gets them as stored
WEIGHTS = np.array([[1, -2, 300], [-400, 5, 32767]], np.int16)


def _echo_model(code: str = "echo_args") -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", [2, 2], "int8", scale=0.25, zero_point=-7)
    w = b.add_tensor("w", [2, 3], "int16", scale=[0.5, 0.125], zero_point=[0, 0], data=WEIGHTS)
    r = b.add_tensor("r", [2, 2], "int8", scale=0.25, zero_point=-7)
    y = b.add_tensor("y", [96], "int32")
    b.add_op("RELU", [x], [r])
    b.add_custom_op(code, [r, w], [y], custom_options=OPTIONS)
    b.set_io([x], [y])
    return b.build()


def _info(dtype: int, shape: list[int], quant: list[tuple[float, int]], axis: int = 0) -> list[int]:
    words = [dtype, len(shape), *shape, *[0] * (6 - len(shape)), len(quant), axis]
    for scale, zero_point in quant:
        words += [struct.unpack("<i", struct.pack("<f", scale))[0], zero_point]
    return words


def test_the_kernel_gets_shapes_dtypes_quantization_options_and_scratch(tmp_path: Path) -> None:
    kernel = tmp_path / "echo.c"
    kernel.write_text(ECHO_KERNEL)
    options = BuildOptions(custom_ops=parse_custom_ops([f"echo_args={kernel}"]))
    program = build_program(_echo_model(), options, "echo.tflite", sanitize=True)
    x = np.array([[-100, 3], [50, 120]], np.int8)
    ((got,),) = run_program(program, [[x]])
    relu = np.maximum(x.astype(np.int32), -7).ravel()
    expected = [1, 2, 1, None, len(OPTIONS), *OPTIONS,
                *_info(0, [2, 2], [(0.25, -7)]),  # int8 input: RELU's output, in the arena
                *_info(2, [2, 3], [(0.5, 0), (0.125, 0)]),  # int16 constant, per channel on axis 0
                *_info(3, [96], []),  # int32 output, not quantized
                *WEIGHTS.ravel().tolist(), int(relu[0] + relu[3])]
    scratch = int(got[3])
    assert 100 <= scratch < 100 + 16  # the declared bytes, rounded up to the arena's alignment at most
    expected[3] = scratch
    assert got[: len(expected)].tolist() == expected


def test_a_kernels_error_status_ends_invoke(tmp_path: Path) -> None:
    kernel = tmp_path / "fails.c"
    kernel.write_text('#include "mcugen_custom.h"\nmcugen_status echo_args_kernel(const mcugen_custom_args *args);\n'
                      "mcugen_status echo_args_kernel(const mcugen_custom_args *args)\n"
                      "{\n    (void)args;\n    return MCUGEN_NO_IMPL;\n}\n")
    program = build_program(_echo_model(), BuildOptions(custom_ops=parse_custom_ops([f"echo_args={kernel}"])),
                            "echo.tflite")
    with pytest.raises(BuildError, match="invoke failed with status -2"):
        run_program(program, [[np.zeros((2, 2), np.int8)]])


# --- misuse: one line each ----------------------------------------------------------------------


def test_a_model_with_a_custom_op_and_no_kernel_names_the_op_and_the_option(tmp_path: Path) -> None:
    result = invoke("build", EXAMPLE / "my_relu.tflite", "-o", tmp_path / "o")
    assert_one_line_error(result, "CUSTOM (op 1, 'my_relu')", "custom code 'my_relu' and no kernel",
                          "pass --custom-op my_relu=path/to/kernel.c")
    # a kernel for another custom code does not serve it
    result = invoke("build", EXAMPLE / "my_relu.tflite", "-o", tmp_path / "o", "--custom-op", f"other={KERNEL}")
    assert_one_line_error(result, "custom code 'my_relu' and no kernel")


@pytest.mark.parametrize("spec, fragments", [
    ("my_relu", ("--custom-op 'my_relu'", "NAME=path/to/kernel.c[:path/to/reference.py]")),
    ("=k.c", ("--custom-op '=k.c'", "the rule: NAME=")),
    ("my_relu=", ("--custom-op 'my_relu='", "the rule: NAME=")),
    ("my_relu=missing.c", ("--custom-op my_relu: kernel file missing.c: no such file",)),
    (f"my_relu={KERNEL}:missing.py", ("--custom-op my_relu: reference file missing.py: no such file",)),
])
def test_bad_custom_op_options_are_one_line(tmp_path: Path, spec: str, fragments: tuple[str, ...]) -> None:
    assert_one_line_error(invoke("build", EXAMPLE / "my_relu.tflite", "-o", tmp_path / "o", "--custom-op", spec),
                          *fragments)


def test_the_same_name_twice_is_refused(tmp_path: Path) -> None:
    result = invoke("build", EXAMPLE / "my_relu.tflite", "-o", tmp_path / "o", "--custom-op", f"my_relu={KERNEL}",
                    "--custom-op", f"my_relu={KERNEL}")
    assert_one_line_error(result, "--custom-op my_relu: given twice")


@pytest.mark.parametrize("line, fragment", [
    ("// mcugen: scratch lots", "'mcugen: scratch lots'"),
    ("// mcugen: scratch -4", "'mcugen: scratch -4'"),
    ("// mcugen: scratch 16\n// mcugen: scratch 32", "2 'mcugen: scratch' lines"),
])
def test_a_bad_scratch_declaration_is_refused(tmp_path: Path, line: str, fragment: str) -> None:
    kernel = tmp_path / "k.c"
    kernel.write_text(f"{line}\n{KERNEL.read_text().replace('// mcugen: scratch 256', '')}")
    with pytest.raises(McugenError, match=f"--custom-op my_relu: {kernel}: {fragment}"):
        parse_custom_ops([f"my_relu={kernel}"])


def test_a_reference_without_the_function_or_that_fails_to_load(tmp_path: Path) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(McugenError, match="defines no function reference"):
        parse_custom_ops([f"my_relu={KERNEL}:{empty}"])
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_for_mcugen\n")
    assert_one_line_error(invoke("verify", EXAMPLE / "my_relu.tflite", "--custom-op", f"my_relu={KERNEL}:{broken}"),
                          "cannot be loaded: ModuleNotFoundError")


def test_a_reference_with_the_wrong_outputs_is_named(tmp_path: Path) -> None:
    wrong = tmp_path / "shape.py"
    wrong.write_text("import numpy as np\ndef reference(inputs, custom_options, outputs_like):\n"
                     "    return [np.zeros(3, np.int8)]\n")
    result = invoke("verify", EXAMPLE / "my_relu.tflite", "--custom-op", f"my_relu={KERNEL}:{wrong}", "--cases", "1")
    assert_one_line_error(result, "shape.py: reference(): output 0 is int8[3]; the rule: int8[1, 8, 8, 8]")


def test_a_kernel_that_does_not_compile_names_its_file_and_line(tmp_path: Path) -> None:
    kernel = tmp_path / "bad_kernel.c"
    kernel.write_text('#include "mcugen_custom.h"\nmcugen_status my_relu_kernel(const mcugen_custom_args *args)\n'
                      "{\n    return args->no_such_field;\n}\n")
    (inputs,) = _cases(1)
    np.savez(tmp_path / "in.npz", input0=inputs[0])
    result = invoke("run", EXAMPLE / "my_relu.tflite", "--input", tmp_path / "in.npz", "--custom-op",
                    f"my_relu={kernel}")
    assert_one_line_error(result, "the kernel bad_kernel.c of --custom-op my_relu failed to compile: bad_kernel.c:4:",
                          "no_such_field")


# --- inspect lists every op with every reason -------------------------------------------------


def _troubled_model(bad_zero_point: bool = False) -> bytes:
    """CUSTOM 'my_relu' (no kernel given), SIN (a builtin mcugen lacks), an int32 RELU (a dtype
    RELU does not take), a CONV_2D with stride 0 (an option that breaks validation), then an int8
    ADD that is fine; optionally a zero point out of int8's range (a rule of the model)."""
    rng = np.random.default_rng(1)
    b = ModelBuilder()
    q = {"scale": 0.1, "zero_point": 0}
    x = b.add_tensor("x", [1, 4, 4, 2], "int8", **q)
    c = b.add_tensor("custom_out", [1, 4, 4, 2], "int8", **q)
    s = b.add_tensor("sin_in", [4], "float32")
    s_out = b.add_tensor("sin_out", [4], "float32")
    i = b.add_tensor("i32", [4], "int32")
    r = b.add_tensor("relu_i32", [4], "int32")
    w = b.add_tensor("w", [2, 1, 1, 2], "int8", scale=[0.01, 0.01], data=rng.integers(-9, 9, (2, 1, 1, 2), np.int8))
    conv = b.add_tensor("conv_out", [1, 4, 4, 2], "int8", scale=0.1, zero_point=300 if bad_zero_point else 0)
    y = b.add_tensor("sum", [1, 4, 4, 2], "int8", **q)
    b.add_custom_op("my_relu", [x], [c])
    b.add_op("SIN", [s], [s_out])
    b.add_op("RELU", [i], [r])
    b.add_op("CONV_2D", [c, w, -1], [conv], {"stride_w": 0})
    b.add_op("ADD", [conv, c], [y])
    b.set_io([x, s, i], [y, s_out, r])
    return b.build()


def _op_block(stdout: str, index: int) -> list[str]:
    """The table's lines for op `index`: its row and the reason lines under it."""
    lines = stdout.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(f"  {index:>3}  "))
    block = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("       "):
            break
        block.append(line)
    return block


def test_inspect_lists_every_op_with_every_reason(tmp_path: Path) -> None:
    path = tmp_path / "troubled.tflite"
    path.write_bytes(_troubled_model())
    result = invoke("inspect", path)
    assert result.exit_code == 2, result.output
    out = result.stdout
    custom = _op_block(out, 0)
    assert "CUSTOM 'my_relu'" in custom[0] and "pass --custom-op my_relu=path/to/kernel.c" in custom[1]
    sin = _op_block(out, 1)
    assert "SIN" in sin[0] and "mcugen has no kernel for this builtin" in sin[1]
    relu = _op_block(out, 2)
    assert "unsupported: RELU (op 2, 'relu_i32')" in relu[1] and "int32" in relu[1]
    conv = _op_block(out, 3)
    assert any("invalid:" in line and "stride_w 0" in line for line in conv[1:])
    add = _op_block(out, 4)
    assert len(add) == 1 and " cpu " in add[0]  # the op after the troubles is still checked, and fine
    assert result.stderr.strip().splitlines() == [
        "error: troubled.tflite: 4 unsupported op(s): op 0 CUSTOM, op 1 SIN, op 2 RELU, op 3 CONV_2D"]
    # build still says it in one short line
    assert_one_line_error(invoke("build", path, "-o", tmp_path / "o"), "troubled.tflite")
    assert len(invoke("build", path, "-o", tmp_path / "o").stderr) < 400


def test_inspect_lists_the_ops_under_a_model_level_problem(tmp_path: Path) -> None:
    path = tmp_path / "troubled.tflite"
    path.write_bytes(_troubled_model(bad_zero_point=True))
    result = invoke("inspect", path)
    assert result.exit_code == 2, result.output
    out = result.stdout
    assert "invalid model: troubled.tflite: tensor 7 'conv_out': zero point 300" in out
    assert "CUSTOM 'my_relu'" in _op_block(out, 0)[0] and "SIN" in _op_block(out, 1)[0]
    assert "stride_w 0" in "\n".join(_op_block(out, 3))
    assert result.stderr.strip() == ("error: troubled.tflite: 1 problem(s) with the model; 4 unsupported op(s): "
                                     "op 0 CUSTOM, op 1 SIN, op 2 RELU, op 3 CONV_2D")


def test_the_example_runs_with_make_run(tmp_path: Path) -> None:
    """examples/custom_op: `make run` generates the C with the kernel, builds and runs it on the host
    against case0.npz (TFLM's output on the builtin model); the QEMU runs are in test_firmware.py."""
    from test_firmware import assert_pass, expected_bytes, make, require_tools

    require_tools("make", "cc")
    result = make("custom_op", tmp_path / "build", "run")
    assert_pass(result, "my_relu", expected_bytes("custom_op"))
    assert "mcugen_custom_my_relu.o" in result.stdout


def test_the_example_case_is_tflms_output_on_the_builtin_model() -> None:
    from oracles import run_tflm

    _, builtin = _example_models()
    with np.load(EXAMPLE / "case0.npz") as case:
        (expected,) = run_tflm(builtin, [case["input0"]])
        np.testing.assert_array_equal(case["output0"], expected)


def test_per_layer_compares_with_the_python_reference_and_refuses_the_runtimes() -> None:
    result = invoke("verify", EXAMPLE / "my_relu.tflite", "--custom-op", MY_RELU, "--per-layer", "--reference", "python")
    assert result.exit_code == 0, result.output
    assert "no divergence" in result.output
    assert_one_line_error(invoke("verify", EXAMPLE / "my_relu.tflite", "--custom-op", MY_RELU, "--per-layer"),
                          "CUSTOM (op 1, 'my_relu')", "TFLM and LiteRT cannot run", "--reference python")


def test_builds_in_other_directories_get_the_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Firmware builds (profile --qemu, build --instructions) run `mcugen build` again through make,
    elsewhere: the kernel goes with them as an absolute --custom-op."""
    from test_firmware import require_tools

    from mcugen.toolchain.cross import _mcugen_options

    monkeypatch.chdir(EXAMPLE)
    (kernel,) = parse_custom_ops(["my_relu=my_relu.c:my_relu_reference.py"])
    assert f"--custom-op my_relu={KERNEL}:{REFERENCE}" in _mcugen_options(BuildOptions(custom_ops=(kernel,)))
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    result = invoke("profile", "my_relu.tflite", "--qemu", "--target", "cortex-m4", "--custom-op", "my_relu=my_relu.c")
    assert result.exit_code == 0, result.output
    assert re.search(r"^CUSTOM +\| +1 \|", result.output, re.MULTILINE), result.output


def test_a_custom_op_on_constants_is_not_folded(tmp_path: Path) -> None:
    """With a reference the fold pass could evaluate it, but what a custom op computes is its
    kernel's: it stays in the graph and runs on the device."""
    from mcugen.driver import load_graph
    from mcugen.ir import OpKind

    b = ModelBuilder()
    k = b.add_tensor("k", [2, 2], "int8", scale=0.08, zero_point=-5, data=np.array([[-9, 3], [4, -5]], np.int8))
    x = b.add_tensor("x", [2, 2], "int8", scale=0.08, zero_point=-5)
    r = b.add_tensor("r", [2, 2], "int8", scale=0.08, zero_point=-5)
    y = b.add_tensor("y", [2, 2], "int8", scale=0.08, zero_point=-5)
    b.add_custom_op("my_relu", [k], [r])
    b.add_op("ADD", [x, r], [y])
    b.set_io([x], [y])
    graph = load_graph(b.build(), "constant.tflite", custom_ops=parse_custom_ops([MY_RELU]))
    assert [op.kind for op in graph.ops] == [OpKind.CUSTOM, OpKind.ADD]


@pytest.mark.parametrize("source, fragment", [
    ('#include "mcugen_custom.h"\nint my_relu_kernel(void);\nint my_relu_kernel(void) { return 0; }\n',
     "the kernel bad.c of --custom-op my_relu failed to compile: bad.c:2:5: error: conflicting types for"),
    ('#include "mcugen_custom.h"\nint other(void);\nint other(void) { return 0; }\n',
     "the kernel bad.c of --custom-op my_relu defines no function my_relu_kernel"),
])
def test_a_kernel_of_the_wrong_type_or_without_the_function_is_named(tmp_path: Path, source: str,
                                                                     fragment: str) -> None:
    kernel = tmp_path / "bad.c"
    kernel.write_text(source)
    np.savez(tmp_path / "in.npz", input0=np.zeros((1, 8, 8, 3), np.int8))
    result = invoke("run", EXAMPLE / "my_relu.tflite", "--input", tmp_path / "in.npz", "--custom-op", f"my_relu={kernel}")
    assert_one_line_error(result, fragment)
