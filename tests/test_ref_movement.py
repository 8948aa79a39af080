"""Data movement (CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, SLICE, STRIDED_SLICE, PAD, PADV2,
TRANSPOSE, GATHER): the numpy reference and the generated C against TFLite, in both modes.

Seeded random single-op models cover every axis (negative ones too), every dtype TFLM has a
kernel for (and, on LiteRT alone, the ones only LiteRT has), constant operands, multi-output
ops, all five STRIDED_SLICE masks, negative strides and the offset option, SLICE with size -1,
PAD with zero points and constant values, GATHER with batch_dims and int64 indices. The modes
differ in two places, each with a test that tells them apart: int16 PAD (TFLM pads with 0,
LiteRT with the zero point) and STRIDED_SLICE's ellipsis/new-axis masks and offset (TFLM
ignores them). Every comparison is exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import assert_exact, run_litert, run_tflm
from singleop import Case, Operand, check_compiled, check_reference, random_array

from mcugen.errors import UnsupportedError
from mcugen.frontend.tflite import parse_model
from mcugen.ir import NoOptions, Op, OpKind
from mcugen.ops.base import RuleViolation, Setting
from mcugen.ops.movement.prepare import MAX_LOOPS, MOVE_FITS_KERNEL, move_loop
from mcugen.ops.movement.rules import inputs_present
from mcugen.ops.movement.strided_slice import TFLM_ONE_VALUE_PER_DIMENSION, TFLM_OUTPUT_SHAPE
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.support import check_op, graph_problems
from mcugen.toolchain.host import run_tflite_bytes

BOTH = (Rounding.TFLM, Rounding.LITERT)
LITERT = (Rounding.LITERT,)
SHAPES = [(7,), (3, 5), (2, 3, 4), (2, 3, 4, 5), (2, 1, 3, 2, 4)]


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def concat_cases() -> list[Case]:
    cases = []
    for seed, dtype in enumerate(["int8", "int16", "float32", "int32", "int64", "bool"] * 2):
        rng = _rng(100 + seed)
        shape = list(SHAPES[seed % 4 + (seed >= 6)])
        rank = len(shape)
        axis = int(rng.integers(-rank, rank))
        count = 2 + seed % 3
        operands = []
        for i in range(count):
            piece = list(shape)
            piece[axis] = int(rng.integers(1, 4))
            operands.append(Operand(random_array(rng, piece, dtype), const=(i == 1 and seed % 2 == 0)))
        cases.append(Case(f"concat-{dtype}-r{rank}-ax{axis}-n{count}", "CONCATENATION", operands,
                          {"axis": axis}))
    # int16 inputs with different scales (zero points 0): both runtimes copy raw values.
    rng = _rng(150)
    cases.append(Case("concat-int16-scales", "CONCATENATION",
                      [Operand(random_array(rng, (2, 3), "int16"), quant=(0.001, 0)),
                       Operand(random_array(rng, (2, 4), "int16"), quant=(0.004, 0))],
                      {"axis": 1}, out_quant=(0.002, 0)))
    return cases


def pack_cases() -> list[Case]:
    cases = []
    for seed, dtype in enumerate(["int8", "int16", "float32", "int32", "int64"] * 2):
        rng = _rng(200 + seed)
        shape = SHAPES[seed % 4]
        axis = int(rng.integers(-len(shape) - 1, len(shape) + 1))
        count = 2 + seed % 3
        operands = [Operand(random_array(rng, shape, dtype)) for _ in range(count)]
        cases.append(Case(f"pack-{dtype}-{len(shape)}d-ax{axis}-n{count}", "PACK", operands,
                          {"values_count": count, "axis": axis}))
    return cases


def unpack_cases() -> list[Case]:
    cases = []
    for seed, dtype in enumerate(["int8", "int16", "float32", "int32"] * 2):
        rng = _rng(300 + seed)
        shape = SHAPES[1 + seed % 4]
        axis = int(rng.integers(-len(shape), len(shape)))
        data = random_array(rng, shape, dtype)
        cases.append(Case(f"unpack-{dtype}-{len(shape)}d-ax{axis}", "UNPACK", [Operand(data)],
                          {"num": shape[axis], "axis": axis}, outputs=shape[axis]))
    return cases


def split_cases() -> list[Case]:
    cases = []
    for seed, dtype in enumerate(["int8", "int16", "float32", "int32"] * 2):
        rng = _rng(400 + seed)
        shape = list(SHAPES[1 + seed % 4])
        axis = int(rng.integers(-len(shape), len(shape)))
        count = 2 + seed % 2
        shape[axis] = count * int(rng.integers(1, 3))
        axis_tensor = Operand(np.array([axis], dtype=np.int32), const=True)
        data = Operand(random_array(rng, shape, dtype))
        cases.append(Case(f"split-{dtype}-{len(shape)}d-ax{axis}-n{count}", "SPLIT", [axis_tensor, data],
                          {"num_splits": count}, outputs=count, out_dtype=dtype,
                          out_quant=data.quantization()))
        sizes = [int(s) for s in rng.integers(1, 4, size=count)]  # TFLM allocates no empty tensor
        sizes[seed % count] = -1
        shape[axis] = sum(s for s in sizes if s > 0) + int(rng.integers(1, 3))
        data = Operand(random_array(rng, shape, dtype))
        cases.append(Case(f"splitv-{dtype}-{len(shape)}d-ax{axis}-{sizes}", "SPLIT_V",
                          [data, Operand(np.array(sizes, dtype=np.int32), const=True),
                           Operand(np.array([axis], dtype=np.int32), const=True)],
                          {"num_splits": count}, outputs=count))
    return cases


def slice_cases() -> list[Case]:
    cases = []
    for seed, dtype in enumerate(["int8", "int16", "float32", "int32", "bool"] * 2):
        rng = _rng(500 + seed)
        shape = SHAPES[seed % 5]
        begin = [int(rng.integers(0, n)) for n in shape]
        size = [int(rng.integers(1, n - b + 1)) if rng.random() < 0.7 else -1 for n, b in zip(shape, begin)]
        index_dtype = np.int64 if seed % 2 else np.int32
        operands = [Operand(random_array(rng, shape, dtype)),
                    Operand(np.array(begin, dtype=index_dtype), const=True),
                    Operand(np.array(size, dtype=index_dtype), const=True)]
        out_shape = [n - b if s == -1 else s for n, b, s in zip(shape, begin, size)]
        cases.append(Case(f"slice-{dtype}-{len(shape)}d-b{begin}-s{size}", "SLICE", operands,
                          shapes=[out_shape]))
    return cases


def _strided(seed: int, dtype: str, shape: tuple[int, ...], options: dict, begin: list[int],
             end: list[int], strides: list[int], modes: tuple[Rounding, ...] = BOTH) -> Case:
    rng = _rng(seed)
    operands = [Operand(random_array(rng, shape, dtype))] + [
        Operand(np.array(v, dtype=np.int32), const=True) for v in (begin, end, strides)]
    name = "-".join(f"{k[0]}{v}" for k, v in options.items())
    return Case(f"sslice{seed}-{dtype}-{list(shape)}-{begin}:{end}:{strides}-{name}", "STRIDED_SLICE",
                operands, options, modes=modes)


def _random_axis_slice(rng: np.random.Generator, n: int) -> tuple[int, int, int, int, int]:
    """(begin, end, stride, begin_mask bit, end_mask bit) selecting at least one element,
    written with negative indices, out-of-range ends and masks at random."""
    stride = int(rng.choice([1, 1, 2, 3, -1, -2]))
    first, last = sorted(int(v) for v in rng.integers(0, n, size=2))
    if stride > 0:
        begin, end = first, last + 1
    else:
        begin, end = last, first - 1
    if rng.random() < 0.3 and begin < n:
        begin -= n  # the same index, counted from the end
    if end == -1:
        end = -n - 1  # "before index 0": -1 itself would mean the last element
    elif end == n and rng.random() < 0.5:
        end = n + 3  # clamped
    elif 0 <= end < n and rng.random() < 0.3:
        end -= n
    return begin, end, stride, int(rng.random() < 0.2), int(rng.random() < 0.2)


def strided_slice_cases() -> list[Case]:
    cases = []
    dtypes = ["int8", "int16", "float32", "int32", "bool"]
    for i in range(24):
        rng = _rng(600 + i)
        shape = tuple(int(n) for n in rng.integers(2, 7, size=1 + i % 4))
        begin, end, strides = [], [], []
        options = {"begin_mask": 0, "end_mask": 0}
        for axis, n in enumerate(shape):
            b, e, st, bm, em = _random_axis_slice(rng, n)
            begin.append(b)
            end.append(e)
            strides.append(st)
            options["begin_mask"] |= bm << axis
            options["end_mask"] |= em << axis
        if i % 3 == 0:
            # Shrink one axis: its begin is a valid index, its step positive.
            axis = int(rng.integers(0, len(shape)))
            begin[axis], strides[axis] = int(rng.integers(-shape[axis], shape[axis])), 1
            options["shrink_axis_mask"] = 1 << axis
            options["begin_mask"] &= ~(1 << axis)
        cases.append(_strided(600 + i, dtypes[i % 5], shape, options, begin, end, strides))
    # LiteRT alone: ellipsis and new axes, offset (TFLM ignores all three; see test below).
    cases += [
        _strided(650, "int8", (2, 3, 4, 5), {"ellipsis_mask": 2}, [1, 0, 1], [2, 0, 4], [1, 1, 2], LITERT),
        _strided(651, "float32", (3, 4, 5), {"new_axis_mask": 2}, [0, 0, 1], [3, 1, 4], [2, 1, 1], LITERT),
        _strided(652, "int16", (4, 6), {"offset": True}, [1, 2], [2, 3], [1, 1], LITERT),
        _strided(653, "int32", (2, 3, 4, 5), {"ellipsis_mask": 1, "new_axis_mask": 4}, [0, 0, 1],
                 [0, 1, 5], [1, 1, -1], LITERT),
    ]
    return cases


def pad_cases() -> list[Case]:
    cases = []
    for seed, dtype in enumerate(["int8", "int16", "float32", "int32"] * 2):
        rng = _rng(700 + seed)
        shape = SHAPES[seed % 5]
        paddings = rng.integers(0, 3, size=(len(shape), 2)).astype(np.int32)
        paddings[0, 1] = 1  # never a no-op
        data = Operand(random_array(rng, shape, dtype), quant=(0.02, int(rng.integers(-100, 100)))
                       if dtype == "int8" else None)
        if dtype == "int8" or seed < 4:
            cases.append(Case(f"pad-{dtype}-{len(shape)}d-{paddings.tolist()}", "PAD",
                              [data, Operand(paddings, const=True)]))
        value = random_array(rng, (1,), dtype)
        cases.append(Case(f"padv2-{dtype}-{len(shape)}d-{paddings.tolist()}", "PADV2",
                          [data, Operand(paddings, const=True), Operand(value, const=seed % 2 == 0,
                                                                        quant=data.quantization())]))
    return cases


def int16_pad_case() -> Case:
    """int16 with zero point 7: TFLM pads with 0, LiteRT with the zero point."""
    rng = _rng(750)
    return Case("pad-int16-zp7", "PAD", [Operand(random_array(rng, (2, 3, 4), "int16"), quant=(0.001, 7)),
                                         Operand(np.array([[1, 0], [0, 2], [1, 1]], np.int32), const=True)])


def transpose_cases() -> list[Case]:
    cases = []
    for seed, dtype in enumerate(["int8", "int16", "float32"] * 4):
        rng = _rng(800 + seed)
        shape = SHAPES[seed % 5]
        perm = rng.permutation(len(shape)).astype(np.int32)
        if len(shape) > 1 and (perm == np.arange(len(shape))).all():
            perm = perm[::-1].copy()
        cases.append(Case(f"transpose-{dtype}-{list(shape)}-{perm.tolist()}", "TRANSPOSE",
                          [Operand(random_array(rng, shape, dtype)), Operand(perm, const=True)]))
    return cases


def gather_cases() -> list[Case]:
    cases = []
    for seed in range(12):
        rng = _rng(900 + seed)
        dtype = ["int8", "float32"][seed % 2]
        index_dtype, modes = (np.int32, BOTH) if seed < 9 else (np.int64, LITERT)
        shape = SHAPES[1 + seed % 4]
        axis = int(rng.integers(-len(shape), len(shape)))
        positive = axis % len(shape)
        batch_dims = int(rng.integers(0, positive + 1)) if seed % 3 == 1 else 0
        index_shape = list(shape[:batch_dims]) + [int(n) for n in rng.integers(1, 4, size=1 + seed % 2)]
        indices = rng.integers(0, shape[positive], size=index_shape).astype(index_dtype)
        cases.append(Case(f"gather-{dtype}-{list(shape)}-ax{axis}-bd{batch_dims}-{index_dtype.__name__}",
                          "GATHER", [Operand(random_array(rng, shape, dtype)),
                                     Operand(indices, const=seed % 4 == 0)],
                          {"axis": axis, "batch_dims": batch_dims}, modes=modes))
    # A constant table looked up by activation indices (an embedding).
    for seed, dtype in enumerate(["int8", "float32"]):
        rng = _rng(950 + seed)
        table = random_array(rng, (10, 6), dtype)
        indices = rng.integers(0, 10, size=(2, 3)).astype(np.int32)
        cases.append(Case(f"gather-{dtype}-const-table", "GATHER",
                          [Operand(table, const=True), Operand(indices)], {"axis": 0}))
    return cases


REFERENCE_CASES = (concat_cases() + pack_cases() + unpack_cases() + split_cases() + slice_cases()
                   + strided_slice_cases() + pad_cases() + [int16_pad_case()] + transpose_cases()
                   + gather_cases())


@pytest.mark.parametrize("rounding", BOTH, ids=lambda r: r.value)
@pytest.mark.parametrize("case", REFERENCE_CASES, ids=lambda c: c.id)
def test_reference_matches_tflite(case: Case, rounding: Rounding) -> None:
    if rounding not in case.modes:
        pytest.skip("TFLM has no kernel for this configuration (tested below)")
    check_reference(case, rounding)


def test_int16_pad_modes_differ() -> None:
    """The case above passes in both modes only because each mode pads differently."""
    case = int16_pad_case()
    tflm, litert = run_tflm(case.model, case.inputs)[0], run_oracle_litert(case)
    assert (tflm != litert).any()
    assert set(np.unique(tflm[0, 0])) == {0} and set(np.unique(litert[0, 0])) == {7}


def run_oracle_litert(case: Case) -> np.ndarray:
    from oracles import run_litert

    return run_litert(case.model, case.inputs)[0]


LITERT_ONLY = [c for c in REFERENCE_CASES if c.modes == LITERT]


@pytest.mark.parametrize("case", LITERT_ONLY, ids=lambda c: c.id)
def test_tflm_only_configurations_are_rejected(case: Case) -> None:
    """What TFLM cannot run, mcugen refuses in TFLM mode: TFLM fails (or computes another
    shape), and mcugen's support rules or its TFLM-mode Prepare reject the op."""
    with pytest.raises(Exception):  # noqa: B017 - TFLM raises RuntimeError or ValueError
        run_tflm(case.model, case.inputs)
    graph = parse_model(case.model, case.id)
    if not graph_problems(graph):
        with pytest.raises(UnsupportedError):
            run_outputs(graph, case.inputs, Rounding.TFLM)


# The LiteRT-only STRIDED_SLICE cases but the last, whose 5-D output a plain rule refuses.
@pytest.mark.parametrize("case", [c for c in strided_slice_cases() if c.modes == LITERT][:3], ids=lambda c: c.id)
def test_tflm_strided_slice_refusals_are_prepare_rules(case: Case) -> None:
    """What only TFLM's Prepare refuses is a rule of the op in TFLM mode (mcugen inspect and
    docs/supported_ops.md list it) and no rule at all in LiteRT mode."""
    (op,) = parse_model(case.model, case.id).ops
    texts = (TFLM_ONE_VALUE_PER_DIMENSION.text, TFLM_OUTPUT_SHAPE.text)
    problems = check_op(op, Setting(Rounding.TFLM))
    assert len(problems) == 1 and any(text in problems[0] for text in texts), problems
    assert check_op(op, Setting(Rounding.LITERT)) == []


def test_move_loop_refuses_what_mcugen_move_cannot_take() -> None:
    """More loop levels than the kernel has, or a byte offset past int32, break the
    MOVE_FITS_KERNEL rule, reported against the op."""
    op = Op(OpKind.TRANSPOSE, inputs=[], outputs=[], options=NoOptions(), index=3)
    levels = MAX_LOOPS + 1
    extents = [2] * levels + [3]
    strides = [2 ** (levels - a) for a in range(levels)] + [2 ** (levels + 1)]  # nothing merges
    with pytest.raises(RuleViolation, match="TRANSPOSE \\(op 3") as raised:
        move_loop(op, extents, strides, [1] * len(extents), 0, 0, 1)
    assert raised.value.rule is MOVE_FITS_KERNEL and "8 loop levels" in raised.value.value
    with pytest.raises(RuleViolation) as raised:
        move_loop(op, [4, 3], [1, 4], [3, 1], 2**31, 0, 1)
    assert raised.value.rule is MOVE_FITS_KERNEL and str(2**31) in raised.value.value


def test_an_omitted_concatenation_input_is_a_rule() -> None:
    """CONCATENATION and PACK copy every input: one left out is refused by a rule, not by an
    error in the emitter."""
    (op,) = parse_model(_rule_cases()[1].model, "concat").ops
    op.inputs = [op.inputs[0], None]
    problems = check_op(op)
    assert any(inputs_present.__doc__.strip() in p for p in problems), problems  # type: ignore[union-attr]


def test_strided_slice_offset_is_ignored_by_tflm() -> None:
    """With begin 0 the offset option changes nothing, so both runtimes accept the model; with
    begin 1 TFLM's shape check fails (it reads end as absolute)."""
    same = _strided(660, "int8", (5, 6), {"offset": True}, [0, 0], [3, 4], [1, 2])
    for rounding in BOTH:
        check_reference(same, rounding)


def test_move_loop_merges_and_pads() -> None:
    """A contiguous copy is one run; a transpose keeps its levels; loops fill MAX_LOOPS."""
    op = Op(OpKind.TRANSPOSE, inputs=[], outputs=[], options=NoOptions(), index=0)
    loop = move_loop(op, [2, 3, 4], [12, 4, 1], [12, 4, 1], 0, 0, 2)
    assert loop.run_bytes == 48 and loop.extent == (1,) * MAX_LOOPS
    loop = move_loop(op, [4, 3], [1, 4], [3, 1], 0, 0, 1)
    assert loop.extent[-2:] == (4, 3) and loop.input_stride[-2:] == (1, 4) and loop.run_bytes == 1


# Compiled C: a few models per op kind. The C differs between the modes only for int16 PAD and
# STRIDED_SLICE, so those compile in both; the others alternate. Each kernel (mcugen_move,
# mcugen_fill, mcugen_gather) runs under ASan/UBSan at least once.
def _pick(cases: list[Case], *prefixes: str) -> list[Case]:
    """The first case of each prefix whose data input has the most dimensions (up to 4)."""
    def rank(c: Case) -> int:
        return min(max(o.value.ndim for o in c.operands), 4)

    return [max((c for c in cases if c.id.startswith(p)), key=rank) for p in prefixes]


def _negative_strides(case: Case) -> bool:
    return case.modes == BOTH and case.operands[0].value.ndim >= 2 and (case.operands[3].value < 0).any()


_COMPILED_ONCE = (
    _pick(concat_cases(), "concat-int8", "concat-float32", "concat-bool")
    + _pick(pack_cases(), "pack-int16") + _pick(unpack_cases(), "unpack-int8")
    + _pick(split_cases(), "split-int8", "splitv-float32")
    + _pick(slice_cases(), "slice-int16", "slice-bool")
    + _pick(pad_cases(), "pad-int8", "padv2-float32", "padv2-int16")
    + _pick(transpose_cases(), "transpose-int8", "transpose-float32")
    + _pick(gather_cases(), "gather-int8", "gather-float32", "gather-float32-const")
)
_SANITIZED = ("concat-int8", "split-int8", "pad-int8", "gather-int8", "transpose-int8",
              "gather-float32-const")
COMPILED = [(c, BOTH[n % 2], c.id.startswith(_SANITIZED)) for n, c in enumerate(_COMPILED_ONCE)] + [
    (c, rounding, rounding is Rounding.LITERT)
    for c in [int16_pad_case(), *[c for c in strided_slice_cases() if _negative_strides(c)][:2]]
    for rounding in BOTH
]


@pytest.mark.parametrize(("case", "rounding", "sanitize"), COMPILED,
                         ids=[f"{c.id}-{r.value}{'-asan' if s else ''}" for c, r, s in COMPILED])
def test_compiled_matches_tflite(case: Case, rounding: Rounding, sanitize: bool) -> None:
    check_compiled(case, rounding, sanitize=sanitize)


def _rule_cases() -> list[Case]:
    """Configurations TFLM refuses; mcugen's support rules must refuse each of them too."""
    rng = _rng(990)
    return [
        Case("rule-concat-int8-scales", "CONCATENATION",
             [Operand(random_array(rng, (2, 3), "int8"), quant=(0.05, -3)),
              Operand(random_array(rng, (2, 3), "int8"), quant=(0.1, -3))], {"axis": 0}, shapes=[[4, 3]]),
        Case("rule-concat-relu", "CONCATENATION",
             [Operand(random_array(rng, (2, 3), "float32")), Operand(random_array(rng, (2, 3), "float32"))],
             {"axis": 1, "fused_activation_function": "RELU"}, shapes=[[2, 6]]),
        Case("rule-transpose-int32", "TRANSPOSE",
             [Operand(random_array(rng, (2, 3), "int32")), Operand(np.array([1, 0], np.int32), const=True)],
             shapes=[[3, 2]]),
        Case("rule-gather-int16", "GATHER",
             [Operand(random_array(rng, (4, 3), "int16")), Operand(np.array([1, 3], np.int32))], {"axis": 0},
             shapes=[[2, 3]]),
        Case("rule-unpack-int64", "UNPACK", [Operand(random_array(rng, (2, 3), "int64"))],
             {"num": 2, "axis": 0}, outputs=2, shapes=[[3], [3]]),
        Case("rule-strided-slice-5d", "STRIDED_SLICE",
             [Operand(random_array(rng, (2, 2, 2, 2, 3), "int8"))] + [
                 Operand(np.array(v, np.int32), const=True)
                 for v in ([0, 0, 0, 0, 1], [2, 2, 2, 2, 3], [1, 1, 1, 1, 1])], shapes=[[2, 2, 2, 2, 2]]),
        Case("rule-padv2-int8-value-quant", "PADV2",
             [Operand(random_array(rng, (2, 3), "int8"), quant=(0.05, -3)),
              Operand(np.array([[1, 0], [0, 1]], np.int32), const=True),
              Operand(np.array([5], np.int8), const=True, quant=(0.1, -3))], shapes=[[3, 4]]),
    ]


@pytest.mark.parametrize("case", _rule_cases(), ids=lambda c: c.id)
def test_support_rules_refuse_what_tflm_refuses(case: Case) -> None:
    with pytest.raises(Exception):  # noqa: B017 - TFLM raises RuntimeError on Prepare/Eval
        run_tflm(case.model, case.inputs)
    assert graph_problems(parse_model(case.model, case.id))


def test_int64_min_constant_compiles_and_is_exact() -> None:
    """An int64 constant holding INT64_MIN reaches the C as a valid constant (once written as
    -9223372036854775808, which C cannot represent: the build failed under -Werror)."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 3], "int64")
    extremes = np.array([[np.iinfo(np.int64).min, -1, np.iinfo(np.int64).max]], np.int64)
    c = b.add_tensor("c", [1, 3], "int64", data=extremes)
    y = b.add_tensor("y", [1, 6], "int64")
    b.add_op("CONCATENATION", [x, c], [y], {"axis": 1})
    b.set_io([x], [y])
    model = b.build()
    inputs = [np.array([[np.iinfo(np.int64).min, 0, 7]], np.int64)]
    (expected,) = run_litert(model, inputs)
    for rounding in Rounding:
        (actual,) = run_tflite_bytes(model, inputs, rounding)
        assert_exact(actual, expected)
