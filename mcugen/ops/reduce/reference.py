"""MEAN, SUM, REDUCE_MAX and ARG_MAX, bit-exact with TFLite's reference kernels in both modes.

Quantized MEAN and SUM (int8, int16). Both runtimes take reference_ops::QuantizedMeanOrSum
(reference/reduce.h): TFLM through QuantizedMeanOrSumExtraArgs (micro/kernels/reduce_common.cc),
LiteRT with kReference through EvalQuantizedMean / EvalSum (kernels/reduce.cc):

  multiplier, shift = QuantizeMultiplier(input_scale / output_scale)    (Prepare, double)
  MEAN only: s = min(floor(log2(count)), 32, 31 + shift)                 (folds in 1/count)
             multiplier = (multiplier << s) / count;  shift -= s
  out = clamp(MultiplyByQuantizedMultiplier(sum - input_zp * count) + output_zp, qmin, qmax)

with the int32 sum taken over the reduced axes; MultiplyByQuantizedMultiplier rounds twice in
both runtimes (measured for MEAN: see tests/test_ref_reduce.py). LiteRT's Prepare requires
int16 zero points to be 0; TFLM does not (rules.py asks for 0, so both agree).

Known LiteRT 2.3.0 defect: its reference SUM for int8 and int16 calls QuantizedMeanOrSum on the
data reinterpreted as uint8 (GetTensorData<uint8_t>, kernels/reduce.cc), so int8 values are read
as 0..255 and an int16 tensor as twice as many bytes. That is not reproduced: in LITERT mode a
quantized SUM is refused (the rule float_sum_only_in_litert_mode, and this kernel, so that
constant folding does not evaluate it either); tests/test_ref_reduce.py shows the defect.

Float MEAN and SUM. TFLM's reference_ops::Mean/ReduceGeneric and LiteRT's reference Mean add
the elements of each output one at a time, in the input's row-major order, to a float32
accumulator that starts at 0.0f; MEAN then divides by (float)count (TFLM's 4-D axes {1, 2}
special case does exactly the same sums and division). LiteRT's reference SUM and REDUCE_MAX,
when *every* dimension is reduced, seed the accumulator with the first element instead
(ReduceAllDims): that differs from 0.0f only in the sign of an all-(-0.0) sum, and for MAX when
the first element is NaN; LITERT mode seeds the same way.

REDUCE_MAX (int8, float32): init numeric_limits::lowest(), `in > current ? in : current`. The
int8 output must have the input's scale and zero point (both runtimes check), so no rescale.

ARG_MAX (int8, float32 -> int32): the first index of the maximum along one axis. TFLM compares
with a plain `>` (a NaN is never picked, and a NaN first element wins); LiteRT (optimized
ArgMinMax, also under BUILTIN_REF) skips NaNs, lets any number replace a NaN, and returns 0 for
an all-NaN row. Equal for NaN-free inputs.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...ir import Op, OpKind
from ...quantization import Rounding
from ..base import Setting
from ..fixedpoint import clamp, multiply_by_quantized_multiplier, wrap_int32
from .prepare import (
    ReduceGeometry,
    arg_max_geometry,
    arg_max_skips_nan,
    quant_reduce_params,
    reduce_geometry,
    seeds_with_first,
)
from .rules import float_sum_only_in_litert_mode

F32 = np.float32


def _rows(x: np.ndarray, g: ReduceGeometry) -> np.ndarray:
    """[outputs, count]: each row holds one output's reduced elements in row-major order."""
    kept = [a for a in range(x.ndim) if a not in g.axes]
    return np.transpose(x, kept + list(g.axes)).reshape(-1, g.count)


def quantized_sum_or_mean(op: Op, x: np.ndarray) -> np.ndarray:
    p = quant_reduce_params(op)
    total = wrap_int32(_rows(x.astype(np.int64), p.geometry).sum(axis=1))
    centred = wrap_int32(total - p.input_zero_point * p.geometry.count)
    scaled = multiply_by_quantized_multiplier(centred, p.multiplier, p.shift)
    return clamp(scaled + p.output_zero_point, p.output_min, p.output_max)


def float_sum_or_mean(op: Op, x: np.ndarray, seed_first: bool) -> np.ndarray:
    g = reduce_geometry(op)
    rows = _rows(x.astype(F32), g)
    if not seed_first:  # the accumulator starts at 0.0f (0.0f + -0.0f is +0.0f)
        rows = np.concatenate([np.zeros((rows.shape[0], 1), F32), rows], axis=1)
    # np.add.accumulate adds strictly left to right in float32 (np.sum would add pairwise).
    acc = np.add.accumulate(rows, axis=1, dtype=F32)[:, -1]
    return (acc / F32(g.count)).astype(F32) if op.kind is OpKind.MEAN else acc


def running_max(op: Op, x: np.ndarray, seed_first: bool) -> np.ndarray:
    rows = _rows(x, reduce_geometry(op))
    lowest = np.finfo(F32).min if x.dtype == F32 else np.iinfo(x.dtype).min
    acc = rows[:, 0].copy() if seed_first else np.full(rows.shape[0], lowest, x.dtype)
    for j in range(1 if seed_first else 0, rows.shape[1]):
        acc = np.where(rows[:, j] > acc, rows[:, j], acc)
    return acc


def sum_or_mean(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if float_sum_only_in_litert_mode(op, Setting(rounding)) is not None:
        # No LiteRT answer to reproduce: constant folding must not fold it either.
        rule = (float_sum_only_in_litert_mode.__doc__ or "").split(":")[0]
        raise UnsupportedError(f"{op.where()}: {rule}: LiteRT reads {x.dtype} as uint8")
    if x.dtype == F32:
        result = float_sum_or_mean(op, x, seeds_with_first(op, rounding))
    else:
        result = quantized_sum_or_mean(op, x)
    return [result.astype(op.outputs[0].dtype.numpy).reshape(op.outputs[0].shape)]


def reduce_max(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    result = running_max(op, x, seeds_with_first(op, rounding))
    return [result.reshape(op.outputs[0].shape)]


def first_arg_max(values: np.ndarray, nan_aware: bool) -> np.ndarray:
    """[outer, axis, inner] -> [outer, inner] indices, scanning the axis in order."""
    best = values[:, 0, :].copy()
    index = np.zeros(best.shape, np.int64)
    for i in range(1, values.shape[1]):
        current = values[:, i, :]
        better = current > best
        if nan_aware:
            better = ~np.isnan(current) & (np.isnan(best) | better)
        best = np.where(better, current, best)
        index = np.where(better, i, index)
    return index


def arg_max(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    g = arg_max_geometry(op)
    nan_aware = arg_max_skips_nan(op, rounding)
    index = first_arg_max(x.reshape(g.outer, g.axis_size, g.inner), nan_aware)
    return [index.astype(op.outputs[0].dtype.numpy).reshape(op.outputs[0].shape)]
