"""Prepare-time parameters of the elementwise binary ops: ADD, SUB, MUL, SQUARED_DIFFERENCE,
MAXIMUM, MINIMUM and PRELU, shared by the C emitter and the numpy reference.

Each kind's `prepare(op, setting)` (`prepare_add_sub`, `prepare_mul`, ...) returns a `Prepared`:
the C loop nest over the broadcast output, and the quantized constants or the float32 clamp.
The reference kernels take the same constants from the functions those call (`add_sub_params`,
`mul_params`, ...) and broadcast with numpy instead of the loop nest.

Each function reproduces the Prepare step of the TFLite runtime that `rounding` names. The two
runtimes compute some parameters differently, and those differences are visible in outputs:

- SUB: both form the rescale ratios in double, like ADD (measured; the mirrored TFLM source
  divides in float32, which the wheel's outputs contradict).
- MUL: TFLM (mul_common.cc) forms input1_scale * input2_scale / output_scale in double; LiteRT
  (mul.cc Prepare) multiplies and divides the float32 scales in float32.
- PRELU: the same split as MUL for both multipliers (prelu_common.cc vs activations.cc).
- int16 ADD and SUB: TFLM always takes the general rescaling path (left shift 15). LiteRT takes
  the power-of-two path when the options' pot_scale_int16 is set (the schema default) and all
  three scales are powers of two by CheckedLog2; otherwise the general path.
- int16 SQUARED_DIFFERENCE exists only in TFLM (LiteRT 2.3.0 fails "only supports FLOAT32 and
  INT32"); TFLM also lets its output multiplier exceed 1, LiteRT's int8 kernel does not.

Parameters TFLite's Prepare refuses (a rescale that is not below 1, which
QuantizeMultiplierSmallerThanOneExp CHECK-fails on) and arithmetic that is undefined in TFLite
(a negative RoundingDivideByPOT exponent) break one of the PrepareRules below, which support
reports like any other rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Generic, TypeVar

import numpy as np

from ...ir import Activation, ArithmeticOptions, DType, Op, OpKind, Tensor
from ...quantization import Rounding, dtype_range, quantize_multiplier
from ...records import dataclass
from ..base import PrepareRule, Setting
from ..common import (
    activation_limits,
    checked_multiplier,
    merge_loop_levels,
    scale_of,
    zero_point_of,
)

# AddFunc's left shift: |q - zero_point| << 20 (int8) or << 15 (int16) stays inside int32.
LEFT_SHIFT = {DType.INT8: 20, DType.INT16: 15}
# SquaredDifference's left shift: int8 inputs gain 7 bits, int16 none (the square must fit).
SQUARED_DIFFERENCE_LEFT_SHIFT = {DType.INT8: 7, DType.INT16: 0}
# gemmlowp's RoundingDivideByPOT on int16 values is defined for exponents up to 15.
MAX_POT_SHIFT_INT16 = 15
FLOAT32_MAX = float(np.finfo(np.float32).max)
# MCUGEN_BROADCAST_MAX_LOOPS in mcugen_elementwise.h; at least rules.MAX_BROADCAST_RANK, so that
# every op the rules accept fits the loop nest.
MAX_LOOPS = 6

RESCALES_BELOW_ONE = PrepareRule(
    "The input and output rescales are below 1 as fixed-point multipliers (TFLite's "
    "QuantizeMultiplierSmallerThanOneExp): the output scale is more than 2^-19 (int8) or 2^-14 "
    "(int16) times the larger input scale.")
SQUARED_DIFFERENCE_RESCALES_BELOW_ONE = PrepareRule(
    "The input rescales, and with --rounding litert the output rescale, are below 1 as "
    "fixed-point multipliers (TFLite's QuantizeMultiplierSmallerThanOneExp; TFLM lets the output "
    "multiplier exceed 1).")
POT_SCALES = PrepareRule(
    "With --rounding litert, an int16 ADD or SUB on LiteRT's power-of-two path (pot_scale_int16 "
    "set, every scale a power of two) has one input at the output's scale and the other at most "
    f"2^{MAX_POT_SHIFT_INT16} times finer (RoundingDivideByPOT is undefined beyond).")
POT_ADD_SAME_SHAPES = PrepareRule(
    "With --rounding litert, an int16 ADD on LiteRT's power-of-two path has two inputs of the "
    "same shape (LiteRT has no broadcasting kernel for it).")
NO_INT16_SQUARED_DIFFERENCE_IN_LITERT = PrepareRule(
    "With --rounding litert, SQUARED_DIFFERENCE is int8 or float32: LiteRT has no int16 "
    "SQUARED_DIFFERENCE kernel.")


def _operands(op: Op) -> tuple[Tensor, Tensor, Tensor]:
    a, b = op.inputs[0], op.inputs[1]
    assert a is not None and b is not None
    return a, b, op.outputs[0]




def _activation(op: Op) -> Activation:
    return op.options.activation if isinstance(op.options, ArithmeticOptions) else Activation.NONE


def _clamp(op: Op) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for the output (the dtype's range for no activation);
    the rule clamp_activation has refused every other fused activation."""
    y = op.outputs[0]
    assert y.quant is not None
    return activation_limits(op, _activation(op), y.quant, y.dtype)


def _smaller_than_one(real: float, what: str, op: Op, rule: PrepareRule) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: TFLite CHECK-fails outside (0, 1) or on a left shift."""
    rule.require(0.0 < real < 1.0, op, lambda: f"{what} rescale {real:g} is outside (0, 1)")
    multiplier, shift = quantize_multiplier(real)
    rule.require(shift <= 0, op, lambda: f"{what} rescale {real:g} rounds up to 1")
    return multiplier, shift


def _f32(value: float) -> np.float32:
    return np.float32(value)


# --- ADD, SUB, SQUARED_DIFFERENCE: the AddFunc family ------------------------------------


@dataclass(frozen=True)
class RescaleParams:
    """AddFunc's build-time constants (ADD, SUB, SQUARED_DIFFERENCE): each input plus its offset
    is shifted left by left_shift and rescaled by its own multiplier (shift <= 0); the combined
    value is rescaled by the output multiplier, offset and clamped."""

    input1_offset: int
    input1_multiplier: int
    input1_shift: int
    input2_offset: int
    input2_multiplier: int
    input2_shift: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    left_shift: int
    activation_min: int
    activation_max: int


@dataclass(frozen=True)
class PotParams:
    """LiteRT's int16 power-of-two ADD/SUB: each input is divided by 2^shift (rounding, ties
    away from zero; one of the two shifts is 0), then the sum or difference is clamped."""

    input1_shift: int  # right shift, >= 0
    input2_shift: int
    activation_min: int
    activation_max: int


AddSubParams = RescaleParams | PotParams


def checked_log2(scale: float) -> tuple[bool, int]:
    """LiteRT's CheckedLog2 in float32: (is within 1e-3 of a power of two, rounded log2)."""
    x_log2 = np.float32(np.log(_f32(scale))) * (np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    rounded = np.float32(math.floor(abs(float(x_log2)) + 0.5) * (1 if x_log2 >= 0 else -1))
    fraction = np.float32(x_log2 - rounded)
    return bool(abs(fraction) < np.float32(1e-3)), int(rounded)


def _pot_path(op: Op, rounding: Rounding) -> bool:
    """Whether the int16 power-of-two path runs: LiteRT only, pot_scale_int16 and pot scales."""
    a, b, y = _operands(op)
    if rounding is not Rounding.LITERT or y.dtype is not DType.INT16:
        return False
    if not isinstance(op.options, ArithmeticOptions) or not op.options.pot_scale_int16:
        return False
    return all(checked_log2(scale_of(t))[0] for t in (a, b, y))


def _pot_params(op: Op) -> PotParams:
    """PrepareInt16SubOpPOT / add.cc's POT branch."""
    a, b, y = _operands(op)
    log_y = checked_log2(scale_of(y))[1]
    shift1, shift2 = checked_log2(scale_of(a))[1] - log_y, checked_log2(scale_of(b))[1] - log_y
    POT_SCALES.require(
        not ((shift1 != 0 and shift2 != 0) or shift1 > 0 or shift2 > 0), op,
        lambda: f"input scale exponents {shift1} and {shift2} relative to the output")
    POT_SCALES.require(min(shift1, shift2) >= -MAX_POT_SHIFT_INT16, op,
                       lambda: f"power-of-two shift {min(shift1, shift2)}")
    # LiteRT's POT Add (reference_ops::Add with pot_scale) walks both inputs as flat arrays.
    POT_ADD_SAME_SHAPES.require(op.kind is not OpKind.ADD or tuple(a.shape) == tuple(b.shape), op,
                                lambda: f"{list(a.shape)} and {list(b.shape)}")
    low, high = _clamp(op)
    return PotParams(-shift1, -shift2, low, high)


def _input_ratios(op: Op, left_shift: int) -> tuple[float, float, float]:
    """(input1, input2, output) rescales of ADD/SUB, formed in double from the float32 scales.

    TFLM's sub_common.cc (in the mirrored source) divides in float32, but the tflite_micro
    wheel mcugen is held to measurably divides in double: on random int16 SUB grids the float
    formula misses elements that the double one matches (tests/test_ref_binary.py).
    """
    a, b, y = _operands(op)
    twice_max = 2.0 * max(scale_of(a), scale_of(b))
    return (scale_of(a) / twice_max, scale_of(b) / twice_max,
            twice_max / ((1 << left_shift) * scale_of(y)))


def add_sub_params(op: Op, rounding: Rounding) -> AddSubParams:
    """ADD or SUB, int8 or int16: the general rescaling path or LiteRT's int16 POT path."""
    if _pot_path(op, rounding):
        return _pot_params(op)
    a, b, y = _operands(op)
    left_shift = LEFT_SHIFT[y.dtype]
    r1, r2, ro = _input_ratios(op, left_shift)
    m1, s1 = _smaller_than_one(r1, "input 1", op, RESCALES_BELOW_ONE)
    m2, s2 = _smaller_than_one(r2, "input 2", op, RESCALES_BELOW_ONE)
    mo, so = _smaller_than_one(ro, "output", op, RESCALES_BELOW_ONE)
    low, high = _clamp(op)
    return RescaleParams(-zero_point_of(a), m1, s1, -zero_point_of(b), m2, s2, zero_point_of(y), mo, so,
                         left_shift, low, high)


def squared_difference_params(op: Op, rounding: Rounding) -> RescaleParams:
    """SquaredDifference's PrepareQuantized; the output multiplier may exceed 1 only in TFLM."""
    a, b, y = _operands(op)
    NO_INT16_SQUARED_DIFFERENCE_IN_LITERT.require(
        y.dtype is not DType.INT16 or rounding is not Rounding.LITERT, op, "int16")
    left_shift = SQUARED_DIFFERENCE_LEFT_SHIFT[y.dtype]
    twice_max = 2.0 * max(scale_of(a), scale_of(b))
    rule = SQUARED_DIFFERENCE_RESCALES_BELOW_ONE
    m1, s1 = _smaller_than_one(scale_of(a) / twice_max, "input 1", op, rule)
    m2, s2 = _smaller_than_one(scale_of(b) / twice_max, "input 2", op, rule)
    # (1 << 2 * left_shift) * output_scale is a float32 product (exact: a power of two).
    real_output = twice_max * twice_max / float(_f32(1 << (2 * left_shift)) * _f32(scale_of(y)))
    if rounding is Rounding.LITERT:
        mo, so = _smaller_than_one(real_output, "output", op, rule)
    else:
        mo, so = quantize_multiplier(real_output)
    low, high = dtype_range(y.dtype)
    return RescaleParams(-zero_point_of(a), m1, s1, -zero_point_of(b), m2, s2, zero_point_of(y), mo, so,
                         left_shift, low, high)


# --- MUL -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MulParams:
    """reference_integer_ops::MulElementwise: (q1 + offset1) * (q2 + offset2) rescaled once."""

    input1_offset: int
    input2_offset: int
    output_offset: int
    output_multiplier: int
    output_shift: int  # > 0 is a left shift
    activation_min: int
    activation_max: int


def mul_params(op: Op, rounding: Rounding) -> MulParams:
    a, b, y = _operands(op)
    if rounding is Rounding.LITERT:
        real = float(_f32(scale_of(a)) * _f32(scale_of(b)) / _f32(scale_of(y)))
    else:
        real = scale_of(a) * scale_of(b) / scale_of(y)
    multiplier, shift = checked_multiplier(op, real)
    low, high = _clamp(op)
    return MulParams(-zero_point_of(a), -zero_point_of(b), zero_point_of(y), multiplier, shift, low, high)


# --- PRELU -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreluParams:
    """BroadcastPrelu4DSlow: x = q + input_offset; x >= 0 is rescaled by the identity multiplier,
    x < 0 is multiplied by (alpha + alpha_offset) and rescaled by the alpha multiplier."""

    input_offset: int
    alpha_offset: int
    output_offset: int
    identity_multiplier: int
    identity_shift: int
    alpha_multiplier: int
    alpha_shift: int
    activation_min: int  # the output dtype's range: PRELU has no fused activation
    activation_max: int


def prelu_params(op: Op, rounding: Rounding) -> PreluParams:
    x, alpha, y = _operands(op)
    if rounding is Rounding.LITERT:
        identity = float(_f32(scale_of(x)) / _f32(scale_of(y)))
        scaled = float(_f32(scale_of(x)) * _f32(scale_of(alpha)) / _f32(scale_of(y)))
    else:
        identity = scale_of(x) / scale_of(y)
        scaled = scale_of(x) * scale_of(alpha) / scale_of(y)
    m1, s1 = checked_multiplier(op, identity)
    m2, s2 = checked_multiplier(op, scaled)
    low, high = dtype_range(y.dtype)
    return PreluParams(-zero_point_of(x), -zero_point_of(alpha), zero_point_of(y), m1, s1, m2, s2,
                       low, high)


# --- float32 ---------------------------------------------------------------------------------


_FLOAT_RANGES = {
    Activation.NONE: (-FLOAT32_MAX, FLOAT32_MAX),
    Activation.RELU: (0.0, FLOAT32_MAX),
    Activation.RELU6: (0.0, 6.0),
    Activation.RELU_N1_TO_1: (-1.0, 1.0),
}


def float_clamp(op: Op) -> tuple[float, float]:
    """CalculateActivationRange<float>: no activation clamps to [lowest, max] float32 (so an
    infinite result becomes +-FLT_MAX, as TFLite's ActivationFunctionWithMinMax does). The rule
    clamp_activation has refused every other fused activation."""
    activation = _activation(op)
    assert activation in _FLOAT_RANGES, f"{op.where()}: clamp_activation lets {activation.name} by"
    return _FLOAT_RANGES[activation]


# --- the loop nest over the broadcast output -------------------------------------------------


@dataclass(frozen=True)
class BroadcastLoop:
    """Loop levels, outermost first: output extents and each input's element stride."""

    extent: tuple[int, ...]
    input1_stride: tuple[int, ...]
    input2_stride: tuple[int, ...]


def _strides_in_output(shape: Sequence[int], out_shape: Sequence[int]) -> list[int]:
    """Element strides of `shape` (right-aligned in out_shape); 0 where it is broadcast."""
    padded = [1] * (len(out_shape) - len(shape)) + list(shape)
    strides, step = [0] * len(padded), 1
    for axis in reversed(range(len(padded))):
        strides[axis] = 0 if padded[axis] == 1 else step
        step *= padded[axis]
    return strides


def broadcast_loop(shape1: Sequence[int], shape2: Sequence[int], out_shape: Sequence[int]) -> BroadcastLoop:
    """The smallest loop nest that walks out_shape in order with both inputs' strides.

    Shapes that do not broadcast to out_shape, or of more than MAX_LOOPS unmergeable levels,
    raise ValueError: the rule broadcast_shapes refuses such ops before prepare runs."""
    if tuple(np.broadcast_shapes(tuple(shape1), tuple(shape2))) != tuple(out_shape):
        raise ValueError(
            f"input shapes {list(shape1)} and {list(shape2)} do not broadcast to {list(out_shape)}"
        )
    s1, s2 = _strides_in_output(shape1, out_shape), _strides_in_output(shape2, out_shape)
    merged = merge_loop_levels(out_shape, s1, s2)
    if not merged:
        merged = [(1, 0, 0)]
    if len(merged) > MAX_LOOPS:
        raise ValueError(f"broadcast of {list(shape1)} and {list(shape2)} needs "
                         f"{len(merged)} loop levels (at most {MAX_LOOPS})")
    merged = [(1, 0, 0)] * (MAX_LOOPS - len(merged)) + merged
    return BroadcastLoop(
        extent=tuple(n for n, _, _ in merged),
        input1_stride=tuple(a for _, a, _ in merged),
        input2_stride=tuple(b for _, _, b in merged),
    )


# --- each kind's prepare ---------------------------------------------------------------------

Q = TypeVar("Q")  # the quantized constants' type


@dataclass(frozen=True)
class Prepared(Generic[Q]):
    """What prepare computes for one op: the C loop nest over the broadcast output, the
    quantized constants (int8 and int16; None for float32, MAXIMUM and MINIMUM) and the clamp
    of float32 ADD, SUB and MUL (None where the float kernel clamps nothing)."""

    loop: BroadcastLoop
    quant: Q | None = None
    float_clamp: tuple[float, float] | None = None


def _loop(op: Op) -> BroadcastLoop:
    a, b, y = _operands(op)
    return broadcast_loop(a.shape, b.shape, y.shape)


def _is_float(op: Op) -> bool:
    return op.outputs[0].dtype is DType.FLOAT32


def prepare_add_sub(op: Op, setting: Setting) -> Prepared[AddSubParams]:
    if _is_float(op):
        return Prepared(_loop(op), float_clamp=float_clamp(op))
    return Prepared(_loop(op), add_sub_params(op, setting.rounding))


def prepare_mul(op: Op, setting: Setting) -> Prepared[MulParams]:
    if _is_float(op):
        return Prepared(_loop(op), float_clamp=float_clamp(op))
    return Prepared(_loop(op), mul_params(op, setting.rounding))


def prepare_squared_difference(op: Op, setting: Setting) -> Prepared[RescaleParams]:
    if _is_float(op):
        return Prepared(_loop(op))
    return Prepared(_loop(op), squared_difference_params(op, setting.rounding))


def prepare_maximum_minimum(op: Op, setting: Setting) -> Prepared[None]:
    """MAXIMUM and MINIMUM compare the stored values: no constants, whatever the dtype."""
    return Prepared(_loop(op))


def prepare_prelu(op: Op, setting: Setting) -> Prepared[PreluParams]:
    if _is_float(op):
        return Prepared(_loop(op))
    return Prepared(_loop(op), prelu_params(op, setting.rounding))
