"""The single-op models of tests/test_npu_elementwise.py: one `Case` per row, built with ModelBuilder.

Scales are chosen so that outputs spread over many values; constant operands (scalars, broadcast
tensors, PRELU's alpha) are part of the model, the other inputs random over the whole range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from modelbuilder import ModelBuilder

Quant = tuple[float, int]


@dataclass(frozen=True)
class Operand:
    shape: tuple[int, ...]
    quant: Quant
    const: tuple[int, ...] | None = None  # flattened constant values (None: a model input)


@dataclass(frozen=True)
class Case:
    id: str
    op: str
    operands: tuple[Operand, ...]
    out_shape: tuple[int, ...]
    out_quant: Quant
    dtype: str = "int8"
    options: dict[str, Any] = field(default_factory=dict)
    options_table: bool = True
    sizes: tuple[int, ...] = (128,)
    seed: int = 0
    then: tuple[str, Quant] | None = None  # a unary op applied to the result (Vela fuses its LUT)
    axes: tuple[int, ...] | None = None  # MEAN's constant axis input (int32)

    def build(self) -> bytes:
        b = ModelBuilder(self.id)
        inputs, tensors = [], []
        for n, operand in enumerate(self.operands):
            data = None
            if operand.const is not None:
                data = np.array(operand.const, dtype=self.dtype).reshape(operand.shape)
            t = b.add_tensor(f"in{n}", operand.shape, self.dtype, scale=operand.quant[0], zero_point=operand.quant[1],
                             data=data)
            tensors.append(t)
            if operand.const is None:
                inputs.append(t)
        if self.axes is not None:
            tensors.append(b.add_tensor("axes", (len(self.axes),), "int32", data=np.array(self.axes, np.int32)))
        y = b.add_tensor("out", self.out_shape, self.dtype, scale=self.out_quant[0], zero_point=self.out_quant[1])
        b.add_op(self.op, tensors, [y], self.options or None, options_table=self.options_table)
        if self.then is not None:
            op, quant = self.then
            z = b.add_tensor("then", self.out_shape, self.dtype, scale=quant[0], zero_point=quant[1])
            b.add_op(op, [y], [z])
            y = z
        b.set_io(inputs, [y])
        return b.build()

    def inputs(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        info = np.iinfo(np.dtype(self.dtype))
        arrays = [rng.integers(info.min, info.max + 1, size=o.shape, dtype=self.dtype)
                  for o in self.operands if o.const is None]
        if self.dtype == "int8" and arrays[0].size >= 256:
            # every int8 value once in the first input: a table op is then checked on its whole domain
            flat = arrays[0].reshape(-1)
            flat[:256] = rng.permutation(np.arange(-128, 128, dtype=np.int8))
        return arrays


def _const(shape: tuple[int, ...], seed: int, dtype: str = "int8") -> tuple[int, ...]:
    info = np.iinfo(np.dtype(dtype))
    return tuple(int(v) for v in np.random.default_rng(seed).integers(info.min, info.max + 1, size=int(np.prod(shape))))


S = (1, 6, 7, 20)
ALL = (64, 128, 256)


def binary_cases() -> list[Case]:
    cases: list[Case] = []
    add = [
        ("add-same-scale", S, S, (0.05, 3), (0.05, 3), (0.1, -2), {}, ALL),
        ("add-scales-differ", S, S, (0.05, 3), (0.02, -7), (0.07, 5), {}, ALL),
        ("add-scales-differ-reversed-size", S, S, (0.013, -20), (0.04, 9), (0.05, 0), {}, ()),
        ("add-relu", S, S, (0.05, 3), (0.03, -7), (0.06, -30), {"fused_activation_function": "RELU"}, ()),
        ("add-relu6", S, S, (0.05, 3), (0.03, -7), (0.03, -120), {"fused_activation_function": "RELU6"}, ()),
        ("add-bcast-h", S, (1, 1, 7, 20), (0.05, 3), (0.02, -7), (0.07, 5), {}, ()),
        ("add-bcast-w", S, (1, 6, 1, 20), (0.05, 3), (0.02, -7), (0.07, 5), {}, ()),
        ("add-bcast-c", S, (1, 6, 7, 1), (0.05, 3), (0.02, -7), (0.07, 5), {}, ()),
        ("add-bcast-first-operand", (1, 6, 7, 1), S, (0.05, 3), (0.02, -7), (0.07, 5), {}, ()),
    ]
    for name, s1, s2, q1, q2, qo, opts, sizes in add:
        cases.append(Case(name, "ADD", (Operand(s1, q1), Operand(s2, q2)), S, qo, options=opts,
                          sizes=sizes or (128,), seed=len(cases)))
    cases.append(Case("add-const-scalar", "ADD", (Operand(S, (0.05, 3)), Operand((1,), (0.02, 0), (57,))), S,
                      (0.07, 5), seed=20))
    cases.append(Case("add-const-tensor-bcast-c", "ADD", (Operand(S, (0.05, 3)), Operand((1, 1, 1, 20), (0.02, 1),
                      _const((1, 1, 1, 20), 21))), S, (0.07, 5), seed=21))
    sub = [
        ("sub-same-scale", S, S, (0.05, 3), (0.05, 3), (0.1, -2)),
        ("sub-scales-differ", S, S, (0.05, 3), (0.02, -7), (0.07, 5)),
        ("sub-bcast-w-first-operand", (1, 6, 1, 20), S, (0.05, 3), (0.02, -7), (0.07, 5)),
    ]
    for name, s1, s2, q1, q2, qo in sub:
        cases.append(Case(name, "SUB", (Operand(s1, q1), Operand(s2, q2)), S, qo, seed=30 + len(cases),
                          sizes=ALL if name == "sub-scales-differ" else (128,)))
    mul = [
        ("mul", S, S, (0.05, 3), (0.02, -7), (0.05, 5), {}, ALL),
        ("mul-relu", S, S, (0.05, 3), (0.02, -7), (0.05, -20), {"fused_activation_function": "RELU"}, ()),
        ("mul-bcast-h", S, (1, 1, 7, 20), (0.05, 3), (0.02, -7), (0.05, 5), {}, ()),
        ("mul-bcast-w", S, (1, 6, 1, 20), (0.05, 3), (0.02, -7), (0.05, 5), {}, ()),
        ("mul-bcast-c", S, (1, 6, 7, 1), (0.05, 3), (0.02, -7), (0.05, 5), {}, ()),
        ("mul-bcast-first-operand", (1, 1, 7, 20), S, (0.05, 3), (0.02, -7), (0.05, 5), {}, ()),
    ]
    for name, s1, s2, q1, q2, qo, opts, sizes in mul:
        cases.append(Case(name, "MUL", (Operand(s1, q1), Operand(s2, q2)), S, qo, options=opts,
                          sizes=sizes or (128,), seed=50 + len(cases)))
    cases.append(Case("mul-const-scalar", "MUL", (Operand(S, (0.05, 3)), Operand((1,), (0.01, 0), (-87,))), S,
                      (0.05, 5), seed=70))
    for op in ("MINIMUM", "MAXIMUM"):
        cases.append(Case(f"{op.lower()}", op, (Operand(S, (0.05, 3)), Operand(S, (0.05, 3))), S, (0.05, 3),
                          seed=80 + len(cases)))
        cases.append(Case(f"{op.lower()}-bcast-c", op, (Operand(S, (0.05, 3)), Operand((1, 6, 7, 1), (0.05, 3))),
                          S, (0.05, 3), seed=90 + len(cases)))
        cases.append(Case(f"{op.lower()}-const-scalar", op, (Operand(S, (0.05, 3)), Operand((1,), (0.05, 3), (11,))),
                          S, (0.05, 3), seed=95 + len(cases)))
    return cases


def int16_cases() -> list[Case]:
    return [
        Case("int16-add-same-scale", "ADD", (Operand(S, (0.001, 0)), Operand(S, (0.001, 0))), S, (0.0015, 0),
             dtype="int16", seed=200),
        Case("int16-add-scales-differ", "ADD", (Operand(S, (0.001, 0)), Operand(S, (0.0004, 0))), S, (0.0013, 0),
             dtype="int16", seed=201),
        Case("int16-sub-scales-differ", "SUB", (Operand(S, (0.001, 0)), Operand(S, (0.0004, 0))), S, (0.0013, 0),
             dtype="int16", seed=202),
        Case("int16-mul", "MUL", (Operand(S, (0.001, 0)), Operand(S, (0.0004, 0))), S, (0.00002, 0),
             dtype="int16", seed=203),
        Case("int16-maximum", "MAXIMUM", (Operand(S, (0.001, 0)), Operand(S, (0.001, 0))), S, (0.001, 0),
             dtype="int16", seed=204),
        Case("int16-leaky-relu", "LEAKY_RELU", (Operand(S, (0.001, 0)),), S, (0.001, 0), dtype="int16",
             options={"alpha": 0.3}, seed=205),
    ]


def unary_cases() -> list[Case]:
    x = (Operand(S, (0.05, 3)),)
    return [
        Case("leaky-relu", "LEAKY_RELU", x, S, (0.04, -10), options={"alpha": 0.2}, seed=300, sizes=ALL),
        Case("abs", "ABS", x, S, (0.03, -128), seed=301),
        Case("relu", "RELU", x, S, (0.04, -128), seed=302),
        Case("relu6", "RELU6", x, S, (0.05, 3), seed=303),  # TFLM's int8 RELU6 does not requantize
        Case("logistic", "LOGISTIC", (Operand(S, (0.06, 3)),), S, (1 / 256, -128), seed=305, sizes=ALL),
        Case("tanh", "TANH", (Operand(S, (0.03, -5)),), S, (1 / 128, 0), seed=306),
        Case("hard-swish", "HARD_SWISH", (Operand(S, (0.05, 3)),), S, (0.03, -40), seed=307),
        Case("quantize-requantize", "QUANTIZE", x, S, (0.07, 10), seed=308),
        Case("prelu", "PRELU", (Operand(S, (0.05, 3)), Operand((1, 1, 1, 20), (0.01, 0), _const((1, 1, 1, 20), 309))),
             S, (0.04, -10), seed=309),
        Case("softmax", "SOFTMAX", (Operand((1, 4, 10), (0.1, 3)),), (1, 4, 10), (1 / 256, -128),
             options={"beta": 1.0}, seed=310, sizes=ALL),
        Case("softmax-beta", "SOFTMAX", (Operand((2, 33), (0.05, -3)),), (2, 33), (1 / 256, -128),
             options={"beta": 0.7}, seed=311),
    ]


def fused_lut_cases() -> list[Case]:
    """An ELEMENTWISE operation that applies the LUT of the op after it."""
    two = (Operand(S, (0.05, 3)), Operand(S, (0.03, -7)))
    return [
        Case("add-then-logistic", "ADD", two, S, (0.06, 2), then=("LOGISTIC", (1 / 256, -128)), seed=400, sizes=ALL),
        Case("mul-then-tanh", "MUL", two, S, (0.02, 0), then=("TANH", (1 / 128, 0)), seed=401),
    ]


def int16_table_cases() -> list[Case]:
    """int16 ops that Vela 5.2 computes with the 16-bit interpolating LUT."""
    return [
        Case("int16-softmax", "SOFTMAX", (Operand((1, 4, 20), (0.0001, 0)),), (1, 4, 20), (1 / 32768, 0),
             dtype="int16", options={"beta": 1.0}, seed=500),
    ]


def mean_cases() -> list[Case]:
    """MEAN over height and width: Vela 5.2 makes it a DEPTHWISE sum and an ELEMENTWISE MUL."""
    keep = {"keep_dims": True}
    return [
        Case("mean-1x6x7x8", "MEAN", (Operand((1, 6, 7, 8), (0.05, -10)),), (1, 1, 1, 8), (0.05, -10),
             options=keep, axes=(1, 2), seed=600, sizes=ALL),
        Case("mean-1x2x2x64-rescale", "MEAN", (Operand((1, 2, 2, 64), (0.0625, 3)),), (1, 1, 1, 64), (0.02, -5),
             options=keep, axes=(1, 2), seed=601),
        Case("mean-1x12x12x16-rescale", "MEAN", (Operand((1, 12, 12, 16), (0.04, 7)),), (1, 1, 1, 16),
             (0.003, 1), options=keep, axes=(1, 2), seed=602),
        Case("mean-1x9x10x96-rescale", "MEAN", (Operand((1, 9, 10, 96), (0.05, -3)),), (1, 1, 1, 96),
             (0.0021, 2), options=keep, axes=(1, 2), seed=603),
    ]


def lowered_cases() -> list[Case]:
    """Ops that Vela 5.2 lowers to several ELEMENTWISE operations or to a LUT of its own."""
    x16 = (Operand(S, (0.001, 0)),)
    return [
        Case("squared-difference", "SQUARED_DIFFERENCE", (Operand(S, (0.05, 3)), Operand(S, (0.03, -7))), S,
             (0.2, -100), seed=700),
        Case("rsqrt", "RSQRT", (Operand(S, (0.05, -128)),), S, (0.02, -128), seed=702),
        Case("int16-leaky-relu-rescale", "LEAKY_RELU", x16, S, (0.0007, 0), dtype="int16", options={"alpha": 0.3},
             seed=703),
        Case("int16-leaky-relu-alpha-1.5", "LEAKY_RELU", x16, S, (0.001, 0), dtype="int16", options={"alpha": 1.5},
             seed=704),
        Case("int16-leaky-relu-negative-alpha", "LEAKY_RELU", x16, S, (0.001, 0), dtype="int16",
             options={"alpha": -0.4}, seed=705),
        Case("int16-abs", "ABS", x16, S, (0.001, 0), dtype="int16", seed=708),
        Case("int16-add-const-scalar", "ADD", (Operand(S, (0.001, 0)), Operand((1,), (0.0004, 0), (-3000,))), S,
             (0.0013, 0), dtype="int16", seed=709),
        Case("int16-mul-bcast-h", "MUL", (Operand(S, (0.001, 0)), Operand((1, 1, 7, 20), (0.0004, 0))), S,
             (0.00002, 0), dtype="int16", seed=710),
    ]


def refused_cases() -> list[Case]:
    """int16 LOGISTIC and TANH: Vela 5.2 programs the hardware's SIGMOID/TANH activation, whose
    arithmetic is not public: the engine refuses it."""
    x16 = (Operand(S, (0.001, 0)),)
    return [
        Case("int16-logistic", "LOGISTIC", x16, S, (1 / 32768, 0), dtype="int16", seed=706),
        Case("int16-tanh", "TANH", x16, S, (1 / 32768, 0), dtype="int16", seed=707),
    ]


def all_cases() -> list[Case]:
    return (binary_cases() + int16_cases() + unary_cases() + fused_lut_cases() + int16_table_cases()
            + mean_cases() + lowered_cases())
