#!/usr/bin/env python3
"""Fit mcugen/memory/cost.py's coefficients to measured instruction counts.

    python3 benchmarks/firmware/calibrate_cost.py [--cache DIR] [--out cost_calibration.md]

For each model (the four public ones and two fixtures), core (cortex-m4, cortex-m55) and tiling
(untiled, tiled as `--optimize ram` plans it) it runs `mcugen profile --qemu` (-O2, exact
instruction counts of one invoke per op; a tiled chain is counted as one unit at its last op)
and recomputes the same build's plan in Python. Equations, per core:

- every op of the untiled build: its features (cost.Features of one whole call) = its count;
- every tiled chain: its features minus those of its ops untiled = its count minus theirs
  (what stripes add: per-call set-up, moved rows, the stripe loop).

Each equation is divided by its measured count (relative error; the chains' weigh
CHAIN_WEIGHT times more), then non-negative least squares. Prints the coefficients as cost.py writes them and the error per model of the
estimate of whole invokes; writes the same to --out. Profiles are cached in --cache.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import nnls

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from mcugen.analysis.profile import profile_model
from mcugen.driver import BuildOptions, compile_model
from mcugen.memory.cost import (
    KERNEL_CLASSES,
    CostModel,
    Features,
    KernelCost,
    chain_features,
    estimate,
)

MODELS = [REPO.parent / "shared" / "models" / f"{n}.tflite"
          for n in ("kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025", "ad_autoencoder")]
MODELS += [REPO / "tests" / "fixtures" / f"{n}.tflite" for n in ("model_mobilenet_v2", "model_se_hard_swish")]
CORES = ("cortex-m4", "cortex-m55")
CHAIN_WEIGHT = 4.0  # the stripes' overheads decide the choice between plans: they weigh more


def _vector(features: Features) -> np.ndarray:
    values = [v for k in KERNEL_CLASSES for v in features.kernels[k]]
    return np.array([*values, features.moved_bytes, features.stripes], dtype=float)


def _options(core: str, tiled: bool) -> BuildOptions:
    options = BuildOptions(target=core, tiling=tiled)
    if tiled and "optimize" in {f.name for f in dataclasses.fields(BuildOptions)}:
        options = dataclasses.replace(options, optimize="ram")
    if "kernel_choice" in {f.name for f in dataclasses.fields(BuildOptions)}:  # the fast kernels, as fitted
        options = dataclasses.replace(options, kernel_choice=False)
    return options


def _profile(model: Path, core: str, tiled: bool, cache: Path) -> dict[str, Any]:
    path = cache / f"{model.stem}_{core}_{'tiled' if tiled else 'untiled'}.json"
    if not path.is_file():
        result = profile_model(model, _options(core, tiled), qemu=True)
        path.write_text(json.dumps(result.to_json()))
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def equations(core: str, cache: Path) -> tuple[list[np.ndarray], list[float], list[tuple[str, Any, int]], list[int]]:
    """The equations (features, count), the builds (name, compiled, measured invoke) and which
    equations are chains' overheads."""
    rows: list[np.ndarray] = []
    chains: list[int] = []
    counts: list[float] = []
    invokes: list[tuple[str, Any, int]] = []  # (model, compiled, measured instructions of invoke)
    for model in MODELS:
        untiled = _profile(model, core, False, cache)
        tiled = _profile(model, core, True, cache)
        by_index = {op["index"]: op["instructions"] for op in untiled["ops"]}
        plain = compile_model(model, _options(core, False))
        for op in plain.order:
            if by_index.get(op.index, 0) > 0 and not plain.plan.is_elided(op):
                one = Features.empty()
                one.add_call(op)
                rows.append(_vector(one))
                counts.append(by_index[op.index])
        compiled = compile_model(model, _options(core, True))
        measured = {op["index"]: op["instructions"] for op in tiled["ops"]}
        for chain in compiled.plan.tiling.chains if compiled.plan.tiling is not None else []:
            whole = Features.empty()
            for op in chain.ops:
                whole.add_call(op)
            chains.append(len(rows))
            rows.append(_vector(chain_features(chain)) - _vector(whole))
            counts.append(measured[chain.ops[-1].index] - sum(by_index[op.index] for op in chain.ops))
        invokes.append((model.stem, plain, untiled["invoke_instructions"]))
        invokes.append((model.stem + " tiled", compiled, tiled["invoke_instructions"]))
    return rows, counts, invokes, chains


def fit(rows: list[np.ndarray], counts: list[float], chains: list[int]) -> CostModel:
    a = np.array(rows)
    b = np.array(counts, dtype=float)
    weights = 1.0 / np.maximum(np.abs(b), 1000.0)
    weights[chains] *= CHAIN_WEIGHT
    scale = np.maximum(np.abs(a).max(axis=0), 1.0)  # columns of like size for the solver
    solution, _ = nnls(a * weights[:, None] / scale, b * weights)
    x = solution / scale
    kernels = {k: KernelCost(*(round(float(v), 4) for v in x[4 * i:4 * i + 4])) for i, k in enumerate(KERNEL_CLASSES)}
    return CostModel(kernels=kernels, moved_byte=round(float(x[-2]), 4), stripe=round(float(x[-1]), 2))


def describe(core: str, model: CostModel, invokes: list[tuple[str, Any, int]], chain_lines: list[str]) -> list[str]:
    lines = [f"### {core}", "", "```python", "CostModel(kernels={"]
    for k, c in model.kernels.items():
        lines.append(f'    "{k}": KernelCost(call={c.call}, channel={c.channel}, mac={c.mac}, output={c.output}),')
    lines += [f"}}, moved_byte={model.moved_byte}, stripe={model.stripe})", "```", "",
              "| build | measured instructions | estimated | error |", "|---|---|---|---|"]
    for name, compiled, measured in invokes:
        est = estimate(compiled.order, compiled.plan.tiling, model)
        lines.append(f"| {name} | {measured:,} | {est:,} | {100.0 * (est - measured) / measured:+.1f}% |")
    return [*lines, "", *chain_lines, ""]


def chain_check(rows: list[np.ndarray], counts: list[float], chains: list[int], model: CostModel) -> list[str]:
    """The stripes' overhead per chain, measured and estimated."""
    x = np.array([v for k in KERNEL_CLASSES for v in dataclasses.astuple(model.kernels[k])]
                 + [model.moved_byte, model.stripe])
    lines = ["| tiled chain's overhead (equation) | measured | estimated |", "|---|---|---|"]
    for n in chains:
        lines.append(f"| chain of {int(rows[n][-1])} stripes | {int(counts[n]):,} | {int(rows[n] @ x):,} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=None, help="keep the profiles here (default: a new temporary directory)")
    parser.add_argument("--out", type=Path, default=HERE / "cost_calibration.md")
    args = parser.parse_args()
    args.cache = args.cache or Path(tempfile.mkdtemp(prefix="mcugen-calibration-"))
    args.cache.mkdir(parents=True, exist_ok=True)
    text = ["# Calibration of mcugen/memory/cost.py", "",
            "Written by `python3 benchmarks/firmware/calibrate_cost.py` (see its docstring): coefficients",
            "fitted to `mcugen profile --qemu` counts, then each build's whole-invoke estimate against its",
            "measured count, and each tiled chain's overhead (its count minus its ops' untiled counts).", ""]
    for core in CORES:
        rows, counts, invokes, chains = equations(core, args.cache)
        model = fit(rows, counts, chains)
        text += describe(core, model, invokes, chain_check(rows, counts, chains, model))
    args.out.write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
