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

import numpy as np

from ..ir import Op, OpKind
from ..opparams import MeanParams, mean_params
from ..quantization import Rounding
from . import reference
from .fixedpoint import clamp, multiply_by_quantized_multiplier


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
