#!/usr/bin/env python3
"""mcugen's own command streams against Vela's: device cycles of the same single-op models.

    python3 benchmarks/npu/own_streams.py [--out own_streams.md]

For every single-op model of tests/npu_compile.models() and each Ethos-U55 size it runs on: the
model lowered by mcugen.npu (no Vela), and compiled by Vela 5.2 (default system config), each
payload run on the simulated device in the host harness (-O2); the table gives both devices'
MODEL_CYCLES and their ratio (ours / Vela's). Recorded, not a target: the cycle model is the
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

from npu_compile import REFUSED, compile_ours, models
from npu_vela import run_device
from vela_models import build_harness, compile_model

from mcugen.toolchain.host import RELEASE_FLAGS, WARNING_FLAGS


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
            for macs in model.sizes:
                ours = run_device(harness, compile_ours(data, macs, root / f"{n}-{macs}-ours")).cycles
                vela = compile_model(data, macs, root / f"{n}-{macs}-vela")
                theirs = run_device(harness, vela).cycles if vela.estimate is not None and not vela.cpu_ops else None
                ratio = f"{ours / theirs:.3f}" if theirs else "-"
                if theirs:
                    ratios.append(ours / theirs)
                rows.append(f"| {model.id} | u55-{macs} | {ours} | {theirs if theirs else 'not one NPU op'} | {ratio} |")
                print(rows[-1], flush=True)
    summary = (f"{len(ratios)} runs: ratio median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, "
               f"max {max(ratios):.3f}; ours fewer or equal cycles in {sum(r <= 1 for r in ratios)}")
    text = ["# mcugen's own NPU streams vs Vela's: simulated cycles, single-op models", "",
            "`python3 benchmarks/npu/own_streams.py` (see its docstring).", "", summary, "",
            "| model | NPU | ours | Vela | ours / Vela |", "|---|---|---|---|---|", *rows, ""]
    args.out.write_text("\n".join(text))
    print(summary)


if __name__ == "__main__":
    main()
