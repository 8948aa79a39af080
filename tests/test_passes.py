"""Graph passes: constant folding, aliases, ops that do nothing, and the driver's stage order.

Every rewritten model is held to TFLite (TFLM and LiteRT run the file as written, every op
executed at run time), and the generated C is checked for what the passes promise: folded ops
are gone, aliases copy nothing and share their source's bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from modelbuilder import ModelBuilder
from oracles import assert_exact, run_oracle

from mcugen.cli import main
from mcugen.driver import BuildOptions, compile_model, load_graph, prepare_graph
from mcugen.errors import ModelError, UnsupportedError
from mcugen.frontend.tflite import parse_model
from mcugen.ir import OpKind
from mcugen.passes import Rewrite
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.toolchain.host import run_tflite_bytes

ROUNDINGS = [Rounding.TFLM, Rounding.LITERT]


def int8_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


def c_source(model: bytes, rounding: Rounding = Rounding.TFLM) -> str:
    compiled = compile_model(model, BuildOptions(rounding=rounding))
    return compiled.code.files[f"{compiled.prefix}_model.c"]


def invoke_body(source: str) -> str:
    """The statements of <prefix>_invoke(): where the per-inference work is."""
    start = source.index("_invoke(void)\n{")
    return source[start : source.index("\n}\n", start)]


def assert_matches_oracle(model: bytes, inputs: list[np.ndarray], rounding: Rounding,
                          sanitize: bool = False) -> list[np.ndarray]:
    expected = run_oracle(model, inputs, rounding)
    actual = run_tflite_bytes(model, inputs, rounding, sanitize=sanitize)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert_exact(got.reshape(want.shape), want)
    return expected


# --- constant folding -----------------------------------------------------------------------


def constant_add_model(seed: int) -> bytes:
    """y = x + (c1 + c2), and c1 + c2 is also the second graph output."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4, 4, 3], "int8", scale=0.05, zero_point=-3)
    c1 = b.add_tensor("c1", [1, 1, 1, 3], "int8", scale=0.04, zero_point=1, data=int8_values(rng, (1, 1, 1, 3)))
    c2 = b.add_tensor("c2", [1, 1, 1, 3], "int8", scale=0.03, zero_point=-2, data=int8_values(rng, (1, 1, 1, 3)))
    c3 = b.add_tensor("c_sum", [1, 1, 1, 3], "int8", scale=0.06, zero_point=0)
    y = b.add_tensor("y", [1, 4, 4, 3], "int8", scale=0.07, zero_point=4)
    b.add_op("ADD", [c1, c2], [c3])
    b.add_op("ADD", [x, c3], [y])
    b.set_io([x], [y, c3])
    return b.build()


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_constant_op_folds_and_its_graph_output_is_still_produced(rounding: Rounding) -> None:
    model = constant_add_model(1)
    x = int8_values(np.random.default_rng(2), (1, 4, 4, 3))
    expected = assert_matches_oracle(model, [x], rounding, sanitize=rounding is Rounding.TFLM)
    assert len(np.unique(expected[0])) > 10
    body = invoke_body(c_source(model, rounding))
    assert "op 0: " not in body and "op 1: ADD 'y'" in body  # the constant ADD is gone from the device
    assert "a constant folded at build time" in body and body.count("mcugen_copy(") == 1


def test_shape_of_a_static_tensor_is_a_constant() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 3, 4, 2], "int8", scale=0.1, shape_signature=[-1, 3, 4, 2])
    s = b.add_tensor("s", [4], "int64")
    b.add_op("SHAPE", [x], [s], {"out_type": "INT64"})
    y = b.add_tensor("y", [1, 3, 4, 2], "int8", scale=0.1)
    b.add_op("RESHAPE", [x], [y], {"new_shape": [1, 3, 4, 2]})
    b.set_io([x], [y, s])
    graph = parse_model(b.build(), "shape.tflite")
    report = prepare_graph(graph)
    assert report.of(Rewrite.FOLDED)[0].kind is OpKind.SHAPE
    out = graph.outputs[1]
    assert out.data is not None and out.data.dtype == np.int64 and out.data.tolist() == [1, 3, 4, 2]


def dynamic_batch_model(seed: int) -> bytes:
    """What the converter leaves for a dynamic batch in front of a RESHAPE (Flatten):
    SHAPE -> STRIDED_SLICE (the batch) -> PACK with the other extent -> RESHAPE."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 3, 4, 2], "int8", scale=0.05, zero_point=3, shape_signature=[-1, 3, 4, 2])
    shape = b.add_tensor("shape", [4], "int32")
    b.add_op("SHAPE", [x], [shape], {"out_type": "INT32"})
    begin = b.add_tensor("begin", [1], "int32", data=np.array([0], np.int32))
    end = b.add_tensor("end", [1], "int32", data=np.array([1], np.int32))
    strides = b.add_tensor("strides", [1], "int32", data=np.array([1], np.int32))
    batch = b.add_tensor("batch", [], "int32")
    b.add_op("STRIDED_SLICE", [shape, begin, end, strides], [batch], {"shrink_axis_mask": 1})
    rest = b.add_tensor("rest", [], "int32", data=np.array(24, np.int32))
    new_shape = b.add_tensor("new_shape", [2], "int32")
    b.add_op("PACK", [batch, rest], [new_shape], {"values_count": 2, "axis": 0})
    flat = b.add_tensor("flat", [1, 24], "int8", scale=0.05, zero_point=3, shape_signature=[-1, 24])
    b.add_op("RESHAPE", [x, new_shape], [flat])
    w = b.add_tensor("w", [6, 24], "int8", scale=0.02, data=rng.integers(-127, 128, (6, 24), dtype=np.int8))
    bias = b.add_tensor("bias", [6], "int32", scale=0.001, data=rng.integers(-300, 300, 6, dtype=np.int32))
    y = b.add_tensor("y", [1, 6], "int8", scale=0.08, zero_point=-5, shape_signature=[-1, 6])
    b.add_op("FULLY_CONNECTED", [flat, w, bias], [y])
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_dynamic_batch_shape_chain_costs_nothing_on_the_device(rounding: Rounding) -> None:
    model = dynamic_batch_model(3)
    graph = parse_model(model, "dynamic.tflite")
    assert graph.inputs[0].dynamic_axes == (0,) and graph.inputs[0].shape[0] == 1
    report = prepare_graph(graph, rounding)
    assert [op.kind for op in report.of(Rewrite.FOLDED)] == [OpKind.SHAPE, OpKind.STRIDED_SLICE, OpKind.PACK]
    assert [op.kind for op in graph.ops] == [OpKind.RESHAPE, OpKind.FULLY_CONNECTED]
    x = int8_values(np.random.default_rng(4), (1, 3, 4, 2))
    expected = assert_matches_oracle(model, [x], rounding)
    assert len(np.unique(expected[0])) >= 4
    body = invoke_body(c_source(model, rounding))
    assert "mcugen_copy(" not in body
    assert all(f"op {i}: " not in body for i in range(3))  # SHAPE, STRIDED_SLICE, PACK
    assert "alias of its input, no code" in body


def test_report_names_the_dynamic_batch(tmp_path: Path) -> None:
    path = tmp_path / "dynamic.tflite"
    path.write_bytes(dynamic_batch_model(3))
    result = CliRunner().invoke(main, ["build", str(path), "-o", str(tmp_path / "gen")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "gen" / "report.json").read_text())
    assert report["inputs"][0]["dynamic_axes"] == [0] and report["inputs"][0]["shape"] == [1, 3, 4, 2]
    assert report["outputs"][0]["dynamic_axes"] == [0]
    assert [op["kind"] for op in report["ops"]] == ["RESHAPE", "FULLY_CONNECTED"]


def test_inspect_reports_the_dynamic_batch_and_the_folded_ops(tmp_path: Path) -> None:
    path = tmp_path / "dynamic.tflite"
    path.write_bytes(dynamic_batch_model(3))
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert result.exit_code == 0, result.output
    assert "input0 'x' int8[1, 3, 4, 2]" in result.output and "(dynamic batch: fixed at 1)" in result.output
    lines = {line.split()[1]: line for line in result.output.splitlines() if line[:5].strip().isdigit()}
    for kind in ("SHAPE", "STRIDED_SLICE", "PACK"):
        assert " folded " in lines[kind], lines[kind]
    assert " alias " in lines["RESHAPE"] and " cpu " in lines["FULLY_CONNECTED"]


def foldable_models() -> list[tuple[str, bytes]]:
    """Single ops on constant inputs whose value is a graph output (nothing else to run)."""
    rng = np.random.default_rng(11)
    models = []

    def one(name: str, builtin: str, inputs: list[tuple], out: tuple, options: dict | None = None) -> None:
        b = ModelBuilder()
        x = b.add_tensor("x", [1, 2], "int8", scale=0.1)
        x2 = b.add_tensor("x2", [1, 2], "int8", scale=0.1)
        b.add_op("RESHAPE", [x], [x2], {"new_shape": [1, 2]})
        ids = [b.add_tensor(f"in{i}", shape, dtype, data=data, **q) for i, (shape, dtype, data, q) in enumerate(inputs)]
        y = b.add_tensor("y", out[0], out[1], **out[2])
        b.add_op(builtin, ids, [y], options)
        b.set_io([x], [y, x2])
        models.append((name, b.build()))

    q = {"scale": 0.05, "zero_point": -7}
    one("add", "ADD", [((2, 5, 3), "int8", int8_values(rng, (2, 5, 3)), q),
                       ((3,), "int8", int8_values(rng, (3,)), {"scale": 0.02, "zero_point": 4})],
        ((2, 5, 3), "int8", {"scale": 0.06, "zero_point": 2}))
    one("fully_connected", "FULLY_CONNECTED",
        [((2, 16), "int8", int8_values(rng, (2, 16)), q),
         ((5, 16), "int8", rng.integers(-127, 128, (5, 16), dtype=np.int8), {"scale": 0.01}),
         ((5,), "int32", rng.integers(-900, 900, 5, dtype=np.int32), {"scale": 0.0005})],
        ((2, 5), "int8", {"scale": 0.03, "zero_point": 1}))
    one("mean", "MEAN", [((1, 4, 5, 6), "int8", int8_values(rng, (1, 4, 5, 6)), q),
                         ((2,), "int32", np.array([1, 2], np.int32), {})],
        ((1, 6), "int8", {"scale": 0.02, "zero_point": -3}))
    one("softmax", "SOFTMAX", [((2, 9), "int8", int8_values(rng, (2, 9)), q)],
        ((2, 9), "int8", {"scale": 1 / 256, "zero_point": -128}))
    one("max_pool", "MAX_POOL_2D", [((1, 6, 6, 2), "int8", int8_values(rng, (1, 6, 6, 2)), q)],
        ((1, 3, 3, 2), "int8", q), {"filter_width": 2, "filter_height": 2, "stride_w": 2, "stride_h": 2})
    one("concatenation", "CONCATENATION", [((2, 3), "int32", rng.integers(-9, 9, (2, 3), dtype=np.int32), {}),
                                           ((2, 4), "int32", rng.integers(-9, 9, (2, 4), dtype=np.int32), {})],
        ((2, 7), "int32", {}), {"axis": 1})
    one("gather", "GATHER", [((5, 3), "float32", rng.standard_normal((5, 3)).astype(np.float32), {}),
                             ((4,), "int32", np.array([4, 0, 2, 2], np.int32), {})],
        ((4, 3), "float32", {}), {"axis": 0})
    one("dequantize", "DEQUANTIZE", [((3, 4), "int8", int8_values(rng, (3, 4)), q)], ((3, 4), "float32", {}))
    one("quantize", "QUANTIZE", [((3, 4), "float32", (rng.standard_normal((3, 4)) * 3).astype(np.float32), {})],
        ((3, 4), "int8", {"scale": 0.03, "zero_point": -2}))
    one("transpose", "TRANSPOSE", [((2, 3, 4), "int8", int8_values(rng, (2, 3, 4)), q),
                                   ((3,), "int32", np.array([2, 0, 1], np.int32), {})],
        ((4, 2, 3), "int8", q))
    one("pad", "PAD", [((2, 3), "int8", int8_values(rng, (2, 3)), q),
                       ((2, 2), "int32", np.array([[1, 0], [2, 1]], np.int32), {})],
        ((3, 6), "int8", q))
    return models


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("name, model", foldable_models(), ids=[n for n, _ in foldable_models()])
def test_folded_values_equal_tflite(name: str, model: bytes, rounding: Rounding) -> None:
    graph = parse_model(model, f"{name}.tflite")
    report = prepare_graph(graph, rounding)
    assert len(report.of(Rewrite.FOLDED)) == 1, name
    x = int8_values(np.random.default_rng(5), (1, 2))
    expected = run_oracle(model, [x], rounding)[0]
    folded = graph.outputs[0].data
    assert folded is not None
    assert_exact(folded.reshape(expected.shape), expected)
    assert len(np.unique(expected)) >= 3


def test_an_op_no_reference_kernel_can_evaluate_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from mcugen.errors import UnsupportedError
    from mcugen.ops import registry

    def cannot_evaluate(*args: object) -> list[np.ndarray]:
        raise UnsupportedError("ADD: no reference for these operands (test kernel)")

    add = registry.op_def(OpKind.ADD)
    monkeypatch.setitem(registry.DEFINITIONS, OpKind.ADD, dataclasses.replace(add, reference=cannot_evaluate))
    graph = parse_model(constant_add_model(1), "add.tflite")
    report = prepare_graph(graph)
    assert report.of(Rewrite.FOLDED) == [] and [op.kind for op in graph.ops] == [OpKind.ADD, OpKind.ADD]


# --- the driver: support rules after the passes, unknown builtins at read time -----------


def test_support_rules_apply_to_what_is_left_after_folding(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from mcugen.ops import registry

    def no_device_add(op: object) -> str:
        """ADD runs on no device (test rule)."""
        return "never"

    add = registry.op_def(OpKind.ADD)
    monkeypatch.setitem(registry.DEFINITIONS, OpKind.ADD, dataclasses.replace(add, rules=(no_device_add,)))
    b = ModelBuilder()
    rng = np.random.default_rng(6)
    x = b.add_tensor("x", [1, 3], "int8", scale=0.1)
    c1 = b.add_tensor("c1", [1, 3], "int8", scale=0.1, data=int8_values(rng, (1, 3)))
    c2 = b.add_tensor("c2", [1, 3], "int8", scale=0.1, data=int8_values(rng, (1, 3)))
    c3 = b.add_tensor("c3", [1, 3], "int8", scale=0.2)
    y = b.add_tensor("y", [1, 3], "int8", scale=0.1)
    b.add_op("ADD", [c1, c2], [c3])
    b.add_op("RESHAPE", [x], [y], {"new_shape": [1, 3]})
    b.set_io([x], [y, c3])
    graph = load_graph(b.build())  # the only ADD is folded: no rule applies to it
    assert [op.kind for op in graph.ops] == [OpKind.RESHAPE]
    with pytest.raises(UnsupportedError, match=r"ADD \(op 1, 'y'\): ADD runs on no device \(test rule\)\. Got: never"):
        load_graph(constant_add_model(1))  # the second ADD reads an activation


def test_unknown_builtins_are_reported_at_read_time_even_if_foldable() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 3], "float32")
    c = b.add_tensor("c", [1, 3], "float32", data=np.ones((1, 3), np.float32))
    s = b.add_tensor("s", [1, 3], "float32")
    y = b.add_tensor("y", [1, 3], "float32")
    b.add_op("SIN", [c], [s])
    b.add_op("RESHAPE", [x], [y], {"new_shape": [1, 3]})
    b.set_io([x], [y, s])
    with pytest.raises(UnsupportedError, match=r"1 unsupported op\(s\): op 0 SIN \('s'\)"):
        load_graph(b.build())


# --- aliases ------------------------------------------------------------------------------


def alias_chain_model(seed: int) -> bytes:
    """x -> RESHAPE -> EXPAND_DIMS -> SQUEEZE -> ADD(., c) -> y, and RESHAPE(x) as an output
    straight from the graph input (its bytes must survive the ADD, which could run in place)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    q = {"scale": 0.05, "zero_point": -2}
    x = b.add_tensor("x", [1, 2, 3, 4], "int8", **q)
    a = b.add_tensor("a", [6, 4], "int8", **q)
    b.add_op("RESHAPE", [x], [a], {"new_shape": [6, 4]})
    axis = b.add_tensor("axis", [1], "int32", data=np.array([0], np.int32))
    e = b.add_tensor("e", [1, 6, 4], "int8", **q)
    b.add_op("EXPAND_DIMS", [a, axis], [e])
    s = b.add_tensor("s", [6, 4], "int8", scale=0.05, zero_point=-2)
    b.add_op("SQUEEZE", [e], [s], {"squeeze_dims": [0]})
    c = b.add_tensor("c", [6, 4], "int8", scale=0.03, zero_point=5, data=int8_values(rng, (6, 4)))
    y = b.add_tensor("y", [6, 4], "int8", scale=0.07, zero_point=1)
    b.add_op("ADD", [s, c], [y])
    flat = b.add_tensor("flat", [24], "int8", **q)
    b.add_op("RESHAPE", [x], [flat], {"new_shape": [24]})
    b.set_io([x], [y, flat])
    return b.build()


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_alias_chains_share_bytes_and_copy_nothing(rounding: Rounding) -> None:
    model = alias_chain_model(7)
    compiled = compile_model(model, BuildOptions(rounding=rounding))
    graph, plan = compiled.graph, compiled.plan
    kinds = [op.kind for op in graph.ops]
    assert kinds == [OpKind.RESHAPE, OpKind.ADD, OpKind.RESHAPE], kinds  # EXPAND_DIMS collapsed
    x = graph.inputs[0]
    for op in graph.ops:
        if op.kind is OpKind.RESHAPE:
            assert op.inputs == [x] and plan.buffer_of(op.outputs[0]) is plan.buffer_of(x)
    body = invoke_body(compiled.code.files[f"{compiled.prefix}_model.c"])
    assert "mcugen_copy(" not in body and body.count("alias of its input, no code") == 2
    inputs = [int8_values(np.random.default_rng(8), (1, 2, 3, 4))]
    expected = assert_matches_oracle(model, inputs, rounding, sanitize=rounding is Rounding.LITERT)
    assert np.array_equal(expected[1], inputs[0].ravel())


# --- ops that do nothing ------------------------------------------------------------------


def identity_model(seed: int) -> bytes:
    """x -> QUANTIZE (same scale and zero point) -> PAD by 0 -> TRANSPOSE (identity) -> SLICE
    (all of it) -> CONCATENATION of one -> ADD(., c) -> y; QUANTIZE(x) with the same
    quantization is also a graph output, straight from the graph input."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    q = {"scale": 0.04, "zero_point": 6}
    x = b.add_tensor("x", [1, 3, 5, 2], "int8", **q)
    t = [b.add_tensor(f"t{i}", [1, 3, 5, 2], "int8", **q) for i in range(5)]
    b.add_op("QUANTIZE", [x], [t[0]])
    pads = b.add_tensor("pads", [4, 2], "int32", data=np.zeros((4, 2), np.int32))
    b.add_op("PAD", [t[0], pads], [t[1]])
    perm = b.add_tensor("perm", [4], "int32", data=np.arange(4, dtype=np.int32))
    b.add_op("TRANSPOSE", [t[1], perm], [t[2]])
    begin = b.add_tensor("begin", [4], "int32", data=np.zeros(4, np.int32))
    size = b.add_tensor("size", [4], "int32", data=np.array([1, 3, 5, -1], np.int32))
    b.add_op("SLICE", [t[2], begin, size], [t[3]])
    b.add_op("CONCATENATION", [t[3]], [t[4]], {"axis": 3})
    c = b.add_tensor("c", [2], "int8", scale=0.02, zero_point=-9, data=int8_values(rng, (2,)))
    y = b.add_tensor("y", [1, 3, 5, 2], "int8", scale=0.05, zero_point=-1)
    b.add_op("ADD", [t[4], c], [y])
    same = b.add_tensor("same", [1, 3, 5, 2], "int8", **q)
    b.add_op("QUANTIZE", [x], [same])
    b.set_io([x], [y, same])
    return b.build()


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_ops_that_do_nothing_are_removed(rounding: Rounding) -> None:
    model = identity_model(9)
    graph = parse_model(model, "identity.tflite")
    report = prepare_graph(graph, rounding)
    removed = [op.kind for op in report.of(Rewrite.IDENTITY)]
    assert removed == [OpKind.QUANTIZE, OpKind.PAD, OpKind.TRANSPOSE, OpKind.SLICE, OpKind.CONCATENATION]
    assert [op.kind for op in report.of(Rewrite.ALIASED)] == [OpKind.QUANTIZE]  # the graph output
    assert [op.kind for op in graph.ops] == [OpKind.ADD, OpKind.RESHAPE]
    assert graph.ops[0].inputs[0] is graph.inputs[0] and graph.outputs[1].name == "same"
    x = int8_values(np.random.default_rng(10), (1, 3, 5, 2))
    expected = run_oracle(model, [x], rounding)
    for got, want in zip(run_outputs(graph, [x], rounding), expected):
        assert_exact(got, want)
    if rounding is Rounding.TFLM:
        assert_matches_oracle(model, [x], rounding)
        assert "mcugen_copy(" not in invoke_body(c_source(model, rounding))


def test_requantize_to_other_parameters_is_kept() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.04, zero_point=6)
    y = b.add_tensor("y", [1, 4], "int8", scale=0.04, zero_point=5)
    z = b.add_tensor("z", [1, 4], "int8", scale=0.05, zero_point=6)
    b.add_op("QUANTIZE", [x], [y])
    b.add_op("QUANTIZE", [x], [z])
    b.set_io([x], [y, z])
    graph = parse_model(b.build(), "requant.tflite")
    report = prepare_graph(graph)
    assert report.rewrites == [] and [op.kind for op in graph.ops] == [OpKind.QUANTIZE, OpKind.QUANTIZE]


def test_reshape_to_other_quantization_is_not_dropped() -> None:
    """A consumer reads the RESHAPE output's scale: wiring it to the input would change it."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.04)
    r = b.add_tensor("r", [1, 4], "int8", scale=0.08)
    c = b.add_tensor("c", [4], "int8", scale=0.1, data=np.arange(4, dtype=np.int8))
    y = b.add_tensor("y", [1, 4], "int8", scale=0.1)
    b.add_op("RESHAPE", [x], [r], {"new_shape": [1, 4]})
    b.add_op("ADD", [r, c], [y])
    b.set_io([x], [y])
    graph = parse_model(b.build(), "requant.tflite")
    prepare_graph(graph)
    assert [op.kind for op in graph.ops] == [OpKind.RESHAPE, OpKind.ADD]
    assert graph.ops[1].inputs[0].name == "r"


def test_unused_ops_are_removed() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.04)
    c = b.add_tensor("c", [4], "int8", scale=0.1, data=np.arange(4, dtype=np.int8))
    unused = b.add_tensor("unused", [1, 4], "int8", scale=0.1)
    y = b.add_tensor("y", [4], "int8", scale=0.04)
    b.add_op("ADD", [x, c], [unused])
    b.add_op("RESHAPE", [x], [y], {"new_shape": [4]})
    b.set_io([x], [y])
    graph = parse_model(b.build(), "dead.tflite")
    report = prepare_graph(graph)
    assert [op.kind for op in report.of(Rewrite.DEAD)] == [OpKind.ADD]
    assert [op.kind for op in graph.ops] == [OpKind.RESHAPE]


# --- inspect ----------------------------------------------------------------------------


def test_inspect_lists_every_unsupported_op_at_once(tmp_path: Path) -> None:
    """Two ops that break rules (softmax's int8 output quantization, which TFLite imposes too,
    and constant convolution weights), listed together, and a folded op, which needs none."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4, 4, 2], "int8", scale=0.1)
    w = b.add_tensor("w", [2, 1, 1, 2], "int8", scale=0.1)  # weights that are an input
    h = b.add_tensor("h", [1, 4, 4, 2], "int8", scale=0.2)
    b.add_op("CONV_2D", [x, w, -1], [h])
    y = b.add_tensor("y", [1, 4, 4, 2], "int8", scale=0.1, zero_point=3)
    b.add_op("SOFTMAX", [h], [y])
    k1 = b.add_tensor("k1", [2, 2], "int8", scale=0.1, data=np.array([[1, 2], [3, 4]], np.int8))
    k2 = b.add_tensor("k2", [4], "int8", scale=0.1)
    b.add_op("RESHAPE", [k1], [k2], {"new_shape": [4]})
    b.set_io([x, w], [y, k2])
    path = tmp_path / "bad.tflite"
    path.write_bytes(b.build())
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "unsupported: CONV_2D (op 0, 'h'): The weights are a constant" in result.stdout
    assert "Got: weights 'w' are not constant" in result.stdout
    softmax = next(line for line in result.stdout.splitlines() if "unsupported: SOFTMAX (op 1, 'y'): " in line)
    assert "1/256" in softmax and softmax.endswith("Got: output scale 0.1 zero point 3")
    assert " folded " in next(line for line in result.stdout.splitlines() if line.strip().startswith("2 "))
    errors = result.stderr.strip().splitlines()
    assert errors == ["error: bad.tflite: 2 unsupported op(s): op 0 CONV_2D, op 1 SOFTMAX"]


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("dtype, zero_point", [("int8", -128), ("int8", 127), ("int16", 0)])
def test_requantize_to_the_same_parameters_is_the_identity(dtype: str, zero_point: int, rounding: Rounding) -> None:
    """The evidence for dropping it: TFLite's own requantize returns every input unchanged."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 300], dtype, scale=0.0123, zero_point=zero_point)
    y = b.add_tensor("y", [1, 300], dtype, scale=0.0123, zero_point=zero_point)
    b.add_op("QUANTIZE", [x], [y])
    b.set_io([x], [y])
    model = b.build()
    info = np.iinfo(dtype)
    values = np.random.default_rng(12).integers(info.min, info.max, size=(1, 300), endpoint=True, dtype=dtype)
    values[0, :2] = info.min, info.max
    (expected,) = run_oracle(model, [values], rounding)
    assert_exact(expected, values)
    graph = parse_model(model, "requant.tflite")
    prepare_graph(graph, rounding)
    assert [op.kind for op in graph.ops] == [OpKind.RESHAPE]  # an alias: the output is a graph output


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_an_op_with_several_outputs_folds_whole(rounding: Rounding) -> None:
    """SPLIT of a constant: one part feeds an ADD with the input, the other is a graph output."""
    rng = np.random.default_rng(13)
    b = ModelBuilder()
    q = {"scale": 0.05, "zero_point": 4}
    x = b.add_tensor("x", [2, 3], "int8", **q)
    axis = b.add_tensor("axis", [], "int32", data=np.array(1, np.int32))
    table = b.add_tensor("table", [2, 6], "int8", data=int8_values(rng, (2, 6)), **q)
    parts = [b.add_tensor(f"part{i}", [2, 3], "int8", **q) for i in range(2)]
    b.add_op("SPLIT", [axis, table], parts, {"num_splits": 2})
    y = b.add_tensor("y", [2, 3], "int8", scale=0.08, zero_point=-1)
    b.add_op("ADD", [x, parts[0]], [y])
    b.set_io([x], [y, parts[1]])
    model = b.build()
    graph = parse_model(model, "split.tflite")
    report = prepare_graph(graph, rounding)
    assert [op.kind for op in report.of(Rewrite.FOLDED)] == [OpKind.SPLIT]
    assert [op.kind for op in graph.ops] == [OpKind.ADD] and graph.outputs[1].is_constant
    values = int8_values(rng, (2, 3))
    for got, want in zip(run_outputs(graph, [values], rounding), run_oracle(model, [values], rounding)):
        assert_exact(got, want)


def test_a_broken_constant_op_is_reported_not_folded() -> None:
    """ADD of constants whose shapes do not broadcast: the validation stage names it before the
    folder sees it (no traceback from the folder)."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 3], "int8", scale=0.1)
    y = b.add_tensor("y", [1, 3], "int8", scale=0.1)
    b.add_op("RESHAPE", [x], [y], {"new_shape": [1, 3]})
    c1 = b.add_tensor("c1", [3], "int8", scale=0.1, data=np.arange(3, dtype=np.int8))
    c2 = b.add_tensor("c2", [4], "int8", scale=0.1, data=np.arange(4, dtype=np.int8))
    bad = b.add_tensor("bad", [4], "int8", scale=0.1)
    b.add_op("ADD", [c1, c2], [bad])
    b.set_io([x], [y, bad])
    with pytest.raises(ModelError, match=r"ADD \(op 1, 'bad'\): .*Got: \[3\] and \[4\] do not broadcast"):
        load_graph(b.build())
