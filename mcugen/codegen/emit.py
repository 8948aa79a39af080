"""The registry of per-op C emitters and the context they write against.

An emitter turns one Op into the C statements of its step in `<prefix>_invoke()`: the static
const parameter structs it needs and the kernel calls, each returning an mcugen_status that
the template checks. Emitters compute every build-time value (multipliers, padding, clamps)
in Python; the C only does the per-element arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..errors import UnsupportedError
from ..ir import Op, OpKind, Tensor
from ..quantization import Rounding
from ..targets import Target


class EmitContext(Protocol):
    """What an emitter may ask of the code generator."""

    rounding: Rounding
    target: Target  # --target: target.fast_path is what the kernels compile (emitters may precompute for it)

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


Emitter = Callable[[Op, EmitContext], KernelCall]
ScratchSize = Callable[[Op], int]

EMITTERS: dict[OpKind, Emitter] = {}
SCRATCH: dict[OpKind, ScratchSize] = {}


def emitter(kind: OpKind) -> Callable[[Emitter], Emitter]:
    def register(function: Emitter) -> Emitter:
        EMITTERS[kind] = function
        return function

    return register


def scratch_size(kind: OpKind) -> Callable[[ScratchSize], ScratchSize]:
    """Register how many scratch bytes an op of this kind needs (mirrors *_get_buffer_size)."""

    def register(function: ScratchSize) -> ScratchSize:
        SCRATCH[kind] = function
        return function

    return register


def emit(op: Op, ctx: EmitContext) -> KernelCall:
    if op.kind not in EMITTERS:
        raise UnsupportedError(
            f"{op.where()}: no C emitter (registered: {', '.join(sorted(k.name for k in EMITTERS))})"
        )
    return EMITTERS[op.kind](op, ctx)


def op_scratch_bytes(op: Op) -> int:
    return SCRATCH[op.kind](op) if op.kind in SCRATCH else 0


# Scratch that only the fast int8 paths (DSP, Helium: runtime/kernels/mcugen_conv_fast_dsp.c, _mve.c) use;
# planned for targets with a fast path (Target.plans_fast_path_scratch), not for the portable C.
FastPathScratch = Callable[[Op, Target], int]  # (op, target) -> bytes
FAST_PATH_SCRATCH: dict[OpKind, FastPathScratch] = {}


def fast_path_scratch(kind: OpKind) -> Callable[[FastPathScratch], FastPathScratch]:
    """Register the scratch bytes an op's fast path needs on a target (mirrors the C's
    *_buffer_size for the path that target compiles)."""

    def register(function: FastPathScratch) -> FastPathScratch:
        FAST_PATH_SCRATCH[kind] = function
        return function

    return register


def target_scratch_bytes(target: Target) -> ScratchSize:
    """op -> scratch bytes to plan for `target` (--target): op_scratch_bytes, plus the fast
    paths' scratch unless the target runs the portable C."""
    if not target.plans_fast_path_scratch:
        return op_scratch_bytes

    def with_fast_paths(op: Op) -> int:
        fast = FAST_PATH_SCRATCH[op.kind](op, target) if op.kind in FAST_PATH_SCRATCH else 0
        return op_scratch_bytes(op) + fast

    return with_fast_paths


# --- helpers for emitters ---------------------------------------------------------------


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
