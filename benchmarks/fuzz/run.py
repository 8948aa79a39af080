"""A fuzz campaign: SEED and COUNT mutants of the public and fixture models (tests/mutate.py),
each built in Python; then up to --sanitize distinct built programs compiled with ASan and
UBSan and run on random inputs (tests/fuzzing.py). Writes results.md and results.json here.

    PYTHONPATH=$PWD python3 benchmarks/fuzz/run.py --seed 2026 --count 10000 --sanitize 300
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fuzzing import BUILT, FINDING, REFUSED, Outcome, distinct_programs, run_sanitized, try_build
from mutate import MUTATIONS, mutants


def _models() -> list[tuple[str, bytes]]:
    public = REPO.parent / "shared" / "models"
    paths = sorted(public.glob("*.tflite")) + sorted((REPO / "tests" / "fixtures").glob("*.tflite"))
    return [(path.name, path.read_bytes()) for path in paths]


def _sample(programs: list[Outcome], count: int) -> list[Outcome]:
    """`count` programs spread evenly over the list (which is in mutant order)."""
    if count >= len(programs):
        return programs
    step = len(programs) / count
    return [programs[int(k * step)] for k in range(count)]


def campaign(seed: int, count: int, sanitize: int) -> dict:
    models = _models()
    started = time.time()
    outcomes = []
    for k, mutant in enumerate(mutants(models, seed, count)):
        outcomes.append(try_build(mutant))
        if (k + 1) % 1000 == 0:
            print(f"{k + 1} mutants built in Python ({time.time() - started:.0f} s)", flush=True)
    python_seconds = time.time() - started
    programs = distinct_programs(outcomes)
    sample = _sample(programs, sanitize)
    ran: dict[str, Outcome] = {}
    for k, outcome in enumerate(sample):
        ran[outcome.code_key] = run_sanitized(outcome, seed)
        if (k + 1) % 25 == 0:
            print(f"{k + 1}/{len(sample)} programs compiled and run sanitized", flush=True)
    rows: dict[str, Counter] = {kind: Counter() for kind in MUTATIONS}
    findings = []
    for outcome in outcomes:
        verdict = outcome.verdict
        if verdict == BUILT and outcome.code_key in ran:
            verdict = "ran clean" if ran[outcome.code_key].verdict == BUILT else FINDING
            detail = ran[outcome.code_key].detail
        else:
            detail = outcome.detail
        if verdict == BUILT:
            verdict = "built, not compiled"
        rows[outcome.mutant.kind][verdict] += 1
        if verdict == FINDING:
            findings.append({"mutant": outcome.mutant.label, "detail": detail})
    return {
        "seed": seed, "count": count, "models": len(models), "python_seconds": round(python_seconds),
        "seconds": round(time.time() - started), "distinct_programs": len(programs),
        "sanitized_programs": len(sample), "by_kind": {k: dict(v) for k, v in rows.items()},
        "findings": findings,
    }


COLUMNS = (REFUSED, "ran clean", "built, not compiled", FINDING)


def markdown(result: dict) -> str:
    lines = [
        "# Fuzz campaign: results",
        "",
        (f"Seed {result['seed']}, {result['count']} mutants of {result['models']} models (the public models and "
         f"tests/fixtures), {result['seconds']} s on the shared 2-core machine. "
         f"{result['distinct_programs']} distinct programs were built (mutants that generate the same C count "
         f"once); {result['sanitized_programs']} of them, spread evenly, were compiled with -Wall -Wextra -Werror "
         "-fsanitize=address,undefined and run on random inputs with canaries after every buffer. "
         "A mutant whose program was compiled counts as ran clean (or a finding); the other built ones as built, "
         "not compiled."),
        "",
        "| mutation kind | " + " | ".join(COLUMNS) + " | total |",
        "|---|" + "---:|" * (len(COLUMNS) + 1),
    ]
    totals: Counter = Counter()
    for kind, counts in sorted(result["by_kind"].items()):
        totals.update(counts)
        lines.append(f"| {kind} | " + " | ".join(str(counts.get(c, 0)) for c in COLUMNS)
                     + f" | {sum(counts.values())} |")
    lines.append("| **all** | " + " | ".join(f"**{totals.get(c, 0)}**" for c in COLUMNS)
                 + f" | **{sum(totals.values())}** |")
    lines += ["", f"Findings: {len(result['findings'])}."]
    lines += [f"- {f['mutant']}: {f['detail']}" for f in result["findings"]]
    command = (f"PYTHONPATH=$PWD python3 benchmarks/fuzz/run.py --seed {result['seed']} --count {result['count']} "
               f"--sanitize {result['sanitized_programs']}")
    lines += ["", f"Reproduce: `{command}`", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--sanitize", type=int, default=300, help="distinct built programs to compile and run")
    parser.add_argument("--out", type=Path, default=HERE, help="directory for results.md and results.json")
    args = parser.parse_args()
    os.environ.setdefault("MCUGEN_CACHE_DIR", tempfile.mkdtemp(prefix="mcugen-fuzz-"))
    result = campaign(args.seed, args.count, args.sanitize)
    (args.out / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "results.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
