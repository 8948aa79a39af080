"""The generated C says so when it is compiled for another core than the one it was planned for
(issue 15): a #warning from the compiler's ISA macros (__ARM_FEATURE_DSP, __ARM_FEATURE_MVE, as
mcugen_platform.h reads them). A warning, because the outputs stay exact (each fast kernel
checks its scratch and otherwise runs the portable loops); -Werror turns it into an error and
-DMCUGEN_PORTABLE (the portable C on purpose) silences it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_model_sets import model_path, require

from mcugen.driver import BuildOptions, compile_model
from mcugen.targets import target

CORES = {name: list(target(name).core_flags) for name in ("cortex-m4", "cortex-m55")}
CORES["cortex-m0"] = ["-mcpu=cortex-m0", "-mthumb"]  # no DSP, no MVE: what the host target plans for


def compile_for(directory: Path, core: str, *extra: str) -> subprocess.CompletedProcess[str]:
    command = ["arm-none-eabi-gcc", *CORES[core], "-std=c99", "-Wall", "-Wextra", *extra,
               f"-I{directory}", "-c", str(directory / "kws_dscnn_model.c"), "-o", str(directory / "model.o")]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def generated(tmp_path: Path, planned: str) -> Path:
    compiled = compile_model(model_path("kws_dscnn"), BuildOptions(target=planned))
    directory = tmp_path / planned
    directory.mkdir()
    for name, text in compiled.code.files.items():
        (directory / name).write_text(text)
    return directory


WARNING = "kws_dscnn_model.c was generated for --target {planned}"


@pytest.mark.parametrize("planned, core, warns", [
    ("cortex-m55", "cortex-m4", True),   # the case: Helium planned, DSP compiled
    ("cortex-m55", "cortex-m55", False),
    ("cortex-m4", "cortex-m4", False),
    ("cortex-m4", "cortex-m55", True),   # DSP planned, Helium compiled
    ("host", "cortex-m4", True),         # the default target built for an M4: portable loops, slow
    ("host", "cortex-m0", False),
])
def test_isa_mismatch_is_a_warning(tmp_path: Path, planned: str, core: str, warns: bool) -> None:
    require("arm-none-eabi-gcc")
    directory = generated(tmp_path, planned)
    result = compile_for(directory, core)
    assert result.returncode == 0, result.stderr
    assert (WARNING.format(planned=planned) in result.stderr) == warns, result.stderr
    if warns:
        strict = compile_for(directory, core, "-Werror")
        assert strict.returncode != 0 and WARNING.format(planned=planned) in strict.stderr, strict.stderr
        portable = compile_for(directory, core, "-Werror", "-DMCUGEN_PORTABLE")
        assert portable.returncode == 0, portable.stderr


def test_external_arena_compiles_for_cortex_m55_warning_free(tmp_path: Path) -> None:
    require("arm-none-eabi-gcc")
    compiled = compile_model(model_path("kws_dscnn"), BuildOptions(target="cortex-m55", arena="external"))
    for name, text in compiled.code.files.items():
        (tmp_path / name).write_text(text)
    result = compile_for(tmp_path, "cortex-m55", "-Werror", "-pedantic")
    assert result.returncode == 0, result.stderr


def _cli(*args: str) -> str:
    from click.testing import CliRunner

    from mcugen.cli import main

    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_plan_takes_the_target_of_the_build(tmp_path: Path) -> None:
    """plan --target plans the scratch of that core's kernels: the numbers of build --target's
    report.json, which differ between the cores (the DSP and Helium paths need scratch)."""
    import json

    model = str(model_path("kws_dscnn"))
    arenas = {}
    for name in ("host", "cortex-m4", "cortex-m55"):
        data = json.loads(_cli("plan", model, "--json", "--target", name))
        _cli("build", model, "-o", str(tmp_path / name), "--target", name, "--no-size")
        report = json.loads((tmp_path / name / "report.json").read_text())
        assert data["target"] == report["target"] == name
        for key in ("arena_bytes", "lower_bound_bytes", "buffers"):
            assert data[key] == report[key], (name, key)
        arenas[name] = data["arena_bytes"]
    assert len(set(arenas.values())) == 3, arenas
    assert _cli("plan", model, "--target", "cortex-m4").splitlines()[0].endswith("--target cortex-m4")


def test_verify_and_report_take_the_target(tmp_path: Path) -> None:
    import json

    model = str(model_path("ad_autoencoder"))
    assert "--target cortex-m55 on the host" in _cli("verify", model, "--cases", "1", "--target", "cortex-m55")
    out = _cli("report", model, "-o", str(tmp_path / "r.html"), "--runs", "1", "--json", "--target", "cortex-m4")
    assert json.loads(out)["summary"]["target"] == "cortex-m4"
