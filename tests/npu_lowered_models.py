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


def concat_model(shapes: Sequence[Sequence[int]], axis: int, dtype: str = "int8", q: Q = (0.05, -3),
                 constant: int | None = None) -> bytes:
    """CONCATENATION of inputs of `shapes` along `axis`; input number `constant` a constant."""
    b = ModelBuilder("npu concatenation")
    if dtype == "int16":
        q = (q[0], 0)
    rank = len(shapes[0])
    out_shape = list(shapes[0])
    out_shape[axis % rank] = sum(s[axis % rank] for s in shapes)
    tensors = []
    for n, shape in enumerate(shapes):
        data = _random(shape, dtype, 99 + n) if n == constant else None
        tensors.append(b.add_tensor(f"x{n}", list(shape), dtype, *q, data=data))
    y = b.add_tensor("y", out_shape, dtype, *q)
    b.add_op("CONCATENATION", tensors, [y], {"axis": axis})
    b.set_io([t for n, t in enumerate(tensors) if n != constant], [y])
    return b.build()


def _concat(id_: str, shapes: Sequence[Sequence[int]], axis: int, dtype: str = "int8",
            constant: int | None = None) -> LoweredCase:
    return LoweredCase(f"concat-{id_}", lambda: concat_model(shapes, axis, dtype, constant=constant),
                       lambda: [_random(s, dtype, 10 + n) for n, s in enumerate(shapes) if n != constant])


def concat_cases() -> list[LoweredCase]:
    return [
        _concat("c-1x4x4x3+5", ((1, 4, 4, 3), (1, 4, 4, 5)), 3),
        _concat("c-1x8x8x16+12", ((1, 8, 8, 16), (1, 8, 8, 12)), -1),
        _concat("c-int16-1x4x4x3+5", ((1, 4, 4, 3), (1, 4, 4, 5)), 3, "int16"),
        _concat("h-1x2x4x3+3+1", ((1, 2, 4, 3), (1, 3, 4, 3), (1, 1, 4, 3)), 1),
        _concat("w-1x3x2x6+5", ((1, 3, 2, 6), (1, 3, 5, 6)), 2),
        _concat("rank3-1x2x5+3+1", ((1, 2, 5), (1, 3, 5), (1, 1, 5)), 1),
        _concat("rank2-1x8+8", ((1, 8), (1, 8)), -1),
        _concat("rank2-rows-2x7+3", ((2, 7), (3, 7)), 0),
        _concat("c-constant-1x4x4x3+2", ((1, 4, 4, 3), (1, 4, 4, 2)), 3, constant=1),
    ]


def softmax_model(shape: Sequence[int], in_q: Q = (0.1, 3), beta: float = 1.0) -> bytes:
    b = ModelBuilder("npu softmax")
    x = b.add_tensor("x", list(shape), "int8", *in_q)
    y = b.add_tensor("y", list(shape), "int8", 1 / 256, -128)
    b.add_op("SOFTMAX", [x], [y], {"beta": beta})
    b.set_io([x], [y])
    return b.build()


def _softmax(id_: str, shape: Sequence[int], in_q: Q = (0.1, 3), beta: float = 1.0, spread: int = 128) -> LoweredCase:
    def inputs() -> list[np.ndarray]:
        rng = np.random.default_rng(sum(shape) + len(id_))
        return [rng.integers(-spread, spread, size=tuple(shape)).astype(np.int8)]

    return LoweredCase(f"softmax-{id_}", lambda: softmax_model(shape, in_q, beta), inputs)


def softmax_beside_gathers() -> bytes:
    """SOFTMAX(x) on the NPU; GATHER(z) -> GATHER on the CPU, the first beside the SOFTMAX."""
    b = ModelBuilder("softmax beside gathers")
    x = b.add_tensor("x", [1, 64], "int8", 0.1, 3)
    z = b.add_tensor("z", [1, 4, 4, 4], "int8", 0.1, 3)
    y = b.add_tensor("y", [1, 64], "int8", 1 / 256, -128)
    b.add_op("SOFTMAX", [x], [y], {"beta": 1.0})
    indices = b.add_tensor("indices", [4], "int32", data=np.array([3, 1, 2, 0], np.int32))
    g1 = b.add_tensor("g1", [1, 4, 4, 4], "int8", 0.1, 3)
    g2 = b.add_tensor("g2", [1, 4, 4, 4], "int8", 0.1, 3)
    b.add_op("GATHER", [z, indices], [g1], {"axis": 3})
    b.add_op("GATHER", [g1, indices], [g2], {"axis": 3})
    b.set_io([x, z], [y, g2])
    return b.build()


def softmax_cases() -> list[LoweredCase]:
    return [
        _softmax("1x12", (1, 12), spread=40),
        _softmax("1x10-scale-0.2", (1, 10), in_q=(0.2, -5), spread=8),
        _softmax("3x12", (1, 3, 12), spread=60),
        _softmax("1x2x8x8-beta-0.5", (1, 2, 8, 8), in_q=(0.05, 0), beta=0.5),
        _softmax("1x2", (1, 2), in_q=(0.01, 0)),
        _softmax("5x100", (5, 100), in_q=(0.03, 0)),
        _softmax("2x256", (2, 256), in_q=(0.05, 7)),
        _softmax("4x7-large-scale", (4, 7), in_q=(1.5, 0), spread=3),
    ]


def cases() -> list[LoweredCase]:
    return mean_cases() + concat_cases() + softmax_cases()
