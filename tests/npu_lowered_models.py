"""Single-op models of MEAN, CONCATENATION and SOFTMAX for tests/test_npu_compile.py: each runs
mcugen's own stream (mcugen/npu/lower_reduce.py, lower_concat.py, lower_softmax.py) against TFLM
and Vela's stream for the same model, on u55-32 and u55-128 (the two micro-block depths).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from modelbuilder import ModelBuilder

SIZES = (32, 128)
Q = tuple[float, int]


@dataclass(frozen=True)
class LoweredCase:
    id: str
    build: Callable[[], bytes]
    inputs: Callable[[], list[np.ndarray]]
    sizes: tuple[int, ...] = SIZES


def _random(shape: Sequence[int], dtype: str, seed: int) -> np.ndarray:
    info = np.iinfo(np.dtype(dtype))
    low, high = (info.min, info.max) if dtype == "int8" else (-3000, 3000)
    return np.random.default_rng(seed).integers(low, high + 1, size=tuple(shape)).astype(dtype)


def mean_model(shape: Sequence[int], axes: Sequence[int] | int, out_shape: Sequence[int], keep: bool,
               dtype: str = "int8", in_q: Q = (0.05, -3), out_q: Q = (0.02, 5)) -> bytes:
    b = ModelBuilder("npu mean")
    if dtype == "int16":
        in_q, out_q = (in_q[0] / 64, 0), (out_q[0] / 64, 0)
    x = b.add_tensor("x", list(shape), dtype, *in_q)
    axis_data = np.array(axes, np.int32)
    a = b.add_tensor("axes", list(axis_data.shape), "int32", data=axis_data)
    y = b.add_tensor("y", list(out_shape), dtype, *out_q)
    b.add_op("MEAN", [x, a], [y], {"keep_dims": keep})
    b.set_io([x], [y])
    return b.build()


def _mean(id_: str, shape: Sequence[int], axes: Sequence[int] | int, out_shape: Sequence[int], keep: bool,
          dtype: str = "int8", **kw: Q) -> LoweredCase:
    seed = sum(shape) * 7 + len(id_)
    return LoweredCase(f"mean-{id_}", lambda: mean_model(shape, axes, out_shape, keep, dtype, **kw),
                       lambda: [_random(shape, dtype, seed)])


def mean_cases() -> list[LoweredCase]:
    return [
        _mean("hw-keep-1x8x8x4", (1, 8, 8, 4), [1, 2], (1, 1, 1, 4), True),
        _mean("hw-1x6x6x32", (1, 6, 6, 32), [1, 2], (1, 32), False),
        _mean("hw-keep-1x3x3x256", (1, 3, 3, 256), [1, 2], (1, 1, 1, 256), True, in_q=(0.02, -128),
              out_q=(0.02, -128)),
        _mean("w-keep-1x5x7x3", (1, 5, 7, 3), [2], (1, 5, 1, 3), True),
        _mean("h-1x6x5x3", (1, 6, 5, 3), [1], (1, 5, 3), False, out_q=(0.005, -20)),
        _mean("hw-64x64", (1, 64, 64, 2), [1, 2], (1, 1, 1, 2), True, out_q=(0.001, 0)),
        _mean("rank3-depth-1x8x16", (1, 8, 16), [-1], (1, 8, 1), True),
        _mean("rank3-w-1x14x24", (1, 14, 24), 1, (1, 24), False),
        _mean("rank2-depth-3x10", (3, 10), [1], (3,), False, out_q=(0.01, 0)),
        _mean("depth-1x1x5x8", (1, 1, 5, 8), [3], (1, 1, 5), False),
        _mean("hw-rescale-up-1x4x4x8", (1, 4, 4, 8), [1, 2], (1, 1, 1, 8), True, in_q=(0.1, 7), out_q=(0.03, -9)),
        _mean("hw-int16-1x8x8x4", (1, 8, 8, 4), [1, 2], (1, 1, 1, 4), True, "int16"),
        _mean("w-int16-1x3x9x5", (1, 3, 9, 5), [2], (1, 3, 5), False, "int16", out_q=(0.004, 0)),
    ]


def cases() -> list[LoweredCase]:
    return mean_cases()
