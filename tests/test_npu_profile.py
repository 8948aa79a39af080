"""`mcugen profile MODEL --npu u55-N`: each NPU segment's NPU(ns) from the simulated device's PMU
cycle counter beside the CPU ops' times, and the CPU/NPU split; with --npu-async the cycles are
read after the wait, and a segment the async build runs as the sync build does counts the same
cycles (the PMU counts the device's work, not when the CPU collects it)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from click.testing import CliRunner

from mcugen.analysis.profile import profile_model
from mcugen.cli import main
from mcugen.driver import BuildOptions, compile_model
from mcugen.ir import NpuSegmentOptions, OpKind
from mcugen.npu.config import npu_config
from mcugen.targets import HOST

# its TRANSPOSE runs on the CPU, beside an NPU segment with --npu-async
MODEL = Path(__file__).resolve().parent / "fixtures" / "model_transformer_block.tflite"


def _options(npu_async: bool) -> BuildOptions:
    # weights from flash in both: --npu-async builds never buffer them in SRAM, so the same
    # segment would otherwise run other streams with and without it
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config("u55-128")), npu_async=npu_async,
                        npu_weights="flash")


def test_profile_with_npu_shows_npu_ns_per_segment_and_the_split() -> None:
    result = CliRunner().invoke(main, ["profile", str(MODEL), "--npu", "u55-128", "--per-op"])
    assert result.exit_code == 0, result.output
    segments = re.findall(r"^\d+ ETHOS_U\s+\|\s+1 \|\s+0 \|\s+([\d,]+) \|", result.output, re.MULTILINE)
    compiled = compile_model(MODEL.read_bytes(), _options(False), MODEL.name)
    assert len(segments) == sum(op.kind is OpKind.ETHOS_U for op in compiled.order)
    assert all(int(ns.replace(",", "")) > 0 for ns in segments)
    assert re.search(r"^CPU [\d.]+% / NPU [\d.]+% of the op time", result.output, re.MULTILINE)
    assert re.search(r"^\d+ TRANSPOSE\s+\|\s+1 \|\s+[\d,]*[1-9][\d,]* \|\s+0 \|", result.output, re.MULTILINE)


def test_async_segments_count_the_cycles_of_the_same_sync_segments() -> None:
    profiles = {a: profile_model(MODEL, _options(a)) for a in (False, True)}
    builds = {a: compile_model(MODEL.read_bytes(), _options(a), MODEL.name) for a in (False, True)}

    def cycles(npu_async: bool) -> dict[tuple[int, ...], int]:
        ops = {op.index: op for op in builds[npu_async].order if op.kind is OpKind.ETHOS_U}
        found = {}
        for row in profiles[npu_async].ops:
            if row.kind == "ETHOS_U":
                options = ops[row.index].options
                assert isinstance(options, NpuSegmentOptions)
                found[tuple(o.index for o in options.ops)] = row.npu_cycles
        return found

    sync, concurrent = cycles(False), cycles(True)
    assert all(value > 0 for value in [*sync.values(), *concurrent.values()])
    assert any(isinstance(op.options, NpuSegmentOptions) and op.options.concurrent for op in builds[True].order)
    shared = set(sync) & set(concurrent)
    assert shared and all(sync[ops] == concurrent[ops] for ops in shared)
