"""The memory planner on random DAGs and on the public models: every algorithm, the exact
solver against brute force, in-place execution, pools."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, public_model
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcugen.driver import load_graph
from mcugen.errors import PlanningError
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
from mcugen.memory.liveness import Buffer, collect_buffers, lower_bound
from mcugen.memory.placement import (
    ALIGNMENT,
    align_up,
    conflict_lists,
    place_best,
    place_exact,
    placed_height,
)
from mcugen.memory.plan import Plan, plan_memory, verify_plan
from mcugen.memory.pools import DEFAULT_POOLS, PoolPlan, PoolSpec, place_pools


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


def assert_no_overlap(plan: Plan) -> None:
    """Independent of verify_plan: every byte of a pool owned by at most one live buffer per step."""
    sizes = {p.name: p.size for p in plan.pools}
    for pool in plan.pools:
        assert pool.size % ALIGNMENT == 0
        assert pool.spec.capacity is None or pool.size <= pool.spec.capacity
    for step in range(plan.steps + 1):
        owners = {name: np.full(size, -1) for name, size in sizes.items()}
        for number, buffer in enumerate(plan.buffers):
            assert buffer.offset % ALIGNMENT == 0
            assert buffer.offset + buffer.size <= sizes[buffer.pool]
            if live_at(buffer, step):
                region = owners[buffer.pool][buffer.offset : buffer.offset + buffer.size]
                assert np.all(region == -1), f"step {step}: {buffer.name} overlaps"
                region[:] = number


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
    plan = plan_memory(graph, graph.ops, lambda op: scratch[op.index % len(scratch)], in_place=False)
    assert_no_overlap(plan)
    assert plan.arena_size >= plan.lower_bound
    # The lower bound is the heaviest step.
    heaviest = max(sum(b.size for b in plan.buffers if live_at(b, s)) for s in range(plan.steps + 1))
    assert plan.lower_bound == heaviest == plan.file_lower_bound
    # In place never costs more, and its buffers still never overlap.
    merged = plan_memory(graph, graph.ops, lambda op: scratch[op.index % len(scratch)])
    assert_no_overlap(merged)
    assert lower_bound(merged.buffers) <= plan.lower_bound == merged.lower_bound


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([16, 40, 64, 300, 1000]), min_size=2, max_size=12),
    edge_seed=st.integers(0, 2**32 - 1),
    capacities=st.lists(st.integers(0, 3000), min_size=1, max_size=3),
    speeds=st.lists(st.sampled_from(["fast", "normal", "slow"]), min_size=3, max_size=3),
    guard=st.sampled_from([0, 16]),
)
def test_random_graphs_in_pools_stay_within_capacity(sizes: list[int], edge_seed: int, capacities: list[int],
                                                      speeds: list[str], guard: int) -> None:
    rng = np.random.default_rng(edge_seed)
    edges = [(a, b) for a, b in itertools.combinations(range(len(sizes)), 2) if rng.random() < 0.3]
    graph = random_graph(sizes, edges, 0)
    pools = [PoolSpec(f"P{i}", align_up(c) + 16, speeds[i]) for i, c in enumerate(capacities)]
    pools.append(PoolSpec("BIG", 1 << 20, "slow"))
    plan = plan_memory(graph, graph.ops, lambda op: 0, pools, guard=guard)
    assert_no_overlap(plan)
    assert sorted(p.name for p in plan.pools) == sorted(p.name for p in pools)
    for buffer in plan.buffers:
        pool = plan.pool_of(buffer)
        assert buffer.offset >= guard and buffer.offset + buffer.extent <= pool.size - guard


def brute_force_height(buffers: list[Buffer]) -> int:
    """The least aligned height over every placement at multiples of 16 (tiny problems only)."""
    conflicts = conflict_lists(buffers)
    limit = sum(align_up(b.size) for b in buffers)
    best = limit
    for offsets in itertools.product(range(0, limit, ALIGNMENT), repeat=len(buffers)):
        ok = all(offsets[j] >= offsets[i] + buffers[i].size or offsets[i] >= offsets[j] + buffers[j].size
                 for i in range(len(buffers)) for j in conflicts[i] if j > i)
        if ok:
            best = min(best, placed_height(buffers, list(offsets)))
    return best


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=4))
def test_exact_solver_equals_brute_force(specs: list[tuple[int, int, int]]) -> None:
    buffers = [Buffer(f"b{i}", size, first, first + length) for i, (size, first, length) in enumerate(specs)]
    want = brute_force_height(buffers)
    offsets, finished = place_exact(buffers, conflict_lists(buffers), upper=10**9)
    assert finished and offsets is not None
    assert placed_height(buffers, offsets) == want
    best, _, optimal = place_best(buffers)
    assert optimal and placed_height(buffers, best) == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3000), st.integers(0, 12), st.integers(0, 6)), min_size=1, max_size=30))
def test_place_best_is_valid_and_no_worse_than_greedy_by_size(specs: list[tuple[int, int, int]]) -> None:
    buffers = [Buffer(f"b{i}", size, first, first + length) for i, (size, first, length) in enumerate(specs)]
    offsets, _, _ = place_best(buffers)
    for buffer, offset in zip(buffers, offsets):
        buffer.offset = offset
    height = placed_height(buffers, offsets)
    plan = Plan(buffers, height, lower_bound(buffers), 20)
    verify_plan(plan)
    assert height >= lower_bound(buffers)
    by_size = sorted(buffers, key=lambda b: (-b.size, b.first))
    placed: list[Buffer] = []
    top = 0
    for buffer in by_size:  # TFLite Micro's greedy planner, written out independently
        offset = 0
        for other in sorted((p for p in placed if p.overlaps_in_time(buffer)), key=lambda p: p.offset):
            if offset + buffer.size <= other.offset:
                break
            offset = max(offset, align_up(other.offset + other.size))
        buffer.offset = offset
        placed.append(buffer)
        top = max(top, align_up(offset + buffer.size))
    assert height <= top


def test_add_runs_in_place_over_a_dead_input_only() -> None:
    # t0 -> t1 = add(t0, t0) -> t2 = add(t1, t0)? t0 is read again, so op 0 cannot overwrite it.
    graph = random_graph([64, 64, 64, 64], [(0, 2)], 0)
    plan = plan_memory(graph, graph.ops, lambda op: 0)
    assert plan.buffer_of(graph.tensors[1]) is not plan.buffer_of(graph.tensors[0])
    assert plan.buffer_of(graph.tensors[2]) is plan.buffer_of(graph.tensors[1])  # t1 dies at op 1
    assert plan.buffer_of(graph.tensors[3]) is plan.buffer_of(graph.tensors[1])
    assert plan.arena_size == 128
    # A different size or a graph output is never overwritten.
    graph = random_graph([64, 32, 32], [], 0)
    graph.outputs = [graph.tensors[1], graph.tensors[2]]
    plan = plan_memory(graph, graph.ops, lambda op: 0)
    assert len({id(plan.buffer_of(t)) for t in graph.tensors}) == 3


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
    with pytest.raises(PlanningError, match="past the 32 bytes"):
        verify_plan(Plan([Buffer("d", 64, 0, 0, offset=0)], 32, 64, 1))
    with pytest.raises(PlanningError, match="over its capacity"):
        verify_plan(Plan([Buffer("e", 64, 0, 0, offset=0)], 64, 64, 1, [PoolPlan(PoolSpec("S", 48), 64)]))
    with pytest.raises(PlanningError, match="which the plan does not have"):
        verify_plan(Plan([Buffer("f", 16, 0, 0, offset=0, pool="X")], 16, 16, 1))


def _clash_by_bytes(buffers: list[Buffer]) -> bool:
    """The oracle: mark every (step, byte) each buffer's extent (guard bytes included) holds;
    a pair of live, non-empty buffers clashes if one cell is marked twice."""
    seen: set[tuple[int, int]] = set()
    for buffer in buffers:
        if buffer.size == 0:
            continue
        for step in range(buffer.first, buffer.last + 1):
            for byte in range(buffer.offset, buffer.offset + buffer.extent):
                if (step, byte) in seen:
                    return True
                seen.add((step, byte))
    return False


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 3), st.integers(0, 3), st.integers(0, 6),
                          st.integers(0, 2)), min_size=2, max_size=6))
def test_verify_plan_rejects_exactly_the_plans_whose_extents_clash(
        specs: list[tuple[int, int, int, int, int]]) -> None:
    """verify_plan against a byte-by-byte occupancy check, on random plans whose buffers have
    guard bytes (extent = size + pad): a buffer placed inside another's guard bytes while both
    are live is an overlap, even where the sizes alone would not overlap."""
    buffers = [Buffer(f"b{i}", 16 * size, min(a, b), max(a, b), offset=16 * slot, pad=16 * pad)
               for i, (size, a, b, slot, pad) in enumerate(specs)]
    height = max(b.offset + b.extent for b in buffers)
    plan = Plan(buffers, align_up(height), height, 4)
    if _clash_by_bytes(buffers):
        with pytest.raises(PlanningError, match="overlap while both are live"):
            verify_plan(plan)
    else:
        verify_plan(plan)


def test_verify_plan_sees_a_buffer_in_anothers_guard_bytes() -> None:
    a = Buffer("a", 16, 0, 2, offset=0, pad=16)
    b = Buffer("b", 16, 1, 3, offset=16)
    with pytest.raises(PlanningError, match="overlap while both are live"):
        verify_plan(Plan([a, b], 32, 32, 4))


def test_a_model_too_big_for_its_pools_names_the_pool_the_excess_and_the_live_tensors() -> None:
    graph = random_graph([1000, 1000, 1000], [], 0)
    with pytest.raises(PlanningError) as caught:
        plan_memory(graph, graph.ops, lambda op: 0, [PoolSpec("DTCM", 512, "fast"), PoolSpec("SRAM", 1024)],
                    in_place=False)
    message = str(caught.value)
    assert "pool SRAM" in message and "bytes over" in message and "'t1' (1000)" in message
    needed = int(message.split("it needs ")[1].split()[0])
    assert needed == 2016 and "(992 bytes over)" in message


# Whole-tensor lower bounds of TFLite's own op order, as measured by the usual tools.
LOWER_BOUNDS = {"kws_dscnn": 16000, "ad_autoencoder": 768, "ic_resnet8": 49152,
                "vww_mobilenet_v1_025": 55296}


@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_public_model_plans(name: str) -> None:
    graph = load_graph(public_model(name))
    plan = plan_memory(graph, graph.ops, lambda op: 0)
    assert plan.lower_bound == plan.file_lower_bound == LOWER_BOUNDS[name]
    # Never above the whole-tensor bound of TFLite's order (in place may go below it).
    assert plan.arena_size <= align_up(plan.file_lower_bound)



def in_place_chain_model() -> bytes:
    """x -> TANH -> MUL(a, a) -> ADD(b, per-channel constant) -> LEAKY_RELU: every op may
    overwrite its dying input, so the whole chain runs in the input's bytes."""
    from modelbuilder import ModelBuilder

    b = ModelBuilder()
    shape = [1, 6, 6, 8]
    x = b.add_tensor("x", shape, "int8", scale=0.03, zero_point=-5)
    a = b.add_tensor("a", shape, "int8", scale=1 / 128, zero_point=0)
    m = b.add_tensor("m", shape, "int8", scale=0.005, zero_point=-100)
    k = b.add_tensor("k", [8], "int8", scale=0.01, zero_point=3,
                     data=np.random.default_rng(5).integers(-128, 128, size=8))
    s = b.add_tensor("s", shape, "int8", scale=0.012, zero_point=-10)
    y = b.add_tensor("y", shape, "int8", scale=0.01, zero_point=-20)
    b.add_op("TANH", [x], [a])
    b.add_op("MUL", [a, a], [m])
    b.add_op("ADD", [m, k], [s])
    b.add_op("LEAKY_RELU", [s], [y], {"alpha": 0.25})
    b.set_io([x], [y])
    return b.build()


def test_in_place_chain_is_bit_exact_in_one_buffer() -> None:
    from oracles import assert_exact, oracle_output

    from mcugen.driver import BuildOptions, compile_model
    from mcugen.quantization import Rounding
    from mcugen.toolchain.host import run_tflite_bytes

    model = in_place_chain_model()
    mode = Rounding.TFLM
    compiled = compile_model(model, BuildOptions(rounding=mode))
    (buffer,) = compiled.plan.buffers
    assert len(buffer.in_place_ops) == 4 and compiled.plan.arena_size == align_up(6 * 6 * 8)
    x = np.random.default_rng(2).integers(-128, 128, size=(1, 6, 6, 8), dtype=np.int8)
    expected = oracle_output(model, [x], mode)
    (got,) = run_tflite_bytes(model, [x], mode, sanitize=True)
    assert_exact(got.reshape(expected.shape), expected)


def concat_model(axis: int) -> bytes:
    """Three 1x1-convolution branches of one input; the first two concatenated along `axis`,
    that concatenated with the third (nested), then pooled."""
    from modelbuilder import ModelBuilder

    rng = np.random.default_rng(11)
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 6, 6, 4], "int8", scale=0.05, zero_point=-3)
    branches = []
    for k in range(3):
        w = b.add_tensor(f"w{k}", [8, 1, 1, 4], "int8", scale=[0.02] * 8, data=rng.integers(-127, 128, size=(8, 1, 1, 4)))
        bias = b.add_tensor(f"b{k}", [8], "int32", scale=[0.001] * 8, data=rng.integers(-900, 900, size=8))
        y = b.add_tensor(f"y{k}", [1, 6, 6, 8], "int8", scale=0.04, zero_point=2)
        b.add_op("CONV_2D", [x, w, bias], [y])
        branches.append(y)

    def joined(name: str, parts: int) -> int:
        shape = [1, 6 * parts, 6, 8] if axis == 1 else [1, 6, 6, 8 * parts]
        return b.add_tensor(name, shape, "int8", scale=0.04, zero_point=2)

    inner, outer = joined("c1", 2), joined("c2", 3)
    b.add_op("CONCATENATION", branches[:2], [inner], {"axis": axis})
    b.add_op("CONCATENATION", [inner, branches[2]], [outer], {"axis": axis})
    pooled = [1, 9, 3, 8] if axis == 1 else [1, 3, 3, 24]
    p = b.add_tensor("p", pooled, "int8", scale=0.04, zero_point=2)
    b.add_op("AVERAGE_POOL_2D", [outer], [p], {"filter_width": 2, "filter_height": 2, "stride_w": 2, "stride_h": 2})
    b.set_io([x], [p])
    return b.build()


def test_concatenation_inputs_are_written_into_their_slices() -> None:
    from oracles import assert_exact, oracle_output

    from mcugen.driver import BuildOptions, compile_model, load_graph
    from mcugen.quantization import Rounding
    from mcugen.toolchain.host import build_program, run_program

    model = concat_model(axis=1)
    graph = load_graph(model)
    options = BuildOptions(guard=16)
    compiled = compile_model(model, options)
    plan = compiled.plan
    inner, outer = [op for op in compiled.order if op.kind is OpKind.CONCATENATION]
    assert plan.is_elided(inner) and plan.is_elided(outer)
    base = plan.offset_of(outer.outputs[0])
    assert [plan.offset_of(t) - base for t in [*inner.inputs, outer.inputs[1]]] == [0, 288, 576]  # type: ignore[union-attr]
    source = compiled.code.files[f"{compiled.prefix}_model.c"]
    assert source.count("inputs written into their slices, no code") == 2
    assert lower_bound(plan.buffers) < plan.lower_bound  # below the whole-tensor bound
    without = plan_memory(graph, compiled.order, lambda op: 0, in_place=False)
    assert sum(b.size for b in plan.buffers) < sum(b.size for b in without.buffers)
    # Along channels the slices interleave: the concatenation stays a copy.
    across = compile_model(concat_model(axis=3), BuildOptions())
    assert not any(across.plan.is_elided(op) for op in across.order if op.kind is OpKind.CONCATENATION)

    x = np.random.default_rng(4).integers(-128, 128, size=(1, 6, 6, 4), dtype=np.int8)
    expected = oracle_output(model, [x], Rounding.TFLM)
    program = build_program(model, options, "model.tflite", sanitize=True)
    (got,) = run_program(program, [[x]])[0]
    assert_exact(got.reshape(expected.shape), expected)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.sampled_from([16, 24, 64, 300]), min_size=3, max_size=12),
       seed=st.integers(0, 2**32 - 1))
@example(sizes=[24] + [16] * 11, seed=28636)  # in place placed 432 bytes, not in place 416
def test_random_graphs_with_concatenations_plan_without_overlap(sizes: list[int], seed: int) -> None:
    """Op i concatenates two earlier tensors or adds to one; views stay inside their buffers."""
    from mcugen.ir import ConcatenationOptions

    rng = np.random.default_rng(seed)
    quant = Quant((0.1,), (0,))
    tensors = [Tensor(0, "t0", (sizes[0],), DType.INT8, quant)]
    ops = []
    for i in range(1, len(sizes)):
        unread = [k for k in range(i) if not any(t is tensors[k] for op in ops for t in op.inputs)]
        pool = unread if len(unread) >= 2 and rng.random() < 0.7 else list(range(i))
        a, b = sorted(int(v) for v in rng.choice(pool, size=2, replace=len(pool) < 2))
        if a != b and rng.random() < 0.6:
            out = Tensor(i, f"t{i}", (tensors[a].nbytes + tensors[b].nbytes,), DType.INT8, quant)
            ops.append(Op(OpKind.CONCATENATION, [tensors[a], tensors[b]], [out],
                          ConcatenationOptions(0, Activation.NONE), i - 1))
        else:
            out = Tensor(i, f"t{i}", tensors[b].shape, DType.INT8, quant)
            ops.append(Op(OpKind.ADD, [tensors[b]], [out], ArithmeticOptions(Activation.NONE), i - 1))
        tensors.append(out)
    graph = Graph("concat", tensors, ops, [tensors[0]], [])
    graph.link()
    graph.outputs = [t for t in tensors[1:] if not t.consumers]
    plan = plan_memory(graph, graph.ops, lambda op: 0)
    assert_no_overlap(plan)
    for buffer in plan.buffers:
        for tensor in buffer.tensors:
            assert buffer.view_offsets.get(id(tensor), 0) + tensor.nbytes <= buffer.size
    assert plan.arena_size <= plan_memory(graph, graph.ops, lambda op: 0, in_place=False).arena_size
    # The variant with views, whether or not it won, is a valid plan too, and every elided
    # concatenation finds each input exactly at its slice of the output (nested ones too).
    views = collect_buffers(graph, graph.ops, lambda op: 0, concat_in_place=True)
    pools = place_pools(views, DEFAULT_POOLS, 0)
    forced = Plan(views, sum(p.size for p in pools), plan.lower_bound, plan.steps, pools)
    verify_plan(forced)
    assert_no_overlap(forced)
    for chosen in (plan, forced):
        for op in graph.ops:
            shared = all(chosen.buffer_of(t) is chosen.buffer_of(op.outputs[0]) for t in op.inputs if t is not None)
            assert chosen.is_elided(op) == (op.kind is OpKind.CONCATENATION and shared)
            if chosen.is_elided(op):
                start = chosen.offset_of(op.outputs[0])
                for tensor in op.inputs:
                    assert tensor is not None and chosen.offset_of(tensor) == start
                    assert chosen.buffer_of(tensor) is chosen.buffer_of(op.outputs[0])
                    start += tensor.nbytes
