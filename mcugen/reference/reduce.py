"""MEAN, int8, bit-exact with TFLite's reference kernel in both modes (TFLM, LiteRT).

Both runtimes take reference_ops::QuantizedMeanOrSum (reference/reduce.h) for int8 MEAN with
any axes: TFLM through EvalMeanHelper -> QuantizedMeanOrSumExtraArgs (micro/kernels/
reduce_common.cc), LiteRT with kReference through EvalQuantizedMean (kernels/reduce.cc). Only
LiteRT's *optimized* kernel has a special 4-D axes {1, 2} path (optimized_integer_ops::Mean),
which BUILTIN_REF does not use. The arithmetic:

  multiplier, shift = QuantizeMultiplier(input_scale / output_scale)    (Prepare)
  s = min(floor(log2(count)), 32, 31 + shift)                           (folds in 1/count)
  multiplier = (multiplier << s) / count;  shift -= s
  out = clamp(MultiplyByQuantizedMultiplier(sum - input_zp * count) + output_zp, -128, 127)

with the int32 sum taken over the reduced axes. No fused activation applies.

Rounding: the LiteRT 2.3.0 wheel's MEAN measurably rounds MultiplyByQuantizedMultiplier twice,
exactly like TFLM (over every axes set tried, all elements where a single rounding of the
64-bit product would differ match double rounding). So the arithmetic is the same in both
modes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import Op, OpKind
from ..quantization import Rounding, quantize_multiplier
from . import reference
from .fixedpoint import clamp, multiply_by_quantized_multiplier

# The int32 sum and the centred sum - input_zero_point * count (|.| <= 255 * count) must stay
# inside int32, as TFLite's accumulator assumes.
MAX_REDUCED_ELEMENTS = (1 << 31) // 256 - 1


@dataclass(frozen=True)
class MeanParams:
    """Build-time facts of one int8 MEAN; multiplier and shift already include 1/count."""

    axes: tuple[int, ...]  # resolved (non-negative), unique, sorted
    count: int  # elements averaged into each output
    input_zero_point: int
    output_zero_point: int
    multiplier: int
    shift: int


def resolve_axes(op: Op) -> tuple[int, ...]:
    """TFLite's ResolveAxis: negative axes count from the end, duplicates are dropped."""
    x, axis = op.inputs[0], op.inputs[1]
    assert x is not None
    if axis is None or axis.data is None:
        raise UnsupportedError(f"{op.where()}: the axes input must be a constant tensor")
    rank = len(x.shape)
    resolved = set()
    for value in np.asarray(axis.data).reshape(-1).tolist():
        current = value + rank if value < 0 else value
        if not 0 <= current < rank:
            raise UnsupportedError(f"{op.where()}: axis {value} is out of range for rank {rank}")
        resolved.add(int(current))
    return tuple(sorted(resolved))


def fold_count(multiplier: int, shift: int, count: int) -> tuple[int, int]:
    """QuantizedMeanOrSum's rescale of (multiplier, shift) by 1/count, integer-exact."""
    s = min(count.bit_length() - 1, 32, 31 + shift)
    return (multiplier << s) // count, shift - s


def mean_params(op: Op) -> MeanParams:
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None and x.quant and y.quant
    axes = resolve_axes(op)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64)) if axes else 1
    if count == 0:
        raise UnsupportedError(f"{op.where()}: the reduced axes {list(axes)} are empty")
    if count > MAX_REDUCED_ELEMENTS:
        raise UnsupportedError(
            f"{op.where()}: {count} elements per mean overflow the int32 sum (at most {MAX_REDUCED_ELEMENTS})"
        )
    multiplier, shift = quantize_multiplier(x.quant.single_scale / y.quant.single_scale)
    multiplier, shift = fold_count(multiplier, shift, count)
    return MeanParams(
        axes=axes,
        count=count,
        input_zero_point=x.quant.single_zero_point,
        output_zero_point=y.quant.single_zero_point,
        multiplier=multiplier,
        shift=shift,
    )


def mean_int8(x: np.ndarray, p: MeanParams) -> np.ndarray:
    """The int8 mean over p.axes (dimensions dropped); returns int64 values in int8 range."""
    total = x.astype(np.int64).sum(axis=p.axes) - p.input_zero_point * p.count
    scaled = multiply_by_quantized_multiplier(total, p.multiplier, p.shift)
    return clamp(scaled + p.output_zero_point, -128, 127)


@reference(OpKind.MEAN)
def mean(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    result = mean_int8(x, mean_params(op))
    return [result.reshape(op.outputs[0].shape).astype(np.int8)]
