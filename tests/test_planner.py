"""The memory planner on random DAGs and on the public models."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, public_model
from hypothesis import given, settings
from hypothesis import strategies as st

from mcugen.driver import load_graph
from mcugen.errors import PlanningError
from mcugen.ir import Activation, ArithmeticOptions, DType, Graph, NoOptions, Op, OpKind, Quant, Tensor
from mcugen.planner import ALIGNMENT, Buffer, Plan, plan_memory, verify_plan


def random_graph(sizes: list[int], edges: list[tuple[int, int]], reshape_every: int) -> Graph:
    """A chain of ADD-like ops over tensors of the given byte sizes, with extra skip inputs."""
    quant = Quant((0.1,), (0,))
    tensors = [Tensor(i, f"t{i}", (size,), DType.INT8, quant) for i, size in enumerate(sizes)]
    ops = []
    for i in range(1, len(tensors)):
        skips = [tensors[a] for a, b in edges if b == i and a < i - 1]
        kind = OpKind.RESHAPE if reshape_every and i % reshape_every == 0 else OpKind.ADD
        if kind is OpKind.RESHAPE:
            tensors[i].shape = tensors[i - 1].shape
            op = Op(kind, [tensors[i - 1]], [tensors[i]], NoOptions(), i - 1)
        else:
            op = Op(kind, [tensors[i - 1], *skips], [tensors[i]], ArithmeticOptions(Activation.NONE), i - 1)
        ops.append(op)
    graph = Graph("random", tensors, ops, [tensors[0]], [tensors[-1]])
    graph.link()
    return graph


def live_at(buffer: Buffer, step: int) -> bool:
    return buffer.first <= step <= buffer.last


@settings(max_examples=150, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 5000), min_size=2, max_size=14),
    edge_seed=st.integers(0, 2**32 - 1),
    reshape_every=st.sampled_from([0, 3, 4]),
    scratch=st.lists(st.integers(0, 700), min_size=14, max_size=14),
)
def test_random_graphs_plan_without_overlap(sizes: list[int], edge_seed: int, reshape_every: int,
                                            scratch: list[int]) -> None:
    rng = np.random.default_rng(edge_seed)
    n = len(sizes)
    edges = [(a, b) for a, b in itertools.combinations(range(n), 2) if rng.random() < 0.25]
    graph = random_graph(sizes, edges, reshape_every)
    plan = plan_memory(graph, graph.ops, lambda op: scratch[op.index % len(scratch)])
    # Independent check, not verify_plan: every byte owned by at most one live buffer per step.
    for step in range(plan.steps + 1):
        owner = np.full(plan.arena_size, -1)
        for number, buffer in enumerate(plan.buffers):
            assert buffer.offset % ALIGNMENT == 0
            assert buffer.offset + buffer.size <= plan.arena_size
            if live_at(buffer, step):
                region = owner[buffer.offset : buffer.offset + buffer.size]
                assert np.all(region == -1), f"step {step}: {buffer.name} overlaps"
                region[:] = number
    assert plan.arena_size >= plan.lower_bound
    # The lower bound is the heaviest step.
    heaviest = max(sum(b.size for b in plan.buffers if live_at(b, s)) for s in range(plan.steps + 1))
    assert plan.lower_bound == heaviest


def test_reshape_outputs_share_their_input_buffer() -> None:
    graph = random_graph([64, 64, 64, 64], [], reshape_every=2)
    plan = plan_memory(graph, graph.ops, lambda op: 0)
    assert plan.buffer_of(graph.tensors[1]) is plan.buffer_of(graph.tensors[2])


def test_verify_plan_rejects_overlap_and_misalignment() -> None:
    a = Buffer("a", 32, 0, 2, offset=0)
    b = Buffer("b", 32, 1, 3, offset=16)
    with pytest.raises(PlanningError, match="overlap while both are live"):
        verify_plan(Plan([a, b], 64, 64, 3))
    with pytest.raises(PlanningError, match="not 16-byte aligned"):
        verify_plan(Plan([Buffer("c", 8, 0, 0, offset=8)], 32, 8, 1))
    with pytest.raises(PlanningError, match="past the arena"):
        verify_plan(Plan([Buffer("d", 64, 0, 0, offset=0)], 32, 64, 1))


# Whole-tensor lower bounds of TFLite's own op order, as measured by the usual tools.
LOWER_BOUNDS = {"kws_dscnn": 16000, "ad_autoencoder": 768, "ic_resnet8": 49152,
                "vww_mobilenet_v1_025": 55296}


@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_public_model_plans(name: str) -> None:
    graph = load_graph(public_model(name))
    plan = plan_memory(graph, graph.ops, lambda op: 0)
    assert plan.lower_bound == LOWER_BOUNDS[name]
    assert plan.lower_bound <= plan.arena_size

