"""Shape ops (RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE): the numpy reference against TFLite in both
modes, the generated C for the aliased forms, and the copy emitters where no alias is possible.

SQUEEZE with and without squeeze_dims (negative ones too), EXPAND_DIMS at every position
including negative axes, SHAPE with int32 output (and int64 on LiteRT, whose TFLM kernel
writes only int32), over the dtypes TFLM handles. Every comparison is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from oracles import assert_exact, run_oracle, run_tflm
from singleop import Case, Operand, check_compiled, check_reference, random_array

from mcugen.frontend.tflite import parse_model
from mcugen.ir import Op, Tensor
from mcugen.ops.shape.emit import emit_reshape, emit_shape
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs

BOTH = (Rounding.TFLM, Rounding.LITERT)


def squeeze_cases() -> list[Case]:
    rng = np.random.default_rng(1)
    geometries = [((1, 4, 1, 3), []), ((1, 4, 1, 3), [2]), ((2, 1, 5), [-2]), ((1, 1, 6, 1), [0, -1]),
                  ((3, 1), [])]
    return [Case(f"squeeze-{dtype}-{list(shape)}-{dims}", "SQUEEZE", [Operand(random_array(rng, shape, dtype))],
                 {"squeeze_dims": dims} if dims else {})
            for (shape, dims), dtype in zip(geometries, ["int8", "int16", "float32", "int32", "int8"])]


def expand_dims_cases() -> list[Case]:
    rng = np.random.default_rng(2)
    cases = []
    for n, (shape, axis) in enumerate([((4, 3), 0), ((4, 3), 1), ((4, 3), 2), ((2, 3, 4), -1),
                                        ((2, 3, 4), -4), ((5,), -2)]):
        dtype = ["int8", "int16", "float32"][n % 3]
        cases.append(Case(f"expand-{dtype}-{list(shape)}-ax{axis}", "EXPAND_DIMS",
                          [Operand(random_array(rng, shape, dtype)),
                           Operand(np.array([axis], dtype=np.int32), const=True)]))
    return cases


def shape_cases() -> list[Case]:
    rng = np.random.default_rng(3)
    cases = []
    for dtype, out, shape in [("int8", "int32", (2, 3, 5, 7)), ("float32", "int32", (11, 13, 17, 19, 23, 29)),
                              ("int16", "int64", (3, 4, 6, 8, 9, 10))]:
        modes = BOTH if out == "int32" else (Rounding.LITERT,)
        cases.append(Case(f"shape-{dtype}-{out}-{list(shape)}", "SHAPE", [Operand(random_array(rng, shape, dtype))],
                          {"out_type": out.upper()}, out_dtype=out, modes=modes))
    return cases


def reshape_case() -> Case:
    rng = np.random.default_rng(4)
    return Case("reshape-int8", "RESHAPE", [Operand(random_array(rng, (2, 3, 4), "int8")),
                                            Operand(np.array([4, 6], dtype=np.int32), const=True)])


CASES = squeeze_cases() + expand_dims_cases() + shape_cases() + [reshape_case()]


@pytest.mark.parametrize("rounding", BOTH, ids=lambda r: r.value)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_matches_tflite(case: Case, rounding: Rounding) -> None:
    if rounding not in case.modes:
        with pytest.raises(Exception):  # noqa: B017 - TFLM's SHAPE fails on int64 output
            run_tflm(case.model, case.inputs)
        return
    check_reference(case, rounding)


@pytest.mark.parametrize("case", [squeeze_cases()[1], expand_dims_cases()[3]], ids=lambda c: c.id)
def test_compiled_alias_matches_tflite(case: Case) -> None:
    check_compiled(case, Rounding.TFLM, sanitize=True)


@dataclass
class _RecordingContext:
    """An EmitContext that names arena tensors and records constants."""

    rounding: Rounding = Rounding.TFLM
    target: str = "host"
    constants: list[tuple[str, np.ndarray, str]] = field(default_factory=list)

    def ptr(self, tensor: Tensor) -> str:
        return f"T{tensor.index}"

    def constant(self, hint: str, values: np.ndarray, ctype: str) -> str:
        self.constants.append((hint, np.asarray(values), ctype))
        return f"C{len(self.constants) - 1}"

    def scratch(self, op: Op) -> tuple[str, int]:
        return "NULL", 0


def _only_op(case: Case) -> Op:
    (op,) = parse_model(case.model, case.id).ops
    return op


def test_shape_emitter_writes_the_oracle_shape() -> None:
    """SHAPE that survives folding is written from a constant equal to TFLite's output."""
    case = shape_cases()[0]
    op, ctx = _only_op(case), _RecordingContext()
    call = emit_shape(op, ctx)
    (_, values, ctype) = ctx.constants[0]
    (expected,) = run_tflm(case.model, case.inputs)
    assert ctype == "int32_t" and np.array_equal(values, expected)
    assert call.calls == [f"mcugen_copy(T{op.outputs[0].index}, C0, {expected.nbytes})"]


def test_copy_emitter_copies_every_byte() -> None:
    """A SQUEEZE or EXPAND_DIMS that cannot be an alias copies the whole tensor."""
    for case in (squeeze_cases()[2], expand_dims_cases()[0]):
        op = _only_op(case)
        call = emit_reshape(op, _RecordingContext())
        source = op.inputs[0]
        assert source is not None
        nbytes = run_outputs(parse_model(case.model, case.id), case.inputs, Rounding.TFLM)[0].nbytes
        assert nbytes == case.inputs[0].nbytes
        assert call.calls == [f"mcugen_copy(T{op.outputs[0].index}, T{source.index}, {nbytes})"]


def test_shape_arithmetic_chain_matches_tflite() -> None:
    """The sub-graph converters write to compute a reshape target (SHAPE -> STRIDED_SLICE with
    shrink -> PACK with a constant -> CONCATENATION), which the constant folder evaluates with
    these reference kernels: every intermediate equals TFLite's."""
    from modelbuilder import ModelBuilder

    b = ModelBuilder("shape-chain")
    x = b.add_tensor("x", [3, 4, 5, 6], "int8", scale=0.1, zero_point=0)
    shape = b.add_tensor("shape", [4], "int32")
    begin = b.add_tensor("begin", [1], "int32", data=np.array([0], np.int32))
    end = b.add_tensor("end", [1], "int32", data=np.array([1], np.int32))
    stride = b.add_tensor("stride", [1], "int32", data=np.array([1], np.int32))
    batch = b.add_tensor("batch", [], "int32")
    minus_one = b.add_tensor("minus_one", [], "int32", data=np.array(-1, np.int32))
    packed = b.add_tensor("packed", [2], "int32")
    tail = b.add_tensor("tail", [2], "int32", data=np.array([7, 9], np.int32))
    target = b.add_tensor("target", [4], "int32")
    b.add_op("SHAPE", [x], [shape], {"out_type": "INT32"})
    b.add_op("STRIDED_SLICE", [shape, begin, end, stride], [batch], {"shrink_axis_mask": 1})
    b.add_op("PACK", [batch, minus_one], [packed], {"values_count": 2, "axis": 0})
    b.add_op("CONCATENATION", [packed, tail], [target], {"axis": 0})
    b.set_io([x], [target])
    model = b.build()
    inputs = [np.zeros((3, 4, 5, 6), np.int8)]
    for rounding in BOTH:
        (expected,) = run_oracle(model, inputs, rounding)
        assert expected.tolist() == [3, -1, 7, 9]
        (actual,) = run_outputs(parse_model(model, "chain"), inputs, rounding)
        assert_exact(actual, expected)
