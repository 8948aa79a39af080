#!/usr/bin/env python3
"""One public model on one Ethos-U55 size: every way to run each striped NPU chain, as the
build weighs it (`mcugen/npu/stripes.choose_stripes`), to see what SRAM costs in cycles.

    python3 benchmarks/npu/stripe_options.py ic_resnet8 256 [--optimize balanced] [--models DIR]

Prints, per chain and option (whole, or N stripes rolling or recomputed), the estimated NPU
cycles the option adds over the chain run whole, the placed SRAM with it (the chains before it
as chosen, the later ones as the tiling search cut them) and whether it is within the mode's
cycle slack; then the build's SRAM and estimated cycles. Options beyond the slack are placed
here only (the build skips them); the choice is the build's own.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from mcugen.driver import BuildOptions, compile_model
from mcugen.npu import stripes
from mcugen.npu.config import npu_config
from mcugen.npu.stripes import PricedOption
from mcugen.targets import HOST


def priced_build(model: Path, macs: int, optimize: str) -> tuple[list[PricedOption], Any]:
    """The build of `model`, and every stripe option its choice weighed."""
    priced: list[PricedOption] = []
    choose = stripes.choose_stripes
    # the driver imports choose_stripes at its call, so this wrapper is the one it runs
    stripes.choose_stripes = functools.partial(choose, priced=priced)  # type: ignore[assignment]
    try:
        options = BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(f"u55-{macs}")), optimize=optimize)
        compiled = compile_model(model.read_bytes(), options, model.name)
    finally:
        stripes.choose_stripes = choose  # type: ignore[assignment]
    return priced, compiled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("macs", type=int, choices=(32, 64, 128, 256))
    parser.add_argument("--optimize", default="balanced", choices=("ram", "balanced", "speed"))
    parser.add_argument("--models", type=Path, default=REPO.parent / "shared" / "models")
    args = parser.parse_args()
    priced, compiled = priced_build(args.models / f"{args.model}.tflite", args.macs, args.optimize)
    print(f"{'chain':<8} {'stripes':>7} {'rolling':>7} {'+cycles':>9} {'SRAM':>8}  within slack")
    for p in priced:
        arena = f"{p.arena:,}" if p.arena is not None else "-"
        print(f"{p.chain:<8} {p.stripes:>7} {'yes' if p.rolling else 'no':>7} {p.extra_cycles:>9,} {arena:>8}  "
              f"{'yes' if p.within_slack else 'no'}")
    print(f"build: SRAM {compiled.plan.arena_size:,} bytes")


if __name__ == "__main__":
    main()
