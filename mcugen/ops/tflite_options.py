"""Readers of TFLite options tables, shared by the op families (mcugen/ops/<family>/).

Each op kind's definition names the builtin code it reads and the reader of its options; the
helpers here turn flatbuffer fields into the IR's typed options and reject unknown enum values
with a ModelError naming the op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flatbuffers
import tflite

from ..errors import ModelError
from ..ir import (
    Activation,
    BatchMatMulOptions,
    ConcatenationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    FullyConnectedOptions,
    GatherOptions,
    LeakyReluOptions,
    NoOptions,
    PackOptions,
    Padding,
    ResizeOptions,
    ShapeOptions,
    SoftmaxOptions,
    SplitOptions,
    SqueezeOptions,
    StridedSliceOptions,
    TransposeConvOptions,
    UnpackOptions,
)

DTYPES: dict[int, DType] = {
    tflite.TensorType.INT8: DType.INT8,
    tflite.TensorType.UINT8: DType.UINT8,
    tflite.TensorType.INT16: DType.INT16,
    tflite.TensorType.INT32: DType.INT32,
    tflite.TensorType.INT64: DType.INT64,
    tflite.TensorType.FLOAT32: DType.FLOAT32,
    tflite.TensorType.BOOL: DType.BOOL,
}

ACTIVATIONS: dict[int, Activation] = {
    tflite.ActivationFunctionType.NONE: Activation.NONE,
    tflite.ActivationFunctionType.RELU: Activation.RELU,
    tflite.ActivationFunctionType.RELU6: Activation.RELU6,
    tflite.ActivationFunctionType.RELU_N1_TO_1: Activation.RELU_N1_TO_1,
    tflite.ActivationFunctionType.TANH: Activation.TANH,
    tflite.ActivationFunctionType.SIGN_BIT: Activation.SIGN_BIT,
}

PADDINGS: dict[int, Padding] = {tflite.Padding.SAME: Padding.SAME, tflite.Padding.VALID: Padding.VALID}

def _empty_table() -> tuple[bytearray, int]:
    """A flatbuffer holding one table with no fields: every accessor reads its default."""
    builder = flatbuffers.Builder(16)
    builder.StartObject(0)
    builder.Finish(builder.EndObject())
    data = builder.Output()
    return bytearray(data), flatbuffers.encode.Get(flatbuffers.packer.uoffset, data, 0)


def options_table(op: Any, options_class: Any) -> Any:
    """The op's options table; an op written without one (the converter omits tables whose
    fields all have their defaults, SQUEEZE with no squeeze_dims say) reads the defaults."""
    table = op.BuiltinOptions()
    options = options_class()
    if table is not None:
        options.Init(table.Bytes, table.Pos)
    else:
        options.Init(*_empty_table())
    return options


def enum_value(table: dict[int, Any], value: int, what: str, where: str) -> Any:
    if value not in table:
        raise ModelError(f"{where}: unknown {what} value {value}")
    return table[value]


def read_conv(op: Any, where: str) -> Conv2DOptions:
    o = options_table(op, tflite.Conv2DOptions)
    return Conv2DOptions(
        padding=enum_value(PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        dilation_h=o.DilationHFactor(),
        dilation_w=o.DilationWFactor(),
        activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
        quantized_bias_type=quantized_bias_type(o),
    )


def quantized_bias_type(options: Any) -> DType | None:
    """The options' quantized_bias_type; the schema default (FLOAT32) means not set."""
    value = options.QuantizedBiasType()
    return None if value == tflite.TensorType.FLOAT32 else DTYPES.get(value)


def read_depthwise(op: Any, where: str) -> DepthwiseConv2DOptions:
    o = options_table(op, tflite.DepthwiseConv2DOptions)
    return DepthwiseConv2DOptions(
        padding=enum_value(PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        dilation_h=o.DilationHFactor(),
        dilation_w=o.DilationWFactor(),
        depth_multiplier=o.DepthMultiplier(),
        activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
    )


def read_fully_connected(op: Any, where: str) -> FullyConnectedOptions:
    o = options_table(op, tflite.FullyConnectedOptions)
    return FullyConnectedOptions(
        activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
        keep_num_dims=bool(o.KeepNumDims()),
        shuffled_weights=o.WeightsFormat() != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT,
        quantized_bias_type=quantized_bias_type(o),
    )


def read_transpose_conv(op: Any, where: str) -> TransposeConvOptions:
    o = options_table(op, tflite.TransposeConvOptions)
    return TransposeConvOptions(
        padding=enum_value(PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
    )


def read_batch_matmul(op: Any, where: str) -> BatchMatMulOptions:
    o = options_table(op, tflite.BatchMatMulOptions)
    return BatchMatMulOptions(adj_x=bool(o.AdjX()), adj_y=bool(o.AdjY()))


def read_leaky_relu(op: Any, where: str) -> LeakyReluOptions:
    return LeakyReluOptions(alpha=float(options_table(op, tflite.LeakyReluOptions).Alpha()))


def read_squeeze(op: Any, where: str) -> SqueezeOptions:
    o = options_table(op, tflite.SqueezeOptions)
    dims = () if o.SqueezeDimsIsNone() else tuple(int(d) for d in o.SqueezeDimsAsNumpy())
    return SqueezeOptions(squeeze_dims=dims)


def read_concatenation(op: Any, where: str) -> ConcatenationOptions:
    o = options_table(op, tflite.ConcatenationOptions)
    return ConcatenationOptions(
        axis=o.Axis(), activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where)
    )


def read_pack(op: Any, where: str) -> PackOptions:
    o = options_table(op, tflite.PackOptions)
    return PackOptions(values_count=o.ValuesCount(), axis=o.Axis())


def read_unpack(op: Any, where: str) -> UnpackOptions:
    o = options_table(op, tflite.UnpackOptions)
    return UnpackOptions(num=o.Num(), axis=o.Axis())


def read_split(options_class: Any) -> Callable[[Any, str], SplitOptions]:
    def read(op: Any, where: str) -> SplitOptions:
        return SplitOptions(num_splits=options_table(op, options_class).NumSplits())

    return read


def read_strided_slice(op: Any, where: str) -> StridedSliceOptions:
    o = options_table(op, tflite.StridedSliceOptions)
    return StridedSliceOptions(
        begin_mask=o.BeginMask(),
        end_mask=o.EndMask(),
        ellipsis_mask=o.EllipsisMask(),
        new_axis_mask=o.NewAxisMask(),
        shrink_axis_mask=o.ShrinkAxisMask(),
        offset=bool(o.Offset()),
    )


def read_shape(op: Any, where: str) -> ShapeOptions:
    o = options_table(op, tflite.ShapeOptions)
    return ShapeOptions(out_type=enum_value(DTYPES, o.OutType(), "output type", where))


def read_gather(op: Any, where: str) -> GatherOptions:
    o = options_table(op, tflite.GatherOptions)
    return GatherOptions(axis=o.Axis(), batch_dims=o.BatchDims())


def read_resize(options_class: Any) -> Callable[[Any, str], ResizeOptions]:
    def read(op: Any, where: str) -> ResizeOptions:
        o = options_table(op, options_class)
        return ResizeOptions(align_corners=bool(o.AlignCorners()), half_pixel_centers=bool(o.HalfPixelCenters()))

    return read


def read_softmax(op: Any, where: str) -> SoftmaxOptions:
    return SoftmaxOptions(beta=float(options_table(op, tflite.SoftmaxOptions).Beta()))


def read_none(op: Any, where: str) -> NoOptions:
    return NoOptions()
