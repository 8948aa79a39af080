"""Build-time validation: every value of a model that generated C will trust is checked once,
as soon as the model is read, before any pass or stage reads it.

The reader (frontend/tflite.py) has checked the file's structure: the identifier, indices
into the tensor, buffer and opcode tables, enum values, constant byte sizes against dtype x
shape. This stage checks the contents, in this order, and raises ModelError naming the first
value that breaks a rule (what, where, the rule, the value, on one line):

1. tensors: element counts within int32 (the C indexes with int32), byte sizes within the
   size limit (`Limits.max_tensor_bytes`, `--max-tensor-bytes`) and the sum of all tensors'
   bytes within int32 (offsets in the arena and in flash); scales finite and positive, zero
   points within the dtype's range; per-channel arrays as long as the quantized dimension
   they run along, which lies within the rank;
2. the graph: at least one op, inputs and outputs; no graph input listed twice, none a
   constant; one writer per tensor; no op reading a tensor before an earlier op (or the graph
   inputs) wrote it (ir.verify_graph); every op with at least one output;
3. options: strides, dilations and filter sizes at least 1, and a window's reach (the rows and
   columns it sweeps, padding included) times the input's row size within int32, so that a
   kernel's tap offsets, even for taps in the padding, cannot overflow;
4. shapes: every op's output shapes follow from its input shapes and options, by the shape
   rules of its kind (OpDef.shape_rules, in mcugen/ops/<family>/).

What this leaves to the support stage (mcugen/support.py) is whether mcugen implements an op
(dtypes, quantization schemes, ranks its kernels take); a model that passes both is one whose
generated C stays inside its buffers for any input values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import field

from ..errors import McugenError, ModelError
from ..ir import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    Graph,
    Op,
    OpKind,
    Pool2DOptions,
    Tensor,
    verify_graph,
)
from ..ops import registry
from ..ops.base import DEFAULT_SETTING, takes_setting
from ..ops.rules import window_output_size
from ..records import dataclass

INT32_MAX = 2**31 - 1
# The default size limit: 256 MiB. The largest memory a Cortex-M can address as one region is
# external SDRAM or memory-mapped flash behind a 256 MB window (the FMC and OCTOSPI banks of
# the biggest STM32 and i.MX RT parts); no tensor larger than that can exist on a
# microcontroller, and refusing it keeps every byte offset well inside int32.
DEFAULT_MAX_TENSOR_BYTES = 256 * 2**20

# Scales outside [2^-64, 2^64] (5.4e-20 .. 1.8e19; real models use about 1e-10 .. 1e4) would
# overflow or vanish in the float32 arithmetic of TFLite's Prepare (6 / scale, a ratio of
# two scales), which mcugen repeats to derive multipliers and clamps.
MIN_SCALE, MAX_SCALE = 2.0**-64, 2.0**64

# The zero points each dtype can hold (int32, int64 and the others: int32, as the C takes them).
_ZERO_POINT_RANGE: dict[DType, tuple[int, int]] = {
    DType.INT8: (-128, 127),
    DType.UINT8: (0, 255),
    DType.INT16: (-32768, 32767),
}
_WINDOW_KINDS = (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D)


@dataclass(frozen=True)
class Limits:
    """The configurable part of validation."""

    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES


DEFAULT_LIMITS = Limits()


def validate_graph(graph: Graph, label: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Check everything generated C trusts (see the module docstring); raise ModelError."""
    total = 0
    for tensor in graph.tensors:
        check_tensor(tensor, label, limits)
        total += tensor.nbytes
    if total > INT32_MAX:
        raise ModelError(f"{label}: the model's tensors hold {total} bytes in all; the rule: at most "
                         f"{INT32_MAX} (offsets are int32)")
    check_structure(graph, label)
    for op in graph.ops:
        check_options(op, label)
    for op in graph.ops:
        check_shapes(op, label)


@dataclass
class Problems:
    """Every rule a model breaks (`mcugen inspect`): of the model (tensors, structure) and per op
    (options, shapes; keyed by the op's index in the file)."""

    model: list[str] = field(default_factory=list)
    ops: dict[int, list[str]] = field(default_factory=dict)


def validation_problems(graph: Graph, label: str, limits: Limits = DEFAULT_LIMITS) -> Problems:
    """What validate_graph checks, every broken rule rather than the first. An op whose options
    break a rule has its shapes left unjudged: the shape rules assume valid options."""
    found = Problems()
    total = 0
    for tensor in graph.tensors:
        _collect(found.model, check_tensor, tensor, label, limits)
        total += tensor.nbytes
    if total > INT32_MAX:
        found.model.append(f"{label}: the model's tensors hold {total} bytes in all; the rule: at most {INT32_MAX}")
    _collect(found.model, check_structure, graph, label)
    for op in graph.ops:
        mine: list[str] = []
        if not _collect(mine, check_options, op, label):
            _collect(mine, check_shapes, op, label)
        if mine:
            found.ops[op.index] = mine
    return found


def _collect(into: list[str], check: Callable[..., None], *args: object) -> bool:
    """Run one check; its ModelError's message goes to `into`. Whether it failed."""
    try:
        check(*args)
    except ModelError as error:
        into.append(str(error))
        return True
    return False


# --- tensors --------------------------------------------------------------------------------


def _tensor_where(label: str, tensor: Tensor) -> str:
    return f"{label}: tensor {tensor.index} '{tensor.name}'"


def check_tensor(tensor: Tensor, label: str, limits: Limits) -> None:
    where = _tensor_where(label, tensor)
    count = math.prod(tensor.shape)
    if count > INT32_MAX:
        raise ModelError(f"{where}: shape {list(tensor.shape)} has {count} elements; the rule: at most "
                         f"{INT32_MAX} (the C indexes elements with int32)")
    if tensor.nbytes > limits.max_tensor_bytes:
        raise ModelError(f"{where}: shape {list(tensor.shape)} of {tensor.dtype.short} is {tensor.nbytes} bytes; "
                         f"the rule: at most {limits.max_tensor_bytes} (--max-tensor-bytes)")
    if count == 0 and not tensor.is_constant:
        raise ModelError(f"{where}: shape {list(tensor.shape)} has no elements; the rule: a tensor that "
                         "an op or the caller writes has at least one element")
    quant = tensor.quant
    if quant is None:
        return
    bad_scales = [s for s in quant.scale if not (math.isfinite(s) and MIN_SCALE <= s <= MAX_SCALE)]
    if bad_scales:
        raise ModelError(f"{where}: scale {bad_scales[0]:g}; the rule: scales are finite, positive and within "
                         f"[2^-64, 2^64]")
    low, high = _ZERO_POINT_RANGE.get(tensor.dtype, (-(2**31), INT32_MAX))
    bad_zero_points = [z for z in quant.zero_point if not low <= z <= high]
    if bad_zero_points:
        raise ModelError(f"{where}: zero point {bad_zero_points[0]}; the rule: zero points of "
                         f"{tensor.dtype.short} lie in [{low}, {high}]")
    if len(quant.zero_point) != len(quant.scale):
        raise ModelError(f"{where}: {len(quant.scale)} scales and {len(quant.zero_point)} zero points; "
                         "the rule: one zero point per scale")
    if quant.per_channel and not (0 <= quant.axis < len(tensor.shape)
                                  and tensor.shape[quant.axis] == len(quant.scale)):
        raise ModelError(f"{where}: {len(quant.scale)} per-channel scales along axis {quant.axis} of shape "
                         f"{list(tensor.shape)}; the rule: one scale per index of the quantized dimension")


# --- the graph ------------------------------------------------------------------------------


def _listed_twice(tensors: Iterable[Tensor]) -> Tensor | None:
    seen: set[int] = set()
    for tensor in tensors:
        if id(tensor) in seen:
            return tensor
        seen.add(id(tensor))
    return None


def check_structure(graph: Graph, label: str) -> None:
    if not graph.ops:
        raise ModelError(f"{label}: the graph has no ops; the rule: a model computes something")
    twice = _listed_twice(graph.inputs)
    if twice is not None:
        raise ModelError(f"{label}: graph input '{twice.name}' is listed twice; the rule: each input once")
    for tensor in graph.inputs:
        if tensor.is_constant:
            raise ModelError(f"{_tensor_where(label, tensor)}: a graph input that is a constant; the rule: "
                             "inputs are written by the caller, constants live in flash")
    for op in graph.ops:
        if not op.outputs and op.kind is not OpKind.ASSIGN_VARIABLE:  # it writes a variable's state
            raise ModelError(f"{label}: {op.where()}: no outputs; the rule: every op writes a tensor")
    try:
        verify_graph(graph)
    except ModelError as error:
        raise ModelError(f"{label}: {error}; the rule: one writer per tensor, each written before it is read") \
            from None


# --- options --------------------------------------------------------------------------------


_WINDOW_FIELDS = ("stride_h", "stride_w", "dilation_h", "dilation_w", "filter_h", "filter_w",
                  "depth_multiplier")


def check_options(op: Op, label: str) -> None:
    options = op.options
    for name in _WINDOW_FIELDS:
        value = getattr(options, name, None)
        if value is not None and not 1 <= value <= INT32_MAX:
            raise ModelError(f"{label}: {op.where()}: {name} {value}; the rule: strides, dilations, filter "
                             "sizes and depth multipliers are at least 1")
    for item in dataclasses.fields(options):
        value = getattr(options, item.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ModelError(f"{label}: {op.where()}: {item.name} {value}; the rule: float options are finite")
    if op.kind in _WINDOW_KINDS:
        check_window_reach(op, label)


def _window(op: Op) -> tuple[int, int, int, int] | None:
    """(kh, kw, dilation_h, dilation_w) of a conv or pool op whose shapes allow it, else None."""
    o = op.options
    if isinstance(o, Pool2DOptions):
        return o.filter_h, o.filter_w, 1, 1
    w = op.inputs[1] if len(op.inputs) > 1 else None
    if not isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions)) or w is None or len(w.shape) != 4:
        return None
    return w.shape[1], w.shape[2], o.dilation_h, o.dilation_w


def check_window_reach(op: Op, label: str) -> None:
    """A window op's taps, padding included, sweep at most (out - 1) * stride + (k - 1) * dilation + 1
    rows and columns from the first padded one. A tap's element offset from the input's start is
    then less than (reach_h * width + reach_w) * channels in magnitude, which must fit int32: the
    kernels compute tap offsets in int32 before they skip the taps that fall in the padding (the
    depthwise fast paths' offset tables among them)."""
    x, o = op.inputs[0] if op.inputs else None, op.options
    window = _window(op)
    if x is None or window is None or len(x.shape) != 4:
        return  # the shape rules and the support rules report these
    assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions, Pool2DOptions))  # _window has checked
    kh, kw, dh, dw = window
    _, height, width, channels = x.shape
    padding = o.padding
    reach_h = (window_output_size(padding, height, kh, o.stride_h, dh) - 1) * o.stride_h + (kh - 1) * dh + 1
    reach_w = (window_output_size(padding, width, kw, o.stride_w, dw) - 1) * o.stride_w + (kw - 1) * dw + 1
    reach_h, reach_w = max(reach_h, height), max(reach_w, width)
    if (reach_h * width + reach_w) * channels > INT32_MAX:
        raise ModelError(
            f"{label}: {op.where()}: the window reaches {reach_h} x {reach_w} of an input {list(x.shape)}; "
            f"the rule: (rows x width + columns) x channels that a window sweeps, padding included, "
            f"fit int32 (tap offsets)")


# --- shapes ---------------------------------------------------------------------------------


def check_shapes(op: Op, label: str) -> None:
    """The kind's shape rules on one op; the first broken one is the error."""
    for rule in registry.op_def(op.kind).shape_rules:
        try:
            value = rule(op, DEFAULT_SETTING) if takes_setting(rule) else rule(op)
        except McugenError as error:
            raise ModelError(f"{label}: {error}") from None
        if value is not None:
            text = " ".join((rule.__doc__ or rule.__name__).split())
            raise ModelError(f"{label}: {op.where()}: the output shape does not follow from the op: {text} "
                             f"Got: {value}")
