"""Memory pools: parsing, multi-pool builds of the public models (bit-exact, each pool its own
array in its own section of the size the plan says), and the error of a model that does not fit."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import PUBLIC_NAMES, public_model

from mcugen.cli import main
from mcugen.driver import BuildOptions, compile_model, write_files
from mcugen.errors import McugenError
from mcugen.memory.placement import align_up
from mcugen.memory.pools import PoolSpec, parse_pool, parse_pools, pool_section, pool_symbol
from mcugen.toolchain.host import build_program, compiler, run_program


def test_parse_pool_sizes_speeds_and_errors() -> None:
    assert parse_pool("DTCM:64K:fast") == PoolSpec("DTCM", 65536, "fast")
    assert parse_pool("SRAM:320k") == PoolSpec("SRAM", 327680, "normal")
    assert parse_pool("PSRAM:8M:slow") == PoolSpec("PSRAM", 8 << 20, "slow")
    assert parse_pool("tiny:100") == PoolSpec("tiny", 100, "normal")
    for bad, rule in [("DTCM", "NAME:SIZE"), ("DTCM:64Q", "is not bytes"), ("1x:64K", "C identifier"),
                      ("A:0", "positive"), ("A:1K:warp", "speed"), ("A:1:fast:x", "NAME:SIZE")]:
        with pytest.raises(McugenError, match=rule):
            parse_pool(bad)
    with pytest.raises(McugenError, match="more than once"):
        parse_pools(["A:1K", "a:2K"])


def _pools_for(arena: int) -> tuple[PoolSpec, ...]:
    """A fast pool of about a third of the single arena, a normal one of two thirds, a slow big one."""
    return (PoolSpec("DTCM", align_up(arena // 3), "fast"), PoolSpec("SRAM", align_up(2 * arena // 3)),
            PoolSpec("PSRAM", 8 << 20, "slow"))


def _sections(obj: Path) -> dict[str, int]:
    text = subprocess.run(["objdump", "-h", str(obj)], capture_output=True, text=True, check=True).stdout
    return {m.group(1): int(m.group(2), 16) for m in re.finditer(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)", text, re.MULTILINE)}


@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_multi_pool_builds_are_bit_exact_and_match_the_plan(name: str, tmp_path: Path) -> None:
    model = public_model(name)
    single = compile_model(model, BuildOptions())
    options = BuildOptions(pools=_pools_for(single.plan.arena_size))
    compiled = compile_model(model, options)
    plan = compiled.plan
    used = [p for p in plan.pools if p.size]
    assert len(used) >= 2, "the test should spread the model over pools"
    for pool in plan.pools:
        assert pool.spec.capacity is None or pool.size <= pool.spec.capacity

    # Each used pool is its own array, in its own section, of exactly the planned size.
    write_files(compiled, tmp_path)
    obj = tmp_path / "model.o"
    subprocess.run([compiler(), "-std=c99", "-c", "-I.", f"{compiled.prefix}_model.c", "-o", str(obj)],
                   cwd=tmp_path, check=True)
    sections = _sections(obj)
    for pool in used:
        assert sections[pool_section(compiled.prefix, pool.name)] == pool.size
    assert not any(s.startswith(".bss.mcugen_arena") for s in sections)
    # Inputs and outputs are read and written where the plan put them.
    source = (tmp_path / f"{compiled.prefix}_model.c").read_text()
    for tensor in [*compiled.graph.inputs, *compiled.graph.outputs]:
        buffer = plan.buffer_of(tensor)
        assert f"return {pool_symbol(compiled.prefix, buffer.pool)} + {buffer.offset};" in source

    cases = [dict(np.load(model.with_name(f"{name}.case{k}.npz"))) for k in range(3)]
    program = build_program(model.read_bytes(), options, model.name)
    results = run_program(program, [[c[k] for k in sorted(c) if k.startswith("input")] for c in cases])
    for case, outputs in zip(cases, results):
        expected = case["tflm_output0"]
        assert np.array_equal(outputs[0].reshape(expected.shape), expected)


def test_cli_reports_a_model_that_does_not_fit(tmp_path: Path) -> None:
    model = public_model("kws_dscnn")
    # Whole tensors (--no-tiling): tiled, kws fits in these 12K.
    result = CliRunner().invoke(main, ["build", str(model), "-o", str(tmp_path / "out"), "--no-tiling",
                                       "--pool", "DTCM:4K:fast", "--pool", "SRAM:8K"])
    assert result.exit_code == 2
    line = result.output.strip()
    assert "\n" not in line
    assert re.search(r"does not fit pool SRAM .*it needs (\d+) bytes of its 8192 \((\d+) bytes over\); "
                     r"live at its peak \(step \d+\): '", line), line
    needed, over = map(int, re.search(r"it needs (\d+) bytes of its 8192 \((\d+)", line).groups())  # type: ignore[union-attr]
    assert needed - 8192 == over > 0
    assert not (tmp_path / "out").exists()


def test_cli_build_with_pools_writes_them_into_the_header_and_report(tmp_path: Path) -> None:
    model = public_model("ic_resnet8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(model), "-o", str(out), "--pool", "DTCM:16K:fast",
                                       "--pool", "SRAM:320K", "--pool", "PSRAM:8M:slow"])
    assert result.exit_code == 0, result.output
    import json

    report = json.loads((out / "report.json").read_text())
    pools = {p["name"]: p for p in report["pools"]}
    assert pools["DTCM"]["capacity"] == 16384 and pools["DTCM"]["speed"] == "fast"
    assert pools["DTCM"]["bytes"] + pools["SRAM"]["bytes"] + pools["PSRAM"]["bytes"] == report["arena_bytes"]
    header = (out / "ic_resnet8_model.h").read_text()
    assert f"#define IC_RESNET8_POOL_DTCM_SIZE {pools['DTCM']['bytes']}" in header
    assert {b["pool"] for b in report["buffers"]} <= set(pools)
