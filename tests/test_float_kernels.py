"""float32 CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED, BATCH_MATMUL,
AVERAGE_POOL_2D and MAX_POOL_2D against TFLite itself.

Oracles: LiteRT's reference kernels (BUILTIN_REF) and TFLM. The comparison is of the bits
(float32 viewed as uint32), so -0.0 against +0.0 or one NaN against another counts, and the
inputs include infinities, NaN and signed zeros where the kernels' order decides the result.
Every case here is bit-exact: the bound on any mismatch is 0 ULP. The C runs under ASan and
UBSan; the numpy reference (mcugen verify's path) is held to the same bits.
"""

from __future__ import annotations

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import run_litert, run_tflm
from singleop import Case, Operand

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_outputs
from mcugen.toolchain.host import run_tflite_bytes

MAX_ULP = 0  # the written bound: every float case matches to the bit


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32 if a.dtype == np.float32 else np.uint8)


def assert_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype == np.float32:
        ulp = np.abs(_bits(actual).astype(np.int64) - _bits(expected).astype(np.int64))
        assert int(ulp.max(initial=0)) <= MAX_ULP, f"{int(np.sum(ulp > 0))} of {ulp.size} outputs differ"
    else:
        assert np.array_equal(actual, expected)


def _spread(outputs: list[np.ndarray]) -> None:
    values = np.concatenate([o.ravel() for o in outputs])
    assert len(np.unique(values)) >= min(6, values.size // 4 + 1), "oracle output has no spread"


def check(model: bytes, inputs: list[np.ndarray], name: str, sanitize: bool = True, tflm: bool = True) -> None:
    """The compiled C and the numpy reference give LiteRT's bits, and TFLM's (tflm=False: a
    model TFLM cannot run, such as one with a float16 DEQUANTIZE)."""
    expected = run_litert(model, inputs)
    _spread(expected)
    if tflm:
        for other, wanted in zip(run_tflm(model, inputs), expected, strict=True):
            assert_bits(other, wanted)  # the two oracles agree, so either is the contract
    compiled = run_tflite_bytes(model, inputs, Rounding.LITERT, sanitize=sanitize)
    reference = run_outputs(parse_model(model, name), inputs, Rounding.LITERT)
    for got, ref, wanted in zip(compiled, reference, expected, strict=True):
        assert_bits(got, wanted)
        assert_bits(np.asarray(ref), wanted)


RNG = np.random.default_rng(14)


def normal(*shape: int) -> np.ndarray:
    return RNG.normal(0.0, 1.0, size=shape).astype(np.float32)


def special(*shape: int) -> np.ndarray:
    """Normal values with infinities, NaN and signed zeros spread in."""
    x = normal(*shape).ravel()
    picks = RNG.choice(x.size, size=min(8, x.size), replace=False)
    x[picks] = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, -0.0, 1e-40, -1e38], np.float32)[: picks.size]
    return x.reshape(shape)


def single(case_id: str, op: str, operands: list[Operand], options: dict, **kw: object) -> Case:
    return Case(case_id, op, operands, options, out_dtype="float32", **kw)  # type: ignore[arg-type]


def conv_case(case_id: str, x: tuple[int, ...], w: tuple[int, ...], bias: bool = True, **options: object) -> Case:
    operands = [Operand(normal(*x)), Operand(normal(*w), const=True)]
    if bias:
        operands.append(Operand(normal(w[0]), const=True))
    return single(case_id, "CONV_2D", operands, dict(options))


def depthwise_case(case_id: str, x: tuple[int, ...], w: tuple[int, ...], bias: bool = True,
                   **options: object) -> Case:
    operands = [Operand(normal(*x)), Operand(normal(*w), const=True)]
    if bias:
        operands.append(Operand(normal(w[3]), const=True))
    return single(case_id, "DEPTHWISE_CONV_2D", operands, {"depth_multiplier": w[3] // x[3], **options})


CONV_CASES = [
    conv_case("conv-same-s1", (1, 6, 7, 3), (4, 3, 3, 3), padding="SAME"),
    conv_case("conv-valid-s2", (1, 9, 8, 2), (5, 3, 2, 2), padding="VALID", stride_h=2, stride_w=2),
    conv_case("conv-same-s2-relu", (2, 7, 6, 3), (4, 3, 3, 3), padding="SAME", stride_h=2,
              fused_activation_function="RELU"),
    conv_case("conv-dilated-relu6", (1, 9, 9, 2), (3, 3, 3, 2), padding="SAME", dilation_h_factor=2,
              dilation_w_factor=3, fused_activation_function="RELU6"),
    conv_case("conv-1x1-n1to1", (1, 5, 5, 4), (3, 1, 1, 4), padding="VALID",
              fused_activation_function="RELU_N1_TO_1"),
    conv_case("conv-deep", (1, 4, 4, 40), (6, 2, 2, 40), padding="SAME"),
    depthwise_case("dw-same", (1, 7, 6, 3), (1, 3, 3, 3), padding="SAME"),
    depthwise_case("dw-mult2-s2", (1, 8, 8, 3), (1, 3, 3, 6), padding="SAME", stride_h=2, stride_w=2),
    depthwise_case("dw-dilated-relu", (2, 9, 7, 2), (1, 2, 3, 4), padding="VALID", dilation_h_factor=2,
                   fused_activation_function="RELU"),
    depthwise_case("dw-nobias-relu6", (1, 5, 5, 4), (1, 3, 3, 4), bias=False, padding="SAME",
                   fused_activation_function="RELU6"),
]


def transpose_case(case_id: str, x: tuple[int, ...], w: tuple[int, ...], out: list[int], bias: bool = True,
                   **options: object) -> Case:
    operands = [Operand(np.array(out, np.int32), const=True), Operand(normal(*w), const=True), Operand(normal(*x))]
    if bias:
        operands.append(Operand(normal(w[0]), const=True))
    return single(case_id, "TRANSPOSE_CONV", operands, dict(options), shapes=[out])


TRANSPOSE_CASES = [
    transpose_case("tconv-same-s2", (1, 4, 4, 3), (2, 3, 3, 3), [1, 8, 8, 2], padding="SAME", stride_h=2, stride_w=2),
    transpose_case("tconv-valid-s1", (1, 3, 4, 2), (3, 2, 2, 2), [1, 4, 5, 3], padding="VALID"),
    transpose_case("tconv-valid-s2-nobias", (2, 3, 3, 2), (2, 3, 3, 2), [2, 7, 7, 2], bias=False,
                   padding="VALID", stride_h=2, stride_w=2),
    transpose_case("tconv-same-s3-relu", (1, 2, 3, 4), (3, 4, 2, 4), [1, 6, 9, 3], padding="SAME",
                   stride_h=3, stride_w=3, fused_activation_function="RELU"),
]


def fc_case(case_id: str, x: tuple[int, ...], w: tuple[int, int], bias: bool = True, **options: object) -> Case:
    operands = [Operand(normal(*x)), Operand(normal(*w), const=True)]
    if bias:
        operands.append(Operand(normal(w[0]), const=True))
    return single(case_id, "FULLY_CONNECTED", operands, dict(options))


FC_CASES = [
    fc_case("fc-1x16", (1, 16), (5, 16)),
    fc_case("fc-batch3-relu", (3, 24), (7, 24), fused_activation_function="RELU"),
    fc_case("fc-4d-nobias", (1, 2, 3, 4), (6, 12), bias=False, fused_activation_function="RELU6"),
    fc_case("fc-keepdims", (2, 3, 8), (4, 8), keep_num_dims=True),
    fc_case("fc-long", (1, 300), (3, 300), fused_activation_function="RELU_N1_TO_1"),
]


def pool_case(case_id: str, op: str, x: tuple[int, ...], **options: object) -> Case:
    return single(case_id, op, [Operand(normal(*x))], dict(options))


POOL_CASES = [
    pool_case(f"{kind.lower()}-{tag}", kind, shape, **options)
    for kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D")
    for tag, shape, options in [
        ("same-s2", (1, 7, 6, 3), {"padding": "SAME", "stride_h": 2, "stride_w": 2, "filter_height": 3,
                                    "filter_width": 3}),
        ("valid-s1-relu", (2, 5, 6, 2), {"padding": "VALID", "filter_height": 2, "filter_width": 3,
                                          "fused_activation_function": "RELU"}),
        ("same-global-relu6", (1, 4, 4, 5), {"padding": "SAME", "stride_h": 1, "stride_w": 1,
                                              "filter_height": 4, "filter_width": 4,
                                              "fused_activation_function": "RELU6"}),
    ]
]


def bmm_case(case_id: str, lhs: tuple[int, ...], rhs: tuple[int, ...], const_rhs: bool = False,
             **options: object) -> Case:
    return single(case_id, "BATCH_MATMUL", [Operand(normal(*lhs)), Operand(normal(*rhs), const=const_rhs)],
                  dict(options))


BMM_CASES = [
    bmm_case("bmm-2d", (3, 5), (5, 4)),
    bmm_case("bmm-broadcast", (2, 1, 3, 6), (3, 6, 2)),
    bmm_case("bmm-adj-const", (2, 7, 3), (2, 4, 7), const_rhs=True, adj_x=True, adj_y=True),
    bmm_case("bmm-rank5", (1, 2, 2, 3, 4), (2, 1, 4, 3)),
]


@pytest.mark.parametrize("case", CONV_CASES + TRANSPOSE_CASES + FC_CASES + POOL_CASES + BMM_CASES,
                         ids=lambda c: c.id)
def test_float_op_matches_litert_and_tflm(case: Case) -> None:
    check(case.model, case.inputs, case.id)


def _with_special_input(case: Case) -> Case:
    operands = [Operand(special(*o.value.shape)) if not o.const else o for o in case.operands]
    return Case(case.id + "-special", case.op, operands, case.options, out_dtype="float32", shapes=case.shapes)


SPECIAL = [CONV_CASES[0], CONV_CASES[6], TRANSPOSE_CASES[0], FC_CASES[1], POOL_CASES[0], POOL_CASES[3],
           BMM_CASES[1]]


@pytest.mark.parametrize("case", SPECIAL, ids=lambda c: c.id)
def test_infinities_nan_and_signed_zeros_take_the_reference_path(case: Case) -> None:
    """An infinity clamps to +-FLT_MAX without an activation, NaN passes the clamp and loses to
    any value in a max, and a tap in the padding adds nothing (not a zero that would make
    inf * 0 a NaN or -0.0 a +0.0): the same bits as TFLite's reference order."""
    special_case = _with_special_input(case)
    check(special_case.model, special_case.inputs, special_case.id)


# --- float chains in stripes (tiling) -----------------------------------------------------------


class FloatChain:
    """A chain of float32 window ops (and a residual ADD) written into a ModelBuilder."""

    def __init__(self, shape: list[int]) -> None:
        self.b, self.shape, self.count = ModelBuilder("float chain"), list(shape), 0
        self.input = self.current = self.b.add_tensor("x", shape, "float32")

    def window(self, kind: str, kernel: int, stride: int = 1, dilation: int = 1, padding: str = "SAME",
               channels: int = 0, activation: str = "NONE") -> int:
        n, h, w, c = self.shape
        self.count += 1
        effective = (kernel - 1) * dilation + 1
        out_hw = [(s + stride - 1) // stride if padding == "SAME" else (s - effective + stride) // stride
                  for s in (h, w)]
        options: dict = {"padding": padding, "stride_h": stride, "stride_w": stride,
                         "fused_activation_function": activation}
        inputs = [self.current]
        out_c = c
        if kind in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
            options |= {"filter_height": kernel, "filter_width": kernel}
        else:
            out_c = c if kind == "DEPTHWISE_CONV_2D" else channels
            shape = (1, kernel, kernel, out_c) if kind == "DEPTHWISE_CONV_2D" else (out_c, kernel, kernel, c)
            inputs += [self.b.add_tensor(f"w{self.count}", shape, "float32", data=normal(*shape)),
                       self.b.add_tensor(f"b{self.count}", (out_c,), "float32", data=normal(out_c))]
            options |= {"dilation_h_factor": dilation, "dilation_w_factor": dilation}
            if kind == "DEPTHWISE_CONV_2D":
                options["depth_multiplier"] = 1
        self.shape = [n, *out_hw, out_c]
        out = self.b.add_tensor(f"t{self.count}", self.shape, "float32")
        self.b.add_op(kind, inputs, [out], options)
        self.current = out
        return out

    def add(self, other: int) -> None:
        self.count += 1
        out = self.b.add_tensor(f"t{self.count}", self.shape, "float32")
        self.b.add_op("ADD", [self.current, other], [out], {})
        self.current = out

    def model(self) -> bytes:
        self.b.set_io([self.input], [self.current])
        return self.b.build()


def float_chain() -> tuple[bytes, list[int]]:
    """conv 3x3 SAME (RELU) -> [depthwise 3x3 -> conv 3x3 dilation 2 SAME -> ADD of the first
    conv's output -> max pool 3x3 stride 2 SAME (RELU) -> average pool 2x2 VALID], the bracket
    being the chain that tiling runs in stripes."""
    shape = [1, 20, 9, 3]
    chain = FloatChain(shape)
    skip = chain.window("CONV_2D", 3, channels=6, activation="RELU")
    chain.window("DEPTHWISE_CONV_2D", 3)
    chain.window("CONV_2D", 3, dilation=2, channels=6)
    chain.add(skip)
    chain.window("MAX_POOL_2D", 3, stride=2, activation="RELU")
    chain.window("AVERAGE_POOL_2D", 2, padding="VALID")
    return chain.model(), shape


@pytest.mark.parametrize(("rolling", "count"), [(True, 10), (False, 3)])
def test_float_chain_in_stripes_matches_litert_and_tflm(rolling: bool, count: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiling forced on a float chain: each stripe's conv and pool take their own top padding,
    and the outputs keep TFLite's bits (ASan/UBSan on)."""
    from test_tiling import _forced

    from mcugen import driver
    from mcugen.driver import BuildOptions, compile_model
    from mcugen.toolchain.host import build_program, run_program

    model, shape = float_chain()
    x = normal(*shape)
    expected = run_litert(model, [x])
    _spread(expected)
    for other, wanted in zip(run_tflm(model, [x]), expected, strict=True):
        assert_bits(other, wanted)
    monkeypatch.setattr(driver, "plan_model", _forced(rolling, count))
    options = BuildOptions(rounding=Rounding.LITERT, prefix=f"ftiled_{'k' if rolling else 'r'}{count}", guard=16)
    compiled = compile_model(model, options)
    assert compiled.plan.tiling is not None and compiled.plan.tiling.chains
    program = build_program(model, options, "float_chain.tflite", sanitize=True)
    (actual,) = run_program(program, [[x]])[0]
    assert_bits(actual.reshape(expected[0].shape), expected[0])
