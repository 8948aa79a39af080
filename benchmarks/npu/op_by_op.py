#!/usr/bin/env python3
"""One public model on one Ethos-U55 size: the device's cycles per operation command, for
mcugen's own streams (`--npu`) and for Vela's (Performance), to see where the two differ.

    python3 benchmarks/npu/op_by_op.py kws_dscnn 128 [--models DIR]

Prints, per mcugen segment, the IR ops it lowers and each command's modelled cycles (the
harness's `opcycles` lines), then the same for Vela's payload and both totals (MODEL_CYCLES).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from npu_vela import run_device
from vela_models import build_harness, compile_model, model_cycles, segment_runs

from mcugen.driver import BuildOptions
from mcugen.driver import compile_model as mcugen_compile
from mcugen.ir import NpuSegmentOptions
from mcugen.npu.config import npu_config
from mcugen.targets import HOST
from mcugen.toolchain.host import RELEASE_FLAGS, WARNING_FLAGS


def ours(harness: Path, model: Path, macs: int, work: Path) -> int:
    """Each segment run alone on the device (pools zero-filled); its commands' cycles printed."""
    options = BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(f"u55-{macs}")))
    order = mcugen_compile(model.read_bytes(), options, model.name).order
    total = 0
    for n, (op, out) in enumerate(segment_runs(order, harness, macs, work / "mcugen")):
        assert isinstance(op.options, NpuSegmentOptions)
        print(f"mcugen segment {n}: {' '.join(o.kind.name for o in op.options.ops)}")
        for m in re.finditer(r"^opcycles (\w+) (\d+)$", out, re.MULTILINE):
            print(f"  {m[1]:<20} {int(m[2]):>8,}")
        total += model_cycles(out)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("macs", type=int, choices=(32, 64, 128, 256))
    parser.add_argument("--models", type=Path, default=REPO.parent / "shared" / "models")
    args = parser.parse_args()
    model = args.models / f"{args.model}.tflite"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        harness = build_harness(work / "npu_harness", [*WARNING_FLAGS, *RELEASE_FLAGS])
        mine = ours(harness, model, args.macs, work)
        vela = compile_model(model.read_bytes(), args.macs, work / "vela", name=model.stem)
        run = run_device(harness, vela)
        print("Vela (--optimise Performance):")
        for name, cycles in run.op_cycles:
            print(f"  {name:<20} {cycles:>8,}")
    print(f"total: mcugen {mine:,} cycles, Vela {run.cycles:,} ({mine / run.cycles:.3f})")


if __name__ == "__main__":
    main()
