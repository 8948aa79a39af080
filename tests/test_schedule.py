"""The scheduler: least-peak topological orders, checked against brute force and TFLite."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelbuilder import ModelBuilder
from oracles import assert_exact, run_oracle

from mcugen.driver import BuildOptions, compile_model, load_graph
from mcugen.errors import ModelError
from mcugen.ir import (
    Activation,
    ArithmeticOptions,
    DType,
    Graph,
    NoOptions,
    Op,
    OpKind,
    Quant,
    Tensor,
)
from mcugen.quantization import Rounding
from mcugen.schedule import order_peak, schedule, verify_order
from mcugen.toolchain.host import run_tflite_bytes


def random_dag(sizes: list[int], seed: int) -> Graph:
    """Op i reads one or two earlier tensors and writes tensor i + 1; unread tensors are outputs."""
    rng = np.random.default_rng(seed)
    quant = Quant((0.1,), (0,))
    tensors = [Tensor(i, f"t{i}", (size,), DType.INT8, quant) for i, size in enumerate(sizes)]
    ops = []
    for i in range(1, len(tensors)):
        count = 1 if i == 1 or rng.random() < 0.4 else 2
        reads = sorted({int(rng.integers(0, i)) for _ in range(count)})
        kind = OpKind.ADD if len(reads) == 2 else OpKind.RELU
        options = ArithmeticOptions(Activation.NONE) if kind is OpKind.ADD else NoOptions()
        ops.append(Op(kind, [tensors[r] for r in reads], [tensors[i]], options, i - 1))
    graph = Graph("dag", tensors, ops, [tensors[0]], [])
    graph.link()
    graph.outputs = [t for t in tensors[1:] if not t.consumers]
    return graph


def topological_orders(graph: Graph) -> list[list[Op]]:
    orders = []
    for permutation in itertools.permutations(graph.ops):
        try:
            verify_order(graph, list(permutation))
        except ModelError:
            continue
        orders.append(list(permutation))
    return orders


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.sampled_from([16, 48, 100, 256, 700, 1500]), min_size=3, max_size=7),
       seed=st.integers(0, 2**32 - 1))
def test_exact_search_equals_brute_force(sizes: list[int], seed: int) -> None:
    graph = random_dag(sizes, seed)
    chosen = schedule(graph)
    best = min(order_peak(graph, order) for order in topological_orders(graph))
    assert chosen.exact
    assert chosen.peak == best == order_peak(graph, chosen.order)
    assert chosen.peak <= chosen.file_peak == order_peak(graph, graph.ops)


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 4000), min_size=3, max_size=40), seed=st.integers(0, 2**32 - 1),
       width=st.sampled_from([1, 2, 8]))
def test_beam_search_gives_a_valid_order_never_worse_than_the_file(sizes: list[int], seed: int, width: int) -> None:
    graph = random_dag(sizes, seed)
    chosen = schedule(graph, beam_width=width)
    verify_order(graph, chosen.order)
    assert chosen.peak == order_peak(graph, chosen.order) <= order_peak(graph, graph.ops)


def test_verify_order_rejects_missing_repeated_and_early_ops() -> None:
    graph = random_dag([10, 20, 30, 40], seed=3)
    ops = graph.ops
    with pytest.raises(ModelError, match="not a permutation"):
        verify_order(graph, ops[:-1])
    with pytest.raises(ModelError, match="not a permutation"):
        verify_order(graph, [ops[0], ops[0], *ops[2:]])
    with pytest.raises(ModelError, match="runs before its input"):
        verify_order(graph, list(reversed(ops)))


def test_scratch_counts_in_the_peak() -> None:
    graph = random_dag([100, 100, 100], seed=0)
    assert order_peak(graph, graph.ops, lambda op: 1000) == order_peak(graph, graph.ops) + 1000


def two_heads_model() -> bytes:
    """Two 1x1-conv heads on one input, each pooled to a small output; in the file both big
    convolution outputs are computed before either is pooled, so they are live together."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8, 8, 4], "int8", scale=0.05, zero_point=-3)
    outputs, pooled = [], []
    for head in range(2):
        w = b.add_tensor(f"w{head}", [32, 1, 1, 4], "int8", scale=[0.02] * 32,
                         data=rng.integers(-127, 128, size=(32, 1, 1, 4)))
        bias = b.add_tensor(f"b{head}", [32], "int32", scale=[0.001] * 32, data=rng.integers(-500, 500, size=32))
        y = b.add_tensor(f"y{head}", [1, 8, 8, 32], "int8", scale=0.04, zero_point=2)
        outputs.append((x, w, bias, y))
        pooled.append(b.add_tensor(f"p{head}", [1, 4, 4, 32], "int8", scale=0.04, zero_point=2))
    for x_, w, bias, y in outputs:
        b.add_op("CONV_2D", [x_, w, bias], [y])
    for (_, _, _, y), p in zip(outputs, pooled):
        b.add_op("AVERAGE_POOL_2D", [y], [p], {"filter_width": 2, "filter_height": 2, "stride_w": 2, "stride_h": 2})
    b.set_io([x], pooled)
    return b.build()


@pytest.mark.parametrize("rounding", [Rounding.LITERT], ids=lambda r: r.value)
def test_reordered_two_head_model_is_bit_exact_and_smaller(rounding: Rounding) -> None:
    model = two_heads_model()
    graph = load_graph(model)
    chosen = schedule(graph)
    assert chosen.peak < chosen.file_peak  # the order changed, and it paid
    compiled = compile_model(model, BuildOptions(rounding=rounding))
    assert [op.index for op in compiled.order] != sorted(op.index for op in compiled.order)
    assert compiled.plan.arena_size < compiled.plan.file_lower_bound
    x = np.random.default_rng(1).integers(-128, 128, size=(1, 8, 8, 4), dtype=np.int8)
    expected = run_oracle(model, [x], rounding)
    got = run_tflite_bytes(model, [x], rounding, sanitize=True)
    assert len(got) == len(expected) == 2
    for actual, want in zip(got, expected):
        assert len(np.unique(want)) > 6
        assert_exact(actual.reshape(want.shape), want)
