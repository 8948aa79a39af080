"""Several models in one firmware image (issue 15): one `mcugen build A B -o DIR` or separate
builds linked together, on the host (ASan + UBSan) and on QEMU's Cortex-M4, every output
bit-exact with TensorFlow Lite Micro; the shared external arena; the output directory guard.

Models: kws_dscnn and ic_resnet8 from the public set (they share the conv, pool, fully connected
and softmax kernels; ic_resnet8 adds ADD), inputs from their case files, expected outputs from
the TFLM interpreter (tests/oracles.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from deploy_apps import ModelCase, write_app
from oracles import run_tflm

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO.parent / "shared" / "models"
PAIR = ("kws_dscnn", "ic_resnet8")
QEMU_M4 = ["qemu-system-arm", "-M", "mps2-an386", "-cpu", "cortex-m4", "-nographic", "-monitor", "none",
           "-serial", "none", "-semihosting-config", "enable=on,target=native"]


def require(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing and os.environ.get("CI") == "true":
        pytest.fail(f"{', '.join(missing)} not on PATH; CI=true")
    if missing:
        pytest.skip(f"{', '.join(missing)} not on PATH")


def model_path(name: str) -> Path:
    path = MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


def _inputs(name: str, case: int) -> list[np.ndarray]:
    with np.load(MODELS / f"{name}.case{case}.npz") as data:
        return [data[f"input{i}"] for i in range(sum(k.startswith("input") for k in data.files))]


def model_case(name: str, second: bool = False) -> ModelCase:
    model = model_path(name).read_bytes()
    inputs = _inputs(name, 0)
    case = ModelCase(name, inputs, run_tflm(model, inputs))
    if second:
        case.inputs2 = _inputs(name, 1)
        case.outputs2 = run_tflm(model, case.inputs2)
        assert any(not np.array_equal(a, b) for a, b in zip(case.outputs, case.outputs2)), \
            "the two cases must differ, or two instances prove nothing"
    return case


def mcugen(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "mcugen", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600, check=False)


def build(out: Path, *args: str | Path) -> dict:
    result = mcugen("build", *args, "-o", out, "--no-size")
    assert result.returncode == 0, result.stderr
    return json.loads((out / "report.json").read_text())


def make(app: Path, dirs: list[Path], core: str, *extra: str) -> subprocess.CompletedProcess[str]:
    command = ["make", "--no-print-directory", "-C", str(app), f"DIRS={' '.join(map(str, dirs))}", f"CORE={core}",
               *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)


def run_app(app: Path, core: str) -> str:
    if core == "m4":
        command = [*QEMU_M4, "-kernel", str(app / "app.elf")]
    else:
        command = [str(app / "app")]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0 and "ALL PASS" in result.stdout and "FAIL" not in result.stdout, result.stdout
    return result.stdout


def _tools(core: str) -> None:
    require("make", "cc") if core == "host" else require("make", "arm-none-eabi-gcc", "qemu-system-arm")


def _target(core: str) -> str:
    return "host" if core == "host" else "cortex-m4"


@pytest.mark.parametrize("core", ["host", "m4"])
def test_two_models_from_one_build(core: str, tmp_path: Path) -> None:
    _tools(core)
    out = tmp_path / "gen"
    report = build(out, *(model_path(n) for n in PAIR), "--target", _target(core))
    assert report["set"]["prefixes"] == list(PAIR)
    assert [m["prefix"] for m in report["models"]] == list(PAIR)
    # each runtime file once, and each model's own files beside it
    assert sorted(p.name for p in out.glob("*_model.c")) == sorted(f"{n}_model.c" for n in PAIR)
    assert "mcugen_elementwise.c" in report["set"]["runtime_sources"]  # only ic_resnet8 has ADD
    app = tmp_path / "app"
    write_app(app, [model_case(n) for n in PAIR])
    result = make(app, [out], core)
    assert result.returncode == 0, result.stdout + result.stderr
    output = run_app(app, core)
    assert all(f"PASS {n} bit-exact" in output for n in PAIR), output


@pytest.mark.parametrize("core", ["host", "m4"])
def test_two_models_from_separate_builds_link_together(core: str, tmp_path: Path) -> None:
    """Two directories, two runtimes on disk: the mcugen.mk files give each runtime file once, so
    nothing is defined twice at link time, and both models run bit-exact."""
    _tools(core)
    dirs = [tmp_path / n for n in PAIR]
    for name, out in zip(PAIR, dirs):
        build(out, model_path(name), "--target", _target(core))
    app = tmp_path / "app"
    write_app(app, [model_case(n) for n in PAIR])
    sources = make(app, dirs, core, "print-MCUGEN_SRCS").stdout.split()
    runtime = [Path(s).name for s in sources if not s.endswith("_model.c")]
    assert len(runtime) == len(set(runtime)) and "mcugen_conv.c" in runtime, sources
    assert any(str(dirs[1]) in s for s in sources if s.endswith("mcugen_elementwise.c")), sources
    result = make(app, dirs, core)
    assert result.returncode == 0, result.stdout + result.stderr
    output = run_app(app, core)
    assert all(f"PASS {n} bit-exact" in output for n in PAIR), output


def test_separate_builds_with_one_prefix_are_a_make_error(tmp_path: Path) -> None:
    require("make")
    dirs = [tmp_path / "a", tmp_path / "b"]
    for out in dirs:
        build(out, model_path("kws_dscnn"))
    app = tmp_path / "app"
    write_app(app, [model_case("kws_dscnn")])
    result = make(app, dirs, "host")
    assert result.returncode != 0
    assert "prefix kws_dscnn too: rebuild one with another --prefix" in result.stderr, result.stderr


@pytest.mark.parametrize("core", ["host", "m4"])
def test_external_arena_shared_by_two_models_and_two_instances(core: str, tmp_path: Path) -> None:
    _tools(core)
    out = tmp_path / "gen"
    report = build(out, *(model_path(n) for n in PAIR), "--arena", "external", "--target", _target(core))
    arenas = [m["arena_bytes"] for m in report["models"]]
    assert report["set"]["shared_arena_bytes"] == max(arenas) and report["set"]["arena"] == "external"
    header = (out / "kws_dscnn_model.h").read_text()
    assert "kws_dscnn_init_arena(void *arena, size_t bytes)" in header and "kws_dscnn_init(void)" not in header
    assert "static uint8_t kws_dscnn_arena[" not in (out / "kws_dscnn_model.c").read_text()
    app = tmp_path / "app"
    # ic_resnet8 as the two instances: kws_dscnn gives the same output for every case file
    write_app(app, [model_case("ic_resnet8", second=True), model_case("kws_dscnn")], external=True)
    result = make(app, [out], core, f"APP_DEFINES=-DSHARED_ARENA_BYTES={report['set']['shared_arena_bytes']}")
    assert result.returncode == 0, result.stdout + result.stderr
    output = run_app(app, core)
    assert output.count("PASS kws_dscnn bit-exact in the shared arena") == 2, output
    assert output.count("PASS ic_resnet8 bit-exact in the shared arena") == 2, output
    assert "PASS ic_resnet8 two instances with two arenas bit-exact" in output, output
    assert output.count("is an error") == 5, output


def test_build_refuses_a_directory_holding_other_models(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    build(out, model_path("kws_dscnn"))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    result = mcugen("build", model_path("ic_resnet8"), "-o", out)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "already holds the models kws_dscnn" in result.stderr, result.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing dropped or replaced
    build(out, model_path("kws_dscnn"))  # the same model again: a rebuild, allowed


def test_prefix_per_model(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    report = build(out, model_path("kws_dscnn"), model_path("kws_dscnn"), "--prefix", "mic_a", "--prefix", "mic_b")
    assert report["set"]["prefixes"] == ["mic_a", "mic_b"]
    assert (out / "mic_a_model.c").exists() and (out / "mic_b_model.c").exists()
    same = mcugen("build", model_path("kws_dscnn"), model_path("kws_dscnn"), "-o", tmp_path / "x")
    assert same.returncode == 2 and "both get the C prefix 'kws_dscnn'" in same.stderr, same.stderr
    count = mcugen("build", model_path("kws_dscnn"), model_path("ic_resnet8"), "--prefix", "a", "-o", tmp_path / "y")
    assert count.returncode == 2 and "--prefix given 1 times for 2 models" in count.stderr, count.stderr
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_external_arena_refuses_pools(tmp_path: Path) -> None:
    result = mcugen("build", model_path("kws_dscnn"), "--arena", "external", "--pool", "SRAM:64K",
                    "-o", tmp_path / "gen")
    assert result.returncode == 2 and "cannot be combined with --pool" in result.stderr, result.stderr


@pytest.mark.parametrize("separate", [False, True])
def test_two_npu_models_share_the_npu_glue(separate: bool, tmp_path: Path) -> None:
    """Two models with NPU ops (mcugen's own --npu) in one image: the driver glue is written once
    (in one directory, or in each of two and listed once by mcugen.mk), both models init the one
    NPU, and both run bit-exact with TFLM."""
    require("make", "cc")
    pair = ("kws_dscnn", "ad_autoencoder")
    dirs = [tmp_path / n for n in pair] if separate else [tmp_path / "gen"]
    if separate:
        for name, out in zip(pair, dirs):
            build(out, model_path(name), "--npu", "u55-64")
    else:
        build(dirs[0], *(model_path(n) for n in pair), "--npu", "u55-64")
    app = tmp_path / "app"
    write_app(app, [model_case(n) for n in pair])
    sources = make(app, dirs, "host", "print-MCUGEN_SRCS").stdout.split()
    assert [Path(s).name for s in sources].count("mcugen_npu_model.c") == 1, sources
    result = make(app, dirs, "host")
    assert result.returncode == 0, result.stdout + result.stderr
    output = run_app(app, "host")
    assert all(f"PASS {n} bit-exact" in output for n in pair), output


def test_models_for_two_npu_configurations_are_refused(tmp_path: Path) -> None:
    """One firmware has one NPU: Vela models compiled for two configurations cannot share a directory."""
    from vela_models import compile_model

    model = model_path("ad_autoencoder").read_bytes()
    for macs in (64, 128):
        compile_model(model, macs, tmp_path / f"vela{macs}")
    paths = [tmp_path / f"vela{macs}" / "out" / "model_vela.tflite" for macs in (64, 128)]
    result = mcugen("build", *paths, "--prefix", "a", "--prefix", "b", "-o", tmp_path / "gen")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "compiled for different NPUs" in result.stderr and "ethos-u55-64" in result.stderr, result.stderr
    assert not (tmp_path / "gen").exists()
