"""Elementwise binary ops, bit-exact with TFLite's reference kernels in both modes (TFLM, LiteRT):
ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU in int8, int16 and float32.

Per-element arithmetic (the Prepare-time constants, and where the two runtimes differ, are in
prepare.py; numpy broadcasting stands in for the C's loop nest):
- ADD/SUB (reference AddFunc / BroadcastQuantSubSlow, identical for int8 and int16): each input
  plus its offset is shifted left (20 bits int8, 15 int16), rescaled by its own multiplier; the
  sum or difference is rescaled by the output multiplier, offset and clamped.
- ADD/SUB int16 with power-of-two scales (LiteRT only): RoundingDivideByPOT of the finer input,
  then the saturating sum or difference, clamped (Add with pot_scale, Sub16,
  BroadcastSub16POTSlow: the int16 saturation is inside the activation clamp, so it is one clamp).
- SQUARED_DIFFERENCE: the AddFunc difference (left shift 7 int8, 0 int16), squared in int32,
  rescaled by MultiplyByQuantizedMultiplier, clamped to the dtype.
- MUL (MulElementwise): (q1 + offset1) * (q2 + offset2) rescaled once.
- MAXIMUM/MINIMUM: the raw stored values compared (TFLite rescales nothing, whatever the
  quantization), `a > b ? a : b` and `a < b ? a : b`.
- PRELU (BroadcastPrelu4DSlow): x >= 0 rescaled by the identity multiplier, else x * alpha by
  the alpha multiplier, offset and clamped to the dtype.
- float32: a + b, a - b, a * b clamped as min(max(x, lo), hi) (no activation clamps to
  [-FLT_MAX, FLT_MAX]); (a - b) * (a - b); PRELU x >= 0 ? x : x * alpha.

Rounding: every MultiplyByQuantizedMultiplier rounds twice in both runtimes (measured for ADD
over exhaustive grids; tests/test_ref_binary.py pins the other ops with power-of-two ties).
Broadcasting follows numpy, which is what TFLite's BroadcastBinaryOpSimple computes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import DType, Op, OpKind
from ...quantization import Rounding
from ..fixedpoint import (
    clamp,
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    wrap_int32,
)
from .prepare import (
    MulParams,
    PotParams,
    PreluParams,
    RescaleParams,
    add_sub_params,
    float_clamp,
    mul_params,
    prelu_params,
    squared_difference_params,
)


def _scaled_inputs(a: np.ndarray, b: np.ndarray, q: RescaleParams) -> tuple[np.ndarray, np.ndarray]:
    """AddFunc's two rescaled inputs, as int64 arrays holding int32 values."""
    shifted_a = (a.astype(np.int64) + q.input1_offset) << q.left_shift
    shifted_b = (b.astype(np.int64) + q.input2_offset) << q.left_shift
    return (multiply_by_quantized_multiplier(shifted_a, q.input1_multiplier, q.input1_shift),
            multiply_by_quantized_multiplier(shifted_b, q.input2_multiplier, q.input2_shift))


def add_rescaled(a: np.ndarray, b: np.ndarray, q: RescaleParams, sign: int) -> np.ndarray:
    """AddFunc (sign 1) or its SUB twin (sign -1); returns the clamped int64 result."""
    scaled_a, scaled_b = _scaled_inputs(a, b, q)
    raw = multiply_by_quantized_multiplier(scaled_a + sign * scaled_b, q.output_multiplier,
                                           q.output_shift)
    return clamp(raw + q.output_offset, q.activation_min, q.activation_max)


def add_pot(a: np.ndarray, b: np.ndarray, q: PotParams, sign: int) -> np.ndarray:
    scaled_a = rounding_divide_by_pot(a.astype(np.int64), q.input1_shift)
    scaled_b = rounding_divide_by_pot(b.astype(np.int64), q.input2_shift)
    return clamp(scaled_a + sign * scaled_b, q.activation_min, q.activation_max)


def squared_difference_int(a: np.ndarray, b: np.ndarray, q: RescaleParams) -> np.ndarray:
    scaled_a, scaled_b = _scaled_inputs(a, b, q)
    diff = scaled_a - scaled_b
    raw = multiply_by_quantized_multiplier(wrap_int32(diff * diff), q.output_multiplier,
                                           q.output_shift)
    return clamp(raw + q.output_offset, q.activation_min, q.activation_max)


def mul_int(a: np.ndarray, b: np.ndarray, q: MulParams) -> np.ndarray:
    product = (a.astype(np.int64) + q.input1_offset) * (b.astype(np.int64) + q.input2_offset)
    raw = multiply_by_quantized_multiplier(wrap_int32(product), q.output_multiplier, q.output_shift)
    return clamp(raw + q.output_offset, q.activation_min, q.activation_max)


def prelu_int(x: np.ndarray, alpha: np.ndarray, q: PreluParams) -> np.ndarray:
    value = x.astype(np.int64) + q.input_offset
    negative = wrap_int32(value * (alpha.astype(np.int64) + q.alpha_offset))
    raw = np.where(value >= 0,
                   multiply_by_quantized_multiplier(value, q.identity_multiplier, q.identity_shift),
                   multiply_by_quantized_multiplier(negative, q.alpha_multiplier, q.alpha_shift))
    return clamp(raw + q.output_offset, q.activation_min, q.activation_max)


def _float_clamped(op: Op, value: np.ndarray) -> np.ndarray:
    """ActivationFunctionWithMinMax: min(max(x, lo), hi) with std::max/min's NaN behaviour."""
    low, high = (np.float32(v) for v in float_clamp(op))
    above = np.where(value < low, low, value)
    return np.where(high < above, high, above).astype(np.float32)


def _float_kernel(op: Op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        if op.kind is OpKind.ADD:
            return _float_clamped(op, a + b)
        if op.kind is OpKind.SUB:
            return _float_clamped(op, a - b)
        if op.kind is OpKind.MUL:
            return _float_clamped(op, a * b)
        if op.kind is OpKind.SQUARED_DIFFERENCE:
            diff = a - b
            return diff * diff
        if op.kind is OpKind.PRELU:
            return np.where(a >= np.float32(0), a, a * b)
    raise AssertionError(f"no float kernel for {op.kind.name}")


def _quantized_kernel(op: Op, a: np.ndarray, b: np.ndarray, rounding: Rounding) -> np.ndarray:
    if op.kind in (OpKind.ADD, OpKind.SUB):
        sign = 1 if op.kind is OpKind.ADD else -1
        q = add_sub_params(op, rounding)
        if isinstance(q, PotParams):
            return add_pot(a, b, q, sign)
        return add_rescaled(a, b, q, sign)
    if op.kind is OpKind.SQUARED_DIFFERENCE:
        return squared_difference_int(a, b, squared_difference_params(op, rounding))
    if op.kind is OpKind.MUL:
        return mul_int(a, b, mul_params(op, rounding))
    if op.kind is OpKind.PRELU:
        return prelu_int(a, b, prelu_params(op, rounding))
    raise AssertionError(f"no quantized kernel for {op.kind.name}")


_COMPARISONS: dict[OpKind, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    OpKind.MAXIMUM: lambda a, b: np.where(a > b, a, b),
    OpKind.MINIMUM: lambda a, b: np.where(a < b, a, b),
}


def binary(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    a, b = inputs[0], inputs[1]
    assert a is not None and b is not None
    y = op.outputs[0]
    a, b = np.asarray(a), np.asarray(b)
    if op.kind in _COMPARISONS:
        result = _COMPARISONS[op.kind](a, b)
    elif y.dtype is DType.FLOAT32:
        result = _float_kernel(op, a, b)
    else:
        result = _quantized_kernel(op, a, b, rounding)
    return [np.broadcast_to(result, y.shape).astype(y.dtype.numpy)]
