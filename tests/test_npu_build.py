"""`mcugen build/run --npu`: whole models with mcugen's own NPU segments, against TFLM.

Each public model is built for an Ethos-U55 (--npu u55-32/64/128/256) with the host target: the
ops the NPU takes run as ETHOS_U segments with mcugen's command streams, written for the
offsets the memory planner gave their feature maps (every op of the four models, since MEAN
and SOFTMAX lower too); anything else would run on mcugen's CPU kernels. The generated C runs under ASan/UBSan on the three stored cases and must equal the
cases' TFLM outputs bit for bit; a single-op model (an ADD, a CONV_2D) checks the build's
segments and report.json, and a Vela-compiled model with --npu is refused in one line.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import public_model
from npu_compile import models

from mcugen.cli import main
from mcugen.driver import BuildOptions, compile_model
from mcugen.ir import NpuSegmentOptions, OpKind
from mcugen.npu.config import npu_config
from mcugen.targets import HOST
from mcugen.toolchain.host import build_program, run_program

PUBLIC = ("ad_autoencoder", "kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025")
# Ops the NPU does not take as mcugen lowers it today (the CPU runs them), and the NPU segments
# between them.
ON_CPU: dict[str, set[str]] = {"ad_autoencoder": set(), "kws_dscnn": set(), "ic_resnet8": set(),
                               "vww_mobilenet_v1_025": set()}
SEGMENTS = {"ad_autoencoder": 1, "kws_dscnn": 1, "ic_resnet8": 1, "vww_mobilenet_v1_025": 1}


def npu_options(size: str) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)))


@pytest.mark.parametrize("size", ("u55-32", "u55-64", "u55-128", "u55-256"))
@pytest.mark.parametrize("name", PUBLIC)
def test_public_model_with_npu_segments_is_bit_exact_with_tflm(name: str, size: str) -> None:
    path = public_model(name)
    compiled = compile_model(path.read_bytes(), npu_options(size), path.name)
    segments = [op for op in compiled.order if op.kind is OpKind.ETHOS_U]
    assert len(segments) == SEGMENTS[name]
    assert all(isinstance(op.options, NpuSegmentOptions) for op in segments)
    assert {op.kind.name for op in compiled.order if op.kind is not OpKind.ETHOS_U} == ON_CPU[name]
    cases = [np.load(path.with_name(f"{name}.case{k}.npz")) for k in range(3)]
    program = build_program(path.read_bytes(), npu_options(size), path.name, sanitize=True)
    outputs = run_program(program, [[case["input0"]] for case in cases])
    for case, (actual,) in zip(cases, outputs, strict=True):
        expected = case["tflm_output0"]
        assert np.array_equal(actual.reshape(expected.shape), expected)


def test_a_segment_is_reported(tmp_path: Path) -> None:
    """kws_dscnn on u55-128: one segment of all its ops, its SOFTMAX included (mixed CPU/NPU
    builds: tests/test_npu_fixtures.py); the report names the configuration, the measured
    cycles and the regions (read-only image, the arena)."""
    out = tmp_path / "gen"
    result = CliRunner().invoke(main, ["build", str(public_model("kws_dscnn")), "--npu", "u55-128", "-o", str(out)])
    assert result.exit_code == 0, result.output
    npu = json.loads((out / "report.json").read_text())["npu"]
    assert npu["config"] == "ethos-u55-128" and (npu["ops_on_npu"], npu["ops_on_cpu"]) == (1, 0)
    assert npu["cycles"] > 0 and npu["weights_encoded_bytes"] > 0
    assert [r["region"] for r in npu["regions"]] == [0, 1]


def test_single_op_models_build_as_one_segment() -> None:
    """Every single-op model the NPU takes becomes one ETHOS_U op and nothing else."""
    for model in models()[:8]:
        compiled = compile_model(model.build(), npu_options("u55-128"), model.id)
        assert [op.kind for op in compiled.order] == [OpKind.ETHOS_U], model.id


def test_npu_with_a_vela_model_is_refused_in_one_line(tmp_path: Path) -> None:
    from vela_models import compile_model as vela_compile

    vela = vela_compile(models()[0].build(), 128, tmp_path / "vela")
    result = CliRunner().invoke(main, ["build", str(tmp_path / "vela" / "out" / "model_vela.tflite"), "--npu",
                                       "u55-128", "-o", str(tmp_path / "gen")])
    assert vela.estimate is not None
    assert result.exit_code == 2 and "Vela-compiled" in result.output and len(result.output.strip().splitlines()) == 1


def test_unknown_npu_name_is_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", str(public_model("kws_dscnn")), "--npu", "u65-512", "-o",
                                       str(tmp_path / "gen")])
    assert result.exit_code == 2 and "u55-128" in result.output
