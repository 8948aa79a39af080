"""What mcugen supports, per op kind, as data: small constraint functions whose docstrings are
the rules shown to users (and rendered into docs/supported_ops.md).

A constraint returns None when the op satisfies it, else a short description of the offending
value. `check_graph` runs every constraint on every op and reports all failures at once.
"""

from __future__ import annotations

from typing import Callable, Optional

from .errors import UnsupportedError
from .ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    FullyConnectedOptions,
    Graph,
    Op,
    OpKind,
    Pool2DOptions,
    Tensor,
)

Constraint = Callable[[Op], Optional[str]]

CLAMP_ACTIVATIONS = (Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1)


def _input(op: Op, index: int = 0) -> Tensor:
    """A required input; input_arity runs first and reports a missing one."""
    tensor = op.inputs[index] if index < len(op.inputs) else None
    if tensor is None:
        raise UnsupportedError(f"{op.where()}: input {index} is missing")
    return tensor


def _activations(op: Op) -> list[Tensor]:
    return [t for t in op.inputs if t is not None and not t.is_constant] + list(op.outputs)


def int8_activations(op: Op) -> Optional[str]:
    """Activation inputs and outputs are int8."""
    bad = [f"'{t.name}' is {t.dtype.short}" for t in _activations(op) if t.dtype is not DType.INT8]
    return ", ".join(bad) or None


def activation_dtypes(*allowed: DType) -> Constraint:
    """Rule factory: every activation input and output has one of the allowed dtypes."""

    def check(op: Op) -> Optional[str]:
        bad = [f"'{t.name}' is {t.dtype.short}" for t in _activations(op) if t.dtype not in allowed]
        return ", ".join(bad) or None

    names = [d.short for d in allowed]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    check.__doc__ = f"Activation inputs and outputs are {listed}."
    return check


def same_input_output_dtype(op: Op) -> Optional[str]:
    """The output has the dtype of the first input."""
    src, dst = _input(op), op.outputs[0]
    return None if src.dtype is dst.dtype else f"{src.dtype.short} -> {dst.dtype.short}"


def per_tensor_activation_quant(op: Op) -> Optional[str]:
    """Activations carry per-tensor quantization (one scale and zero point)."""
    bad = [
        f"'{t.name}' has {'no' if t.quant is None else len(t.quant.scale)} scales"
        for t in _activations(op)
        if t.quant is None or t.quant.per_channel
    ]
    return ", ".join(bad) or None


def clamp_activation(op: Op) -> Optional[str]:
    """The fused activation is NONE, RELU, RELU6 or RELU_N1_TO_1."""
    activation = getattr(op.options, "activation", Activation.NONE)
    return None if activation in CLAMP_ACTIVATIONS else f"fused activation {activation.name}"


def input_rank_4(op: Op) -> Optional[str]:
    """The input is a 4-D NHWC tensor."""
    shape = op.inputs[0].shape if op.inputs and op.inputs[0] is not None else ()
    return None if len(shape) == 4 else f"input shape {list(shape)}"


def rank_at_most_4(op: Op) -> Optional[str]:
    """Inputs and outputs have at most 4 dimensions."""
    bad = [f"'{t.name}' has shape {list(t.shape)}" for t in _activations(op) if len(t.shape) > 4]
    return ", ".join(bad) or None


def _weights(op: Op) -> Optional[Tensor]:
    return op.inputs[1] if len(op.inputs) > 1 else None


def constant_int8_weights(op: Op) -> Optional[str]:
    """The weights are a constant int8 tensor with quantization."""
    w = _weights(op)
    if w is None:
        return "no weights input"
    if not w.is_constant:
        return f"weights '{w.name}' are not constant"
    if w.dtype is not DType.INT8 or w.quant is None:
        return f"weights '{w.name}' are {w.dtype.short}{'' if w.quant else ' without quantization'}"
    return None


def symmetric_per_channel_weights(op: Op) -> Optional[str]:
    """Per-channel weights are symmetric (zero point 0) and quantized along the output-channel axis."""
    w = _weights(op)
    if w is None or w.quant is None or not w.quant.per_channel:
        return None
    axis = {OpKind.CONV_2D: 0, OpKind.DEPTHWISE_CONV_2D: 3, OpKind.FULLY_CONNECTED: 0}[op.kind]
    if w.quant.axis != axis:
        return f"weights quantized along axis {w.quant.axis}, expected {axis}"
    if any(z != 0 for z in w.quant.zero_point):
        return "weights have non-zero per-channel zero points"
    return None


def symmetric_conv_weights(op: Op) -> Optional[str]:
    """Convolution weights have zero point 0."""
    w = _weights(op)
    if w is not None and w.quant is not None and any(z != 0 for z in w.quant.zero_point):
        return f"weights zero point {w.quant.zero_point[0]}"
    return None


def int32_bias(op: Op) -> Optional[str]:
    """The bias, if present, is a constant int32 tensor with one value per output channel."""
    if len(op.inputs) < 3 or op.inputs[2] is None:
        return None
    bias = op.inputs[2]
    if not bias.is_constant or bias.dtype is not DType.INT32:
        return f"bias '{bias.name}' is {'non-constant ' if not bias.is_constant else ''}{bias.dtype.short}"
    channels = op.outputs[0].shape[-1]
    if bias.num_elements != channels:
        return f"bias has {bias.num_elements} values for {channels} output channels"
    return None


def positive_strides_and_dilations(op: Op) -> Optional[str]:
    """Strides, dilations and filter sizes are at least 1."""
    options = op.options
    names = ("stride_h", "stride_w", "dilation_h", "dilation_w", "filter_h", "filter_w", "depth_multiplier")
    bad = [f"{n} {getattr(options, n)}" for n in names if hasattr(options, n) and getattr(options, n) < 1]
    return ", ".join(bad) or None


def depthwise_channels(op: Op) -> Optional[str]:
    """Depthwise output channels equal input channels times the depth multiplier."""
    assert isinstance(op.options, DepthwiseConv2DOptions)
    in_c, out_c = _input(op).shape[-1], op.outputs[0].shape[-1]
    w = _weights(op)
    if w is not None and w.shape[-1] != out_c:
        return f"weights have {w.shape[-1]} channels, output {out_c}"
    if in_c * op.options.depth_multiplier != out_c and out_c % in_c != 0:
        return f"{in_c} input channels x multiplier {op.options.depth_multiplier} != {out_c}"
    return None


def conv_channels(op: Op) -> Optional[str]:
    """Convolution weights are [out_c, kh, kw, in_c] matching the input channels (no grouped conv)."""
    assert isinstance(op.options, Conv2DOptions)
    w = _weights(op)
    if w is None or len(w.shape) != 4:
        return f"weights shape {list(w.shape) if w is not None else None}"
    if w.shape[3] != _input(op).shape[3]:
        return f"weights take {w.shape[3]} input channels, input has {_input(op).shape[3]}"
    return None


def fully_connected_shapes(op: Op) -> Optional[str]:
    """Weights are 2-D [units, depth] in the default layout, and depth divides the input size."""
    assert isinstance(op.options, FullyConnectedOptions)
    w = _weights(op)
    if w is None or len(w.shape) != 2:
        return f"weights shape {list(w.shape) if w is not None else None}"
    if op.options.shuffled_weights:
        return "shuffled weights format"
    if _input(op).num_elements % w.shape[1] != 0:
        return f"input of {_input(op).num_elements} elements is not a multiple of depth {w.shape[1]}"
    return None


def pool_shapes(op: Op) -> Optional[str]:
    """Input and output have the same number of channels."""
    assert isinstance(op.options, Pool2DOptions)
    if _input(op).shape[-1] != op.outputs[0].shape[-1]:
        return f"channels {_input(op).shape[-1]} -> {op.outputs[0].shape[-1]}"
    return None


def constant_int32_axis(op: Op) -> Optional[str]:
    """The reduction axes are a constant int32 tensor."""
    axis = op.inputs[1] if len(op.inputs) > 1 else None
    if axis is None or not axis.is_constant or axis.dtype is not DType.INT32:
        return "axes are not a constant integer tensor"
    return None


def softmax_output(op: Op) -> Optional[str]:
    """The int8 output is quantized with scale 1/256 and zero point -128, as TFLite requires."""
    out = op.outputs[0]
    if out.quant is None:
        return None
    if abs(out.quant.single_scale * 256 - 1) > 1e-6 or out.quant.single_zero_point != -128:
        return f"output scale {out.quant.single_scale:g} zero point {out.quant.single_zero_point}"
    return None


def same_element_count(op: Op) -> Optional[str]:
    """The output has as many elements as the input, with the same dtype and quantization."""
    src, dst = _input(op), op.outputs[0]
    if src.num_elements != dst.num_elements:
        return f"{src.num_elements} elements -> {dst.num_elements}"
    if src.dtype is not dst.dtype or src.quant != dst.quant:
        return "dtype or quantization changes"
    return None


def input_arity(count: int) -> Constraint:
    def check(op: Op) -> Optional[str]:
        present = sum(1 for t in op.inputs[:count] if t is not None)
        return None if present >= count else f"{present} inputs"

    check.__doc__ = f"The op has at least {count} input tensor{'s' if count > 1 else ''}."
    return check


_QUANTIZED = [int8_activations, per_tensor_activation_quant]
_WEIGHTED = [constant_int8_weights, symmetric_per_channel_weights, int32_bias, clamp_activation]

RULES: dict[OpKind, list[Constraint]] = {
    OpKind.CONV_2D: [input_arity(2), *_QUANTIZED, input_rank_4, *_WEIGHTED, symmetric_conv_weights,
                     conv_channels, positive_strides_and_dilations],
    OpKind.DEPTHWISE_CONV_2D: [input_arity(2), *_QUANTIZED, input_rank_4, *_WEIGHTED,
                               symmetric_conv_weights, depthwise_channels,
                               positive_strides_and_dilations],
    OpKind.FULLY_CONNECTED: [input_arity(2), *_QUANTIZED, *_WEIGHTED, fully_connected_shapes],
    OpKind.AVERAGE_POOL_2D: [input_arity(1), *_QUANTIZED, input_rank_4, clamp_activation, pool_shapes,
                             positive_strides_and_dilations],
    OpKind.MAX_POOL_2D: [input_arity(1), *_QUANTIZED, input_rank_4, clamp_activation, pool_shapes,
                         positive_strides_and_dilations],
    OpKind.ADD: [input_arity(2), *_QUANTIZED, rank_at_most_4, clamp_activation],
    OpKind.MEAN: [input_arity(2), *_QUANTIZED, rank_at_most_4, constant_int32_axis],
    OpKind.SOFTMAX: [input_arity(1), *_QUANTIZED, softmax_output],
    OpKind.RESHAPE: [input_arity(1), same_element_count],
    # Rules below are the first cut for the operator-coverage work; each family refines its own.
    OpKind.TRANSPOSE_CONV: [input_arity(3)],
    OpKind.BATCH_MATMUL: [input_arity(2)],
    OpKind.SUB: [input_arity(2)],
    OpKind.MUL: [input_arity(2)],
    OpKind.SQUARED_DIFFERENCE: [input_arity(2)],
    OpKind.MAXIMUM: [input_arity(2)],
    OpKind.MINIMUM: [input_arity(2)],
    OpKind.SUM: [input_arity(2), constant_int32_axis],
    OpKind.REDUCE_MAX: [input_arity(2), constant_int32_axis],
    OpKind.LOGISTIC: [input_arity(1)],
    OpKind.TANH: [input_arity(1)],
    OpKind.HARD_SWISH: [input_arity(1)],
    OpKind.RELU: [input_arity(1)],
    OpKind.RELU6: [input_arity(1)],
    OpKind.LEAKY_RELU: [input_arity(1)],
    OpKind.PRELU: [input_arity(2)],
    OpKind.RSQRT: [input_arity(1)],
    OpKind.NEG: [input_arity(1)],
    OpKind.ABS: [input_arity(1)],
    OpKind.QUANTIZE: [input_arity(1)],
    OpKind.DEQUANTIZE: [input_arity(1)],
    OpKind.SQUEEZE: [input_arity(1), same_element_count],
    OpKind.EXPAND_DIMS: [input_arity(2), same_element_count],
    OpKind.SHAPE: [input_arity(1)],
    OpKind.CONCATENATION: [input_arity(1)],
    OpKind.PACK: [input_arity(1)],
    OpKind.UNPACK: [input_arity(1)],
    OpKind.SPLIT: [input_arity(2)],
    OpKind.SPLIT_V: [input_arity(3)],
    OpKind.STRIDED_SLICE: [input_arity(4)],
    OpKind.SLICE: [input_arity(3)],
    OpKind.PAD: [input_arity(2)],
    OpKind.PADV2: [input_arity(3)],
    OpKind.TRANSPOSE: [input_arity(2)],
    OpKind.GATHER: [input_arity(2)],
    OpKind.RESIZE_NEAREST_NEIGHBOR: [input_arity(2)],
    OpKind.RESIZE_BILINEAR: [input_arity(2)],
    OpKind.ARG_MAX: [input_arity(2)],
}


def check_op(op: Op) -> list[str]:
    """Every broken rule of one op, as 'where: rule (value)' messages."""
    problems = []
    for rule in RULES.get(op.kind, []):
        value = rule(op)
        if value is not None:
            problems.append(f"{op.where()}: {rule.__doc__.strip()} Got: {value}")  # type: ignore[union-attr]
    return problems


def graph_problems(graph: Graph) -> list[str]:
    return [problem for op in graph.ops for problem in check_op(op)]


def check_graph(graph: Graph) -> None:
    """Raise UnsupportedError listing every broken rule of every op at once."""
    problems = graph_problems(graph)
    if problems:
        raise UnsupportedError(f"{graph.name}: {len(problems)} unsupported: " + "; ".join(problems))


def supported_ops_markdown() -> str:
    """docs/supported_ops.md, generated from RULES."""
    lines = [
        "# Supported operators",
        "",
        "Generated from `mcugen/support.py` by `python -m mcugen.support`; do not edit.",
        "Every op below runs on the CPU kernels, bit-exact with TensorFlow Lite Micro",
        "(`--rounding tflm`, the default) and with LiteRT's reference kernels (`--rounding litert`).",
        "",
    ]
    for kind, rules in RULES.items():
        lines.append(f"## {kind.name}")
        lines.append("")
        lines.extend(f"- {rule.__doc__.strip()}" for rule in rules if rule.__doc__)
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(supported_ops_markdown(), end="")
