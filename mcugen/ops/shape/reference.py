"""The numpy reference of the shape ops: RESHAPE, SQUEEZE and EXPAND_DIMS reshape their input
(the same elements in the same order); SHAPE gives the input's dimensions.

The kernels work for any dtype and any constant input: the constant folder runs them. The
shapes come from the family's prepare (prepare.py).
"""

from __future__ import annotations

import numpy as np

from ...ir import Op
from ...quantization import Rounding
from ..base import Setting
from .prepare import prepare_expand_dims, prepare_reshape, prepare_shape, prepare_squeeze


def reshape(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    return [data.reshape(prepare_reshape(op, Setting(rounding)))]


def squeeze(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    return [data.reshape(prepare_squeeze(op, Setting(rounding)))]


def expand_dims(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    return [data.reshape(prepare_expand_dims(op, Setting(rounding)))]


def shape(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    return [prepare_shape(op, Setting(rounding))]
