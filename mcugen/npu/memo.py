"""Results of the NPU's estimates and trial lowerings kept for the rest of one build.

An --npu build prices every choice (stripes, weight buffers, weight streams and their slice
depths) by the estimate of the whole order, with the choices made so far: the same ops are
estimated, and the same slices lowered for their weight lengths, hundreds of times over. Inside
`build_scope()` (driver.compile_model around an --npu build's planning and lowering) a function
wrapped by `memoised` answers a repeated question from a table; outside one it computes, as
before, so direct callers (tests, tools) see no state.

A key may name an object by `id` (an Op, a weight array's memory): the object is kept with the
entry, so the id cannot be reused by another object while the scope lives; the graph's ops and
constants are not changed in place while a build plans and lowers them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from ..ir import Op, Tensor

F = TypeVar("F", bound=Callable[..., Any])
# a call's key, and the objects whose ids the key holds (kept alive with the entry); None: not cached
Key = tuple[Hashable, Any] | None

_tables: dict[str, dict[Hashable, tuple[Any, Any]]] | None = None


@contextmanager
def build_scope() -> Iterator[None]:
    """Memoise the wrapped functions until the (outermost) scope ends; then forget everything."""
    global _tables
    outermost = _tables is None
    if outermost:
        _tables = {}
    try:
        yield
    finally:
        if outermost:
            _tables = None


def memoised(key: Callable[..., Key]) -> Callable[[F], F]:
    """Wrap a pure function: inside a build scope, calls with equal `key(*args, **kwargs)` share one result."""
    def wrap(function: F) -> F:
        name = f"{function.__module__}.{function.__qualname__}"

        @functools.wraps(function)
        def cached(*args: Any, **kwargs: Any) -> Any:
            if _tables is None:
                return function(*args, **kwargs)
            found = key(*args, **kwargs)
            if found is None:
                return function(*args, **kwargs)
            table = _tables.setdefault(name, {})
            hit = table.get(found[0])
            if hit is None:
                hit = table[found[0]] = (function(*args, **kwargs), found[1])
            return hit[0]
        return cached  # type: ignore[return-value]
    return wrap


def array_token(data: np.ndarray) -> tuple[int, tuple[int, ...], tuple[int, ...], str]:
    """An array's memory as a key: its address, shape, strides and type (equal tokens, equal
    values, while the array is kept alive and not written)."""
    return data.__array_interface__["data"][0], data.shape, data.strides, data.dtype.str


def _tensor(tensor: Tensor | None) -> Hashable:
    return None if tensor is None else (tensor.shape, tensor.dtype, tensor.data is not None)


def op_shape_key(op: Op, *rest: Hashable) -> Key:
    """An op by what the estimates read: kind, options, its tensors' shapes, types and which are
    constants, and its weights' values (inputs[1], by their memory); None if its options do not hash."""
    try:
        hash(op.options)
    except TypeError:
        return None
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    data = weights.data if weights is not None else None
    token = array_token(data) if data is not None else None
    return (op.kind, op.options, tuple(map(_tensor, op.inputs)), tuple(map(_tensor, op.outputs)), token, *rest), data


def op_id_key(op: Op, *rest: Hashable) -> Key:
    """An op by identity (for questions about the graph's own ops, which a build does not change)."""
    return (id(op), *rest), op


__all__ = ["Key", "array_token", "build_scope", "memoised", "op_id_key", "op_shape_key"]
