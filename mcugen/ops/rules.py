"""Support rules shared by the op families, and those not yet moved into their family.

A rule returns None when the op satisfies it, else a short description of the offending value;
its docstring is the rule users read (mcugen inspect, docs/supported_ops.md). Factories write
their rules' docstrings. Each family's definitions (mcugen/ops/<family>/) list the rules of
each kind.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UnsupportedError
from ..ir import (
    Activation,
    DType,
    Op,
    OpKind,
    Padding,
    Quant,
    Tensor,
)

Constraint = Callable[[Op], str | None]

CLAMP_ACTIVATIONS = (Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1)


def required_input(op: Op, index: int = 0) -> Tensor:
    """A required input; input_arity runs first and reports a missing one."""
    tensor = op.inputs[index] if index < len(op.inputs) else None
    if tensor is None:
        raise UnsupportedError(f"{op.where()}: input {index} is missing")
    return tensor


def activation_tensors(op: Op) -> list[Tensor]:
    return [t for t in op.inputs if t is not None and not t.is_constant] + list(op.outputs)


def activation_dtypes(*allowed: DType) -> Constraint:
    """Rule factory: every activation input and output has one of the allowed dtypes."""

    def check(op: Op) -> str | None:
        bad = [f"'{t.name}' is {t.dtype.short}" for t in activation_tensors(op) if t.dtype not in allowed]
        return ", ".join(bad) or None

    names = [d.short for d in allowed]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    check.__doc__ = f"Activation inputs and outputs are {listed}."
    return check


def output_shape_is_input_shape(op: Op) -> str | None:
    """The output has the input's shape."""
    x = op.inputs[0] if op.inputs else None
    if x is None or not op.outputs:
        return None  # input_arity reports it
    y = op.outputs[0]
    return None if tuple(x.shape) == tuple(y.shape) else f"input {list(x.shape)}, output {list(y.shape)}"


def window_output_size(padding: Padding, in_size: int, filter_size: int, stride: int, dilation: int) -> int:
    """TFLite's ComputeOutSize: the output extent of a window op along one axis."""
    effective = (filter_size - 1) * dilation + 1
    if padding is Padding.SAME:
        return (in_size + stride - 1) // stride
    return max((in_size - effective + stride) // stride, 0)


def window_output_shape(op: Op, kernel: tuple[int, int], channels: int) -> str | None:
    """Shared by the conv and pool shape rules: the 4-D output [batch, out_h, out_w, channels]
    that the input, a (kh, kw) window, the strides, the dilations and the padding give."""
    x = op.inputs[0] if op.inputs else None
    y, o = op.outputs[0], op.options
    strides = (getattr(o, "stride_h", 0), getattr(o, "stride_w", 0))
    dilations = (getattr(o, "dilation_h", 1), getattr(o, "dilation_w", 1))
    if x is None or len(x.shape) != 4 or min(*strides, *dilations, *kernel) < 1:
        return None  # input_rank_4 and positive_strides_and_dilations report these
    padding = getattr(o, "padding", Padding.VALID)
    spatial = [window_output_size(padding, x.shape[1 + a], kernel[a], strides[a], dilations[a]) for a in (0, 1)]
    expected = [x.shape[0], *spatial, channels]
    return None if list(y.shape) == expected else f"output {list(y.shape)}, expected {expected}"


def same_input_output_dtype(op: Op) -> str | None:
    """The output has the dtype of the first input."""
    src, dst = required_input(op), op.outputs[0]
    return None if src.dtype is dst.dtype else f"{src.dtype.short} -> {dst.dtype.short}"


def per_tensor_activation_quant(op: Op) -> str | None:
    """Activations carry per-tensor quantization (one scale and zero point)."""
    bad = [
        f"'{t.name}' has {'no' if t.quant is None else len(t.quant.scale)} scales"
        for t in activation_tensors(op)
        if t.quant is None or t.quant.per_channel
    ]
    return ", ".join(bad) or None


def clamp_activation(op: Op) -> str | None:
    """The fused activation is NONE, RELU, RELU6 or RELU_N1_TO_1."""
    activation = getattr(op.options, "activation", Activation.NONE)
    return None if activation in CLAMP_ACTIVATIONS else f"fused activation {activation.name}"


def input_rank_4(op: Op) -> str | None:
    """The input is a 4-D NHWC tensor."""
    shape = op.inputs[0].shape if op.inputs and op.inputs[0] is not None else ()
    return None if len(shape) == 4 else f"input shape {list(shape)}"


input_rank_4.gate = True  # type: ignore[attr-defined]  # the later rules index the NHWC dimensions


def rank_at_most_4(op: Op) -> str | None:
    """Inputs and outputs have at most 4 dimensions."""
    bad = [f"'{t.name}' has shape {list(t.shape)}" for t in activation_tensors(op) if len(t.shape) > 4]
    return ", ".join(bad) or None


def weights_of(op: Op) -> Tensor | None:
    return op.inputs[1] if len(op.inputs) > 1 else None


def constant_int8_weights(op: Op) -> str | None:
    """The weights are a constant int8 tensor with quantization."""
    w = weights_of(op)
    if w is None:
        return "no weights input"
    if not w.is_constant:
        return f"weights '{w.name}' are not constant"
    if w.dtype is not DType.INT8 or w.quant is None:
        return f"weights '{w.name}' are {w.dtype.short}{'' if w.quant else ' without quantization'}"
    return None


def symmetric_per_channel_weights(axis: int) -> Constraint:
    """Rule factory: per-channel weights are symmetric and quantized along `axis`, the kind's
    output-channel axis (its InputRoles.weights_channel_axis)."""

    def check(op: Op) -> str | None:
        w = weights_of(op)
        if w is None or w.quant is None or not w.quant.per_channel:
            return None
        if w.quant.axis != axis:
            return f"weights quantized along axis {w.quant.axis}, expected {axis}"
        if any(z != 0 for z in w.quant.zero_point):
            return "weights have non-zero per-channel zero points"
        return None

    check.__doc__ = ("Per-channel weights are symmetric (zero point 0) and quantized along the "
                     "output-channel axis.")
    return check


def positive_strides_and_dilations(op: Op) -> str | None:
    """Strides, dilations and filter sizes are at least 1."""
    options = op.options
    names = ("stride_h", "stride_w", "dilation_h", "dilation_w", "filter_h", "filter_w", "depth_multiplier")
    bad = [f"{n} {getattr(options, n)}" for n in names if hasattr(options, n) and getattr(options, n) < 1]
    return ", ".join(bad) or None


# --- reductions, pooling, resizing, ARG_MAX ------------------------------------------------

INTEGER_DTYPES = (DType.INT8, DType.INT16)


def integer_quant_pair(op: Op) -> tuple[Quant, Quant] | None:
    src, dst = required_input(op), op.outputs[0]
    if src.dtype not in INTEGER_DTYPES or src.quant is None or dst.quant is None:
        return None
    return src.quant, dst.quant


def describe_quant_pair(src: Quant, dst: Quant) -> str:
    return (f"input {src.single_scale:g}/{src.single_zero_point}, output "
            f"{dst.single_scale:g}/{dst.single_zero_point}")


def input_arity(count: int) -> Constraint:
    def check(op: Op) -> str | None:
        present = sum(1 for t in op.inputs[:count] if t is not None)
        return None if present >= count else f"{present} inputs"

    check.__doc__ = f"The op has at least {count} input tensor{'s' if count > 1 else ''}."
    check.gate = True  # type: ignore[attr-defined]  # the later rules read these inputs (base.broken_rules)
    return check


# --- weighted ops (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED, BATCH_MATMUL) ---


def weighted_input(op: Op) -> Tensor:
    """The activation input: input 0, or input 2 of TRANSPOSE_CONV."""
    return required_input(op, 2 if op.kind is OpKind.TRANSPOSE_CONV else 0)


def _bias(op: Op) -> Tensor | None:
    index = 3 if op.kind is OpKind.TRANSPOSE_CONV else 2
    return op.inputs[index] if len(op.inputs) > index else None


def int16_zero_points(op: Op) -> str | None:
    """int16 activations have zero point 0 (TFLite's int16 kernels require it and ignore it)."""
    bad = [
        f"'{t.name}' has zero point {t.quant.single_zero_point}"
        for t in [*op.inputs, *op.outputs]
        if t is not None and t.dtype is DType.INT16 and t.quant is not None
        and t.quant.single_zero_point != 0
    ]
    return ", ".join(bad) or None


def weighted_bias(*int16_bias: DType) -> Constraint:
    """Rule factory: the bias dtypes an op accepts with int16 activations."""

    def check(op: Op) -> str | None:
        bias = _bias(op)
        if bias is None:
            return None
        allowed = int16_bias if weighted_input(op).dtype is DType.INT16 else (DType.INT32,)
        if not bias.is_constant or bias.dtype not in allowed:
            return f"bias '{bias.name}' is {'non-constant ' if not bias.is_constant else ''}{bias.dtype.short}"
        channels = op.outputs[0].shape[-1]
        if bias.num_elements != channels:
            return f"bias has {bias.num_elements} values for {channels} output channels"
        return None

    listed = " or ".join(d.short for d in int16_bias)
    note = (
        " With --rounding tflm an int16 op's int32 bias is read as int32 whatever its "
        "quantized_bias_type option says, as TFLM does (--rounding litert: see below)."
        if DType.INT32 in int16_bias else ""
    )
    check.__doc__ = (
        "The bias, if present, is a constant tensor with one value per output channel: int32 for "
        f"int8 activations, {listed} for int16 activations.{note}"
    )
    return check


_WEIGHTED_DTYPES = [activation_dtypes(DType.INT8, DType.INT16), int16_zero_points]
