"""`mcugen profile` and report.json's code size.

Host: a small model's profile lists every op of report.json in order, one call per op per
inference whatever the number of runs, ratios that sum to 100 and the memory table of
report.json. QEMU (Cortex-M4, mps2-an386 with -icount): kws_dscnn's instructions per inference,
with the firmware checking its outputs byte for byte against TFLM's (the case file's
tflm_output0); skipped without the toolchain locally, never under CI=true. Code size: the
fields of report.json's "code_size" and their agreement with the build's own figures.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import PUBLIC_MODELS, public_model
from modelbuilder import ModelBuilder

from mcugen.analysis.measure import build
from mcugen.analysis.profile import profile_model
from mcugen.cli import main
from mcugen.driver import BuildOptions
from mcugen.toolchain.host import compiler


def require_tools(*tools: str) -> None:
    """Skip when a tool is missing; fail instead under CI=true."""
    missing = [t for t in tools if shutil.which(t) is None]
    if not missing:
        return
    reason = f"{', '.join(missing)} not on PATH (Debian: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true, so this fails instead of skipping")
    pytest.skip(reason)


def small_model() -> bytes:
    """ADD, MUL, ADD (two calls of one kind) and a RESHAPE that needs no code."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8, 8, 4], "int8", scale=0.05, zero_point=-3)
    a = b.add_tensor("x_plus_x", [1, 8, 8, 4], "int8", scale=0.09, zero_point=1)
    b.add_op("ADD", [x, x], [a])
    m = b.add_tensor("sum_times_x", [1, 8, 8, 4], "int8", scale=0.2, zero_point=-7)
    b.add_op("MUL", [a, x], [m])
    s = b.add_tensor("product_plus_sum", [1, 8, 8, 4], "int8", scale=0.25, zero_point=4)
    b.add_op("ADD", [m, a], [s])
    r = b.add_tensor("flat", [1, 256], "int8", scale=0.25, zero_point=4)
    b.add_op("RESHAPE", [s], [r], {"new_shape": [1, 256]})
    b.set_io([x], [r])
    return b.build()


@pytest.fixture(scope="module")
def small_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler()  # a clear error when the host has no C compiler
    path = tmp_path_factory.mktemp("profile") / "small.tflite"
    path.write_bytes(small_model())
    return path


def test_host_profile_lists_every_op_once_per_inference(small_path: Path) -> None:
    runs = 3
    profile = profile_model(small_path, BuildOptions(), runs=runs)
    report = profile.report
    assert [(op.index, op.kind) for op in profile.ops] == [(op["index"], op["kind"]) for op in report["ops"]]
    assert {op.kind for op in profile.ops} >= {"ADD", "MUL"}
    assert all(op.calls == 1 for op in profile.ops), [(op.kind, op.calls) for op in profile.ops]
    assert [op.macs for op in profile.ops] == [op["macs"] for op in report["ops"]]
    rows = {row.kind: row for row in profile.by_kind()}
    assert rows["ADD"].calls == 2 and rows["MUL"].calls == 1
    assert sum(row.ratio for row in rows.values()) == pytest.approx(100.0)
    assert sum(row.total_ns for row in rows.values()) == pytest.approx(sum(op.cpu_ns for op in profile.ops))
    assert all(op.instructions is None for op in profile.ops)  # the host counts time only
    assert profile.invoke_ns >= sum(op.cpu_ns for op in profile.ops) > 0
    # Ops that need no code (an alias RESHAPE) are counted but never timed.
    for op in profile.ops:
        if op.kind == "RESHAPE":
            assert op.cpu_ns == 0


def test_memory_table_is_report_json(small_path: Path) -> None:
    profile = profile_model(small_path, BuildOptions(), runs=1)
    report = profile.report
    memory = profile.memory
    assert memory.internal == sum(p["bytes"] for p in report["pools"]) == report["arena_bytes"]
    assert memory.weight == report["weights_bytes"]
    assert (memory.core, memory.command, memory.kvcache) == (1, 0, 0)
    assert memory.total == memory.internal + memory.weight
    as_json = json.loads(json.dumps(profile.to_json()))
    assert as_json["memory"]["total"] == memory.total
    assert [op["kind"] for op in as_json["ops"]] == [op.kind for op in profile.ops]


def test_cli_prints_both_tables(small_path: Path) -> None:
    result = CliRunner().invoke(main, ["profile", str(small_path), "--runs", "2", "--per-op"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("Op ") and "Ratio(%)" in line for line in lines)
    assert any(line.startswith("Core") and "KVCache(KiB)" in line for line in lines)
    result = CliRunner().invoke(main, ["profile", str(small_path), "--json"])
    assert result.exit_code == 0, result.output
    assert {row["kind"] for row in json.loads(result.output)["by_kind"]} >= {"ADD", "MUL"}


def test_qemu_needs_a_cortex_m_target(small_path: Path) -> None:
    result = CliRunner().invoke(main, ["profile", str(small_path), "--qemu"])
    assert result.exit_code == 2 and "--target cortex-m4 or cortex-m55" in result.output


def test_qemu_profile_kws_m4_counts_instructions_bit_exact() -> None:
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    model = public_model("kws_dscnn")
    with np.load(PUBLIC_MODELS / "kws_dscnn.case0.npz") as case:
        inputs, expected = [case["input0"]], [case["tflm_output0"]]
    # The firmware compares its outputs with TFLM's byte for byte and profile_model raises
    # unless it printed PASS: this is a bit-exactness run too.
    profile = profile_model(model, BuildOptions(target="cortex-m4"), qemu=True, runs=1,
                            inputs=inputs, expected=expected)
    total = profile.total_instructions
    assert total is not None and total > profile.report["macs"] // 10
    assert profile.invoke_instructions is not None
    # The ops' instructions are inside invoke's; what is left is the timing hook itself.
    assert total <= profile.invoke_instructions < total + 2000 * len(profile.ops)
    assert {op.kind for op in profile.ops} == {op["kind"] for op in profile.report["ops"]}
    rows = profile.by_kind()
    assert sum(row.calls for row in rows) == len(profile.report["ops"])
    assert sum(row.macs for row in rows) == profile.report["macs"]
    assert sum(row.ratio for row in rows) == pytest.approx(100.0)
    assert profile.cpu_mhz and profile.ops[0].cpu_ns == pytest.approx(
        profile.ops[0].instructions * 1000 / profile.cpu_mhz, rel=1e-3, abs=100)


def test_code_size_in_report_json(tmp_path: Path) -> None:
    require_tools("arm-none-eabi-gcc", "arm-none-eabi-size")
    model = public_model("kws_dscnn")
    compiled = build(model, tmp_path / "m4", BuildOptions(target="cortex-m4"))
    report = json.loads((tmp_path / "m4" / "report.json").read_text())
    size = report["code_size"]
    assert size["measured"] is True and "-Os" in size["flags"] and "cortex-m4" in size["flags"]
    for key in ("text", "rodata", "data", "bss", "runtime_flash_bytes", "weights_bytes", "arena_bytes"):
        assert isinstance(size[key], int) and size[key] >= 0, key
    assert size["text"] > 0
    assert size["runtime_flash_bytes"] == size["text"] + size["rodata"] + size["data"]
    # Weights: the constant arrays, each 16-byte aligned; arena: every pool.
    constants = len(compiled.code.files[f"{compiled.prefix}_model.c"].split(".rodata.mcugen_weights.")) - 1
    assert report["weights_bytes"] <= size["weights_bytes"] < report["weights_bytes"] + 16 * constants
    assert size["arena_bytes"] == sum(p["bytes"] for p in report["pools"])
    objects = size["objects"]
    assert f"{compiled.prefix}_model.o" in objects
    assert sum(o["weights"] for o in objects.values()) == size["weights_bytes"]
    # Host builds say why there is no code size, and --no-size skips it.
    build(model, tmp_path / "host", BuildOptions())
    host = json.loads((tmp_path / "host" / "report.json").read_text())["code_size"]
    assert host["measured"] is False and host["reason"]
    build(model, tmp_path / "skip", BuildOptions(target="cortex-m4"), size=False)
    assert json.loads((tmp_path / "skip" / "report.json").read_text())["code_size"]["measured"] is False


def test_build_instructions_in_report_json(tmp_path: Path) -> None:
    """mcugen build --instructions: the QEMU count per inference and per op lands in report.json,
    and agrees with the ops' MACs and with a build without it (which says why it has none)."""
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    model = public_model("ad_autoencoder")
    result = CliRunner().invoke(main, ["build", str(model), "-o", str(tmp_path / "m55"), "--target", "cortex-m55",
                                       "--no-size", "--instructions"])
    assert result.exit_code == 0, result.output
    assert "per inference" in result.output
    report = json.loads((tmp_path / "m55" / "report.json").read_text())
    counted = report["instructions"]
    assert counted["measured"] is True and "mps3-an547" in counted["where"]
    ops = counted["ops"]
    assert [op["index"] for op in ops] == [op["index"] for op in report["ops"]]
    assert sum(op["macs"] for op in ops) == report["macs"]
    per_op = sum(op["instructions"] for op in ops)
    # every op does work; invoke holds the ops plus the timing hook around each of them
    assert all(op["instructions"] > 0 for op in ops)
    assert per_op <= counted["per_inference"] < per_op + 2000 * len(ops)
    assert counted["per_mac"] == pytest.approx(counted["per_inference"] / report["macs"], rel=1e-3)
    plain = build(model, tmp_path / "plain", BuildOptions(target="cortex-m55"), size=False)
    assert plain.report()["instructions"]["measured"] is False
    result = CliRunner().invoke(main, ["build", str(model), "-o", str(tmp_path / "m7"), "--target", "cortex-m7",
                                       "--instructions"])
    assert result.exit_code == 2 and "--target cortex-m4 or cortex-m55" in result.output
    assert not (tmp_path / "m7").exists()


def test_per_op_chain_row_counts_the_macs_of_the_whole_chain() -> None:
    """--per-op: a tiled chain's last op holds the instructions of all its ops, so its
    Instr/MAC is over the chain's MACs (as the per-kind TILED_CHAIN row), not its own."""
    from mcugen.analysis.profile import MemoryTable, OpProfile, Profile, profile_lines

    ops = [OpProfile(0, "CONV_2D", "a", 1, 1000.0, 1000, 500),
           OpProfile(1, "DEPTHWISE_CONV_2D", "b", 1, 0.0, 0, 300, chain=[]),
           OpProfile(2, "CONV_2D", "c", 1, 9000.0, 9000, 600, chain=[1, 2])]
    profile = Profile("m.tflite", "cortex-m4", "qemu mps2-an386", 1, 100.0, ops,
                      MemoryTable(1, 0, 0, 0, 0), 10_000.0, 10_000)
    rows = {line.split("|")[0].strip(): line.split("|")[-1].strip() for line in profile_lines(profile, per_op=True)
            if "|" in line}
    assert rows["0 CONV_2D"] == "2.00"
    assert rows["2 CONV_2D (tiled chain 1..2)"] == f"{9000 / 900:.2f}"
    assert rows["1 DEPTHWISE_CONV_2D (timed in op 2)"] == "0.00"
