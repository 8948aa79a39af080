"""`--npu-weights auto|sram|flash`: NPU weights DMA'd from flash into planned SRAM buffers.

The oracle is TFLM: public models, fixtures and single-op models built with --npu-weights
sram (every weighted NPU op buffered) and auto on u55-32 and u55-128 run under ASan/UBSan and
must equal TFLM's outputs bit for bit. The command stream is decoded word by word and held to
the plan: one weight DMA per buffered op and none else (LUT DMAs go to SHRAM), copying into that
op's planned buffer, waited for before the kernel that reads it, whose weight and scale
registers point there; the plan (report.json's buffers) keeps every weight buffer off the bytes
of every buffer live with it; auto never grows the arena over flash; and the simulated device
counts fewer cycles with sram than with flash on conv models.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import public_model
from npu_compile import REFUSED, models
from npu_sweep import ObjectCache
from oracles import run_tflm

from mcugen.cli import main
from mcugen.driver import BuildOptions, Compiled, compile_model
from mcugen.ir import NpuSegmentOptions, Op, OpKind
from mcugen.npu.config import npu_config
from mcugen.npu.registers import CMD1_FLAG, Cmd0, Cmd1
from mcugen.ops.npu.payload import read_payload
from mcugen.targets import HOST
from mcugen.toolchain.host import build_program, run_program

PUBLIC = ("ad_autoencoder", "kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025")
SIZES = ("u55-32", "u55-128")
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# fixtures with weighted NPU ops (model_se_hard_swish and model_unet fuse a LUT into a buffered op)
FIXTURE_NAMES = ("conv2d_dilated_s1_valid_i16", "depthwise_same_relu6_i16", "fully_connected_3d",
                 "model_audio_conv1d", "model_mobilenet_v2", "model_se_hard_swish", "model_unet",
                 "model_transformer_block", "model_two_in_two_out")
SHRAM_DMA = 0x100  # DMA0_DST_REGION's internal bit: a LUT into SHRAM, not a weight buffer


def options(size: str, weights: str, tiling: bool = True) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)), npu_weights=weights, tiling=tiling)


def compiled_public(name: str, size: str, weights: str, tiling: bool = True) -> Compiled:
    path = public_model(name)
    return compile_model(path.read_bytes(), options(size, weights, tiling), path.name)


def segments(compiled: Compiled) -> list[Any]:
    return [op for op in compiled.order if op.kind is OpKind.ETHOS_U]


def stream(payload: bytes) -> list[tuple[int, bool, int]]:
    """(opcode, is cmd1, parameter or data word) of every command of the payload's stream."""
    layout = read_payload(payload)
    words = np.frombuffer(payload[layout.stream_offset:layout.stream_offset + layout.stream_bytes], "<u4")
    found, i = [], 0
    while i < len(words):
        word = int(words[i])
        if word & CMD1_FLAG:
            found.append((word & 0x3FF, True, int(words[i + 1])))
            i += 2
        else:
            found.append((word & 0x3FF, False, word >> 16))
            i += 1
    return found


def weight_dmas_and_reads(payload: bytes) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """The stream's weight DMAs (destination region, address, length, in order) and its kernels'
    SRAM weight reads (region, weight base, weight + scale span); LUT DMAs are left out. Each
    kernel that reads SRAM weights must follow a DMA_WAIT that ended the DMA that wrote them (a
    DMA_WAIT n ends all but the newest n)."""
    registers: dict[tuple[int, bool], int] = {}
    dmas: list[tuple[int, int, int]] = []
    reads: list[tuple[int, int, int]] = []
    unwaited: list[tuple[int, int]] = []  # in issue order; DMA_WAIT n leaves the newest n running
    for opcode, is_cmd1, value in stream(payload):
        if not is_cmd1 and opcode in (Cmd0.OP_CONV, Cmd0.OP_DEPTHWISE) and registers[(Cmd0.WEIGHT_REGION, False)]:
            region, base = registers[(Cmd0.WEIGHT_REGION, False)], registers[(Cmd1.WEIGHT_BASE, True)]
            assert (region, base) not in unwaited, "a kernel reads its weight buffer before DMA_WAIT"
            assert registers[(Cmd0.SCALE_REGION, False)] == region
            end = registers[(Cmd1.SCALE_BASE, True)] + registers[(Cmd1.SCALE_LENGTH, True)]
            reads.append((region, base, end - base))
        elif not is_cmd1 and opcode == Cmd0.OP_DMA_START:
            destination = registers[(Cmd0.DMA0_DST_REGION, False)]
            if not destination & SHRAM_DMA:
                assert registers[(Cmd0.DMA0_SRC_REGION, False)] == 0, "a weight DMA not from flash"
                dmas.append((destination, registers[(Cmd1.DMA0_DST, True)], registers[(Cmd1.DMA0_LEN, True)]))
                unwaited.append(dmas[-1][:2])
        elif not is_cmd1 and opcode == Cmd0.OP_DMA_WAIT:
            unwaited = unwaited[len(unwaited) - value:] if value else []
        registers[(opcode, is_cmd1)] = value
    return dmas, reads


def buffered_accesses(accesses: list[tuple[int, int, int]], planned: list[tuple[int, int, int]],
                      slots: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The accesses (region, address, bytes) that match the planned whole buffers, in order; every
    other one must fall in a weight stream's slot (region, start, end)."""
    def in_slot(access: tuple[int, int, int]) -> bool:
        return any(r == access[0] and start <= access[1] < end for r, start, end in slots)

    found, rest = [], list(accesses)
    for buffer in planned:
        while rest and (rest[0][:2] != buffer[:2] or rest[0][2] > buffer[2]):  # a slot may reuse the bytes
            other = rest.pop(0)
            assert in_slot(other), f"weight access {other} is neither a buffered op's nor in a stream slot"
        if rest:
            found.append(rest.pop(0))
    assert all(in_slot(other) for other in rest), "a weight access neither a buffered op's nor in a stream slot"
    return found


def _calls(compiled: Compiled, op: Op) -> int:
    """The kernels `op` runs: one, or one per stripe of its chain."""
    chain = compiled.plan.tiling.chain_of(op) if compiled.plan.tiling is not None else None
    if chain is None:
        return 1
    j = next(j for j, o in enumerate(chain.ops) if o is op)
    return sum(stripe.calls[j] is not None for stripe in chain.stripes)


def check_stream_and_plan(compiled: Compiled) -> int:
    """Each segment's weight DMAs are exactly its buffered ops', into their planned buffers,
    and its kernels read SRAM weights only there; the number of buffered ops."""
    report = compiled.report()
    pools = {b["npu_weights_of"]: b for b in report["buffers"] if "npu_weights_of" in b}
    streams = [b for b in report["buffers"] if "npu_stream_depth" in b]  # tests/test_npu_weight_stream.py
    count = 0
    for segment in segments(compiled):
        assert isinstance(segment.options, NpuSegmentOptions)
        region = {r.pool: 1 + n for n, r in enumerate(segment.options.pools)}
        dmas, reads = weight_dmas_and_reads(segment.inputs[0].data.tobytes())

        slots = [(region[b["pool"]], b["offset"], b["offset"] + b["bytes"]) for b in streams]
        # in stream order, one DMA and one kernel per buffered op, in the ops' order (an op run in
        # stripes, npu/chain_room.py: one kernel per stripe, all reading its one buffer)
        planned = [(region[pools[op.index]["pool"]], pools[op.index]["offset"], pools[op.index]["bytes"])
                   for op in segment.options.sram_weights]
        kernels = [p for op, p in zip(segment.options.sram_weights, planned, strict=True) for _ in range(_calls(compiled, op))]
        dmas, reads = buffered_accesses(dmas, planned, slots), buffered_accesses(reads, kernels, slots)
        assert [d[:2] for d in dmas] == [p[:2] for p in planned], "weight DMAs are not exactly the buffered ops'"
        assert [r[:2] for r in reads] == [p[:2] for p in kernels], "kernels read SRAM weights off their buffers"
        assert all(d[2] <= p[2] for d, p in zip(dmas, planned, strict=True)), "a DMA longer than its buffer"
        assert all(r[2] <= p[2] for r, p in zip(reads, kernels, strict=True)), "a kernel reads past its buffer"
        count += len(segment.options.sram_weights)
    return count


def check_buffers_apart(compiled: Compiled) -> None:
    """From report.json: no buffer live at a step of a weight buffer shares a byte with it, and
    a weight buffer lives from its op's step or the step before (its DMA runs beside that op)."""
    buffers = compiled.report()["buffers"]
    for weights in (b for b in buffers if "npu_weights_of" in b):
        assert weights["last"] - weights["first"] in (0, 1)
        for other in buffers:
            if other is weights or other["pool"] != weights["pool"] or not other["bytes"]:
                continue
            in_time = other["first"] <= weights["last"] and weights["first"] <= other["last"]
            in_space = (other["offset"] < weights["offset"] + weights["bytes"]
                        and weights["offset"] < other["offset"] + other["bytes"])
            assert not (in_time and in_space), f"{other['name']} overlaps {weights['name']}"


def assert_exact(outputs: list[list[np.ndarray]], expected: list[list[np.ndarray]], what: str) -> None:
    for k, (actual, wanted) in enumerate(zip(outputs, expected, strict=True)):
        for o, (got, want) in enumerate(zip(actual, wanted, strict=True)):
            differ = int(np.sum(got.reshape(want.shape) != want))
            assert differ == 0, f"{what} case{k} output{o}: {differ} of {want.size} elements differ"


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> ObjectCache:
    return ObjectCache(tmp_path_factory.mktemp("npu-weights-objects"))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", PUBLIC)
def test_public_model_with_sram_weights_is_bit_exact_with_tflm(name: str, size: str) -> None:
    path = public_model(name)
    compiled = compiled_public(name, size, "sram")
    assert check_stream_and_plan(compiled) > 0
    check_buffers_apart(compiled)
    cases = [np.load(path.with_name(f"{name}.case{k}.npz")) for k in range(3)]
    program = build_program(path.read_bytes(), options(size, "sram"), path.name, sanitize=True)
    outputs = run_program(program, [[case["input0"]] for case in cases])
    assert_exact(outputs, [[case["tflm_output0"]] for case in cases], f"{name} {size} sram")


@pytest.mark.parametrize("name", ("kws_dscnn", "ic_resnet8", "vww_mobilenet_v1_025"))
def test_public_model_with_auto_weights_unstriped_is_bit_exact_with_tflm(name: str) -> None:
    """Unstriped (--no-tiling), auto buffers some ops of these models."""
    path = public_model(name)
    compiled = compiled_public(name, "u55-128", "auto", tiling=False)
    assert check_stream_and_plan(compiled) > 0
    check_buffers_apart(compiled)
    cases = [np.load(path.with_name(f"{name}.case{k}.npz")) for k in range(3)]
    program = build_program(path.read_bytes(), options("u55-128", "auto", tiling=False), path.name, sanitize=True)
    outputs = run_program(program, [[case["input0"]] for case in cases])
    assert_exact(outputs, [[case["tflm_output0"]] for case in cases], f"{name} auto")


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_with_sram_weights_is_bit_exact_with_tflm(name: str, objects: ObjectCache, tmp_path: Path) -> None:
    entry = json.loads((FIXTURES / "manifest.json").read_text())[name]
    with np.load(FIXTURES / f"{name}.npz") as data:
        cases = [[data[f"input{i}_{k}"] for i in range(len(entry["inputs"]))] for k in range(entry["cases"])]
        expected = [[data[f"tflm_output{o}_{k}"] for o in range(len(entry["outputs"]))] for k in range(entry["cases"])]
    for size in SIZES:
        compiled = compile_model((FIXTURES / f"{name}.tflite").read_bytes(), options(size, "sram"), f"{name}.tflite")
        assert check_stream_and_plan(compiled) > 0
        check_buffers_apart(compiled)
        build = tmp_path / size
        build.mkdir()
        outputs = run_program(objects.program(compiled, f"{name}.tflite", build), cases)
        assert_exact(outputs, expected, f"{name} {size}")


WEIGHTED_IDS = ("conv", "dw", "fc", "int16-conv", "int16-dw", "int16-fc")  # single-op model ids by op


@pytest.mark.parametrize("model", [m for m in models() if m.id.startswith(WEIGHTED_IDS) and m.id not in REFUSED],
                         ids=lambda m: m.id)
def test_single_op_with_sram_weights_is_bit_exact_with_tflm(model: Any, objects: ObjectCache, tmp_path: Path) -> None:
    data = model.build()
    inputs = model.inputs()
    expected = run_tflm(data, inputs)
    for size in SIZES:
        compiled = compile_model(data, options(size, "sram"), model.id)
        assert [op.kind for op in compiled.order] == [OpKind.ETHOS_U]
        assert check_stream_and_plan(compiled) == 1
        build = tmp_path / size
        build.mkdir()
        (outputs,) = run_program(objects.program(compiled, "model.tflite", build), [inputs])
        assert_exact([outputs], [expected], f"{model.id} {size}")


def test_flash_keeps_every_weight_in_region_0() -> None:
    compiled = compiled_public("kws_dscnn", "u55-128", "flash")
    for segment in segments(compiled):
        dmas, reads = weight_dmas_and_reads(segment.inputs[0].data.tobytes())
        assert (dmas, reads) == ([], [])
    assert compiled.report()["npu"]["weight_buffer_bytes"] == 0


@pytest.mark.parametrize("tiling", (True, False))
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", PUBLIC)
def test_auto_never_grows_the_arena_over_flash(name: str, size: str, tiling: bool) -> None:
    flash = compiled_public(name, size, "flash", tiling)
    auto = compiled_public(name, size, "auto", tiling)
    assert auto.plan.arena_size <= flash.plan.arena_size
    npu = auto.report()["npu"]
    buffers = [b for b in auto.report()["buffers"] if "npu_weights_of" in b]
    assert npu["weight_buffer_bytes"] == sum(b["bytes"] for b in buffers)
    assert npu["weight_buffer_ops"] + npu["weight_stream_ops"] == len({b["npu_weights_of"] for b in buffers})
    assert npu["weight_buffer_ops"] == check_stream_and_plan(auto)


def _cycles(name: str, weights: str, out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["build", str(public_model(name)), "--npu", "u55-128", "--no-tiling",
                                       "--npu-weights", weights, "-o", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text())["npu"]


@pytest.mark.parametrize("name", ("kws_dscnn", "ic_resnet8"))
def test_sram_weights_take_fewer_device_cycles_than_flash(name: str, tmp_path: Path) -> None:
    """The 1x1 and 3x3 convolutions refetch their weights per block: from SRAM that is cheaper,
    and each DMA runs beside the previous kernel (the simulated device's PMU counts)."""
    flash, sram = _cycles(name, "flash", tmp_path / "flash"), _cycles(name, "sram", tmp_path / "sram")
    assert sram["weight_buffer_ops"] > 0 and flash["weight_buffer_ops"] == 0
    assert 0 < sram["cycles"] < flash["cycles"]
    assert sram["sram_bytes"] > flash["sram_bytes"]


def test_npu_weights_without_npu_is_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", str(public_model("kws_dscnn")), "--npu-weights", "sram",
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "--npu-weights sram needs --npu" in result.output and len(result.output.strip().splitlines()) == 1


def test_sram_weights_with_npu_async_is_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", str(public_model("kws_dscnn")), "--npu", "u55-128", "--npu-async",
                                       "--npu-weights", "sram", "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "--npu-async" in result.output and len(result.output.strip().splitlines()) == 1
