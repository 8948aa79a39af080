"""Vectorised TFLite fixed-point primitives on int64 numpy arrays.

Each function takes and returns np.int64 arrays (values already in int32 range where TFLite
works in int32) so that intermediate products never overflow numpy's arithmetic.
"""

from __future__ import annotations

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def as_int64(x: np.ndarray | int) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def saturating_rounding_doubling_high_mul(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul: round(a*b / 2^31), ties away from zero."""
    a, b = as_int64(a), as_int64(b)
    product = a * b
    nudge = np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    total = product + nudge
    # C integer division truncates toward zero.
    quotient = np.where(total >= 0, total >> 31, -((-total) >> 31))
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    return np.where(overflow, INT32_MAX, quotient)


def rounding_divide_by_pot(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT: x / 2^exponent, ties away from zero."""
    x, exponent = as_int64(x), as_int64(exponent)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(
    x: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int
) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplier for int32 x: double rounding (a rounding doubling
    high multiply, then a rounding right shift), as TFLM and LiteRT's reference kernels do."""
    x, multiplier, shift = as_int64(x), as_int64(multiplier), as_int64(shift)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    shifted = wrap_int32(x * (np.int64(1) << left))
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right)


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's complement wrap of int64 values into int32 range (TFLite's int32 accumulator)."""
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def clamp(x: np.ndarray, low: int, high: int) -> np.ndarray:
    return np.minimum(np.maximum(x, low), high)
