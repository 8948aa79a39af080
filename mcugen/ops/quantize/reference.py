"""QUANTIZE and DEQUANTIZE, bit-exact with TFLite's reference kernels (TFLM and LiteRT agree).

float32 -> int8/int16: reference_ops::AffineQuantize, round(x / scale) in float32 with halves
away from zero, plus the zero point, clamped. Out-of-range values are clamped here (and in the
C), where TFLite's float-to-int32 cast is undefined (x86 gives INT32_MIN).
int -> int: reference_ops::Requantize, MultiplyByQuantizedMultiplier by the double ratio of the
scales (prepare.requantize_params), clamped to the output type.
DEQUANTIZE: static_cast<float>(double(scale) * (q - zero_point)).
"""

from __future__ import annotations

import numpy as np

from ...ir import Op
from ...quantization import Rounding
from ..activation.reference import rescale
from ..base import Setting
from .prepare import AffineParams, prepare_dequantize, prepare_quantize


def quantize_float(x: np.ndarray, scale: float, zero_point: int, low: int, high: int) -> np.ndarray:
    quotient = (x.astype(np.float32) / np.float32(scale)).astype(np.float64)
    rounded = np.sign(quotient) * np.floor(np.abs(quotient) + 0.5)
    return np.clip(np.nan_to_num(rounded, nan=0.0) + zero_point, low, high).astype(np.int64)


def quantize(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    y = op.outputs[0]
    p = prepare_quantize(op, Setting(rounding=rounding))
    if isinstance(p, AffineParams):
        return [quantize_float(x, p.scale, p.zero_point, p.low, p.high).astype(y.dtype.numpy)]
    return [rescale(p, x).astype(y.dtype.numpy)]


def dequantize(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if x.dtype == np.float16:  # the converter's float16 weights: exact widening (passes/float16.py)
        return [x.astype(np.float32)]
    p = prepare_dequantize(op, Setting(rounding=rounding))
    return [(p.scale * (x.astype(np.float64) - p.zero_point)).astype(np.float32)]
