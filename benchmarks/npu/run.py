#!/usr/bin/env python3
"""NPU benchmark: every public model compiled by Vela for each Ethos-U55 configuration, run on
mcugen's simulated Ethos-U55, its simulated cycles next to Vela's own estimate.

    python3 benchmarks/npu/run.py [--models DIR] [--only NAME ...] [--configs 64 128 ...]
                                  [--repeat N] [--out results.md]

Per model and configuration: `vela --accelerator-config ethos-u55-MACS` with Vela's default
system config (Ethos_U55_High_End_Embedded, Shared_Sram); the payload runs through our driver and
device in the host harness (firmware_tests/npu/npu_harness.c, -O2), once verbose for the cycles
(MODEL_CYCLES, read through the device's registers) and the operations, then --repeat times
quiet for the wall time: the CPU time of ethosu_invoke_v3 as the harness measures it (clock()),
the median of the runs. The quiet runs attach the compute engine (harness -E) on zero inputs, so the
wall time is the whole simulation: command walker, cycle model and the arithmetic of every
operation (which does not depend on the values).
Writes results.md and results.json (beside this script by default).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from npu_vela import run_device, vela_compile
from vela_models import VelaModel, build_harness

from mcugen.toolchain.host import RELEASE_FLAGS, WARNING_FLAGS

MODELS = ("ad_autoencoder", "ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025")
CONFIGS = (32, 64, 128, 256)
KERNEL_OPS = ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE")


def invoke_seconds(harness: Path, build: VelaModel) -> float:
    result = subprocess.run([str(harness), str(build.macs), str(build.payload), *build.regions, "-q", "-E"],
                            check=True, capture_output=True, text=True, timeout=300)
    m = re.search(r"^invoke_seconds ([0-9.]+)$", result.stdout, re.MULTILINE)
    if m is None or not re.search(r"^result 0 ", result.stdout, re.MULTILINE):
        raise RuntimeError(f"{build.name} u55-{build.macs}: quiet run failed: {result.stdout[-500:]}")
    return float(m[1])


def measure(harness: Path, model: Path, macs: int, repeat: int, work: Path) -> dict[str, Any]:
    build = vela_compile(model, macs, work)
    run = run_device(harness, build)
    times = [invoke_seconds(harness, build) for _ in range(repeat)]
    return {
        "model": model.stem, "config": f"u55-{macs}", "cycles": run.cycles, "vela_cycles": build.estimate.cycles,
        "ratio": run.cycles / build.estimate.cycles,
        "kernel_ops": sum(1 for op, _ in run.op_cycles if op in KERNEL_OPS),
        "dma_ops": sum(1 for op, _ in run.op_cycles if op == "NPU_OP_DMA_START"),
        "mac_active": run.pmu_mac, "command_stream_bytes": build.estimate.stream_bytes,
        "wall_seconds_median": statistics.median(times), "wall_seconds_runs": times,
    }


def table(results: list[dict[str, Any]]) -> list[str]:
    lines = [("| model | config | simulated cycles | Vela cycles_total | ratio | NPU ops (kernels + DMAs) "
              "| MAC_ACTIVE | command stream bytes | simulation wall time (median) |"),
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['model']} | {r['config']} | {r['cycles']:,} | {r['vela_cycles']:,} | {r['ratio']:.3f} "
                     f"| {r['kernel_ops'] + r['dma_ops']} ({r['kernel_ops']} + {r['dma_ops']}) "
                     f"| {r['mac_active']:,} | {r['command_stream_bytes']:,} "
                     f"| {r['wall_seconds_median'] * 1e6:.0f} µs |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=REPO.parent / "shared" / "models")
    parser.add_argument("--only", nargs="*", default=list(MODELS), help="model names to run")
    parser.add_argument("--configs", nargs="*", type=int, default=list(CONFIGS), help="U55 MACs per cycle")
    parser.add_argument("--repeat", type=int, default=7, help="quiet runs per model for the wall time")
    parser.add_argument("--out", type=Path, default=HERE / "results.md")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        harness = build_harness(Path(tmp) / "npu_harness", [*WARNING_FLAGS, *RELEASE_FLAGS])
        for name in args.only:
            for macs in args.configs:
                work = Path(tmp) / f"{name}-{macs}"
                work.mkdir()
                r = measure(harness, args.models / f"{name}.tflite", macs, args.repeat, work)
                print(f"{name} u55-{macs}: {r['cycles']:,} cycles, Vela {r['vela_cycles']:,} ({r['ratio']:.3f}), "
                      f"{r['wall_seconds_median'] * 1e6:.0f} µs", flush=True)
                results.append(r)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    ratios = [r["ratio"] for r in results]
    header = [
        "# NPU benchmark results",
        "",
        f"Generated by `python3 benchmarks/npu/run.py` ({time.strftime('%Y-%m-%d')}); see README.md.",
        "Vela 5.2 (`ethos-u-vela`), default system config Ethos_U55_High_End_Embedded / Shared_Sram;",
        "simulated cycles: MODEL_CYCLES of mcugen's simulated Ethos-U55 after running Vela's payload;",
        "ratio: simulated / Vela's summary-CSV `cycles_total`. Wall time: CPU time of ethosu_invoke_v3 in",
        f"the host harness (-O2), median of {args.repeat} runs, with the compute engine attached (zero inputs):",
        "the whole simulation, walker, cycle model and every operation's arithmetic.",
        "",
    ]
    footer = ["", f"Ratio range: {min(ratios):.3f} - {max(ratios):.3f} (target 0.8 - 1.25)."]
    args.out.write_text("\n".join(header + table(results) + footer) + "\n")
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
