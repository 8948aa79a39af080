#!/usr/bin/env python3
"""mcugen's own command streams against Vela's: device cycles of the same single-op models.

    python3 benchmarks/npu/own_streams.py [--out own_streams.md]

For every single-op model of tests/npu_compile.models() and each Ethos-U55 size it runs on: the
model lowered by mcugen.npu (no Vela), and compiled by Vela 5.2 (default system config), each
payload run on the simulated device in the host harness (-O2) on the model's inputs; the table
gives both runs' MODEL_CYCLES, their ratio (ours / Vela's), and whether the outputs are equal
(and equal to TFLM's). Recorded, not a target: the cycle model is the
device's, calibrated against Vela's estimates (docs/npu.md, Cycle model).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import numpy as np
from npu_compile import REFUSED, compile_ours, models
from npu_vela import run_device
from oracles import run_tflm
from vela_models import build_harness, compile_model, run_npu

from mcugen.toolchain.host import RELEASE_FLAGS, WARNING_FLAGS


def _outputs(ours: np.ndarray, vela: np.ndarray, tflm: np.ndarray) -> str:
    """How the two streams' outputs compare, and with TFLM's."""
    ours, vela = ours.reshape(tflm.shape), vela.reshape(tflm.shape)
    if np.array_equal(ours, vela):
        return "equal" + ("" if np.array_equal(ours, tflm) else ", both differ from TFLM")
    return (f"{int(np.sum(ours != vela))} differ; ours {'=' if np.array_equal(ours, tflm) else '!='} TFLM, "
            f"Vela's {'=' if np.array_equal(vela, tflm) else '!='} TFLM")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "own_streams.md")
    args = parser.parse_args()
    rows, ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        harness = build_harness(root / "harness", (*WARNING_FLAGS, *RELEASE_FLAGS))
        for n, model in enumerate(m for m in models() if m.id not in REFUSED):
            data = model.build()
            inputs = model.inputs()
            (expected,) = run_tflm(data, inputs)
            for macs in model.sizes:
                work = root / f"{n}-{macs}"
                ours_model = compile_ours(data, macs, work / "ours")
                ours = run_device(harness, ours_model).cycles
                ours_out = run_npu(harness, ours_model, macs, inputs, work / "run-ours").outputs[0]
                vela = compile_model(data, macs, work / "vela")
                theirs, same = None, "-"
                if vela.estimate is not None and not vela.cpu_ops:
                    theirs = run_device(harness, vela).cycles
                    vela_out = run_npu(harness, vela, macs, inputs, work / "run-vela").outputs[0]
                    same = _outputs(ours_out, vela_out, expected)
                    ratios.append(ours / theirs)
                ratio = f"{ours / theirs:.3f}" if theirs else "-"
                rows.append(f"| {model.id} | u55-{macs} | {ours} | {theirs or 'not one NPU op'} | {ratio} | {same} |")
                print(rows[-1], flush=True)
    summary = (f"{len(ratios)} runs: ratio median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, "
               f"max {max(ratios):.3f}; ours fewer or equal cycles in {sum(r <= 1 for r in ratios)}")
    text = ["# mcugen's own NPU streams vs Vela's: simulated cycles, single-op models", "",
            "`python3 benchmarks/npu/own_streams.py` (see its docstring).", "", summary, "",
            "| model | NPU | ours | Vela | ours / Vela | outputs |", "|---|---|---|---|---|---|", *rows, ""]
    args.out.write_text("\n".join(text))
    print(summary)


if __name__ == "__main__":
    main()
