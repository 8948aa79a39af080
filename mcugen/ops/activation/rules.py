"""Support rules of the activation and softmax kernels (LOGISTIC, TANH, HARD_SWISH, RELU, RELU6,
LEAKY_RELU, RSQRT, NEG, ABS, SOFTMAX), and the dtype and quantization rules that the quantize
family (QUANTIZE, DEQUANTIZE, mcugen/ops/quantize/) shares with them.

Each rule returns None when the op satisfies it, else the offending value; its docstring is
the rule shown to users. The family's definitions (mcugen/ops/activation/__init__.py) list
them per kind. The rules say what both TFLite Micro and mcugen's kernels accept; where TFLM
has no kernel for a dtype (NEG on integers, HARD_SWISH on int16, uint8 except in QUANTIZE to
and from int8 and in DEQUANTIZE) mcugen rejects it too.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...ir import DType, Op, Tensor
from .prepare import MAX_ROW_SIZE_F32, MAX_ROW_SIZE_S8, MAX_ROW_SIZE_S16

Rule = Callable[[Op], "str | None"]
_Pair = tuple[DType, DType]

I8, U8, I16, F32 = DType.INT8, DType.UINT8, DType.INT16, DType.FLOAT32


def _pair(op: Op) -> _Pair | None:
    x = op.inputs[0] if op.inputs else None
    return None if x is None or not op.outputs else (x.dtype, op.outputs[0].dtype)


def _io(op: Op) -> tuple[Tensor, Tensor]:
    x = op.inputs[0]
    assert x is not None
    return x, op.outputs[0]


def dtype_pairs(*pairs: _Pair) -> Rule:
    """Rule factory: (input, output) dtypes are one of the listed pairs."""

    def check(op: Op) -> str | None:
        pair = _pair(op)
        if pair is None or pair in pairs:
            return None
        return f"{pair[0].short} -> {pair[1].short}"

    listed = ", ".join(f"{a.short} -> {b.short}" for a, b in pairs)
    check.__doc__ = f"Input and output dtypes are one of: {listed}."
    return check


def _integer(t: Tensor) -> bool:
    return t.dtype in (I8, U8, I16)


def integer_tensors_per_tensor_quant(op: Op) -> str | None:
    """Integer inputs and outputs carry per-tensor quantization (one scale and zero point)."""
    bad = [f"'{t.name}' has {'no' if t.quant is None else len(t.quant.scale)} scales"
           for t in _io(op) if _integer(t) and (t.quant is None or t.quant.per_channel)]
    return ", ".join(bad) or None


def _zero_point(t: Tensor) -> int:
    return 0 if t.quant is None else t.quant.single_zero_point


def _scale(t: Tensor) -> float:
    return 0.0 if t.quant is None else t.quant.single_scale


def int16_zero_points(op: Op) -> str | None:
    """int16 inputs and outputs have zero point 0."""
    bad = [f"'{t.name}' zero point {_zero_point(t)}" for t in _io(op)
           if t.dtype is I16 and t.quant is not None and _zero_point(t) != 0]
    return ", ".join(bad) or None


def same_element_count(op: Op) -> str | None:
    """The output has as many elements as the input."""
    x, y = _io(op)
    return None if x.num_elements == y.num_elements else f"{x.num_elements} -> {y.num_elements}"


def _quantized_pair(op: Op, dtype: DType) -> bool:
    x, y = _io(op)
    return x.dtype is dtype and y.dtype is dtype and x.quant is not None and y.quant is not None


def logistic_output(op: Op) -> str | None:
    """int8 output: scale 1/256 and zero point -128; int16: scale 1/32768 and zero point 0."""
    _, y = _io(op)
    expected = {I8: (1 / 256, -128), I16: (1 / 32768, 0)}.get(y.dtype)
    if expected is None or y.quant is None:
        return None
    if np.float32(_scale(y)) != np.float32(expected[0]) or _zero_point(y) != expected[1]:
        return f"output scale {_scale(y):g} zero point {_zero_point(y)}"
    return None


def tanh_output(op: Op) -> str | None:
    """int8 output: scale 1/128 and zero point 0 (TFLM always writes Q0.7); int16: scale 2^-15."""
    _, y = _io(op)
    expected = {I8: (1 / 128, 0), I16: (1 / 32768, 0)}.get(y.dtype)
    if expected is None or y.quant is None:
        return None
    if np.float32(_scale(y)) != np.float32(expected[0]) or _zero_point(y) != expected[1]:
        return f"output scale {_scale(y):g} zero point {_zero_point(y)}"
    return None


def sigmoid_input_scale(op: Op) -> str | None:
    """int8 input scale is at least 2^-28 (the Q4.27 rescale shifts left); int16 input scale is
    below 32767 / 12288 (the table multiplier fits 15 bits)."""
    x, _ = _io(op)
    if x.quant is None:
        return None
    if x.dtype is I8 and _scale(x) * 2.0**27 < 0.5:
        return f"input scale {_scale(x):g}"
    if x.dtype is I16 and _scale(x) * 4096.0 * 3.0 > 32767.0:
        return f"input scale {_scale(x):g}"
    return None


def hard_swish_scales(op: Op) -> str | None:
    """input scale / 128 / output scale lies in [2^-32, 1) (TFLite's output exponent is in
    [-31, 0]), and input scale / 128 / (3 / 32768) in [2^-32, 2^15)."""
    x, y = _io(op)
    if x.quant is None or y.quant is None:
        return None
    hires = np.float32(1 / 128) * np.float32(_scale(x))
    ratio = float(hires / np.float32(_scale(y)))
    reluish = float(hires / np.float32(3 / 32768))
    if 2.0**-32 <= ratio < 1.0 and 2.0**-32 <= reluish < 2.0**15:
        return None
    return f"input scale {_scale(x):g}, output scale {_scale(y):g}"


def rsqrt_scales(op: Op) -> str | None:
    """1 / (sqrt(input scale) * output scale) lies in [2^-12, 2^50) (TFLite's rescale by
    2^-20 then stays a valid multiplier shift)."""
    x, y = _io(op)
    if x.quant is None or y.quant is None or x.dtype is F32:
        return None
    real = 1.0 / (math.sqrt(_scale(x)) * _scale(y))
    return None if 2.0**-12 <= real < 2.0**50 else f"1 / (sqrt(input scale) * output scale) = {real:g}"


def _near(value: float, target: float) -> bool:
    return abs(value - target) <= 0.001 * target


def softmax_output(op: Op) -> str | None:
    """int8 -> int8: output scale 1/256, zero point -128; int8 -> int16: 1/65536, -32768;
    int16 -> int16: 1/32768, zero point 0 (as TFLite requires)."""
    pair = _pair(op)
    _, y = _io(op)
    expected = {(I8, I8): (1 / 256, -128), (I8, I16): (1 / 65536, -32768),
                (I16, I16): (1 / 32768, 0)}.get(pair) if pair else None
    if expected is None or y.quant is None:
        return None
    if not _near(_scale(y), expected[0]) or _zero_point(y) != expected[1]:
        return f"output scale {_scale(y):g} zero point {_zero_point(y)}"
    return None


def softmax_int16_input(op: Op) -> str | None:
    """An int16 input has zero point 0."""
    x, _ = _io(op)
    if x.dtype is I16 and x.quant is not None and _zero_point(x) != 0:
        return f"input zero point {_zero_point(x)}"
    return None


def softmax_beta(op: Op) -> str | None:
    """int8 input: beta * input scale > 2^-26 (TFLite's multiplier must exceed one)."""
    x, _ = _io(op)
    beta = float(getattr(op.options, "beta", 1.0))
    if x.dtype is not I8 or x.quant is None:
        return None
    return None if beta * _scale(x) * 2.0**26 > 1.0 else f"beta * input scale {beta * _scale(x):g}"


def softmax_row_size(op: Op) -> str | None:
    """int8 input: rows (the last dimension) of at most 4095 elements; int16: at most 65536;
    float32: at most 2^30."""
    x, _ = _io(op)
    row = x.shape[-1] if x.shape else 1
    limit = {I8: MAX_ROW_SIZE_S8, I16: MAX_ROW_SIZE_S16, F32: MAX_ROW_SIZE_F32}.get(x.dtype)
    return None if limit is None or row <= limit else f"rows of {row} elements"


# Rules every integer element-wise activation shares.
ELEMENTWISE = [integer_tensors_per_tensor_quant, int16_zero_points, same_element_count]
