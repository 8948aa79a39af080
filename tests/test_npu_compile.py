"""mcugen's own Ethos-U55 command streams (mcugen/npu) against TFLM and against Vela's streams.

Each single-op model (the rows of tests/npu_engine_models.py and tests/npu_elementwise_models.py
whose ops mcugen lowers, plus a few of its own) is lowered by mcugen.npu.compile without Vela,
run through our driver, device and engine in the host harness under ASan/UBSan, and its output
must equal TFLM's on the original model bit for bit; Vela 5.2's stream for the same model runs
on the same device and must give the same output. Each row runs on u55-128, the marked ones on
u55-32, -64 and -256 too. The parts have their own oracles: the weight order against Vela's
`mlw_codec.reorder_encode`, the payload header and the SHRAM layout against Vela's.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ethosu import mlw_codec
from npu_compile import REFUSED, Model, compile_ours, models
from oracles import run_tflm
from vela_models import build_harness, compile_model, run_npu

from mcugen.npu.blocks import Kernel, OpShape, choose_block
from mcugen.npu.config import CONFIGS, Block
from mcugen.npu.featuremap import LoweringError
from mcugen.npu.stream import CommandStream, write_payload
from mcugen.npu.weights import WeightOrder, reorder
from mcugen.ops.npu.payload import read_payload

MODELS = models()


def params(refused: bool) -> list[Any]:
    chosen = [m for m in MODELS if (m.id in REFUSED) == refused]
    return [pytest.param(m, macs, id=f"{m.id}-u55-{macs}") for m in chosen for macs in m.sizes]


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_harness(tmp_path_factory.mktemp("npu-compile") / "npu_harness")


@pytest.mark.parametrize("model, macs", params(refused=False))
def test_own_stream_is_bit_exact_with_tflm_and_vela(model: Model, macs: int, harness: Path, tmp_path: Path) -> None:
    data, inputs = model.build(), model.inputs()
    ours = compile_ours(data, macs, tmp_path / "ours")
    run = run_npu(harness, ours, macs, inputs, tmp_path / "run-ours")
    assert (run.rc, run.fault) == (0, 0), run.stdout[-1500:]
    (expected,) = run_tflm(data, inputs)
    assert len(np.unique(expected)) >= min(6, expected.size), "oracle output has no spread"
    actual = run.outputs[0].reshape(expected.shape)
    assert int(np.sum(actual != expected)) == 0, "outputs differ from TFLM"
    vela = compile_model(data, macs, tmp_path / "vela")
    if vela.estimate is not None and not vela.cpu_ops:
        theirs = run_npu(harness, vela, macs, inputs, tmp_path / "run-vela")
        assert (theirs.rc, theirs.fault) == (0, 0)
        assert np.array_equal(actual, theirs.outputs[0].reshape(expected.shape)), "outputs differ from Vela's"


@pytest.mark.parametrize("model, macs", params(refused=True))
def test_what_the_npu_cannot_take_is_refused_with_the_reason(model: Model, macs: int, tmp_path: Path) -> None:
    with pytest.raises(LoweringError, match=re.escape(REFUSED[model.id])):
        compile_ours(model.build(), macs, tmp_path)


ORDERS = list(itertools.product(
    (False, True), (False, True), (8, 16), (4, 8), ((6, 3, 3, 4), (20, 1, 1, 70), (17, 10, 11, 3), (33, 2, 5, 40)),
    (8, 16, 24), ((1, 1), (2, 1), (2, 2))))


@pytest.mark.parametrize("depthwise, pkf, bits, ou, shape, block_depth, dilation",
                         [o for o in ORDERS if not (o[0] and o[1])])
def test_weight_order_is_velas(depthwise: bool, pkf: bool, bits: int, ou: int, shape: tuple[int, int, int, int],
                               block_depth: int, dilation: tuple[int, int]) -> None:
    """Our reorder equals what Vela's reorder_encode puts into the stream, weight for weight."""
    o, kh, kw, i = shape
    i = 1 if depthwise else i
    weights = np.random.default_rng(o * kh + i).integers(-255, 256, size=(o, kh, kw, i)).astype(np.int16)
    ours = reorder(weights, WeightOrder(block_depth, depthwise, pkf, bits, ou, 8, dilation))
    encoded = mlw_codec.reorder_encode(8, ou, weights, block_depth, depthwise, pkf, bits, 8 // dilation[0],
                                       8 // dilation[1])
    theirs = np.array(mlw_codec.decode(encoded[0] if isinstance(encoded, tuple) else encoded))
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("size", sorted(CONFIGS))
def test_payload_header_is_the_one_vela_writes(size: str, tmp_path: Path) -> None:
    """CONFIG word, ID word and the stream's alignment as in Vela's payload for the same NPU; the
    payload reads back with read_payload."""
    model = MODELS[0].build()
    vela = compile_model(model, CONFIGS[size].macs, tmp_path)
    theirs = vela.payload.read_bytes()
    stream = CommandStream()
    stream.stop()
    ours = write_payload(stream, CONFIGS[size])
    assert ours[:32] == theirs[:28] + ours[28:32]  # magic, CONFIG tag, CONFIG, ID, NOPs; then the length
    parsed = read_payload(ours)
    assert (parsed.config, parsed.stream_offset % 16, parsed.stream_bytes) == (CONFIGS[size].config_word, 0, 4)


@pytest.mark.parametrize("size", sorted(CONFIGS))
def test_block_and_shram_layout_match_velas_for_a_3x3_conv(size: str) -> None:
    """The 9x7x4 -> 6 3x3 part-kernel-first CONV of conv5002: Vela's block and layout per size
    (read from its register listings: OFM_BLK_*, IFM_IB_END, AB_START)."""
    expected = {"u55-32": ((7, 9, 8), 4, 12), "u55-64": ((7, 9, 8), 4, 12),
                "u55-128": ((8, 9, 8), 6, 14), "u55-256": ((8, 10, 8), 10, 30)}[size]
    op = OpShape("conv", Block(7, 9, 6), Block(7, 9, 4), Kernel(3, 3), part_kernel_first=True)
    block = choose_block(CONFIGS[size], op)
    assert ((block.ofm.width, block.ofm.height, block.ofm.depth), block.ib_end, block.ab_start) == expected


@pytest.mark.parametrize("macs", (32, 128))
def test_lut_after_an_elementwise_op_runs_in_its_output_stage(macs: int, harness: Path, tmp_path: Path) -> None:
    """ADD then LOGISTIC: one ELEMENTWISE operation with the table, no pool, TFLM's output."""
    model = next(m for m in models() if m.id == "add-then-logistic")
    data, inputs = model.build(), model.inputs()
    run = run_npu(harness, compile_ours(data, macs, tmp_path / "ours"), macs, inputs, tmp_path / "run")
    counts = {m[1]: int(m[2]) for m in re.finditer(r"^count (\w+) (\d+)$", run.stdout, re.MULTILINE)}
    assert counts.get("ELEMENTWISE") == 1 and counts.get("POOL", 0) == 0, counts
    (expected,) = run_tflm(data, inputs)
    assert np.array_equal(run.outputs[0].reshape(expected.shape), expected)


def test_stream_leaves_out_register_writes_that_change_nothing() -> None:
    """A register write repeating the value last written is dropped; operations never are."""
    from mcugen.npu.registers import Cmd0, Cmd1, cmd0_word, cmd1_words

    stream = CommandStream()
    stream.cmd0(Cmd0.IFM_PAD_TOP, 1)
    stream.cmd1(Cmd1.IFM_BASE0, 0x40)
    stream.cmd0(Cmd0.OP_CONV)
    stream.cmd0(Cmd0.IFM_PAD_TOP, 1)  # unchanged: dropped
    stream.cmd1(Cmd1.IFM_BASE0, 0x40)  # unchanged: dropped
    stream.cmd1(Cmd1.IFM_BASE0, 0x80)  # changed: kept
    stream.cmd0(Cmd0.OP_CONV)  # an operation: always kept
    assert stream.words == [cmd0_word(Cmd0.IFM_PAD_TOP, 1), *cmd1_words(Cmd1.IFM_BASE0, 0x40),
                            cmd0_word(Cmd0.OP_CONV), *cmd1_words(Cmd1.IFM_BASE0, 0x80), cmd0_word(Cmd0.OP_CONV)]
