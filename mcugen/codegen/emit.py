"""Registration decorators of the per-op C emitters not yet moved into mcugen/ops/<family>/.

Transitional: mcugen.ops.legacy builds those kinds' OpDefs from these tables. The emitter
types and helpers live in mcugen.ops.emitting.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Op, OpKind
from ..ops.emitting import EmitContext, KernelCall, c_dims, dims4

__all__ = ["EmitContext", "KernelCall", "c_dims", "dims4", "emitter", "fast_path_scratch", "scratch_size"]

Emitter = Callable[[Op, EmitContext], KernelCall]
ScratchSize = Callable[[Op], int]
FastPathScratch = Callable[[Op, str], int]  # (op, target) -> bytes

EMITTERS: dict[OpKind, Emitter] = {}
SCRATCH: dict[OpKind, ScratchSize] = {}
FAST_PATH_SCRATCH: dict[OpKind, FastPathScratch] = {}


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


def fast_path_scratch(kind: OpKind) -> Callable[[FastPathScratch], FastPathScratch]:
    """Register the scratch bytes an op's fast path needs on a target (mirrors the C's
    *_buffer_size for the path that target compiles)."""

    def register(function: FastPathScratch) -> FastPathScratch:
        FAST_PATH_SCRATCH[kind] = function
        return function

    return register
