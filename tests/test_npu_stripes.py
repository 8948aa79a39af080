"""Striping on the NPU (mcugen/npu/stripes.py): a tiled chain of NPU ops, each op one NPU
operation per stripe, against TFLM and against the same model unstriped.

- single-chain models (CONV_2D, DEPTHWISE_CONV_2D, both pools; strides 1-2, dilation 2, SAME and
  VALID, an average pool whose SAME window is cut by the stripes; int8 and int16x8) with the
  chain forced into a few stripes and into one stripe per output row: the generated C under
  ASan/UBSan equals TFLM bit for bit, the stream holds one operation per call of every stripe,
  and the chain's intermediates are no buffers of the plan (only its stripe slots hold them);
- the public models with --npu on u55-128: the planner stripes NPU chains on its own, the arena
  is at or below Vela 5.2's Size-mode SRAM (measured with `vela --optimise Size`), outputs
  equal TFLM (tests/test_npu_build.py runs all four sizes, striping on by default).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from conftest import public_model
from oracles import assert_exact, run_tflm
from test_tiling import _Chain

from mcugen import driver
from mcugen.driver import BuildOptions, Compiled, compile_model
from mcugen.ir import Graph, Op, OpKind
from mcugen.memory.plan import plan_memory
from mcugen.memory.tiling import Chain, Tiling, make_chain
from mcugen.memory.tiling_search import chain_runs
from mcugen.npu import stripes as npu_stripes
from mcugen.npu.config import npu_config
from mcugen.npu.registers import CMD1_FLAG, Cmd0
from mcugen.ops.npu.payload import read_payload
from mcugen.targets import HOST
from mcugen.toolchain.host import build_program, run_program

KERNEL_OPERATIONS = {int(Cmd0.OP_CONV), int(Cmd0.OP_DEPTHWISE), int(Cmd0.OP_POOL)}
# Vela 5.2's Total SRAM used with --optimise Size on u55-128, bytes (the same on every size).
VELA_SIZE_SRAM = {"ad_autoencoder": 768, "kws_dscnn": 16000, "ic_resnet8": 35840, "vww_mobilenet_v1_025": 49152}


def _options(tiling: bool = True, prefix: str | None = None) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config("u55-128")), tiling=tiling, prefix=prefix)


def _forced(count: int) -> Any:
    """A plan_model that tiles the graph's one chain in `count` stripes, halos recomputed."""

    def plan(graph: Graph, order: list[Op], scratch_bytes: Any, pools: Any, guard: int, tiling: bool,
             steps: Any = None, **_optimize: Any) -> Any:
        (first, last), = chain_runs(graph, order)
        chain = make_chain(order[first:last + 1], first, count, rolling=False)
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


def _check(model: bytes, inputs: list[np.ndarray], count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = run_tflm(model, inputs)[0]
    whole = compile_model(model, _options(tiling=False))
    with monkeypatch.context() as patch:
        patch.setattr(driver, "plan_model", _forced(count))
        patch.setattr(npu_stripes, "fewer_stripes", lambda graph, order, plan, *rest: plan)  # keep `count`
        options = _options(prefix=f"npu_striped{count}")  # keeps each forced build apart in the cache
        striped = compile_model(model, options)
        program = build_program(model, options, "chain.tflite", sanitize=True)
    assert striped.plan.tiling is not None
    (chain,) = striped.plan.tiling.chains
    assert {op.backend for op in chain.ops} == {"npu"} and not chain.rolling
    assert len(chain.stripes) == min(count, chain.output.shape[1])
    assert [op.kind for op in striped.order] == [OpKind.ETHOS_U]
    assert _kernel_operations(striped) == _calls(chain) > _kernel_operations(whole) == len(chain.ops)
    planned = {id(t) for buffer in striped.plan.buffers for t in buffer.tensors}
    assert not any(id(t) in planned for t in chain.intermediates)  # only stripe slots hold them
    (actual,) = run_program(program, [inputs])[0]
    assert_exact(actual.reshape(expected.shape), expected)


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


@pytest.mark.parametrize("name", ("ic_resnet8", "vww_mobilenet_v1_025"))
def test_public_models_stripe_npu_chains_below_vela_size_mode(name: str) -> None:
    path = public_model(name)
    striped = compile_model(path.read_bytes(), _options(), path.name)
    whole = compile_model(path.read_bytes(), _options(tiling=False), path.name)
    assert striped.plan.tiling is not None
    assert any({op.backend for op in chain.ops} == {"npu"} for chain in striped.plan.tiling.chains)
    arena = striped.plan.pools[0].size
    assert arena <= VELA_SIZE_SRAM[name] < whole.plan.pools[0].size
    cases = [np.load(path.with_name(f"{name}.case{k}.npz")) for k in range(3)]
    program = build_program(path.read_bytes(), _options(), path.name, sanitize=True)
    outputs = run_program(program, [[case["input0"]] for case in cases])
    for case, (actual,) in zip(cases, outputs, strict=True):
        assert_exact(actual.reshape(case["tflm_output0"].shape), case["tflm_output0"])


def test_npu_chains_keep_the_fewest_stripes_that_keep_the_arena() -> None:
    """fewer_stripes: every fewer count it may try for an NPU chain of ic_resnet8 makes the
    placed plan larger (else the build would have kept it)."""
    from mcugen.npu.stripes import FEWER_COUNTS
    from mcugen.ops.registry import scratch_bytes

    options = _options()
    path = public_model("ic_resnet8")
    graph = driver.load_graph(path.read_bytes(), path.name, options.rounding, options.target,
                              driver.Limits(options.max_tensor_bytes))
    order, plan = driver.schedule_and_plan(graph, options, path.name)
    assert plan.tiling is not None
    chains = plan.tiling.chains
    tried_any = False
    for n, chain in enumerate(chains):
        for count in (c for c in FEWER_COUNTS if c < len(chain.stripes) and chain.ops[0].backend == "npu"):
            fewer = make_chain(chain.ops, chain.first_step, count, rolling=False)
            assert fewer is not None
            tried = Tiling([*chains[:n], fewer, *chains[n + 1:]])
            larger = plan_memory(graph, order, scratch_bytes(options.target), tiling=tried)
            assert larger.arena_size > plan.arena_size, count
            tried_any = True
    assert tried_any
