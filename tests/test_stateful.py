"""Stateful (streaming) models: resource variables, the init subgraph, sequences of invokes.

The models are written in the TFLite converter's form with the test model builder
(stateful_models.py); LiteRT's reference kernels and TensorFlow Lite Micro, each keeping the
variables between invokes, are the oracles of every sequence.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_run import assert_one_line_error, invoke
from modelbuilder import ModelBuilder
from oracles import run_litert, run_litert_sequence, run_oracle_sequence, run_tflm_sequence
from stateful_models import FRAME, _variable, frames, images, spatial_state_model, streaming_model

from mcugen.analysis.profile import memory_table
from mcugen.driver import BuildOptions, compile_model, load_graph
from mcugen.errors import ModelError
from mcugen.ir import OpKind
from mcugen.memory.pools import PoolSpec
from mcugen.quantization import Rounding
from mcugen.reference import run_sequence
from mcugen.schedule import verify_order
from mcugen.state import state_order
from mcugen.toolchain.host import build_program, run_program

STEPS = 24


def stacked(outputs: list[list[np.ndarray]]) -> np.ndarray:
    return np.stack([step[0] for step in outputs])


@pytest.fixture(scope="module")
def stream_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stateful") / "stream.tflite"
    path.write_bytes(streaming_model())
    return path


def test_oracles_carry_state() -> None:
    """The fixture is what it claims: both runtimes run it, agree, and a step's output depends
    on the steps before (the same frame after different histories gives different outputs)."""
    model = streaming_model()
    xs = frames(STEPS)
    litert = stacked(run_litert_sequence(model, [[x] for x in xs]))
    assert np.array_equal(litert, stacked(run_tflm_sequence(model, [[x] for x in xs])))
    assert len(np.unique(litert)) >= 20
    fresh = np.stack([run_litert(model, [x])[0] for x in xs])  # each frame from the initial state
    assert np.array_equal(fresh[0], litert[0]) and not np.array_equal(fresh[1:], litert[1:])


@pytest.mark.parametrize("rounding", ["tflm", "litert"])
def test_run_sequence_is_bit_exact_with_the_runtime(rounding: str, stream_file: Path, tmp_path: Path) -> None:
    xs = frames(STEPS, seed=5)
    np.savez(tmp_path / "in.npz", input0=xs)
    result = invoke("run", stream_file, "--input", tmp_path / "in.npz", "--sequence", "--rounding", rounding,
                    "--output", tmp_path / "out.npz")
    assert result.exit_code == 0, result.output
    with np.load(tmp_path / "out.npz") as out:
        got = out["output0"]
    want = stacked(run_oracle_sequence(stream_file.read_bytes(), [[x] for x in xs], Rounding(rounding)))
    assert got.shape == (STEPS, 1, 1, 1, 6) and got.dtype == np.int8
    assert np.array_equal(got, want), f"{int(np.sum(got != want))} of {want.size} differ"


def test_npu_build_runs_the_sequence_with_state_on_the_cpu(stream_file: Path, tmp_path: Path) -> None:
    """--npu: the convolutions and concatenations go to the NPU, the state ops stay on the CPU, and the 24-step
    sequence is still TFLM's (the partition knows a state has no producer)."""
    listing = invoke("inspect", stream_file, "--npu", "u55-128")
    assert listing.exit_code == 0, listing.output
    assert "a copy of a model's state, made by the CPU" in listing.output
    assert "4 op(s) on the NPU" in listing.output
    xs = frames(STEPS, seed=6)
    np.savez(tmp_path / "in.npz", input0=xs)
    result = invoke("run", stream_file, "--npu", "u55-128", "--input", tmp_path / "in.npz", "--sequence",
                    "--output", tmp_path / "out.npz")
    assert result.exit_code == 0, result.output
    with np.load(tmp_path / "out.npz") as out:
        got = out["output0"]
    want = stacked(run_tflm_sequence(stream_file.read_bytes(), [[x] for x in xs]))
    assert np.array_equal(got, want), f"{int(np.sum(got != want))} of {want.size} differ"


def test_run_without_sequence_is_one_invoke_from_the_initial_state(stream_file: Path, tmp_path: Path) -> None:
    x = frames(1, seed=9)[0]
    np.savez(tmp_path / "in.npz", input0=x)
    result = invoke("run", stream_file, "--input", tmp_path / "in.npz", "--output", tmp_path / "out.npz")
    assert result.exit_code == 0, result.output
    with np.load(tmp_path / "out.npz") as out:
        assert np.array_equal(out["output0"], run_litert(stream_file.read_bytes(), [x])[0])


def test_sequence_steps_must_agree(stream_file: Path, tmp_path: Path) -> None:
    np.savez(tmp_path / "in.npz", input0=frames(3), input1=frames(4))
    assert_one_line_error(invoke("run", stream_file, "--input", tmp_path / "in.npz", "--sequence"),
                          "--sequence needs every input with the same number of steps")


def test_reference_carries_state_like_litert() -> None:
    model = streaming_model(initial_1=-7)
    steps = [[x] for x in frames(STEPS, seed=2)]
    got = stacked(run_sequence(load_graph(model), steps, Rounding.LITERT))
    assert np.array_equal(got, stacked(run_litert_sequence(model, steps)))


@pytest.mark.parametrize("assign_first", [False, True])
def test_tiled_state_reads_under_sanitizers_and_guards(assign_first: bool) -> None:
    """Convolutions that read the state (in place, or a copy made before the file assigns the
    new value) run tiled in stripes; every buffer guarded; ASan and UBSan on."""
    model = spatial_state_model(assign_first)
    compiled = compile_model(model, BuildOptions(), "spatial.tflite")
    assert compiled.plan.tiling is not None and compiled.plan.tiling.chains, "the test needs a tiled chain"
    kinds = [op.kind for op in compiled.order]
    assert (OpKind.READ_VARIABLE in kinds) == assign_first  # read in place unless it must be a copy
    steps = [[x] for x in images(6)]
    program = build_program(model, BuildOptions(guard=16), "spatial.tflite", sanitize=True)
    got = stacked(run_program(program, steps))
    want = stacked(run_tflm_sequence(model, steps))
    assert len(np.unique(want)) > 100
    assert np.array_equal(got, want)


def test_state_in_pools_is_kept_live_and_reported(stream_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "gen"
    result = invoke("build", stream_file, "-o", out, "--no-size", "--pool", "fast:64:fast", "--pool", "big:4K")
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["state_bytes"] == (2 * FRAME + FRAME)  # int8 [1,2,1,8] and [1,1,1,8]
    steps = len(report["ops"])
    states = [b for b in report["buffers"] if b["tensors"][0].startswith("stream/state")]
    assert sorted(b["tensors"][0] for b in states) == ["stream/state1", "stream/state2"]
    assert all(b["first"] == 0 and b["last"] == steps for b in states)
    assert memory_table(report).kvcache == report["state_bytes"]
    header = next(out.glob("*_model.h")).read_text()
    assert "_reset_state(void);" in header and f"_STATE_SIZE {report['state_bytes']}" in header
    # the pooled build still computes the sequence right
    options = BuildOptions(pools=(PoolSpec("fast", 64, "fast"), PoolSpec("big", 4096)))
    xs = [[x] for x in frames(STEPS, seed=4)]
    got = stacked(run_program(build_program(stream_file.read_bytes(), options, "stream.tflite"), xs))
    assert np.array_equal(got, stacked(run_tflm_sequence(stream_file.read_bytes(), xs)))


def test_schedule_keeps_reads_before_the_assignment() -> None:
    graph = load_graph(spatial_state_model(assign_first=False))
    ops = graph.ops
    assign = next(i for i, op in enumerate(ops) if op.kind is OpKind.ASSIGN_VARIABLE)
    reader = next(i for i, op in enumerate(ops) if any(t is not None and t.variable for t in op.inputs)
                  and op.kind is not OpKind.ASSIGN_VARIABLE)
    assert (reader, assign) in state_order(ops)
    moved = [ops[assign], *[op for i, op in enumerate(ops) if i != assign]]
    with pytest.raises(ModelError, match="must run after"):
        verify_order(graph, moved)


def test_verify_runs_sequences_against_the_runtime(stream_file: Path) -> None:
    for rounding in ("tflm", "litert"):
        result = invoke("verify", stream_file, "--cases", "2", "--rounding", rounding)
        assert result.exit_code == 0, result.output
        assert "2 sequences of invokes (40 steps)" in result.output


def _refused(tmp_path: Path, model: bytes, *fragments: str) -> None:
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    assert_one_line_error(invoke("build", path, "-o", tmp_path / "out", "--no-size"), *fragments)


def _frame_model(init: str, two_handles: bool = False, dtype: str = "int8") -> bytes:
    """A one-variable model whose init subgraph is `init`: 'constant', 'computed' (an ADD of
    constants) or 'none' (no CALL_ONCE at all); `two_handles`: the assignment goes through a
    VAR_HANDLE of its own (the same variable by its shared name); `dtype`: of every tensor."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], dtype, scale=0.1, zero_point=0)
    if init != "none":
        b.add_op("CALL_ONCE", [], [], {"init_subgraph_index": 1})
    handle = _variable(b, "v")
    old = b.add_tensor("old", [1, 4], dtype, scale=0.1, zero_point=0)
    b.add_op("READ_VARIABLE", [handle], [old])
    y = b.add_tensor("y", [1, 4], dtype, scale=0.2, zero_point=0)
    b.add_op("ADD", [old, x], [y])
    b.add_op("ASSIGN_VARIABLE", [_variable(b, "v") if two_handles else handle, x], [])
    b.set_io([x], [y])
    if init != "none":
        b.begin_subgraph("init")
        handle = _variable(b, "v")
        one = b.add_tensor("one", [1, 4], dtype, scale=0.1, zero_point=0, data=np.ones((1, 4)))
        if init == "computed":
            two = b.add_tensor("two", [1, 4], dtype, scale=0.1, zero_point=0)
            b.add_op("ADD", [one, one], [two])
            one = two
        b.add_op("ASSIGN_VARIABLE", [handle, one], [])
    return b.build()


def test_refusals_are_one_line(tmp_path: Path) -> None:
    _refused(tmp_path, _frame_model("computed"), "init subgraph 1 op 1 ADD", "VAR_HANDLE and ASSIGN_VARIABLE")
    _refused(tmp_path, _frame_model("none"), "variable 'v' is used but no init subgraph")
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", [1, 4], "int8", scale=0.1, zero_point=0)
    b.add_op("WHILE", [x], [y])
    b.set_io([x], [y])
    _refused(tmp_path, b.build(), "subgraph 0 op 0 WHILE: control flow is not supported")
    path = tmp_path / "ok.tflite"
    path.write_bytes(_frame_model("constant"))
    assert_one_line_error(invoke("build", path, "-o", tmp_path / "ext", "--no-size", "--arena", "external"),
                          "--arena external is not supported for stateful models")


@pytest.mark.parametrize(("two_handles", "dtype"), [(False, "int8"), (True, "int8"), (False, "int16")])
def test_small_model_matches_both_runtimes(two_handles: bool, dtype: str) -> None:
    """The smallest form (READ, ADD, ASSIGN of the input): the initial value is used once, then
    each step adds the previous input. An int16 variable holds int16 values the same way."""
    model = _frame_model("constant", two_handles, dtype)
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    steps = [[rng.integers(info.min, info.max, (1, 4), dtype=dtype, endpoint=True)] for _ in range(STEPS)]
    program = build_program(model, BuildOptions(), "frame.tflite", sanitize=True)
    got = stacked(run_program(program, steps))
    assert np.array_equal(got, stacked(run_tflm_sequence(model, steps)))
    assert np.array_equal(got, stacked(run_litert_sequence(model, steps)))


@pytest.mark.parametrize("rounding", ["tflm", "litert"])
def test_per_layer_verify_of_a_stateful_model(rounding: str, stream_file: Path) -> None:
    """One invoke from the initial state, tensor by tensor against the runtime (whose tensor
    list holds the variables' resource handles, which have no values to compare)."""
    result = invoke("verify", stream_file, "--per-layer", "--rounding", rounding)
    assert result.exit_code == 0, result.output
    assert "no divergence: every tensor is bit-exact" in result.output
    assert "CONV_2D" in result.output and "DEPTHWISE_CONV_2D" in result.output
