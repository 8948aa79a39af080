"""`--npu-async`: the CPU runs ops while an NPU segment works; same outputs, buffers kept apart.

The generated invoke starts a segment (ethosu_invoke_async), runs the CPU ops of its group (ops
that neither feed it nor read what it writes), then waits (ethosu_wait). The simulated NPU does
its work at start or wait, so what is tested is the order and the memory plan: the outputs equal
TFLM's (and so the synchronous build's) bit for bit under ASan/UBSan, and no CPU op of a group
shares a byte with a buffer the NPU reads or writes while it runs (npu/concurrency.py's check,
which a plan made without the lifetimes extended to the wait fails).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import public_model
from npu_lowered_models import softmax_beside_gathers
from npu_sweep import ObjectCache

from mcugen.cli import main
from mcugen.driver import BuildOptions, Compiled, compile_model, load_graph
from mcugen.ir import NpuSegmentOptions, Op, OpKind
from mcugen.memory.plan import plan_model
from mcugen.npu.concurrency import AsyncSteps, async_order, concurrency_conflicts
from mcugen.npu.config import CONFIGS, npu_config
from mcugen.npu.segments import mark_npu_ops, with_npu_scratch
from mcugen.ops.registry import scratch_bytes
from mcugen.schedule import schedule
from mcugen.targets import HOST
from mcugen.toolchain.host import run_program

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
SIZES = sorted(CONFIGS, key=lambda size: CONFIGS[size].macs)
# The fixtures whose graphs leave the CPU work beside an NPU segment (the others' CPU ops all
# need the segment before them): segments with concurrent CPU ops on every size.
CONCURRENT = {"model_transformer_block": 1}


def _options(size: str, npu_async: bool) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)), npu_async=npu_async)


def _build(name: str, size: str, npu_async: bool = True) -> Compiled:
    return compile_model((FIXTURES / f"{name}.tflite").read_bytes(), _options(size, npu_async), f"{name}.tflite")


def _concurrent(order: list[Op]) -> list[tuple[Op, list[Op]]]:
    """Each ETHOS_U op that runs beside CPU ops, with those ops."""
    found = []
    for position, op in enumerate(order):
        if isinstance(op.options, NpuSegmentOptions) and op.options.concurrent:
            found.append((op, order[position + 1: position + 1 + op.options.concurrent]))
    return found


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> ObjectCache:
    return ObjectCache(tmp_path_factory.mktemp("npu-async-objects"))


@pytest.mark.parametrize("name", sorted(CONCURRENT))
def test_async_build_is_bit_exact_with_tflm_and_the_sync_build(name: str, objects: ObjectCache,
                                                                tmp_path: Path) -> None:
    entry = MANIFEST[name]
    with np.load(FIXTURES / f"{name}.npz") as data:
        cases = [[data[f"input{i}_{k}"] for i in range(len(entry["inputs"]))] for k in range(entry["cases"])]
        expected = [[data[f"tflm_output{o}_{k}"] for o in range(len(entry["outputs"]))]
                    for k in range(entry["cases"])]
    for size in SIZES:
        runs = {}
        for npu_async in (False, True):
            compiled = _build(name, size, npu_async)
            segments = _concurrent(compiled.order)
            assert len(segments) == (CONCURRENT[name] if npu_async else 0), size
            if npu_async:
                code = compiled.code.files[f"{compiled.prefix}_model.c"]
                assert code.count("mcugen_npu_model_start(") == code.count("mcugen_npu_model_wait()") == len(segments)
            build = tmp_path / f"{size}-{npu_async}"
            build.mkdir()
            runs[npu_async] = run_program(objects.program(compiled, f"{name}.tflite", build), cases)
        for k, wanted in enumerate(expected):
            for o, want in enumerate(wanted):
                for npu_async, outputs in runs.items():
                    got = outputs[k][o].reshape(want.shape)
                    assert np.array_equal(got, want), f"{name} {size} async={npu_async} case{k} output{o}"


@pytest.mark.parametrize("size", SIZES)
def test_planner_keeps_concurrent_cpu_buffers_off_the_npus(size: str) -> None:
    """Every group's CPU ops (their inputs, outputs and scratch) share no byte with a buffer its
    segment reads or writes, on every fixture and public model (the build checks it too)."""
    paths = [FIXTURES / f"{name}.tflite" for name, entry in MANIFEST.items() if entry["tflm"]]
    paths += [public_model(name) for name in ("kws_dscnn", "vww_mobilenet_v1_025")]
    groups = 0
    for path in paths:
        compiled = compile_model(path.read_bytes(), _options(size, True), path.name)
        for segment, cpu in _concurrent(compiled.order):
            assert isinstance(segment.options, NpuSegmentOptions)
            assert not concurrency_conflicts(segment.options.ops, cpu, compiled.plan), path.name
            groups += 1
    assert groups >= sum(CONCURRENT.values())


def test_without_lifetimes_to_the_wait_the_check_finds_an_overlap() -> None:
    """The same async order planned with plain lifetimes (the SOFTMAX's scratch, its int32
    intermediates, dies at its own step): the GATHER beside the segment writes over it, and the
    check says so. With AsyncSteps the scratch lives to the wait and the planner keeps them apart."""
    config = npu_config("u55-128")
    graph = load_graph(softmax_beside_gathers(), "softmax_beside_gathers.tflite")
    mark_npu_ops(graph, config)
    scratch = with_npu_scratch(scratch_bytes(HOST))
    order, groups = async_order(schedule(graph, scratch).order, config)
    assert [[op.kind.name for op in g.cpu] for g in groups] == [["GATHER"]]
    plain = plan_model(graph, order, scratch, tiling=False)
    kept = plan_model(graph, order, scratch, tiling=False, steps=AsyncSteps(order, groups))
    conflicts = [c for g in groups for c in concurrency_conflicts(g.npu, list(g.cpu), plain)]
    assert conflicts and all("scratch of op 0" in c for c in conflicts), conflicts
    assert not any(concurrency_conflicts(g.npu, list(g.cpu), kept) for g in groups)


def test_groups_never_need_their_segment() -> None:
    """No CPU op of a group reads, directly or through another op, what its segment writes; none
    writes what the segment reads; the order stays topological."""
    for name in CONCURRENT:
        graph = load_graph((FIXTURES / f"{name}.tflite").read_bytes(), f"{name}.tflite")
        order, groups = async_order(schedule(graph, scratch_bytes(HOST)).order, npu_config("u55-32"))
        available = {id(t) for t in graph.inputs}
        for op in order:
            assert all(t is None or t.is_constant or id(t) in available for t in op.inputs), op.where()
            available |= {id(t) for t in op.outputs}
        for group in groups:
            written = {id(t) for op in group.npu for t in op.outputs}
            read = {id(t) for op in group.npu for t in op.inputs if t is not None}
            for op in group.cpu:
                assert not any(t is not None and id(t) in written for t in op.inputs), op.where()
                assert not any(id(t) in read for t in op.outputs), op.where()


def test_npu_async_without_npu_is_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "model_two_in_two_out.tflite"), "--npu-async",
                                       "-o", str(tmp_path / "gen")])
    assert result.exit_code == 2 and "--npu-async needs --npu" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_cli_builds_with_npu_async(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "model_transformer_block.tflite"), "--npu", "u55-64",
                                       "--npu-async", "-o", str(out)])
    assert result.exit_code == 0, result.output
    code = (out / "model_transformer_block_model.c").read_text()
    start, wait = code.index("mcugen_npu_model_start("), code.index("mcugen_npu_model_wait()")
    assert start < code.index("TRANSPOSE", start) < wait
    assert OpKind.ETHOS_U.name in code
