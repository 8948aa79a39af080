"""Build-time helpers that several families' prepare steps share (TFLite's common Prepare code).

Multipliers and shifts, activation clamps and padding are facts of the model, not of either
implementation: a family's C emitter and its numpy reference kernel both take them from its
prepare step, so the two paths differ only in the per-element arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UnsupportedError
from ..ir import Activation, DType, Op, Padding, Quant, Tensor
from ..quantization import activation_range, quantize_multiplier
from .base import PrepareRule
from .rules import CLAMP_ACTIVATIONS

MAX_RESCALE_SHIFT = 30  # the top of TFLite's QuantizeMultiplier range, as the C kernels take it

RESCALE_SHIFT = PrepareRule(
    f"Each rescale factor (a ratio of scales, times LEAKY_RELU's alpha or int16 SOFTMAX's beta) is below "
    f"2^{MAX_RESCALE_SHIFT}: "
    f"its multiplier's left shift is at most {MAX_RESCALE_SHIFT}, as the C kernels' int32 shifts take it.")


def checked_multiplier(op: Op, real: float) -> tuple[int, int]:
    """quantize_multiplier(real), refused by RESCALE_SHIFT when its shift is past the kernels' range
    (an absurd ratio of scales would otherwise shift past the integer's width: undefined in C)."""
    multiplier, shift = quantize_multiplier(real)
    RESCALE_SHIFT.require(shift <= MAX_RESCALE_SHIFT, op, lambda: f"factor {real:g} (shift {shift})")
    return multiplier, shift


def conv_padding(
    padding: Padding, in_size: int, filter_size: int, stride: int, dilation: int, out_size: int
) -> int:
    """TFLite's ComputePaddingHeightWidth: the top/left padding (VALID always gives 0).

    Pooling uses the same formula with dilation 1 (ComputePaddingWithOffset).
    """
    effective = (filter_size - 1) * dilation + 1
    total = max((out_size - 1) * stride + effective - in_size, 0)
    return total // 2 if padding is Padding.SAME else 0


def activation_limits(op: Op, activation: Activation, quant: Quant, dtype: DType) -> tuple[int, int]:
    """CalculateActivationRangeQuantized. The support rule clamp_activation has already
    refused any activation a clamp cannot express; reaching the error is a bug."""
    if activation not in CLAMP_ACTIVATIONS:
        raise UnsupportedError(f"{op.where()}: fused activation {activation.name} is not supported")
    return activation_range(activation, quant, dtype)


def output_clamp(op: Op) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for the op's output and fused activation: (low, high)."""
    y = op.outputs[0]
    assert y.quant is not None
    return activation_limits(op, op.options.activation, y.quant, y.dtype)  # type: ignore[union-attr]


def merge_loop_levels(extents: Sequence[int], strides_a: Sequence[int],
                      strides_b: Sequence[int]) -> list[tuple[int, int, int]]:
    """(extent, stride a, stride b) levels of a loop nest over two strided operands, outermost
    first: levels of extent 1 drop out, and an outer level that continues its inner neighbour
    on both sides (each stride equals the inner stride times the inner extent; both 0 for a
    broadcast operand) merges into it."""
    merged: list[tuple[int, int, int]] = []
    for n, a, b in zip(extents, strides_a, strides_b):
        if n == 1:
            continue
        if merged and merged[-1][1] == a * n and merged[-1][2] == b * n:
            merged[-1] = (merged[-1][0] * n, a, b)
        else:
            merged.append((n, a, b))
    return merged


def scale_of(tensor: Tensor) -> float:
    """The per-tensor scale of a quantized tensor (the rules have checked it has one)."""
    assert tensor.quant is not None
    return tensor.quant.single_scale


def zero_point_of(tensor: Tensor) -> int:
    """The per-tensor zero point of a quantized tensor (the rules have checked it has one)."""
    assert tensor.quant is not None
    return tensor.quant.single_zero_point


def filter_offset(weights: Tensor) -> int:
    """-zero point of per-tensor weights; per-channel weights are symmetric by spec (offset 0)."""
    assert weights.quant is not None
    return 0 if weights.quant.per_channel else -weights.quant.single_zero_point
