"""The mutation campaign: apply each mutant of mutants.py to a scratch copy of the repository,
run its tests there with a timeout, revert it, and write results.md and results.json.

    python3 benchmarks/mutation/run.py [--only ID ...] [--timeout S] [--workers N]

The working tree is never written: the tracked files are copied once into a `mktemp -d`
directory (with a `shared` link beside it, where the tests look for the public models), each
mutant is applied there, its tests run with PYTHONPATH set to the copy, and the file is
restored byte for byte (checked) before the next. Outcomes: killed (a test failed), survived
(all passed), timeout (counted as killed, reported apart), invalid (the mutated C does not
compile warning-free: checked before any test, not counted), error (pytest could not run the
selection, e.g. a collection error: not counted). Independent of mcugen: only git, pytest and the list.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from mutants import HISTORY, MUTANTS, SURVIVORS, Mutant

REPO = HERE.parents[1]


@dataclass
class Outcome:
    id: str
    kind: str
    file: str
    status: str  # killed, survived, timeout, error
    seconds: float
    detail: str  # the first failing test, or why the run could not judge


def copy_repository(source: Path, destination: Path) -> Path:
    """The tracked files of `source` as they are on disk (symlinks kept) under destination/repo,
    and destination/shared linked to source's ../shared (the public models)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=source, check=True, capture_output=True,
                           text=True).stdout.split("\0")
    root = destination / "repo"
    for name in filter(None, files):
        src, dst = source / name, root / name
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    shared = source.parent / "shared"
    if shared.exists():
        os.symlink(shared.resolve(), destination / "shared")
    return root


def apply(root: Path, mutant: Mutant) -> str:
    """Write the mutant into the copy; returns the file's original text for revert()."""
    path = root / mutant.file
    text = path.read_text()
    if text.count(mutant.original) != 1:
        raise ValueError(f"{mutant.id}: the original text occurs {text.count(mutant.original)} "
                         f"times in {mutant.file}, not once")
    path.write_text(text.replace(mutant.original, mutant.replacement))
    return text


def revert(root: Path, mutant: Mutant, original_text: str) -> None:
    path = root / mutant.file
    path.write_text(original_text)
    if path.read_text() != original_text:
        raise RuntimeError(f"{mutant.id}: {mutant.file} was not restored")


def _first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line[:200]
    return " ".join(output.split())[-200:]


# The C each runtime file is compiled as: (compiler, flags); the fast paths for their core.
WARNINGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
ARM = {"_dsp.c": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                  "-mfpu=fpv4-sp-d16"],
       "_mve.c": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"]}


def compiles(root: Path, mutant: Mutant) -> str:
    """"" when the mutated runtime still compiles warning-free (a mutant that breaks the build
    would be "killed" by every test without testing anything), else the compiler's first error.
    A header is checked through every source of its directory."""
    path = root / mutant.file
    if path.suffix not in (".c", ".h"):
        return ""
    sources = [path] if path.suffix == ".c" else sorted(path.parent.glob("*.c"))
    for source in sources:
        command = next((cc for end, cc in ARM.items() if source.name.endswith(end)), ["cc"])
        if shutil.which(command[0]) is None:
            continue
        result = subprocess.run([*command, *WARNINGS, "-I", str(path.parent), "-c", str(source),
                                 "-o", os.devnull], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            errors = [line for line in result.stderr.splitlines() if "error" in line]
            return (errors[0] if errors else result.stderr.strip())[:200]
    return ""


def run_tests(root: Path, mutant: Mutant, timeout: float, workers: int) -> tuple[str, str]:
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
               "-n", str(workers), *mutant.tests]
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("MCUGEN_CACHE_DIR", None)  # each run compiles into its own session cache
    try:
        result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                                timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return "timeout", f"no verdict within {timeout:.0f} s"
    if result.returncode == 0:
        return "survived", ""
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED ")]
    if result.returncode in (1, 2) and failed:  # 2: xdist's -x stop after a failure
        return "killed", failed[0][:200]
    return "error", f"pytest exit {result.returncode}: {_first_failure(result.stdout + result.stderr)}"


def campaign(mutants: list[Mutant], timeout: float, workers: int) -> list[Outcome]:
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="mcugen-mutation-") as scratch:
        root = copy_repository(REPO, Path(scratch))
        for mutant in mutants:
            start = time.monotonic()
            original = apply(root, mutant)
            try:
                error = compiles(root, mutant)
                status, detail = ("invalid", error) if error else run_tests(root, mutant, timeout, workers)
            finally:
                revert(root, mutant, original)
            outcome = Outcome(mutant.id, mutant.kind, mutant.file, status,
                              round(time.monotonic() - start, 1), detail)
            print(f"{outcome.status:9} {outcome.seconds:7.1f}s {mutant.id} {outcome.detail}", flush=True)
            outcomes.append(outcome)
    return outcomes


def report(results: list[dict], notes: dict[str, str]) -> str:
    """results.md: the kill rate, per kind, and every mutant's outcome (survivors explained)."""
    judged = [r for r in results if r["status"] not in ("error", "invalid")]
    killed = [r for r in judged if r["status"] in ("killed", "timeout")]
    rate = 100.0 * len(killed) / len(judged) if judged else 0.0
    intro = ("One-token mutants of the int8 kernels, the requantization helpers, the DSP/Helium "
             "fast paths and the memory planner (benchmarks/mutation/mutants.py), each applied to "
             "a scratch copy of the repository and judged by its relevant tests "
             "(`python3 benchmarks/mutation/run.py`; `--report` rewrites this file).")
    summary = (f"**Kill rate: {len(killed)} of {len(judged)} mutants ({rate:.1f} %)**; "
               f"survived {len(judged) - len(killed)}, "
               f"timeouts {sum(r['status'] == 'timeout' for r in judged)}, "
               f"not judged (the mutated C does not compile, or pytest could not run) "
               f"{len(results) - len(judged)}.")
    lines = ["# Mutation campaign", "", intro, "", summary, "", "## How the survivors were closed", "",
             HISTORY, "## Every mutant", "",
             "| kind | mutants | killed |", "|---|---:|---:|"]
    for kind in sorted({r["kind"] for r in judged}):
        of_kind = [r for r in judged if r["kind"] == kind]
        lines.append(f"| {kind} | {len(of_kind)} | {sum(r in killed for r in of_kind)} |")
    lines += ["", "| mutant | kind | file | outcome | s | first failing test, or why it survives |",
              "|---|---|---|---|---:|---|"]
    for r in results:
        why = notes.get(r["id"], "") if r["status"] == "survived" else r["detail"]
        why = why.replace("|", "\\|")
        lines.append(f"| {r['id']} | {r['kind']} | {Path(r['file']).name} | {r['status']} | "
                     f"{r['seconds']:.0f} | {why} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="mutant ids (default: all)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers")
    parser.add_argument("--json", type=Path, default=HERE / "results.json")
    parser.add_argument("--tests", nargs=argparse.REMAINDER,
                        help="pytest arguments instead of each mutant's own (show one test kills it)")
    parser.add_argument("--report", action="store_true",
                        help="only rewrite results.md from the JSON results")
    args = parser.parse_args()
    if args.report:
        results = json.loads(args.json.read_text())["mutants"]
        (HERE / "results.md").write_text(report(results, SURVIVORS))
        return 0
    chosen = [m for m in MUTANTS if not args.only or m.id in args.only]
    unknown = set(args.only or []) - {m.id for m in MUTANTS}
    if unknown:
        print(f"error: unknown mutant ids: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if args.tests:
        chosen = [replace(m, tests=tuple(args.tests)) for m in chosen]
    outcomes = campaign(chosen, args.timeout, args.workers)
    if args.tests:
        return 0  # a demonstration, not the campaign: results.json is left alone
    previous = {}
    if args.only and args.json.exists():
        previous = {o["id"]: o for o in json.loads(args.json.read_text())["mutants"]}
    merged = {**previous, **{o.id: o.__dict__ for o in outcomes}}
    ordered = [merged[m.id] for m in MUTANTS if m.id in merged]
    args.json.write_text(json.dumps({"mutants": ordered}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
