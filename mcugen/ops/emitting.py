"""The boundary between an op's C emitter and the code generator.

An emitter turns one Op into the C statements of its step in `<prefix>_invoke()`: the static
const parameter structs it needs and the kernel calls, each returning an mcugen_status that
the template checks. Emitters compute every build-time value (multipliers, padding, clamps)
in Python; the C only does the per-element arithmetic. They see the code generator only
through `EmitContext`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Protocol

import numpy as np

from ..ir import Op, Tensor
from ..quantization import Rounding
from ..records import dataclass
from ..targets import Target


class EmitContext(Protocol):
    """What an emitter may ask of the code generator."""

    rounding: Rounding
    target: Target  # --target: target.fast_path is what the kernels compile (emitters may precompute for it)
    sparse_weights: bool  # --sparse: weights may be emitted in a sparse form where that saves flash

    def ptr(self, tensor: Tensor) -> str:
        """A C expression: a pointer of the tensor's C type to its data (arena or flash)."""
        ...

    def constant(self, hint: str, values: np.ndarray, ctype: str) -> str:
        """Place an extra constant array (multipliers, tables) in flash; returns its C name."""
        ...

    def scratch(self, op: Op) -> tuple[str, int]:
        """(pointer expression, bytes) of the op's planned scratch buffer; ('NULL', 0) if none."""
        ...


@dataclass
class KernelCall:
    """The C of one op: declarations first, then calls that each return an mcugen_status."""

    declarations: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    runtime: set[str] = field(default_factory=set)  # runtime/kernels/<stem>.c/.h it needs


def dims4(shape: Sequence[int]) -> tuple[int, int, int, int]:
    """NHWC dims of a tensor of rank <= 4: a 2-D [n, c] becomes {n, 1, 1, c}."""
    shape = list(shape)
    if len(shape) > 4:
        raise ValueError(f"rank {len(shape)} does not fit mcugen_dims")
    if len(shape) == 0:
        return (1, 1, 1, 1)
    if len(shape) == 1:
        return (1, 1, 1, shape[0])
    if len(shape) == 2:
        return (shape[0], 1, 1, shape[1])
    if len(shape) == 3:
        return (shape[0], 1, shape[1], shape[2])
    return (shape[0], shape[1], shape[2], shape[3])


def c_dims(shape: Sequence[int]) -> str:
    n, h, w, c = dims4(shape)
    return f"{{ .n = {n}, .h = {h}, .w = {w}, .c = {c} }}"
