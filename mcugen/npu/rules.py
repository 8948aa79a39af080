"""The Ethos-U55 support rules of mcugen's own NPU compiler, one small function per rule.

A rule returns None when the op satisfies it, else a short description of the offending value;
its docstring is the rule users read (`mcugen inspect --npu`, docs/npu.md), as the CPU rules of
mcugen/ops/*/rules.py. The facts are the hardware's and Vela 5.2's (its legacy
tflite_supported_operators.py and tflite_model_semantic.py, and the constraints its C++ core
reports with `vela --supported-ops-report`); where mcugen's compiler does less than Vela (it
does not split a large stride or rewrite a dilation above 2), the rule says so. Which rules
apply to which op kind is the table in mcugen/npu/support.py.

The rules are the same for the four U55 sizes: they differ in MACs, micro-blocks and shared
buffer, which the lowering's block configuration accounts for, not in what they can run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..ir import (
    Activation,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    Op,
    OpKind,
    Padding,
    Pool2DOptions,
    Quant,
    Tensor,
)
from ..ops.rules import window_output_size

NpuRule = Callable[[Op], str | None]

FEATURE_MAP_DTYPES = (DType.INT8, DType.INT16)
MAX_DIMENSION = 65535  # the 16-bit height/width/depth minus-one registers
MAX_STRIDE = 3
MAX_DILATION = 2  # KERNEL_STRIDE has one dilation bit per axis
MAX_DILATED_KERNEL_HEIGHT = 64
MAX_DILATED_KERNEL_AREA = 64 * 64
MAX_WEIGHT_SUM = 127 * 65536
BIAS_BITS = 40  # the bias field of a bias/scale entry
MAX_POOL_KERNEL_HEIGHT = 256
MAX_POOL_KERNEL_AREA = 256 * 256
MAX_PADDED_AVERAGE_KERNEL = 8
MAX_PAD_TOP_LEFT = 127  # IFM_PAD_TOP/LEFT: 7 bits
MAX_PAD_BOTTOM_RIGHT = 255  # IFM_PAD_BOTTOM/RIGHT: 8 bits
MAX_SCALE_SHIFT = 63  # the shift of OFM_SCALE: 6 bits
SCALE_MULTIPLIER_BITS = 31
ADD_LEFT_SHIFT = {DType.INT8: 20, DType.INT16: 15}  # TFLite's (and Vela's) input headroom for ADD/SUB


def feature_maps(op: Op) -> list[Tensor]:
    """The non-constant inputs and the outputs: what the NPU reads and writes as feature maps."""
    return [t for t in op.inputs if t is not None and not t.is_constant] + list(op.outputs)


def _ifm(op: Op) -> Tensor | None:
    maps = [t for t in op.inputs if t is not None and not t.is_constant]
    return maps[0] if maps else None


def _joined(found: Sequence[str]) -> str | None:
    return ", ".join(found) or None


# --- every op ----------------------------------------------------------------------------


def feature_map_dtypes(op: Op) -> str | None:
    """Feature maps (the non-constant inputs and the outputs) are int8 or int16: float is no NPU type, and 32-bit feature maps exist only inside Vela's own lowerings."""
    return _joined([f"'{t.name}' is {t.dtype.short}" for t in feature_maps(op) if t.dtype not in FEATURE_MAP_DTYPES])


def feature_map_shapes(op: Op) -> str | None:
    """Feature maps have 1 to 4 dimensions, each from 1 to 65535 (the NPU's height, width and depth registers; mcugen does not refold a larger tensor into them, as Vela 5.2 does)."""
    return _joined([f"'{t.name}' has shape {list(t.shape)}" for t in feature_maps(op)
                    if not 1 <= len(t.shape) <= 4 or not all(1 <= d <= MAX_DIMENSION for d in t.shape)])


def static_shapes(op: Op) -> str | None:
    """Feature maps have static shapes; only a dynamic batch is allowed (fixed at 1), as Vela requires: a command stream is written for fixed extents."""
    return _joined([f"'{t.name}' has dynamic axes {list(t.dynamic_axes)}" for t in feature_maps(op)
                    if t.dynamic_axes not in ((), (0,))])


def batch_one(op: Op) -> str | None:
    """The inputs' batch (the first of four dimensions) is 1: the NPU has no batch axis (mcugen does not run an operation once per batch, as Vela 5.2 does)."""
    return _joined([f"'{t.name}' has batch {t.shape[0]}" for t in op.inputs
                    if t is not None and not t.is_constant and len(t.shape) == 4 and t.shape[0] != 1])


def quantized_feature_maps(op: Op) -> str | None:
    """Feature maps carry one positive, finite scale and one zero point (per-axis quantization is for weights only)."""
    bad = []
    for t in feature_maps(op):
        if t.quant is None:
            bad.append(f"'{t.name}' has no quantization")
        elif t.quant.per_channel:
            bad.append(f"'{t.name}' has {len(t.quant.scale)} scales")
        elif not (math.isfinite(t.quant.single_scale) and t.quant.single_scale > 0):
            bad.append(f"'{t.name}' has scale {t.quant.single_scale:g}")
    return _joined(bad)


def clamp_fused_activation(op: Op) -> str | None:
    """The fused activation, if any, is RELU, RELU6 or RELU_N1_TO_1: a clamp of the output stage (a fused TANH or SIGN_BIT is not)."""
    activation = getattr(op.options, "activation", Activation.NONE)
    clamps = (Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1)
    return None if activation in clamps else f"fused activation {activation.name}"


def npu_scale_shift(factor: float) -> int | None:
    """The right shift of the NPU scale (a 31-bit multiplier in [2^30, 2^31)) that represents
    `factor`; None for a factor that is not positive and finite."""
    if not (math.isfinite(factor) and factor > 0):
        return None
    fraction, exponent = math.frexp(factor)
    if round(fraction * (1 << SCALE_MULTIPLIER_BITS)) == 1 << SCALE_MULTIPLIER_BITS:
        exponent += 1  # the multiplier rounds up to 2^31: renormalised, as TFLite does
    return SCALE_MULTIPLIER_BITS - exponent


def _scale(t: Tensor | None) -> float | None:
    return t.quant.single_scale if t is not None and t.quant is not None else None


def rescale_factors(op: Op) -> list[tuple[str, float]]:
    """The (what, factor) rescales the output stage applies, as TFLite derives them from the scales."""
    ifm, ofm = _ifm(op), (op.outputs[0] if op.outputs else None)
    s_in, s_out = _scale(ifm), _scale(ofm)
    if s_in is None or s_out is None:
        return []
    if op.kind in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED):
        w = op.inputs[1] if len(op.inputs) > 1 else None
        if w is None or w.quant is None:
            return []
        return [(f"input*weight/output of channel {c}", s_in * s_w / s_out) for c, s_w in enumerate(w.quant.scale)]
    if op.kind in (OpKind.ADD, OpKind.SUB):
        s_b = _scale(op.inputs[1] if len(op.inputs) > 1 else None)
        if s_b is None or ifm is None or ifm.dtype not in ADD_LEFT_SHIFT:
            return []
        twice_max = 2 * max(s_in, s_b)
        return [("input scale / twice the larger one", s_in / twice_max),
                ("second input scale / twice the larger one", s_b / twice_max),
                ("output rescale", twice_max / (s_out * (1 << ADD_LEFT_SHIFT[ifm.dtype])))]
    if op.kind is OpKind.MUL:
        s_b = _scale(op.inputs[1] if len(op.inputs) > 1 else None)
        return [] if s_b is None else [("input*input2/output", s_in * s_b / s_out)]
    return [("input/output", s_in / s_out)]


def representable_scales(op: Op) -> str | None:
    """Every rescale factor of the output stage (input/output, or input*weight/output per channel, or ADD/SUB's and MUL's TFLite factors) is a 31-bit multiplier with a right shift of 0 to 63: a factor from 2^-33 up to below 2^31."""
    bad = []
    for what, factor in rescale_factors(op):
        shift = npu_scale_shift(factor)
        if shift is None or not 0 <= shift <= MAX_SCALE_SHIFT:
            bad.append(f"{what} {factor:.6g} needs shift {shift}")
    return _joined(bad[:3] + ([f"and {len(bad) - 3} more"] if len(bad) > 3 else []))


# --- weighted ops: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED ----------------------------


def _weights(op: Op) -> Tensor | None:
    return op.inputs[1] if len(op.inputs) > 1 else None


def _bias(op: Op) -> Tensor | None:
    return op.inputs[2] if len(op.inputs) > 2 else None


def constant_int8_weights(op: Op) -> str | None:
    """The weights are a constant int8 tensor (the NPU's weight decoder reads 8-bit weights)."""
    w = _weights(op)
    if w is None:
        return "no weights"
    if not w.is_constant or w.dtype is not DType.INT8:
        return f"weights '{w.name}' are {'non-constant ' if not w.is_constant else ''}{w.dtype.short}"
    return None


def weight_sum_limit(op: Op) -> str | None:
    """For every output channel the sum of |weight - zero point| is at most 127 * 65536 = 8323072 (Vela's bound for the accumulator)."""
    w = _weights(op)
    if w is None or w.data is None or w.dtype is not DType.INT8:
        return None
    values = w.data.astype(np.int64)
    zero_points = np.asarray(w.quant.zero_point if w.quant else (0,), dtype=np.int64)
    # Output channels: the first axis of CONV_2D/FULLY_CONNECTED weights, the last of DEPTHWISE's.
    channel_axis = values.ndim - 1 if op.kind is OpKind.DEPTHWISE_CONV_2D else 0
    moved = np.moveaxis(values, channel_axis, 0).reshape(values.shape[channel_axis], -1)
    if zero_points.size == moved.shape[0]:
        moved = moved - zero_points[:, None]
    else:
        moved = moved - zero_points[0]
    largest = int(np.abs(moved).sum(axis=1).max()) if moved.size else 0
    return None if largest <= MAX_WEIGHT_SUM else f"sum of weights {largest}"


def npu_bias(op: Op) -> str | None:
    """The bias, if present, is a constant 1-D int32 or int64 tensor whose values fit in 40 bits (the bias field of the NPU's bias/scale entries)."""
    bias = _bias(op)
    if bias is None:
        return None
    if not bias.is_constant or bias.dtype not in (DType.INT32, DType.INT64) or len(bias.shape) != 1:
        return f"bias '{bias.name}' is {'non-constant ' if not bias.is_constant else ''}{bias.dtype.short}{list(bias.shape)}"
    limit = 1 << (BIAS_BITS - 1)
    assert bias.data is not None
    values = bias.data.astype(np.int64)
    if values.size and (int(values.max()) >= limit or int(values.min()) < -limit):
        return f"bias value {int(values[np.argmax(np.abs(values))])} needs more than {BIAS_BITS} bits"
    return None


def window_strides(op: Op) -> str | None:
    """Strides are 1 to 3 along height and width, except along an axis where the output has extent 1 (the window is applied once there); mcugen does not split a larger stride into several operations, as Vela does for some."""
    o, out = op.options, (op.outputs[0].shape if op.outputs else ())
    bad = []
    for name, axis in (("stride_h", 1), ("stride_w", 2)):
        stride = getattr(o, name, 1)
        once = len(out) == 4 and out[axis] == 1
        if not 1 <= stride <= MAX_STRIDE and not (once and stride >= 1):
            bad.append(f"{name} {stride}")
    return _joined(bad + ([f"output {list(out)}"] if bad else []))


def dilation_at_most_2(op: Op) -> str | None:
    """Dilations are 1 or 2 (KERNEL_STRIDE has one dilation bit per axis; mcugen does not rewrite a larger dilation, as Vela does)."""
    o = op.options
    dilations = (getattr(o, "dilation_h", 1), getattr(o, "dilation_w", 1))
    return None if all(1 <= d <= MAX_DILATION for d in dilations) else f"dilation {dilations[0]}x{dilations[1]} (HxW)"


def _kernel(op: Op) -> tuple[int, int]:
    """(height, width) of the op's window: the weights' or the pool's filter."""
    if isinstance(op.options, Pool2DOptions):
        return op.options.filter_h, op.options.filter_w
    w = _weights(op)
    if w is None or len(w.shape) != 4:
        return 1, 1
    return w.shape[1], w.shape[2]


def _dilated_kernel(op: Op) -> tuple[int, int]:
    (kh, kw), o = _kernel(op), op.options
    return (kh - 1) * getattr(o, "dilation_h", 1) + 1, (kw - 1) * getattr(o, "dilation_w", 1) + 1


def dilated_kernel_size(op: Op) -> str | None:
    """The dilated kernel is at most 64 high and its height times width at most 64 * 64 = 4096."""
    h, w = _dilated_kernel(op)
    return None if h <= MAX_DILATED_KERNEL_HEIGHT and h * w <= MAX_DILATED_KERNEL_AREA else f"dilated kernel {h}x{w} (HxW)"


def same_padding(op: Op) -> tuple[int, int, int, int]:
    """TFLite's SAME padding of a window op as (top, left, bottom, right): the smaller half before."""
    ifm, o = _ifm(op), op.options
    if ifm is None or len(ifm.shape) != 4 or getattr(o, "padding", Padding.VALID) is not Padding.SAME:
        return 0, 0, 0, 0
    pads = []
    for axis, stride_name in ((1, "stride_h"), (2, "stride_w")):
        size, stride = ifm.shape[axis], max(getattr(o, stride_name, 1), 1)
        kernel = _dilated_kernel(op)[axis - 1]
        out = window_output_size(Padding.SAME, size, kernel, stride, 1)
        pads.append(max((out - 1) * stride + kernel - size, 0))
    return pads[0] // 2, pads[1] // 2, pads[0] - pads[0] // 2, pads[1] - pads[1] // 2


def padding_fits(op: Op) -> str | None:
    """SAME padding puts at most 127 rows or columns before the IFM (top, left: the 7-bit pad fields of NPU_SET_IFM_PAD_TOP/LEFT in Arm's ethosu55_interface.h) and at most 255 after it (bottom, right); TFLite's SAME puts at most one more after than before, so the first limit is the one that binds."""
    top, left, bottom, right = same_padding(op)
    if max(top, left) <= MAX_PAD_TOP_LEFT and max(bottom, right) <= MAX_PAD_BOTTOM_RIGHT:
        return None
    return f"padding top {top}, left {left}, bottom {bottom}, right {right}"


def depth_multiplier(op: Op) -> str | None:
    """DEPTHWISE_CONV_2D: a depth multiplier above 1 needs a single IFM channel (then it is a CONV_2D), as Vela's legacy compiler requires: the engine's DEPTHWISE computes OFM channel c from IFM channel c."""
    assert isinstance(op.options, DepthwiseConv2DOptions)
    ifm = _ifm(op)
    if op.options.depth_multiplier == 1 or (ifm is not None and ifm.shape[-1] == 1):
        return None
    return f"depth multiplier {op.options.depth_multiplier} with {ifm.shape[-1] if ifm else '?'} IFM channels"


def fully_connected_weights(op: Op) -> str | None:
    """FULLY_CONNECTED: the weights are 2-D [output channels, input depth], the input's last dimension being the input depth (a 1x1 CONV over the rows)."""
    w, ifm = _weights(op), _ifm(op)
    if w is None or ifm is None:
        return None
    if len(w.shape) != 2 or w.shape[1] != ifm.shape[-1]:
        return f"weights {list(w.shape)} for input {list(ifm.shape)}"
    return None


def conv_weights_shape(op: Op) -> str | None:
    """CONV_2D: the weights are [output channels, height, width, input channels] with the IFM's depth (no grouped convolution)."""
    assert isinstance(op.options, Conv2DOptions)
    w, ifm = _weights(op), _ifm(op)
    if w is None or ifm is None:
        return None
    return None if len(w.shape) == 4 and w.shape[3] == ifm.shape[-1] else f"weights {list(w.shape)} for input {list(ifm.shape)}"


# --- pooling ------------------------------------------------------------------------------


def pool_kernel_size(op: Op) -> str | None:
    """MAX_POOL_2D, and AVERAGE_POOL_2D with VALID padding: the kernel is at most 256 high and its height times width at most 256 * 256 = 65536."""
    assert isinstance(op.options, Pool2DOptions)
    if op.kind is OpKind.AVERAGE_POOL_2D and op.options.padding is Padding.SAME:
        return None
    h, w = op.options.filter_h, op.options.filter_w
    return None if h <= MAX_POOL_KERNEL_HEIGHT and h * w <= MAX_POOL_KERNEL_AREA else f"kernel {h}x{w} (HxW)"


def padded_average_kernel(op: Op) -> str | None:
    """AVERAGE_POOL_2D with SAME padding: the kernel is at most 8x8 (the NPU averages a padded window over its real taps only up to that size)."""
    assert isinstance(op.options, Pool2DOptions)
    if op.options.padding is not Padding.SAME:
        return None
    h, w = op.options.filter_h, op.options.filter_w
    return None if max(h, w) <= MAX_PADDED_AVERAGE_KERNEL else f"kernel {h}x{w} (HxW) with SAME padding"


def same_input_output_dtype(op: Op) -> str | None:
    """The output has the input's dtype."""
    ifm = _ifm(op)
    if ifm is None or not op.outputs:
        return None
    return None if ifm.dtype is op.outputs[0].dtype else f"{ifm.dtype.short} -> {op.outputs[0].dtype.short}"


# --- elementwise ----------------------------------------------------------------------------


def _operand_shapes(op: Op) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    if len(op.inputs) < 2 or op.inputs[0] is None or op.inputs[1] is None or not op.outputs:
        return None
    return tuple(op.inputs[0].shape), tuple(op.inputs[1].shape), tuple(op.outputs[0].shape)


def elementwise_broadcast(op: Op) -> str | None:
    """One input has the output's shape; the other equals it or broadcasts along axes where its extent is 1 (trailing axes aligned), as the IFM2 broadcast of the NPU does (Vela 5.2 also broadcasts both inputs, with an extra copy; mcugen does not)."""
    shapes = _operand_shapes(op)
    if shapes is None:
        return None
    a, b, out = shapes
    if a != out and b != out:
        return f"inputs {list(a)} and {list(b)}, output {list(out)}: neither input has the output's shape"
    other = b if a == out else a
    for o, x in zip(reversed(out), reversed(other)):
        if x not in (1, o):
            return f"input {list(other)} does not broadcast to {list(out)}"
    return None


def same_operand_dtypes(op: Op) -> str | None:
    """Both inputs and the output have one dtype."""
    dtypes = {t.dtype for t in [*op.inputs[:2], *op.outputs[:1]] if t is not None}
    return None if len(dtypes) <= 1 else "dtypes " + ", ".join(sorted(d.short for d in dtypes))


def _same_quant(a: Quant | None, b: Quant | None) -> bool:
    return a is not None and b is not None and a.scale == b.scale and a.zero_point == b.zero_point


def inputs_quantized_as_output(op: Op) -> str | None:
    """Every input has the output's scale and zero point (the operation does not rescale: MINIMUM, MAXIMUM, a reshape, a concatenation written in place)."""
    out = op.outputs[0] if op.outputs else None
    bad = [f"'{t.name}'" for t in op.inputs if t is not None and not (t.is_constant and t.dtype is DType.INT32)
           and out is not None and not _same_quant(t.quant, out.quant)]
    return None if not bad else f"{', '.join(bad)} quantized unlike the output"


# --- LUT activations ------------------------------------------------------------------------


def int8_lut(op: Op) -> str | None:
    """int8 only: the op becomes a 256-entry lookup table in the output stage. int16 LOGISTIC and TANH would need the hardware's SIGMOID and TANH functions, which mcugen's simulated engine does not model (LUTs only); int16 HARD_SWISH is not an NPU op."""
    ifm = _ifm(op)
    return None if ifm is None or ifm.dtype is DType.INT8 else f"input is {ifm.dtype.short}"


def concatenation_axis(op: Op) -> str | None:
    """CONCATENATION: the output has at most 4 dimensions and the batch of a 4-D output stays 1 (each input is written at its offset along height, width or depth)."""
    out = op.outputs[0] if op.outputs else None
    if out is None:
        return None
    return None if len(out.shape) < 4 or out.shape[0] == 1 else f"output {list(out.shape)}"
