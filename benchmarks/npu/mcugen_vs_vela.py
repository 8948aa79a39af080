#!/usr/bin/env python3
"""mcugen's own NPU build (`mcugen build --npu u55-N`, no Vela) beside Vela's, same device model.

    python3 benchmarks/npu/mcugen_vs_vela.py [--models DIR] [--only NAME ...] [--configs 64 ...]
                                             [--out mcugen_vs_vela.md]

Per public model and Ethos-U55 size:
- mcugen: `mcugen build MODEL --npu u55-N` (this checkout; also with --no-tiling, and with
  --no-tiling --npu-weights sram: every weighted op's weights DMA'd into an SRAM buffer); from
  its report.json: "npu" "cycles"
  (the build run once on the simulated device, PMU cycles summed over the segments),
  "cycles_estimate" (mcugen/npu/estimate.py, build time), SRAM = the arena (the plan's pools;
  the NPU needs no scratch beyond them), flash = command streams + encoded weights, and the ops
  left on the CPU.
- Vela 5.2 with `--optimise Performance` and with `--optimise Size` (default system config):
  its payload run on the same simulated device (host harness, -O2) for the cycles; SRAM and
  flash from its summary CSV (`sram_memory_used`, `off_chip_flash_memory_used`), its own
  estimate `cycles_total`, and the ops it left on the CPU.
Writes the .md table and a .json with every figure.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from npu_vela import run_device
from vela_models import build_harness, compile_model

from mcugen.toolchain.host import RELEASE_FLAGS, WARNING_FLAGS

MODELS = ("ad_autoencoder", "ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025")
CONFIGS = (32, 64, 128, 256)
KIB = 1024


def ours(model: Path, macs: int, work: Path, tiling: bool = True, weights: str = "auto") -> dict[str, Any]:
    """`mcugen build --npu` of this checkout (with --no-tiling: NPU chains not striped; `weights`:
    --npu-weights); its report.json's figures."""
    out = work / f"mcugen-{'tiled' if tiling else 'untiled'}-{weights}"
    flags = ([] if tiling else ["--no-tiling"]) + ["--npu-weights", weights]
    subprocess.run([sys.executable, "-m", "mcugen", "build", str(model), "--npu", f"u55-{macs}", *flags, "-o", str(out)],
                   check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    report = json.loads((out / "report.json").read_text())
    npu = report["npu"]
    return {"cycles": npu["cycles"], "cycles_estimate": npu["cycles_estimate"], "sram_bytes": npu["sram_bytes"],
            "flash_bytes": npu["command_stream_bytes"] + npu["weights_encoded_bytes"],
            "command_stream_bytes": npu["command_stream_bytes"], "weights_encoded_bytes": npu["weights_encoded_bytes"],
            "cpu_ops": [op["kind"] for op in report["ops"] if op["kind"] != "ETHOS_U"],
            "weight_buffer_ops": npu["weight_buffer_ops"], "weight_buffer_bytes": npu["weight_buffer_bytes"]}


def vela(harness: Path, model: Path, macs: int, optimise: str, work: Path) -> dict[str, Any]:
    """Vela's compilation, run on the device; its summary CSV's SRAM, flash and estimate."""
    build = compile_model(model.read_bytes(), macs, work / optimise, name=model.stem, optimise=optimise)
    assert build.estimate is not None, f"{model}: Vela made no single ethos-u op"
    with open(next((work / optimise / "out").glob("model_summary_*.csv")), newline="") as f:
        summary = next(csv.DictReader(f))
    return {"cycles": run_device(harness, build).cycles, "vela_estimate": build.estimate.cycles,
            "sram_bytes": round(float(summary["sram_memory_used"]) * KIB),
            "flash_bytes": round(float(summary["off_chip_flash_memory_used"]) * KIB), "cpu_ops": build.cpu_ops}


def row(r: dict[str, Any]) -> str:
    o, u, w = r["mcugen"], r["mcugen_untiled"], r["mcugen_sram"]
    p, s = r["vela_performance"], r["vela_size"]
    return (f"| {r['model']} | {r['config']} | {o['cycles']:,} | {u['cycles']:,} | {w['cycles']:,} | {p['cycles']:,} "
            f"| {s['cycles']:,} | {o['cycles'] / p['cycles']:.3f} | {u['cycles'] / p['cycles']:.3f} "
            f"| {w['cycles'] / p['cycles']:.3f} | {o['sram_bytes']:,} "
            f"| {u['sram_bytes']:,} | {w['sram_bytes']:,} | {p['sram_bytes']:,} | {s['sram_bytes']:,} "
            f"| {o['flash_bytes']:,} | {p['flash_bytes']:,} | {len(o['cpu_ops'])} / {len(p['cpu_ops'])} "
            f"| {o['cycles'] / o['cycles_estimate']:.3f} | {o['cycles'] / p['vela_estimate']:.3f} "
            f"| {p['cycles'] / p['vela_estimate']:.3f} |")


HEADER = [("| model | NPU | mcugen cycles | mcugen --no-tiling cycles | mcugen --no-tiling --npu-weights sram cycles "
           "| Vela Perf. cycles | Vela Size cycles "
           "| mcugen / Vela Perf. | mcugen --no-tiling / Vela Perf. | mcugen --no-tiling sram / Vela Perf. "
           "| mcugen SRAM | mcugen --no-tiling SRAM | mcugen --no-tiling sram SRAM | Vela Perf. SRAM | Vela Size SRAM "
           "| mcugen flash | Vela flash | CPU ops mcugen / Vela "
           "| mcugen sim / own estimate | mcugen sim / Vela estimate | Vela sim / Vela estimate |"),
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]


def summary(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for key, name in (("mcugen", "mcugen (default: striped, --npu-weights auto)"),
                      ("mcugen_untiled", "mcugen --no-tiling (--npu-weights auto)"),
                      ("mcugen_sram", "mcugen --no-tiling --npu-weights sram")):
        ratios = [r[key]["cycles"] / r["vela_performance"]["cycles"] for r in results]
        sram = sum(r[key]["sram_bytes"] <= r["vela_size"]["sram_bytes"] for r in results)
        lines.append(f"{name}: {len(results)} runs. Cycles / Vela Performance (both simulated): {min(ratios):.3f} - "
                     f"{max(ratios):.3f}; at or below 1.0 in {sum(x <= 1 for x in ratios)}, within 1.1 in "
                     f"{sum(x <= 1.1 for x in ratios)}. SRAM at or below Vela's Size mode in {sram}.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=REPO.parent / "shared" / "models")
    parser.add_argument("--only", nargs="*", default=list(MODELS))
    parser.add_argument("--configs", nargs="*", type=int, default=list(CONFIGS))
    parser.add_argument("--out", type=Path, default=HERE / "mcugen_vs_vela.md")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        harness = build_harness(Path(tmp) / "npu_harness", [*WARNING_FLAGS, *RELEASE_FLAGS])
        for name in args.only:
            model = args.models / f"{name}.tflite"
            for macs in args.configs:
                work = Path(tmp) / f"{name}-{macs}"
                results.append({"model": name, "config": f"u55-{macs}", "mcugen": ours(model, macs, work),
                                "mcugen_untiled": ours(model, macs, work, tiling=False),
                                "mcugen_sram": ours(model, macs, work, tiling=False, weights="sram"),
                                "vela_performance": vela(harness, model, macs, "Performance", work),
                                "vela_size": vela(harness, model, macs, "Size", work)})
                print(row(results[-1]), flush=True)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    text = ["# mcugen's own NPU builds beside Vela's, on the same simulated Ethos-U55", "",
            ("`python3 benchmarks/npu/mcugen_vs_vela.py` (see its docstring). Cycles: MODEL_CYCLES/PMU cycles of "
             "the simulated device (default system config). SRAM, flash: bytes. CPU ops: ops outside the NPU."), "",
            *(f"- {line}" for line in summary(results)), "", *HEADER, *(row(r) for r in results), ""]
    args.out.write_text("\n".join(text))
    print("\n".join(summary(results)))


if __name__ == "__main__":
    main()
