"""mcugen's planned arena next to TFLM's arena and Vela's SRAM, for every model we have.

For each model (the public ones in ../shared/models and every tests/fixtures/*.tflite):
mcugen's planned arena (`arena_bytes` of report.json, --target cortex-m4 as run.py builds,
with `--optimize ram`, the least-RAM plan that is compared with Vela's Size mode; beside it the
default build's, `--optimize balanced`, which gives RAM back where that saves instructions), TensorFlow Lite Micro's arena total after one invoke (run.py's tflm_arena;
"-" where TFLM cannot run the model), and Vela 5.2's SRAM (`sram_memory_used` of its summary
CSV, KiB, times 1024) for ethos-u55-128 with --optimise Size and Performance (Vela's default
system config: Shared_Sram). Models Vela refuses are left out. `flags` marks a row where
mcugen's arena is above Vela's Size figure (`>vela`) or above 0.6 of TFLM's arena (`>0.6tflm`).
Vela's figure covers what it runs on the NPU: where it leaves ops to the CPU (`Vela CPU ops`),
the CPU part's tensors are not in it.

    python3 benchmarks/memory/vela.py --json benchmarks/memory/vela_results.json > benchmarks/memory/vela_results.md
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import PUBLIC, tflm_arena

from mcugen.driver import BuildOptions, compile_model
from mcugen.errors import McugenError

FIXTURES = ROOT / "tests" / "fixtures"
TFLM_SHARE = 0.6


def vela_sram(model: Path, optimise: str) -> tuple[int, int] | None:
    """(SRAM bytes, CPU ops) of Vela's compilation for ethos-u55-128; None if Vela refuses it."""
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run(
            [sys.executable, "-m", "ethosu.vela", str(model), "--accelerator-config", "ethos-u55-128",
             "--optimise", optimise, "--output-dir", tmp], capture_output=True, text=True, check=False)
        summaries = list(Path(tmp).glob("*_summary_*.csv"))
        if result.returncode != 0 or not summaries:
            return None
        with open(summaries[0], newline="") as f:
            row = next(csv.DictReader(f))
    cpu = re.search(r"CPU operators = (\d+)", result.stdout)
    return round(float(row["sram_memory_used"]) * 1024), int(cpu.group(1)) if cpu else 0


def mcugen_arena(model: Path, optimize: str) -> int | str:
    try:
        options = BuildOptions(target="cortex-m4", optimize=optimize)
        return int(compile_model(model, options).report()["arena_bytes"])
    except McugenError as error:
        return f"refused ({type(error).__name__})"


def tflm_total(model: Path, manifest: dict[str, Any]) -> int | None:
    entry = manifest.get(model.stem)
    if entry is not None and not entry.get("tflm"):
        return None
    try:
        return tflm_arena(model)["total"]
    except Exception:  # noqa: BLE001 - TFLM's interpreter raises whatever its kernels raise
        return None


def measure(model: Path, manifest: dict[str, Any]) -> dict[str, Any] | None:
    size = vela_sram(model, "Size")
    if size is None:
        return None
    performance = vela_sram(model, "Performance")
    arena, balanced = mcugen_arena(model, "ram"), mcugen_arena(model, "balanced")
    tflm = tflm_total(model, manifest)
    return {"model": model.stem, "arena": arena, "arena_balanced": balanced, "tflm_total": tflm, "vela_size": size[0],
            "vela_performance": performance[0] if performance else None, "vela_cpu_ops": size[1]}


def flags(row: dict[str, Any]) -> list[str]:
    """Where mcugen is above Vela's Size SRAM (only where Vela runs every op: else its figure
    leaves out the CPU part's tensors) or above 0.6 of TFLM's arena."""
    arena, tflm = row["arena"], row["tflm_total"]
    found = []
    if isinstance(arena, int) and row["vela_cpu_ops"] == 0 and arena > row["vela_size"]:
        found.append(">vela")
    if isinstance(arena, int) and tflm is not None and arena > TFLM_SHARE * tflm:
        found.append(">0.6tflm")
    return found


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--table", type=Path, default=None, help="print the table of a --json file, measure nothing")
    args = parser.parse_args()
    if args.table is not None:
        rows = json.loads(args.table.read_text())
    else:
        models = args.models or [*sorted(PUBLIC.glob("*.tflite")), *sorted(FIXTURES.glob("*.tflite"))]
        manifest = json.loads((FIXTURES / "manifest.json").read_text())
        rows = [r for r in (measure(m, manifest) for m in models) if r is not None]
    for r in rows:
        r["flags"] = flags(r)
    print("| model | mcugen arena (--optimize ram) | default build (balanced) | TFLM arena | mcugen / TFLM | Vela Size SRAM | Vela Performance SRAM "
          "| mcugen / Vela Size | Vela CPU ops | flags |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        arena, tflm, size = r["arena"], r["tflm_total"], r["vela_size"]
        by_tflm = f"{arena / tflm:.3f}" if isinstance(arena, int) and tflm else "-"
        by_vela = f"{arena / size:.3f}" if isinstance(arena, int) and size else "-"
        print(f"| {r['model']} | {arena} | {_cell(r.get('arena_balanced'))} | {_cell(tflm)} | {by_tflm} | {size} | {_cell(r['vela_performance'])} "
              f"| {by_vela} | {r['vela_cpu_ops']} | {' '.join(r['flags']) or '-'} |")
    above = [r["model"] for r in rows if r["flags"]]
    print(f"\n{len(rows)} models Vela compiles; flagged: {len(above)} ({', '.join(above) or 'none'})")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
