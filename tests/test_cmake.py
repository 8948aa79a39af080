"""CMake: the generated DIR/CMakeLists.txt and examples/cmake/ (issue 15).

examples/cmake is configured and built with CMake for the host and, with its toolchain file,
for Cortex-M4, and both programs run (the host binary, the ELF on QEMU mps2-an386) and print the
PASS line of firmware/common/main.c: kws_dscnn's outputs equal case0's, which LiteRT's reference
kernels (bit-exact with TFLM) wrote. compile_commands.json shows that -std=c99 and mcugen's
warnings reach mcugen's files only, not the application's main.c. A second project adds two
separately built directories: their runtimes become one mcugen_runtime library, each file once,
and both models run bit-exact with TFLM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from deploy_apps import write_app
from test_model_sets import PAIR, QEMU_M4, build, model_case, model_path, require

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "cmake"
PASS_LINE = "PASS kws_dscnn 12 bytes"


def run(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=900, check=False)


def configure_and_build(source: Path, build_dir: Path, *options: str) -> str:
    configured = run(["cmake", "-S", str(source), "-B", str(build_dir), f"-DPYTHON={sys.executable}",
                      "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", *options])
    assert configured.returncode == 0, configured.stdout
    built = run(["cmake", "--build", str(build_dir)])
    assert built.returncode == 0, built.stdout
    return configured.stdout


def compile_commands(build_dir: Path) -> dict[str, str]:
    """source file name -> its compile command."""
    entries = json.loads((build_dir / "compile_commands.json").read_text())
    return {Path(e["file"]).name: e["command"] for e in entries}


def assert_flags_stay_inside(commands: dict[str, str]) -> None:
    for own in ("kws_dscnn_model.c", "mcugen_conv.c"):
        assert "-std=c99" in commands[own] and "-ffp-contract=off" in commands[own], commands[own]
    assert "-std=c99" not in commands["main.c"] and "-ffp-contract=off" not in commands["main.c"], commands["main.c"]


def test_example_on_the_host(tmp_path: Path) -> None:
    require("cmake", "cc", "make")
    build_dir = tmp_path / "host"
    configure_and_build(EXAMPLE, build_dir)
    assert_flags_stay_inside(compile_commands(build_dir))
    result = run([str(build_dir / "app")])
    assert result.returncode == 0 and PASS_LINE in result.stdout, result.stdout


def test_example_on_cortex_m4(tmp_path: Path) -> None:
    require("cmake", "make", "arm-none-eabi-gcc", "qemu-system-arm")
    build_dir = tmp_path / "m4"
    log = configure_and_build(EXAMPLE, build_dir, f"-DCMAKE_TOOLCHAIN_FILE={EXAMPLE / 'cortex-m4.cmake'}")
    assert "is not in CMAKE_C_FLAGS" not in log, log  # the toolchain has the core's flags
    commands = compile_commands(build_dir)
    assert_flags_stay_inside(commands)
    assert "-mcpu=cortex-m4" in commands["kws_dscnn_model.c"]
    report = json.loads((build_dir / "mcugen" / "report.json").read_text())
    assert report["target"] == "cortex-m4"
    result = run([*QEMU_M4, "-kernel", str(build_dir / "app.elf")])
    assert result.returncode == 0 and PASS_LINE in result.stdout, result.stdout


PROJECT = """cmake_minimum_required(VERSION 3.13)
project(two_directories C)
add_subdirectory({a} a)
add_subdirectory({b} b)
add_executable(app main.c)
target_compile_options(app PRIVATE -Wall -Wextra -Werror)
target_link_libraries(app PRIVATE {libs})
"""


def test_two_separate_builds_share_one_runtime_library(tmp_path: Path) -> None:
    require("cmake", "cc", "make")
    dirs = [tmp_path / name for name in PAIR]
    for name, out in zip(PAIR, dirs):
        build(out, model_path(name))
    app = tmp_path / "app"
    write_app(app, [model_case(n) for n in PAIR])
    (app / "CMakeLists.txt").write_text(PROJECT.format(a=dirs[0], b=dirs[1],
                                                       libs=" ".join(f"mcugen_{n}" for n in PAIR)))
    configure_and_build(app, tmp_path / "build")
    entries = json.loads((tmp_path / "build" / "compile_commands.json").read_text())
    runtime = [Path(e["file"]) for e in entries if Path(e["file"]).name.startswith("mcugen_")]
    names = [path.name for path in runtime]
    assert len(names) == len(set(names)) and "mcugen_conv.c" in names, names  # each file once
    # ADD's kernel only in the second directory: taken from there
    assert [path.parent for path in runtime if path.name == "mcugen_elementwise.c"] == [dirs[1]], runtime
    result = run([str(tmp_path / "build" / "app")])
    assert result.returncode == 0 and "ALL PASS" in result.stdout, result.stdout
    assert all(f"PASS {n} bit-exact" in result.stdout for n in PAIR), result.stdout
