"""TFLite flatbuffer -> IR. The only module that imports the `tflite` package.

The reader validates what it reads (file identifier, schema version, buffer ranges, tensor
indices, data sizes against shapes) and raises ModelError with a one-line message naming the
file and the element that is wrong. Ops that mcugen does not know are collected and reported
all at once as UnsupportedError, so a user sees the whole list in one run.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite

from ..errors import ModelError, UnsupportedError
from ..ir import (
    Activation,
    ArgMaxOptions,
    ArithmeticOptions,
    BatchMatMulOptions,
    ConcatenationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    DType,
    FullyConnectedOptions,
    GatherOptions,
    Graph,
    LeakyReluOptions,
    NoOptions,
    Op,
    OpKind,
    OpOptions,
    PackOptions,
    Padding,
    Pool2DOptions,
    Quant,
    ReducerOptions,
    ResizeOptions,
    ShapeOptions,
    SoftmaxOptions,
    SplitOptions,
    SqueezeOptions,
    StridedSliceOptions,
    Tensor,
    TransposeConvOptions,
    UnpackOptions,
)

SUPPORTED_SCHEMA_VERSION = 3

_DTYPES: dict[int, DType] = {
    tflite.TensorType.INT8: DType.INT8,
    tflite.TensorType.UINT8: DType.UINT8,
    tflite.TensorType.INT16: DType.INT16,
    tflite.TensorType.INT32: DType.INT32,
    tflite.TensorType.INT64: DType.INT64,
    tflite.TensorType.FLOAT32: DType.FLOAT32,
    tflite.TensorType.BOOL: DType.BOOL,
}

_ACTIVATIONS: dict[int, Activation] = {
    tflite.ActivationFunctionType.NONE: Activation.NONE,
    tflite.ActivationFunctionType.RELU: Activation.RELU,
    tflite.ActivationFunctionType.RELU6: Activation.RELU6,
    tflite.ActivationFunctionType.RELU_N1_TO_1: Activation.RELU_N1_TO_1,
    tflite.ActivationFunctionType.TANH: Activation.TANH,
    tflite.ActivationFunctionType.SIGN_BIT: Activation.SIGN_BIT,
}

_PADDINGS: dict[int, Padding] = {tflite.Padding.SAME: Padding.SAME, tflite.Padding.VALID: Padding.VALID}

_BUILTIN_NAMES: dict[int, str] = {
    value: name for name, value in vars(tflite.BuiltinOperator).items() if not name.startswith("_")
}
_TYPE_NAMES: dict[int, str] = {
    value: name for name, value in vars(tflite.TensorType).items() if not name.startswith("_")
}


def _empty_table() -> tuple[bytearray, int]:
    """A flatbuffer holding one table with no fields: every accessor reads its default."""
    builder = flatbuffers.Builder(16)
    builder.StartObject(0)
    builder.Finish(builder.EndObject())
    data = builder.Output()
    return bytearray(data), flatbuffers.encode.Get(flatbuffers.packer.uoffset, data, 0)


def _options_table(op: Any, options_class: Any) -> Any:
    """The op's options table; an op written without one (the converter omits tables whose
    fields all have their defaults, SQUEEZE with no squeeze_dims say) reads the defaults."""
    table = op.BuiltinOptions()
    options = options_class()
    if table is not None:
        options.Init(table.Bytes, table.Pos)
    else:
        options.Init(*_empty_table())
    return options


def _enum(table: dict[int, Any], value: int, what: str, where: str) -> Any:
    if value not in table:
        raise ModelError(f"{where}: unknown {what} value {value}")
    return table[value]


def _conv(op: Any, where: str) -> Conv2DOptions:
    o = _options_table(op, tflite.Conv2DOptions)
    return Conv2DOptions(
        padding=_enum(_PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        dilation_h=o.DilationHFactor(),
        dilation_w=o.DilationWFactor(),
        activation=_enum(_ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
        quantized_bias_type=_quantized_bias_type(o),
    )


def _quantized_bias_type(options: Any) -> DType | None:
    """The options' quantized_bias_type; the schema default (FLOAT32) means not set."""
    value = options.QuantizedBiasType()
    return None if value == tflite.TensorType.FLOAT32 else _DTYPES.get(value)


def _depthwise(op: Any, where: str) -> DepthwiseConv2DOptions:
    o = _options_table(op, tflite.DepthwiseConv2DOptions)
    return DepthwiseConv2DOptions(
        padding=_enum(_PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        dilation_h=o.DilationHFactor(),
        dilation_w=o.DilationWFactor(),
        depth_multiplier=o.DepthMultiplier(),
        activation=_enum(_ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
    )


def _fully_connected(op: Any, where: str) -> FullyConnectedOptions:
    o = _options_table(op, tflite.FullyConnectedOptions)
    return FullyConnectedOptions(
        activation=_enum(_ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
        keep_num_dims=bool(o.KeepNumDims()),
        shuffled_weights=o.WeightsFormat() != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT,
        quantized_bias_type=_quantized_bias_type(o),
    )


def _pool(op: Any, where: str) -> Pool2DOptions:
    o = _options_table(op, tflite.Pool2DOptions)
    return Pool2DOptions(
        padding=_enum(_PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        filter_h=o.FilterHeight(),
        filter_w=o.FilterWidth(),
        activation=_enum(_ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
    )


def _arithmetic(options_class: Any) -> Callable[[Any, str], ArithmeticOptions]:
    """ADD, SUB, MUL options; MulOptions has no pot_scale_int16 (it reads as False)."""

    def read(op: Any, where: str) -> ArithmeticOptions:
        o = _options_table(op, options_class)
        # Without a table LiteRT keeps its zero-initialised params (pot_scale_int16 false), not
        # the schema default (true); TFLM ignores the flag.
        has_table = op.BuiltinOptions() is not None
        pot = has_table and hasattr(o, "PotScaleInt16") and bool(o.PotScaleInt16())
        return ArithmeticOptions(_enum(_ACTIVATIONS, o.FusedActivationFunction(), "activation", where), pot)

    return read


def _transpose_conv(op: Any, where: str) -> TransposeConvOptions:
    o = _options_table(op, tflite.TransposeConvOptions)
    return TransposeConvOptions(
        padding=_enum(_PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        activation=_enum(_ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
    )


def _batch_matmul(op: Any, where: str) -> BatchMatMulOptions:
    o = _options_table(op, tflite.BatchMatMulOptions)
    return BatchMatMulOptions(adj_x=bool(o.AdjX()), adj_y=bool(o.AdjY()))


def _leaky_relu(op: Any, where: str) -> LeakyReluOptions:
    return LeakyReluOptions(alpha=float(_options_table(op, tflite.LeakyReluOptions).Alpha()))


def _squeeze(op: Any, where: str) -> SqueezeOptions:
    o = _options_table(op, tflite.SqueezeOptions)
    dims = () if o.SqueezeDimsIsNone() else tuple(int(d) for d in o.SqueezeDimsAsNumpy())
    return SqueezeOptions(squeeze_dims=dims)


def _concatenation(op: Any, where: str) -> ConcatenationOptions:
    o = _options_table(op, tflite.ConcatenationOptions)
    return ConcatenationOptions(
        axis=o.Axis(), activation=_enum(_ACTIVATIONS, o.FusedActivationFunction(), "activation", where)
    )


def _pack(op: Any, where: str) -> PackOptions:
    o = _options_table(op, tflite.PackOptions)
    return PackOptions(values_count=o.ValuesCount(), axis=o.Axis())


def _unpack(op: Any, where: str) -> UnpackOptions:
    o = _options_table(op, tflite.UnpackOptions)
    return UnpackOptions(num=o.Num(), axis=o.Axis())


def _split(options_class: Any) -> Callable[[Any, str], SplitOptions]:
    def read(op: Any, where: str) -> SplitOptions:
        return SplitOptions(num_splits=_options_table(op, options_class).NumSplits())

    return read


def _strided_slice(op: Any, where: str) -> StridedSliceOptions:
    o = _options_table(op, tflite.StridedSliceOptions)
    return StridedSliceOptions(
        begin_mask=o.BeginMask(),
        end_mask=o.EndMask(),
        ellipsis_mask=o.EllipsisMask(),
        new_axis_mask=o.NewAxisMask(),
        shrink_axis_mask=o.ShrinkAxisMask(),
        offset=bool(o.Offset()),
    )


def _shape(op: Any, where: str) -> ShapeOptions:
    o = _options_table(op, tflite.ShapeOptions)
    return ShapeOptions(out_type=_enum(_DTYPES, o.OutType(), "output type", where))


def _gather(op: Any, where: str) -> GatherOptions:
    o = _options_table(op, tflite.GatherOptions)
    return GatherOptions(axis=o.Axis(), batch_dims=o.BatchDims())


def _arg_max(op: Any, where: str) -> ArgMaxOptions:
    o = _options_table(op, tflite.ArgMaxOptions)
    return ArgMaxOptions(output_type=_enum(_DTYPES, o.OutputType(), "output type", where))


def _resize(options_class: Any) -> Callable[[Any, str], ResizeOptions]:
    def read(op: Any, where: str) -> ResizeOptions:
        o = _options_table(op, options_class)
        return ResizeOptions(align_corners=bool(o.AlignCorners()), half_pixel_centers=bool(o.HalfPixelCenters()))

    return read


def _reducer(op: Any, where: str) -> ReducerOptions:
    return ReducerOptions(keep_dims=bool(_options_table(op, tflite.ReducerOptions).KeepDims()))


def _softmax(op: Any, where: str) -> SoftmaxOptions:
    return SoftmaxOptions(beta=float(_options_table(op, tflite.SoftmaxOptions).Beta()))


def _none(op: Any, where: str) -> NoOptions:
    return NoOptions()


# One table from TFLite builtin code to op kind and options reader.
_OPS: dict[int, tuple[OpKind, Callable[[Any, str], OpOptions]]] = {
    tflite.BuiltinOperator.CONV_2D: (OpKind.CONV_2D, _conv),
    tflite.BuiltinOperator.DEPTHWISE_CONV_2D: (OpKind.DEPTHWISE_CONV_2D, _depthwise),
    tflite.BuiltinOperator.TRANSPOSE_CONV: (OpKind.TRANSPOSE_CONV, _transpose_conv),
    tflite.BuiltinOperator.FULLY_CONNECTED: (OpKind.FULLY_CONNECTED, _fully_connected),
    tflite.BuiltinOperator.BATCH_MATMUL: (OpKind.BATCH_MATMUL, _batch_matmul),
    tflite.BuiltinOperator.AVERAGE_POOL_2D: (OpKind.AVERAGE_POOL_2D, _pool),
    tflite.BuiltinOperator.MAX_POOL_2D: (OpKind.MAX_POOL_2D, _pool),
    tflite.BuiltinOperator.ADD: (OpKind.ADD, _arithmetic(tflite.AddOptions)),
    tflite.BuiltinOperator.SUB: (OpKind.SUB, _arithmetic(tflite.SubOptions)),
    tflite.BuiltinOperator.MUL: (OpKind.MUL, _arithmetic(tflite.MulOptions)),
    tflite.BuiltinOperator.SQUARED_DIFFERENCE: (OpKind.SQUARED_DIFFERENCE, _none),
    tflite.BuiltinOperator.MAXIMUM: (OpKind.MAXIMUM, _none),
    tflite.BuiltinOperator.MINIMUM: (OpKind.MINIMUM, _none),
    tflite.BuiltinOperator.MEAN: (OpKind.MEAN, _reducer),
    tflite.BuiltinOperator.SUM: (OpKind.SUM, _reducer),
    tflite.BuiltinOperator.REDUCE_MAX: (OpKind.REDUCE_MAX, _reducer),
    tflite.BuiltinOperator.SOFTMAX: (OpKind.SOFTMAX, _softmax),
    tflite.BuiltinOperator.LOGISTIC: (OpKind.LOGISTIC, _none),
    tflite.BuiltinOperator.TANH: (OpKind.TANH, _none),
    tflite.BuiltinOperator.HARD_SWISH: (OpKind.HARD_SWISH, _none),
    tflite.BuiltinOperator.RELU: (OpKind.RELU, _none),
    tflite.BuiltinOperator.RELU6: (OpKind.RELU6, _none),
    tflite.BuiltinOperator.LEAKY_RELU: (OpKind.LEAKY_RELU, _leaky_relu),
    tflite.BuiltinOperator.PRELU: (OpKind.PRELU, _none),
    tflite.BuiltinOperator.RSQRT: (OpKind.RSQRT, _none),
    tflite.BuiltinOperator.NEG: (OpKind.NEG, _none),
    tflite.BuiltinOperator.ABS: (OpKind.ABS, _none),
    tflite.BuiltinOperator.QUANTIZE: (OpKind.QUANTIZE, _none),
    tflite.BuiltinOperator.DEQUANTIZE: (OpKind.DEQUANTIZE, _none),
    tflite.BuiltinOperator.RESHAPE: (OpKind.RESHAPE, _none),
    tflite.BuiltinOperator.SQUEEZE: (OpKind.SQUEEZE, _squeeze),
    tflite.BuiltinOperator.EXPAND_DIMS: (OpKind.EXPAND_DIMS, _none),
    tflite.BuiltinOperator.SHAPE: (OpKind.SHAPE, _shape),
    tflite.BuiltinOperator.CONCATENATION: (OpKind.CONCATENATION, _concatenation),
    tflite.BuiltinOperator.PACK: (OpKind.PACK, _pack),
    tflite.BuiltinOperator.UNPACK: (OpKind.UNPACK, _unpack),
    tflite.BuiltinOperator.SPLIT: (OpKind.SPLIT, _split(tflite.SplitOptions)),
    tflite.BuiltinOperator.SPLIT_V: (OpKind.SPLIT_V, _split(tflite.SplitVOptions)),
    tflite.BuiltinOperator.STRIDED_SLICE: (OpKind.STRIDED_SLICE, _strided_slice),
    tflite.BuiltinOperator.SLICE: (OpKind.SLICE, _none),
    tflite.BuiltinOperator.PAD: (OpKind.PAD, _none),
    tflite.BuiltinOperator.PADV2: (OpKind.PADV2, _none),
    tflite.BuiltinOperator.TRANSPOSE: (OpKind.TRANSPOSE, _none),
    tflite.BuiltinOperator.GATHER: (OpKind.GATHER, _gather),
    tflite.BuiltinOperator.RESIZE_NEAREST_NEIGHBOR: (OpKind.RESIZE_NEAREST_NEIGHBOR, _resize(tflite.ResizeNearestNeighborOptions)),
    tflite.BuiltinOperator.RESIZE_BILINEAR: (OpKind.RESIZE_BILINEAR, _resize(tflite.ResizeBilinearOptions)),
    tflite.BuiltinOperator.ARG_MAX: (OpKind.ARG_MAX, _arg_max),
}


def builtin_name(code: int) -> str:
    return _BUILTIN_NAMES.get(code, f"builtin {code}")


def read_model(path: str | os.PathLike[str]) -> Graph:
    """Read and validate a .tflite file into a Graph."""
    file = Path(path)
    if not file.exists():
        raise ModelError(f"{file}: no such file")
    if not file.is_file():
        raise ModelError(f"{file}: not a regular file")
    data = file.read_bytes()
    return parse_model(data, file.name)


def parse_model(data: bytes, label: str) -> Graph:
    """Parse flatbuffer bytes; `label` names the source in messages."""
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise ModelError(f"{label}: not a TFLite flatbuffer (no 'TFL3' file identifier)")
    try:
        return _Reader(data, label).graph()
    except (ModelError, UnsupportedError):
        raise
    except Exception as exc:  # noqa: BLE001 - the flatbuffers runtime raises bare errors on a corrupt file
        raise ModelError(
            f"{label}: corrupt or truncated flatbuffer ({type(exc).__name__}: {exc})"
        ) from None


class _Reader:
    def __init__(self, data: bytes, label: str) -> None:
        self.data = data
        self.label = label
        root = int.from_bytes(data[0:4], "little")
        if root + 4 > len(data):
            raise ModelError(f"{label}: truncated flatbuffer (root table at {root} of {len(data)} bytes)")
        self.model = tflite.Model.GetRootAsModel(data, 0)

    def graph(self) -> Graph:
        model = self.model
        if model.Version() != SUPPORTED_SCHEMA_VERSION:
            raise UnsupportedError(
                f"{self.label}: schema version {model.Version()} is not supported "
                f"(mcugen reads version {SUPPORTED_SCHEMA_VERSION})"
            )
        if model.SubgraphsLength() != 1:
            raise UnsupportedError(
                f"{self.label}: {model.SubgraphsLength()} subgraphs; mcugen supports models with "
                "exactly one (no control flow)"
            )
        subgraph = model.Subgraphs(0)
        tensors = [self._tensor(subgraph, i) for i in range(subgraph.TensorsLength())]
        ops = self._ops(subgraph, tensors)
        inputs = [self._tensor_ref(tensors, int(i), "graph input") for i in self._ints(subgraph.InputsAsNumpy())]
        outputs = [self._tensor_ref(tensors, int(i), "graph output") for i in self._ints(subgraph.OutputsAsNumpy())]
        if not inputs or not outputs:
            raise ModelError(f"{self.label}: the graph has no inputs or no outputs")
        name = Path(self.label).stem
        description = (model.Description() or b"").decode("utf-8", "replace")
        graph = Graph(
            name=name,
            tensors=tensors,
            ops=ops,
            inputs=inputs,
            outputs=outputs,
            sha256=hashlib.sha256(self.data).hexdigest(),
            description=description,
        )
        graph.link()
        return graph

    @staticmethod
    def _ints(values: Any) -> list[int]:
        return [] if isinstance(values, int) else [int(v) for v in values]

    def _tensor_ref(self, tensors: list[Tensor], index: int, what: str) -> Tensor:
        if not 0 <= index < len(tensors):
            raise ModelError(f"{self.label}: {what} refers to tensor {index}, but there are {len(tensors)}")
        return tensors[index]

    def _buffer_bytes(self, buffer_index: int, where: str) -> bytes | None:
        model = self.model
        if not 0 <= buffer_index < model.BuffersLength():
            raise ModelError(f"{where}: buffer index {buffer_index} out of range (0..{model.BuffersLength() - 1})")
        buffer = model.Buffers(buffer_index)
        offset, size = buffer.Offset(), buffer.Size()
        if offset > 1:  # data stored after the flatbuffer (models over 2 GB use this layout)
            if offset + size > len(self.data):
                raise ModelError(
                    f"{where}: buffer {buffer_index} at offset {offset} with {size} bytes runs "
                    f"past the end of the file ({len(self.data)} bytes)"
                )
            return self.data[offset : offset + size]
        if buffer.DataLength() == 0:
            return None
        start = buffer._tab.Vector(buffer._tab.Offset(4))
        end = start + buffer.DataLength()
        if end > len(self.data):
            raise ModelError(f"{where}: buffer {buffer_index} runs past the end of the file")
        return self.data[start:end]

    def _tensor(self, subgraph: Any, index: int) -> Tensor:
        t = subgraph.Tensors(index)
        name = (t.Name() or b"").decode("utf-8", "replace")
        where = f"{self.label}: tensor {index} '{name}'"
        type_code = t.Type()
        if type_code not in _DTYPES:
            raise UnsupportedError(
                f"{where}: dtype {_TYPE_NAMES.get(type_code, type_code)} is not supported "
                f"(supported: {', '.join(d.short for d in _DTYPES.values())})"
            )
        dtype = _DTYPES[type_code]
        shape = tuple(self._ints(t.ShapeAsNumpy()))
        if any(d < 0 for d in shape):
            raise ModelError(f"{where}: negative dimension in shape {list(shape)}")
        dynamic_axes: tuple[int, ...] = ()
        if t.ShapeSignatureLength():
            # A dynamic dimension (batch -1) is fixed at its stored size (the converter stores 1),
            # as TFLite runs it when nothing resizes the input: MCU code is static.
            signature = self._ints(t.ShapeSignatureAsNumpy())
            if len(signature) == len(shape):
                dynamic_axes = tuple(axis for axis, d in enumerate(signature) if d < 0)
        raw = self._buffer_bytes(t.Buffer(), where)
        data = None
        if raw is not None:
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            if len(raw) != count * dtype.itemsize:
                raise ModelError(
                    f"{where}: buffer holds {len(raw)} bytes but shape {list(shape)} of "
                    f"{dtype.short} needs {count * dtype.itemsize}"
                )
            data = np.frombuffer(raw, dtype=dtype.numpy.newbyteorder("<")).astype(dtype.numpy).reshape(shape)
        return Tensor(index=index, name=name, shape=shape, dtype=dtype, quant=self._quant(t, shape, where), data=data,
                      dynamic_axes=dynamic_axes)

    def _quant(self, t: Any, shape: tuple[int, ...], where: str) -> Quant | None:
        q = t.Quantization()
        if q is None or q.ScaleLength() == 0:
            return None
        scales = tuple(float(s) for s in q.ScaleAsNumpy())
        zero_points = tuple(self._ints(q.ZeroPointAsNumpy())) if q.ZeroPointLength() else (0,) * len(scales)
        axis = int(q.QuantizedDimension())
        if len(zero_points) != len(scales):
            raise ModelError(f"{where}: {len(scales)} scales but {len(zero_points)} zero points")
        if len(scales) > 1 and (axis >= len(shape) or shape[axis] != len(scales)):
            raise ModelError(
                f"{where}: {len(scales)} per-channel scales on axis {axis} do not match shape {list(shape)}"
            )
        if not all(np.isfinite(s) and s > 0 for s in scales):
            raise ModelError(f"{where}: quantization scales must be finite and positive, got {scales[:4]}")
        return Quant(scale=scales, zero_point=zero_points, axis=axis)

    def _ops(self, subgraph: Any, tensors: list[Tensor]) -> list[Op]:
        model = self.model
        ops: list[Op] = []
        unknown: list[str] = []
        for index in range(subgraph.OperatorsLength()):
            op = subgraph.Operators(index)
            code_index = op.OpcodeIndex()
            if not 0 <= code_index < model.OperatorCodesLength():
                raise ModelError(f"{self.label}: op {index} uses opcode index {code_index}, out of range")
            opcode = model.OperatorCodes(code_index)
            # Schema v3a: the real code is the larger of the deprecated byte and the new int field.
            code = max(int(opcode.BuiltinCode()), int(opcode.DeprecatedBuiltinCode()))
            outputs_idx = self._ints(op.OutputsAsNumpy())
            first_name = ""
            if outputs_idx and 0 <= outputs_idx[0] < len(tensors):
                first_name = tensors[outputs_idx[0]].name
            if code == tflite.BuiltinOperator.CUSTOM:
                custom = (opcode.CustomCode() or b"?").decode("utf-8", "replace")
                unknown.append(f"op {index} CUSTOM '{custom}' ('{first_name}')")
                continue
            if code not in _OPS:
                unknown.append(f"op {index} {builtin_name(code)} ('{first_name}')")
                continue
            kind, read_options = _OPS[code]
            where = f"{self.label}: {kind.name} (op {index}, '{first_name}')"
            inputs = [
                None if i < 0 else self._tensor_ref(tensors, i, f"{kind.name} (op {index}) input")
                for i in self._ints(op.InputsAsNumpy())
            ]
            outputs = [self._tensor_ref(tensors, i, f"{kind.name} (op {index}) output") for i in outputs_idx]
            ops.append(Op(kind=kind, inputs=inputs, outputs=outputs, options=read_options(op, where), index=index))
        if unknown:
            raise UnsupportedError(
                f"{self.label}: {len(unknown)} unsupported op(s): {'; '.join(unknown)} "
                f"(supported: {', '.join(sorted(k.name for k in OpKind))})"
            )
        return ops
