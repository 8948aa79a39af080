#!/usr/bin/env python3
"""Firmware benchmark: every public model on emulated Cortex-M4 and Cortex-M55, portable C
against the DSP/MVE fast paths, next to TFLM + CMSIS-NN (../shared/ANCHORS.md).

    python3 benchmarks/firmware/run.py [--models DIR] [--anchors ANCHORS.md] [--out results.md]

Per model, core and kernel variant it builds firmware/common's test application with the
model's case0 input baked in (`mcugen profile --qemu`, -O2 as the examples), runs it on QEMU
with -icount shift=0, and requires the outputs to equal TFLM's (tflm_output0 of the case)
byte for byte; the instruction count is read around invoke by SysTick (profile_clock.c; it
includes the per-op timing hook, about 60 instructions per op). Flash and RAM come from
report.json's code_size (arm-none-eabi-gcc -Os, linked with --gc-sections: the model's code,
the kernels and the libc/libgcc/libm functions they pull in) and the memory plan:

  code     text + rodata + data of the runtime, weights excluded
  weights  the model's constant arrays (.mcugen_weights)
  RAM      the arena (every pool) + the runtime's data + bss (stack not counted)

"portable" compiles everything with -DMCUGEN_PORTABLE, "fast" lets the kernels use the Arm
DSP extension (M4) or Helium/MVE (M55). Writes results.md and results.json beside this script.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from mcugen.analysis.profile import profile_model
from mcugen.driver import BuildOptions, compile_model
from mcugen.toolchain.cross import measure_code_size

CORES = {"M4": "cortex-m4", "M55": "cortex-m55"}
# variant -> (extra compile flags, tiling); "untiled" is the fast kernels with --no-tiling
VARIANTS = {"portable": ("-DMCUGEN_PORTABLE", True), "fast": ("", True), "untiled": ("", False)}
HAS_TILING = "tiling" in {f.name for f in dataclasses.fields(BuildOptions)}
MODELS = ("kws_dscnn", "ad_autoencoder", "ic_resnet8", "vww_mobilenet_v1_025")


def read_anchors(path: Path) -> dict[str, dict[str, int]]:
    """TFLM + CMSIS-NN rows of ANCHORS.md: model -> M4/M55 instructions, arena, code."""
    rows: dict[str, dict[str, int]] = {}
    if not path.is_file():
        return rows
    text = path.read_text()
    start = text.find("## TensorFlow Lite Micro with Arm's CMSIS-NN kernels")
    for line in text[start:].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or cells[0] not in MODELS:
            continue

        def number(cell: str) -> int:
            return int(cell.replace(",", ""))

        code_m4, code_m55 = (number(c) for c in cells[7].split("/"))
        rows[cells[0]] = {"macs": number(cells[1]), "M4": number(cells[2]), "M55": number(cells[4]),
                          "arena": number(cells[6]), "code_M4": code_m4, "code_M55": code_m55}
    return rows


def measure(model: Path, case: Path, core: str, variant: str) -> dict[str, Any]:
    target = CORES[core]
    cflags, tiling = VARIANTS[variant]
    options = BuildOptions(target=target)
    if HAS_TILING:  # memory/tiling.py runs chains of ops in stripes to shrink the arena
        options = dataclasses.replace(options, tiling=tiling)
    if "optimize" in {f.name for f in dataclasses.fields(BuildOptions)}:  # tiled: the least RAM, as before
        options = dataclasses.replace(options, optimize="ram")
    if "kernel_choice" in {f.name for f in dataclasses.fields(BuildOptions)}:  # and the fast kernels
        options = dataclasses.replace(options, kernel_choice=False)
    with np.load(case) as data:
        inputs = [data[f"input{i}"] for i in range(sum(k.startswith("input") for k in data.files))]
        expected = [data[f"tflm_output{i}"] for i in range(sum(k.startswith("tflm_output") for k in data.files))]
    started = time.monotonic()
    profile = profile_model(model, options, qemu=True, runs=1, inputs=inputs, expected=expected,
                            extra_cflags=cflags)
    compiled = compile_model(model, options)
    size = measure_code_size(compiled.code.files, compiled.prefix, options.target, portable=variant == "portable")
    report = profile.report
    instructions = profile.invoke_instructions or 0
    arena = profile.memory.internal
    return {
        "model": model.stem, "core": core, "variant": variant,
        "macs": report["macs"], "instructions": instructions,
        "per_mac": instructions / report["macs"] if report["macs"] else None,
        "code": size.get("runtime_flash_bytes"), "weights": size.get("weights_bytes"),
        "tiled_chains": len((report.get("tiling") or {}).get("chains", [])),
        "arena": arena, "ram": arena + int(size.get("data", 0)) + int(size.get("bss", 0)),
        "bit_exact_tflm": True,  # profile_model raises unless the firmware printed PASS
        "by_kind": [{"kind": r.kind, "instructions": r.instructions, "ratio": round(r.ratio, 2)}
                    for r in profile.by_kind()],
        "seconds": round(time.monotonic() - started, 1),
    }


def count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"


def per_mac(result: dict[str, Any]) -> str:
    return f"{result['per_mac']:.2f}" if result.get("per_mac") else "-"


def table(results: list[dict], anchors: dict[str, dict[str, int]]) -> list[str]:
    lines = [("| model | core | MACs | portable instr | per MAC | fast instr | per MAC | untiled instr | per MAC "
              "| TFLM+CMSIS-NN instr | per MAC | code fast / portable / untiled | TFLM code | weights "
              "| RAM fast / untiled | TFLM arena |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    index = {(r["model"], r["core"], r["variant"]): r for r in results}
    for model in MODELS:
        for core in CORES:
            fast, portable = index.get((model, core, "fast")), index.get((model, core, "portable"))
            untiled = index.get((model, core, "untiled"), {})
            if fast is None or portable is None:
                continue
            anchor = anchors.get(model, {})
            tflm = anchor.get(core)
            tflm_per_mac = f"{tflm / anchor['macs']:.2f}" if tflm else "-"
            cells = [model, core, count(fast["macs"]), count(portable["instructions"]), per_mac(portable),
                     count(fast["instructions"]), per_mac(fast), count(untiled.get("instructions")), per_mac(untiled),
                     count(tflm), tflm_per_mac,
                     f"{count(fast['code'])} / {count(portable['code'])} / {count(untiled.get('code'))}",
                     count(anchor.get(f"code_{core}")), count(fast["weights"]),
                     f"{count(fast['ram'])} / {count(untiled.get('ram'))}", count(anchor.get("arena"))]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=REPO.parent / "shared" / "models")
    parser.add_argument("--anchors", type=Path, default=REPO.parent / "shared" / "ANCHORS.md")
    parser.add_argument("--out", type=Path, default=HERE / "results.md")
    parser.add_argument("--only", nargs="*", default=list(MODELS), help="model names to run")
    args = parser.parse_args()
    results = []
    variants = [v for v in VARIANTS if HAS_TILING or v != "untiled"]
    for name in args.only:
        for core in CORES:
            for variant in variants:
                result = measure(args.models / f"{name}.tflite", args.models / f"{name}.case0.npz", core, variant)
                print(f"{name} {core} {variant}: {result['instructions']:,} instructions "
                      f"({result['per_mac']:.2f}/MAC), code {result['code']:,} B, {result['seconds']} s",
                      flush=True)
                results.append(result)
    anchors = read_anchors(args.anchors)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    (args.out.with_suffix(".json")).write_text(json.dumps(results, indent=2) + "\n")
    header = [
        "# Firmware benchmark results",
        "",
        f"Generated by `python3 benchmarks/firmware/run.py` ({time.strftime('%Y-%m-%d')}); see README.md.",
        "Instructions per inference on QEMU (-icount shift=0), case0 of each model, outputs equal to",
        "TFLM's byte for byte; flash from arm-none-eabi-gcc -Os; TFLM+CMSIS-NN columns from ANCHORS.md.",
        "",
    ]
    footer = [""]
    for r in results:
        if (r["model"], r["core"], r["variant"]) == ("kws_dscnn", "M4", "fast"):
            verdict = "under" if r["code"] < 16 * 1024 else "over"
            footer.append(f"Target: kws_dscnn runtime code on Cortex-M4 at -Os under 16 KB (16,384 bytes): "
                          f"{r['code']:,} bytes, {verdict}.")
    args.out.write_text("\n".join(header + table(results, anchors) + footer) + "\n")
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
