"""Striping on the NPU (mcugen/npu/stripes.py): a tiled chain of NPU ops, each op one NPU
operation per stripe, against TFLM and against the same model unstriped.

- single-chain models (CONV_2D, DEPTHWISE_CONV_2D, both pools; strides 1-2, dilation 2, SAME and
  VALID, an average pool whose SAME window is cut by the stripes; int8 and int16x8) with the
  chain forced into a few stripes and into one stripe per output row, halo rows recomputed or
  kept (rolling: each slot a ring whose calls wrap past its end into tile 2), on u55-128 and
  u55-32: the generated C under ASan/UBSan equals TFLM bit for bit, the stream holds one
  operation per call of every stripe, and the chain's intermediates are no buffers of the plan
  (only its stripe slots hold them);
- residual blocks whose chain ends in the ADD or MUL (its skip the chain's input, either operand
  first, int8 and int16), forced and random, in pulled, one-row rolling and recomputed cuts: the
  output over the skip, no write to a byte still to be read on the plan's offsets, equal to TFLM
  under ASan/UBSan; the CPU's output-over-input lag shown unsafe on the NPU;
- the public models with --npu on u55-128: the build stripes NPU chains on its own
  (stripes.choose_stripes): its estimated NPU cycles stay within the balanced slack of the
  unstriped build's, no stripe option within it places a smaller arena, and the "ram" choice is
  at or below Vela 5.2's Size-mode SRAM (measured with `vela --optimise Size`); outputs equal
  TFLM (tests/test_npu_build.py runs all four sizes, striping on by default).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from conftest import public_model
from oracles import assert_exact, run_tflm
from test_tiling import _Chain
from test_tiling_share import overlapping_writes, writes_before_last_reads

from mcugen import driver
from mcugen.driver import BuildOptions, Compiled, compile_model
from mcugen.ir import Graph, Op, OpKind
from mcugen.memory.plan import Plan, plan_memory, plan_model
from mcugen.memory.tiling import Chain, Tiling, make_chain, pulled_stripes
from mcugen.memory.tiling_search import chain_runs
from mcugen.npu import stripes as npu_stripes
from mcugen.npu.config import NpuConfig, npu_config
from mcugen.npu.estimate import segment_cycles
from mcugen.npu.registers import CMD1_FLAG, Cmd0
from mcugen.npu.segments import mark_npu_ops
from mcugen.npu.stripes import BALANCED_SLACK, choose_stripes, ring_rows, stripe_options
from mcugen.ops.npu.payload import read_payload
from mcugen.ops.registry import scratch_bytes
from mcugen.schedule import schedule
from mcugen.targets import HOST
from mcugen.toolchain.host import build_program, run_program

KERNEL_OPERATIONS = {int(Cmd0.OP_CONV), int(Cmd0.OP_DEPTHWISE), int(Cmd0.OP_POOL), int(Cmd0.OP_ELEMENTWISE)}
# Vela 5.2's Total SRAM used with --optimise Size on u55-128, bytes (the same on every size).
VELA_SIZE_SRAM = {"ad_autoencoder": 768, "kws_dscnn": 16000, "ic_resnet8": 35840, "vww_mobilenet_v1_025": 49152}


def _options(tiling: bool = True, prefix: str | None = None, size: str = "u55-128") -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)), tiling=tiling, prefix=prefix)


def _forced(count: int, rolling: bool = False, pulled: bool = False) -> Any:
    """A plan_model that tiles the graph's one chain in `count` stripes, halos recomputed or kept
    (`pulled`: in tiling.pulled_stripes' cut, else in tiling._walk's)."""

    def plan(graph: Graph, order: list[Op], scratch_bytes: Any, pools: Any, guard: int, tiling: bool,
             steps: Any = None, **_optimize: Any) -> Any:
        (first, last), = chain_runs(graph, order)
        ops = order[first:last + 1]
        chain = make_chain(ops, first, count, rolling, pulled_stripes(ops, count) if pulled else None)
        assert chain is not None
        return plan_memory(graph, order, scratch_bytes, guard=guard, tiling=Tiling([chain]))

    return plan


def _kernel_operations(compiled: Compiled) -> int:
    """NPU kernel operations in the build's one segment's command stream."""
    (segment,) = [op for op in compiled.order if op.kind is OpKind.ETHOS_U]
    payload_tensor = segment.inputs[0]
    assert payload_tensor is not None and payload_tensor.data is not None
    data = payload_tensor.data.tobytes()
    payload = read_payload(data)
    words = np.frombuffer(data[payload.stream_offset:payload.stream_offset + payload.stream_bytes], "<u4")
    count, i = 0, 0
    while i < len(words):
        word = int(words[i])
        count += not word & CMD1_FLAG and word & 0x3FF in KERNEL_OPERATIONS
        i += 2 if word & CMD1_FLAG else 1
    return count


def _calls(chain: Chain) -> int:
    return sum(rows is not None for stripe in chain.stripes for rows in stripe.calls)


def _wraps(chain: Chain) -> int:
    """Calls of a rolling chain whose rows run past the end of a ring slot (tile 2 used)."""
    found = 0
    for stripe in chain.stripes:
        for j, rows in enumerate(stripe.calls):
            if rows is None:
                continue
            if j > 0 and rows.in_start % ring_rows(chain, j - 1) + rows.in_rows > ring_rows(chain, j - 1):
                found += 1
            if j < len(chain.ops) - 1 and rows.out_start % ring_rows(chain, j) + rows.out_rows > ring_rows(chain, j):
                found += 1
    return found


def _check(model: bytes, inputs: list[np.ndarray], count: int, monkeypatch: pytest.MonkeyPatch,
           rolling: bool = False, size: str = "u55-128", pulled: bool = False, form: str = "") -> Compiled:
    expected = run_tflm(model, inputs)[0]
    whole = compile_model(model, _options(tiling=False, size=size))
    with monkeypatch.context() as patch:
        patch.setattr(driver, "plan_model", _forced(count, rolling, pulled))
        patch.setattr(npu_stripes, "choose_stripes", lambda graph, order, plan, *rest: plan)  # keep `count`
        # the prefix keeps each forced build apart in the cache
        form += "pulled" if pulled else "rolling" if rolling else "striped"
        options = _options(prefix=f"npu_{form}{count}", size=size)
        striped = compile_model(model, options)
        program = build_program(model, options, "chain.tflite", sanitize=True)
    assert striped.plan.tiling is not None
    (chain,) = striped.plan.tiling.chains
    assert {op.backend for op in chain.ops} == {"npu"} and chain.rolling == rolling
    if not rolling:
        assert len(chain.stripes) == min(count, chain.output.shape[1])
    assert [op.kind for op in striped.order] == [OpKind.ETHOS_U]
    # one operation per call of every stripe; the ops outside the chain as in the whole build
    assert _kernel_operations(striped) - _calls(chain) == _kernel_operations(whole) - len(chain.ops)
    assert _calls(chain) > len(chain.ops)
    planned = {id(t) for buffer in striped.plan.buffers for t in buffer.tensors}
    assert not any(id(t) in planned for t in chain.intermediates)  # only stripe slots hold them
    (actual,) = run_program(program, [inputs])[0]
    assert_exact(actual.reshape(expected.shape), expected)
    return striped


def _chain(compiled: Compiled) -> Chain:
    assert compiled.plan.tiling is not None
    (chain,) = compiled.plan.tiling.chains
    return chain


def _model_a(rng: np.random.Generator) -> tuple[bytes, list[np.ndarray]]:
    """conv 3x3 SAME -> depthwise 3x3 stride 2 SAME -> max pool 3x3 SAME -> conv 3x3 dilation 2
    VALID -> average pool 2x2 VALID, int8."""
    shape = [1, 20, 12, 3]
    chain = _Chain(rng, shape)
    chain.window("CONV_2D", 3, channels=8)
    chain.window("DEPTHWISE_CONV_2D", 3, stride=2)
    chain.window("MAX_POOL_2D", 3)
    chain.window("CONV_2D", 3, dilation=2, padding="VALID", channels=6)
    chain.window("AVERAGE_POOL_2D", 2, padding="VALID")
    return chain.model(), chain.inputs(shape)


def _model_b(rng: np.random.Generator) -> tuple[bytes, list[np.ndarray]]:
    """conv 1x1 -> average pool 3x3 SAME (the stripes cut its padded windows) -> depthwise 5x5
    stride 2 SAME -> max pool 2x2 stride 2 VALID, int8."""
    shape = [1, 17, 9, 4]
    chain = _Chain(rng, shape)
    chain.window("CONV_2D", 1, channels=6)
    chain.window("AVERAGE_POOL_2D", 3)
    chain.window("DEPTHWISE_CONV_2D", 5, stride=2)
    chain.window("MAX_POOL_2D", 2, stride=2, padding="VALID")
    return chain.model(), chain.inputs(shape)


def _model_c(rng: np.random.Generator) -> tuple[bytes, list[np.ndarray]]:
    """int16x8: conv 3x3 stride 2 VALID -> depthwise 3x3 SAME -> conv 1x1 -> max pool 2x2 SAME."""
    shape = [1, 19, 7, 2]
    chain = _Chain(rng, shape, "int16")
    chain.window("CONV_2D", 3, stride=2, padding="VALID", channels=4)
    chain.window("DEPTHWISE_CONV_2D", 3)
    chain.window("CONV_2D", 1, channels=5)
    chain.window("MAX_POOL_2D", 2)
    return chain.model(), chain.inputs(shape)


MODELS = {"a": (_model_a, 1), "b": (_model_b, 2), "c": (_model_c, 3)}


@pytest.mark.parametrize("count", (3, 64))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_striped_chain_is_bit_exact_with_tflm(name: str, count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each model in `count` stripes (64: as many as the last op has rows)."""
    make, seed = MODELS[name]
    model, inputs = make(np.random.default_rng(seed))
    _check(model, inputs, count, monkeypatch)


@pytest.mark.parametrize("size", ("u55-32", "u55-128"))
@pytest.mark.parametrize("count", (3, 64))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_rolling_chain_is_bit_exact_with_tflm(name: str, count: int, size: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Each model rolling (halo rows kept in ring slots), each op making at most 1/count of its
    rows per stripe (64: one row), on two NPU sizes (different blocks cut the calls)."""
    make, seed = MODELS[name]
    model, inputs = make(np.random.default_rng(seed))
    chain = _chain(_check(model, inputs, count, monkeypatch, rolling=True, size=size))
    assert any(kept is not None for stripe in chain.stripes for kept in stripe.kept)  # rows are kept
    assert _wraps(chain) > 0  # and some calls wrap around a ring


@pytest.mark.parametrize("size", ("u55-32", "u55-128"))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_pulled_rolling_chain_is_bit_exact_with_tflm(name: str, size: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each model rolling in the last op's 4 equal cuts (tiling.pulled_stripes, the cut
    choose_stripes offers), on two NPU sizes."""
    make, seed = MODELS[name]
    model, inputs = make(np.random.default_rng(seed))
    chain = _chain(_check(model, inputs, 4, monkeypatch, rolling=True, size=size, pulled=True))
    assert len(chain.stripes) == 4 and any(kept is not None for stripe in chain.stripes for kept in stripe.kept)
    assert _wraps(chain) > 0
    for j in range(len(chain.ops)):  # rows made once each, in order (none the next op does not read)
        made = [(rows.out_start, rows.out_stop) for stripe in chain.stripes if (rows := stripe.calls[j]) is not None]
        assert [a for a, _ in made] == [0, *[b for _, b in made[:-1]]]
    assert made[-1][1] == chain.output.shape[1]


def _residual(rng: np.random.Generator, dtype: str = "int8", kind: str = "ADD",
              other_first: bool = False) -> tuple[bytes, list[np.ndarray]]:
    """conv 1x1 -> [conv 3x3 -> depthwise 3x3 -> ADD (or MUL) with the 1x1's output]: a residual
    block whose NPU chain ends in the element-wise op, its other operand the chain's input
    (ResNet's skip), which dies there, so the output may go over it."""
    shape = [1, 18, 10, 4]
    chain = _Chain(rng, shape, dtype)
    skip = chain.window("CONV_2D", 1, channels=8)
    skip_scale, skip_zero = chain.scale, chain.zero_point
    chain.window("CONV_2D", 3, channels=8)
    chain.window("DEPTHWISE_CONV_2D", 3)
    chain.add(skip, skip_scale, skip_zero, kind, other_first)
    return chain.model(), chain.inputs(shape)


RESIDUALS = {"add": {}, "add_skip_first": {"other_first": True}, "add_int16": {"dtype": "int16"},
             "mul": {"kind": "MUL"}}
CUTS = {"pulled4": dict(count=4, rolling=True, pulled=True), "rolling_rows": dict(count=64, rolling=True),
        "recomputed3": dict(count=3)}


@pytest.mark.parametrize(("cut", "size"), [("pulled4", "u55-128"), ("rolling_rows", "u55-32"),
                                           ("recomputed3", "u55-128")])
@pytest.mark.parametrize("name", sorted(RESIDUALS))
def test_residual_chain_writes_over_its_skip_and_equals_tflm(name: str, cut: str, size: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain ends in the residual ADD/MUL (both operands cut to each call's rows; the skip
    first in TFLite's order makes the ring slot the IFM2, which wraps in the rolling cuts): its
    output shares the skip's bytes, no write lands on a byte still to be read (on the NPU an
    element-wise op over its own input only at the input's own addresses), and the C equals TFLM
    under ASan/UBSan."""
    model, inputs = _residual(np.random.default_rng(7), **RESIDUALS[name])
    compiled = _check(model, inputs, size=size, monkeypatch=monkeypatch, form=name, **CUTS[cut])
    chain, plan = _chain(compiled), compiled.plan
    assert [op.kind.name for op in chain.ops][-1] in ("ADD", "MUL")
    assert plan.buffer_of(chain.input) is plan.buffer_of(chain.output)
    assert writes_before_last_reads(chain, plan) == []
    if chain.rolling:  # no later stripe reads below its rows: the output lies exactly over the skip
        assert chain.lag == 0 and plan.offset_of(chain.output) == plan.offset_of(chain.input)


def _random_residual(rng: np.random.Generator) -> tuple[bytes, list[np.ndarray]]:
    """conv 1x1 -> [1-3 stride-1 SAME window ops of random kinds, kernels and dilations -> ADD or
    MUL with the 1x1's output, either operand first], int8 or int16, random small shapes."""
    dtype = "int16" if rng.random() < 0.3 else "int8"
    shape = [1, int(rng.integers(4, 22)), int(rng.integers(1, 9)), int(rng.integers(1, 9))]
    chain = _Chain(rng, shape, dtype)
    channels = int(rng.integers(1, 12))
    skip = chain.window("CONV_2D", 1, channels=channels)
    skip_scale, skip_zero = chain.scale, chain.zero_point
    for _ in range(int(rng.integers(1, 4))):
        kind = str(rng.choice(["CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D"]))
        kernel = int(rng.choice([1, 2, 3, 5]))
        dilation = int(rng.choice([1, 2])) if kind.endswith("CONV_2D") and kernel == 3 else 1
        chain.window(kind, kernel, dilation=dilation, channels=channels)
    chain.add(skip, skip_scale, skip_zero, "MUL" if rng.random() < 0.3 else "ADD", bool(rng.random() < 0.5))
    return chain.model(), chain.inputs(shape)


@pytest.mark.parametrize("seed", range(12))
def test_random_residual_chains_equal_tflm(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random residual blocks in random cuts (pulled, rolling, recomputed) on random NPU sizes:
    the C equals TFLM under ASan/UBSan and the plan's byte timeline is clean."""
    rng = np.random.default_rng(1000 + seed)
    model, inputs = _random_residual(rng)
    size = str(rng.choice(["u55-32", "u55-64", "u55-128", "u55-256"]))
    cut = str(rng.choice(sorted(CUTS)))
    compiled = _check(model, inputs, size=size, monkeypatch=monkeypatch, form=f"random{seed}", **CUTS[cut])
    assert writes_before_last_reads(_chain(compiled), compiled.plan) == []


def test_npu_residual_chain_counts_its_own_reads_below_the_skip() -> None:
    """Recomputed stripes read halo rows above their own, so the output must start below the
    skip. The CPU's ADD may then overwrite skip bytes its own call reads later (it reads in
    address order); the NPU's blocks need not, so the NPU chain's lag counts its own reads, and
    the CPU's lag placed on the NPU chain overwrites skip bytes at other addresses."""
    model, _ = _residual(np.random.default_rng(7))
    options = _options()
    graph = driver.load_graph(model, "residual.tflite", options.rounding, options.target,
                              driver.Limits(options.max_tensor_bytes))
    mark_npu_ops(graph, npu_config("u55-128"))
    order = schedule(graph, scratch_bytes(HOST), optimise=True).order
    (first, last), = chain_runs(graph, order)
    npu = make_chain(order[first:last + 1], first, 3, False)
    cpu = make_chain([dataclasses.replace(op, backend="cpu") for op in order[first:last + 1]], first, 3, False)
    assert npu is not None and cpu is not None and npu.lag is not None and cpu.lag is not None
    assert 0 < cpu.lag < npu.lag
    at = npu.lag  # the skip at byte `at`, the output at 0
    assert overlapping_writes(npu, at, at - npu.lag) == []
    assert overlapping_writes(npu, at, at - cpu.lag)
    assert overlapping_writes(cpu, at, at - cpu.lag) == []


@pytest.mark.parametrize("name", ("ic_resnet8", "vww_mobilenet_v1_025"))
def test_public_models_stripe_npu_chains_and_equal_tflm(name: str) -> None:
    path = public_model(name)
    striped = compile_model(path.read_bytes(), _options(), path.name)
    whole = compile_model(path.read_bytes(), _options(tiling=False), path.name)
    assert striped.plan.tiling is not None
    assert any({op.backend for op in chain.ops} == {"npu"} for chain in striped.plan.tiling.chains)
    assert striped.plan.pools[0].size < whole.plan.pools[0].size
    cases = [np.load(path.with_name(f"{name}.case{k}.npz")) for k in range(3)]
    program = build_program(path.read_bytes(), _options(), path.name, sanitize=True)
    outputs = run_program(program, [[case["input0"]] for case in cases])
    for case, (actual,) in zip(cases, outputs, strict=True):
        assert_exact(actual.reshape(case["tflm_output0"].shape), case["tflm_output0"])


def _searched(name: str, size: str) -> tuple[Graph, list[Op], Plan, NpuConfig]:
    """The public model's order and the tiling search's plan (bytes only), before choose_stripes."""
    options = _options(size=size)
    path = public_model(name)
    graph = driver.load_graph(path.read_bytes(), path.name, options.rounding, options.target,
                              driver.Limits(options.max_tensor_bytes))
    mark_npu_ops(graph, npu_config(size))
    order = schedule(graph, scratch_bytes(HOST), optimise=True).order
    return graph, order, plan_model(graph, order, scratch_bytes(HOST)), npu_config(size)


def _npu_cycles(order: list[Op], plan: Plan, config: NpuConfig) -> int:
    return segment_cycles(tuple(op for op in order if op.backend == "npu"), config, plan.tiling)


@pytest.mark.parametrize("size", ("u55-32", "u55-256"))
@pytest.mark.parametrize("name", ("ic_resnet8", "vww_mobilenet_v1_025"))
def test_npu_chains_take_the_least_sram_within_the_cycle_slack(name: str, size: str) -> None:
    """balanced: the chosen plan's estimated NPU cycles are within BALANCED_SLACK of the
    unstriped build's, and no stripe option of its last NPU chain (the others as chosen) within
    that places a smaller arena; "ram" goes at or below Vela's Size-mode SRAM, "speed" costs no
    estimated cycle."""
    graph, order, searched, config = _searched(name, size)
    whole = _npu_cycles(order, dataclasses.replace(searched, tiling=None), config)

    def choose(mode: str) -> Plan:
        return choose_stripes(graph, order, searched, scratch_bytes(HOST), [], 0, config, mode)

    balanced, ram, speed = choose("balanced"), choose("ram"), choose("speed")
    assert _npu_cycles(order, balanced, config) <= whole * (1 + BALANCED_SLACK)
    assert _npu_cycles(order, speed, config) <= whole
    assert ram.arena_size <= VELA_SIZE_SRAM[name] < whole_arena(graph, order)
    assert ram.arena_size <= balanced.arena_size <= speed.arena_size
    # the NPU chains are chosen one after the other: the last one's options, the others as chosen
    *_, chain = [c for c in (searched.tiling.chains if searched.tiling else []) if c.ops[0].backend == "npu"]
    others = [c for c in (balanced.tiling.chains if balanced.tiling else []) if c.ops[0] is not chain.ops[0]]
    for option in stripe_options(chain):
        tiling = Tiling([*others, *([option] if option is not None else [])])
        if _npu_cycles(order, dataclasses.replace(searched, tiling=tiling), config) <= whole * (1 + BALANCED_SLACK):
            assert plan_memory(graph, order, scratch_bytes(HOST), tiling=tiling).arena_size >= balanced.arena_size


def whole_arena(graph: Graph, order: list[Op]) -> int:
    return plan_memory(graph, order, scratch_bytes(HOST)).arena_size
