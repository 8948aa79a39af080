"""Build-time parameters of QUANTIZE and DEQUANTIZE: TFLite's Prepare step, shared by the C
emitters (emit.py) and the numpy reference (reference.py).

float32 -> int8/int16 and int -> float32 are affine (one float32 scale and a zero point);
integer requantization (int8/int16 -> int8/int16, int8 <-> uint8) is the activation family's
rescale-and-clamp (RescaleParams) with the double ratio of the scales. Nothing here refuses:
the rules (dtype pairs, per-tensor quantization) are all plain ones.
"""

from __future__ import annotations

import numpy as np

from ...ir import DType, Op, Tensor
from ...quantization import dtype_range
from ...records import dataclass
from ..activation.prepare import RescaleParams, plain_rescale
from ..base import Setting
from ..common import checked_multiplier, scale_of, zero_point_of


def _io(op: Op) -> tuple[Tensor, Tensor]:
    x = op.inputs[0]
    assert x is not None
    return x, op.outputs[0]




@dataclass(frozen=True)
class AffineParams:
    scale: float  # float32 value
    zero_point: int
    low: int
    high: int


def quantize_float_params(op: Op) -> AffineParams:
    _, y = _io(op)
    low, high = dtype_range(y.dtype)
    return AffineParams(float(np.float32(scale_of(y))), zero_point_of(y), low, high)


def dequantize_params(op: Op) -> AffineParams:
    x, _ = _io(op)
    low, high = dtype_range(x.dtype)
    return AffineParams(float(np.float32(scale_of(x))), zero_point_of(x), low, high)


def requantize_params(op: Op) -> RescaleParams:
    """QUANTIZE between integer types (reference_ops::Requantize): the double ratio of the
    scales, clamped to the output type, the same in both modes. int8 -> int8 with equal scales
    still rescales (multiplier 2^30, shift 1), which is exact."""
    x, y = _io(op)
    multiplier, shift = checked_multiplier(op, float(scale_of(x)) / float(scale_of(y)))
    low, high = dtype_range(y.dtype)
    return plain_rescale(op, multiplier, shift, low, high)


def prepare_quantize(op: Op, setting: Setting) -> AffineParams | RescaleParams:
    """float32 input: affine quantization; integer input: requantization."""
    x, _ = _io(op)
    return quantize_float_params(op) if x.dtype is DType.FLOAT32 else requantize_params(op)


def prepare_dequantize(op: Op, setting: Setting) -> AffineParams:
    return dequantize_params(op)
