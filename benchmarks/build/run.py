"""Build time: `mcugen build` next to `vela`, each a fresh process, on the same models in one run.

For every model and repetition, in turn: `mcugen build MODEL -o DIR` (this checkout's code, the
default options) and `vela MODEL --accelerator-config ethos-u55-128 --output-dir DIR` (Vela's
defaults otherwise), both run as the console scripts installed next to this Python, the way a
user types them. Each command runs once untimed first (bytecode caches, file cache), then the
repetitions interleave the two tools so that a noisy machine slows both alike. Reports the median
wall time and the median CPU time (user + system of the child) per tool, and mcugen over Vela.
With --instructions, each command also runs once under valgrind (cachegrind, no cache model) for
its instruction count: slow (~20 s a run) but the same on a busy machine, where times are not.
With --npu u55-N (repeatable), each model also gets a row of `mcugen build MODEL -o DIR --npu u55-N`
(mcugen as the Ethos-U compiler) beside `vela ... --accelerator-config ethos-u55-N`, in the same
run; --no-cpu leaves out the CPU build's row. Writes Markdown tables to stdout (and --json FILE).

    python3 benchmarks/build/run.py [MODEL.tflite ...] [--repeat N] [--instructions] [--npu u55-128 ...] > benchmarks/build/results.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT.parent / "shared" / "models"


def console_script(name: str) -> str:
    """The console script `name` of this Python's environment, else the one on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"error: `{name}` is not installed (pip install -e . / pip install ethos-u-vela)")
    return found


def command(tool: str, model: Path, out: Path) -> list[str]:
    """The argv of `tool`: "mcugen", "vela" (ethos-u55-128), "mcugen --npu u55-N" or "vela u55-N"."""
    name, _, npu = tool.partition(" ")
    npu = npu.removeprefix("--npu ")
    if name == "mcugen":
        return [console_script("mcugen"), "build", str(model), "-o", str(out / tool.replace(" ", "_")),
                *(["--npu", npu] if npu else [])]
    return [console_script("vela"), str(model), "--accelerator-config", f"ethos-{npu or 'u55-128'}",
            "--output-dir", str(out / tool.replace(" ", "_"))]


def pairs(npu: list[str], cpu: bool = True) -> list[tuple[str, str]]:
    """(mcugen's tool, Vela's tool) per row kind: the CPU build beside Vela for ethos-u55-128
    (`cpu`), then each `--npu u55-N` build beside Vela for the same configuration."""
    return [*([("mcugen", "vela")] if cpu else []), *((f"mcugen --npu {c}", "vela" if c == "u55-128" else f"vela {c}") for c in npu)]


def timed_run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, user + system CPU seconds) of one run of `argv`; fails loudly."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """Instructions executed by one run of `argv` (a console script: run by this Python)."""
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           sys.executable, *argv], check=False, env={**env, "PYTHONHASHSEED": "0"},
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        sys.exit(f"error: valgrind {' '.join(argv)} failed: {done.stderr.strip()[-500:]}")
    return int(found.group(1).replace(",", ""))


def environment(cache: Path) -> dict[str, str]:
    """This checkout's mcugen first on the path, bytecode cached (as after a pip install) but in
    `cache`, not in the source tree or site-packages."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def measure(models: list[Path], repeat: int, count_instructions: bool, npu: list[str],
            cpu: bool = True) -> list[dict[str, Any]]:
    rows_of = pairs(npu, cpu)
    tools = list(dict.fromkeys(t for pair in rows_of for t in pair))
    counts: dict[tuple[str, str], int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(Path(tmp) / "pycache")
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {(m.stem, t): [] for m in models for t in tools}
        for model in models:
            for tool in tools:  # untimed warm-up: writes the bytecode caches
                timed_run(command(tool, model, Path(tmp) / model.stem), env)
        for _ in range(repeat):
            for model in models:
                for tool in tools:
                    samples[model.stem, tool].append(timed_run(command(tool, model, Path(tmp) / model.stem), env))
        for model in models if count_instructions else []:
            for tool in tools:
                counts[model.stem, tool] = instructions(command(tool, model, Path(tmp) / model.stem), env)
    rows = []
    for model in models:
        for ours, theirs in rows_of:
            row: dict[str, Any] = {"model": model.stem, "mcugen_command": ours, "vela_command": theirs}
            for key, tool in (("mcugen", ours), ("vela", theirs)):
                runs = samples[model.stem, tool]
                row[f"{key}_wall_s"] = [round(w, 4) for w, _ in runs]
                row[f"{key}_cpu_s"] = [round(c, 4) for _, c in runs]
                row[f"{key}_wall_median_s"] = round(statistics.median(w for w, _ in runs), 4)
                row[f"{key}_cpu_median_s"] = round(statistics.median(c for _, c in runs), 4)
            row["wall_ratio"] = round(row["mcugen_wall_median_s"] / row["vela_wall_median_s"], 3)
            row["cpu_ratio"] = round(row["mcugen_cpu_median_s"] / row["vela_cpu_median_s"], 3)
            if counts:
                row["mcugen_instructions"] = counts[model.stem, ours]
                row["vela_instructions"] = counts[model.stem, theirs]
                row["instructions_ratio"] = round(row["mcugen_instructions"] / row["vela_instructions"], 3)
            rows.append(row)
    return rows


def label(row: dict[str, Any]) -> str:
    """A table row's name: the model, and the NPU configuration of an --npu row."""
    npu = row["mcugen_command"].removeprefix("mcugen").strip()
    return f"{row['model']} {npu}" if npu else row["model"]


def vela_version() -> str:
    done = subprocess.run([console_script("vela"), "--version"], check=False, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per tool and model (default 7)")
    parser.add_argument("--instructions", action="store_true", help="also count instructions (needs valgrind)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--npu", action="append", default=[], choices=("u55-32", "u55-64", "u55-128", "u55-256"),
                        help="also `mcugen build --npu CONFIG` beside Vela for the same configuration (repeatable)")
    parser.add_argument("--no-cpu", action="store_true", help="only the --npu rows")
    args = parser.parse_args()
    models = args.models or sorted(PUBLIC.glob("*.tflite"))
    if args.no_cpu and not args.npu:
        parser.error("--no-cpu needs at least one --npu CONFIG")
    rows = measure(models, args.repeat, args.instructions, args.npu, cpu=not args.no_cpu)
    print(f"{args.repeat} interleaved runs per tool and model; medians in seconds; "
          f"Python {platform.python_version()}, vela {vela_version()}, {os.cpu_count()} cores.\n")
    print("| model | mcugen wall | vela wall | mcugen / vela (wall) | mcugen CPU | vela CPU | mcugen / vela (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {label(r)} | {r['mcugen_wall_median_s']:.3f} | {r['vela_wall_median_s']:.3f} | "
              f"{r['wall_ratio']:.2f} | {r['mcugen_cpu_median_s']:.3f} | {r['vela_cpu_median_s']:.3f} | "
              f"{r['cpu_ratio']:.2f} |")
    if args.instructions:
        print("\nInstructions of one run (valgrind, millions):\n")
        print("| model | mcugen | vela | mcugen / vela |")
        print("|---|---|---|---|")
        for r in rows:
            print(f"| {label(r)} | {r['mcugen_instructions'] / 1e6:.0f} | {r['vela_instructions'] / 1e6:.0f} | "
                  f"{r['instructions_ratio']:.2f} |")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
