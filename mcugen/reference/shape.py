"""Shape-only ops: RESHAPE moves no data."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..ir import Op, OpKind
from ..quantization import Rounding
from . import reference


@reference(OpKind.RESHAPE)
def reshape(op: Op, inputs: list[Optional[np.ndarray]], rounding: Rounding) -> list[np.ndarray]:
    data = inputs[0]
    assert data is not None
    return [data.reshape(op.outputs[0].shape)]
