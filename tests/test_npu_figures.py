"""report.json "npu" of an `mcugen build --npu` and `mcugen profile --npu`: the figures agree.

For the public models: the cycles the simulated device counted are positive; the build-time
estimate (mcugen/npu/estimate.py: the device's cycle model for CONV, DEPTHWISE and pools,
every call of every stripe, a roofline for the rest) stays within ESTIMATE_BAND of them
(benchmarks/npu/mcugen_vs_vela.md records every ratio); "sram_bytes" is the plan's pools, which is the arena; the flash figures are the
bytes of the segments' payload and weights constants; `mcugen profile --npu` shows the same
cycles as NPU(ns) at the NPU clock.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import public_model

from mcugen.analysis.measure import build
from mcugen.cli import main
from mcugen.driver import BuildOptions
from mcugen.ir import OpKind
from mcugen.npu.config import npu_config
from mcugen.targets import HOST

# estimate / measured over the 16 runs of benchmarks/npu/mcugen_vs_vela.md: 0.999-1.002 where
# convolutions and pools dominate (the estimate mirrors the device's cycle model for them),
# highest ad_autoencoder (1.06: its FULLY_CONNECTEDs take the roofline).
ESTIMATE_BAND = (0.95, 1.1)


def npu_options(size: str) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)))


@pytest.mark.parametrize("size", ("u55-32", "u55-256"))
@pytest.mark.parametrize("name", ("ad_autoencoder", "kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025"))
def test_npu_figures_of_a_build_agree(name: str, size: str, tmp_path: Path) -> None:
    compiled = build(public_model(name), tmp_path, npu_options(size), size=False)
    npu = compiled.npu
    assert npu is not None
    report = compiled.report()
    assert npu["config"] == f"ethos-{size}"
    assert isinstance(npu["cycles"], int) and npu["cycles"] > 0, npu["cycles_source"]
    low, high = ESTIMATE_BAND
    assert low <= npu["cycles_estimate"] / npu["cycles"] <= high, (npu["cycles_estimate"], npu["cycles"])
    assert npu["sram_bytes"] == sum(p["bytes"] for p in report["pools"]) == report["arena_bytes"]
    segments = [op for op in compiled.order if op.kind is OpKind.ETHOS_U]
    assert npu["command_stream_bytes"] == sum(op.inputs[0].nbytes for op in segments)
    assert npu["weights_encoded_bytes"] == sum(op.inputs[1].nbytes for op in segments)
    assert npu["ops_on_npu"] == len(segments) and npu["ops_on_cpu"] == len(compiled.order) - len(segments)


def test_profile_shows_the_npu_cycles_of_each_segment(tmp_path: Path) -> None:
    model = public_model("kws_dscnn")
    cycles = build(model, tmp_path, npu_options("u55-128"), size=False).npu["cycles"]  # type: ignore[index]
    result = CliRunner().invoke(main, ["profile", str(model), "--npu", "u55-128", "--per-op"])
    assert result.exit_code == 0, result.output
    row = re.search(r"^\d+ ETHOS_U\s*\|\s*1 \|\s*0 \|\s*([\d,]+) \|", result.output, re.MULTILINE)
    assert row is not None, result.output
    assert int(row[1].replace(",", "")) == cycles * 1000 // 500  # ns at the default 500 MHz NPU clock
