"""Write small TFLite flatbuffers in code, without TensorFlow, for tests.

    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8, 8, 3], "int8", scale=0.05, zero_point=-3)
    w = b.add_tensor("w", [4, 3, 3, 3], "int8", scale=[0.01] * 4, data=weights)
    ...
    b.add_op("CONV_2D", [x, w, bias], [y], {"padding": "SAME", "stride_w": 2, "stride_h": 2})
    b.set_io([x], [y])
    model = b.build()

The file follows what the TFLite converter writes: buffer 0 is the empty sentinel, every
constant has its own 16-byte-aligned buffer, activations point at buffer 0, and each operator
code sets both the deprecated int8 code and the int32 code (schema v3a).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
import tflite

_TYPES: dict[str, int] = {
    "int8": tflite.TensorType.INT8,
    "uint8": tflite.TensorType.UINT8,
    "int16": tflite.TensorType.INT16,
    "int32": tflite.TensorType.INT32,
    "int64": tflite.TensorType.INT64,
    "float32": tflite.TensorType.FLOAT32,
    "float16": tflite.TensorType.FLOAT16,
    "bool": tflite.TensorType.BOOL,
    "resource": tflite.TensorType.RESOURCE,  # VAR_HANDLE's output: a handle, no data
}

_ACT_DEFAULTS: dict[str, Any] = {"fused_activation_function": "NONE"}
_CONV_DEFAULTS: dict[str, Any] = {
    "padding": "VALID",
    "stride_w": 1,
    "stride_h": 1,
    "dilation_w_factor": 1,
    "dilation_h_factor": 1,
    **_ACT_DEFAULTS,
}
_POOL_DEFAULTS: dict[str, Any] = {
    "padding": "VALID",
    "stride_w": 1,
    "stride_h": 1,
    "filter_width": 1,
    "filter_height": 1,
    **_ACT_DEFAULTS,
}

# builtin -> (options table in the BuiltinOptions union, option defaults). Builtins not listed
# here are written without an options table.
_OPTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "CONV_2D": ("Conv2DOptions", _CONV_DEFAULTS),
    "DEPTHWISE_CONV_2D": ("DepthwiseConv2DOptions", {**_CONV_DEFAULTS, "depth_multiplier": 1}),
    "FULLY_CONNECTED": ("FullyConnectedOptions", {**_ACT_DEFAULTS, "keep_num_dims": False}),
    "AVERAGE_POOL_2D": ("Pool2DOptions", _POOL_DEFAULTS),
    "MAX_POOL_2D": ("Pool2DOptions", _POOL_DEFAULTS),
    "L2_POOL_2D": ("Pool2DOptions", _POOL_DEFAULTS),
    "ADD": ("AddOptions", _ACT_DEFAULTS),
    "SUB": ("SubOptions", _ACT_DEFAULTS),
    "MUL": ("MulOptions", _ACT_DEFAULTS),
    "CONCATENATION": ("ConcatenationOptions", {"axis": 0, **_ACT_DEFAULTS}),
    "MEAN": ("ReducerOptions", {"keep_dims": False}),
    "SUM": ("ReducerOptions", {"keep_dims": False}),
    "REDUCE_MAX": ("ReducerOptions", {"keep_dims": False}),
    "REDUCE_MIN": ("ReducerOptions", {"keep_dims": False}),
    "SOFTMAX": ("SoftmaxOptions", {"beta": 1.0}),
    "RESHAPE": ("ReshapeOptions", {}),
    "TRANSPOSE_CONV": ("TransposeConvOptions", {"padding": "VALID", "stride_w": 1, "stride_h": 1,
                                                **_ACT_DEFAULTS}),
    "BATCH_MATMUL": ("BatchMatMulOptions", {"adj_x": False, "adj_y": False}),
    "LEAKY_RELU": ("LeakyReluOptions", {"alpha": 0.2}),
    "SQUEEZE": ("SqueezeOptions", {}),
    "PACK": ("PackOptions", {"values_count": 1, "axis": 0}),
    "UNPACK": ("UnpackOptions", {"num": 1, "axis": 0}),
    "SPLIT": ("SplitOptions", {"num_splits": 1}),
    "SPLIT_V": ("SplitVOptions", {"num_splits": 1}),
    "STRIDED_SLICE": ("StridedSliceOptions", {}),
    "SHAPE": ("ShapeOptions", {"out_type": "INT32"}),
    "GATHER": ("GatherOptions", {"axis": 0}),
    "ARG_MAX": ("ArgMaxOptions", {"output_type": "INT32"}),
    "RESIZE_NEAREST_NEIGHBOR": ("ResizeNearestNeighborOptions", {}),
    "RESIZE_BILINEAR": ("ResizeBilinearOptions", {}),
    "DEPTH_TO_SPACE": ("DepthToSpaceOptions", {"block_size": 2}),
    "SPACE_TO_DEPTH": ("SpaceToDepthOptions", {"block_size": 2}),
    "VAR_HANDLE": ("VarHandleOptions", {"container": "", "shared_name": ""}),
    "CALL_ONCE": ("CallOnceOptions", {"init_subgraph_index": 1}),
}

# Option fields whose values are strings (written as flatbuffer strings, not enum names).
_STRING_FIELDS = frozenset({"container", "shared_name"})

# Option fields whose values are schema enums, given by name.
_ENUM_FIELDS: dict[str, Any] = {
    "padding": tflite.Padding,
    "fused_activation_function": tflite.ActivationFunctionType,
    "weights_format": tflite.FullyConnectedOptionsWeightsFormat,
    "out_type": tflite.TensorType,
    "output_type": tflite.TensorType,
}


def _camel(snake: str) -> str:
    return "".join(part.capitalize() for part in snake.split("_"))


def _builtin_code(name: str) -> int:
    code = getattr(tflite.BuiltinOperator, name, None)
    if not isinstance(code, int):
        raise ValueError(f"unknown TFLite builtin operator '{name}'")  # noqa: TRY004 - a name, not a type
    return code


@dataclass
class Sparsity:
    """A tensor's SparsityParameters as written in the file: `levels` gives each traversal level
    ("DENSE", dense_size) or ("SPARSE_CSR", array_segments, array_indices); the index vectors
    are written as `index_type` ("int32", "uint16" or "uint8")."""

    traversal_order: list[int]
    block_map: list[int]
    levels: list[tuple]
    index_type: str = "int32"


@dataclass
class _Tensor:
    name: str
    shape: list[int]
    type: int
    buffer: int
    scale: list[float] | None
    zero_point: list[int] | None
    quantized_dimension: int
    shape_signature: list[int] | None
    sparsity: Sparsity | None = None


@dataclass
class _Op:
    opcode: int
    inputs: list[int]
    outputs: list[int]
    builtin: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    options_table: bool = True
    custom_options: bytes = b""  # a CUSTOM op's raw custom options


@dataclass
class _Subgraph:
    name: str
    tensors: list[_Tensor]
    ops: list[_Op]
    inputs: list[int]
    outputs: list[int]


class ModelBuilder:
    """Collects tensors and ops, then serialises them into .tflite bytes: one subgraph, or
    several with `begin_subgraph` (the converter's form of stateful models: the main subgraph
    0 runs CALL_ONCE of an init subgraph that assigns the variables' first values)."""

    def __init__(self, description: str = "mcugen test model") -> None:
        self.description = description
        self._tensors: list[_Tensor] = []
        self._buffers: list[bytes] = [b""]  # buffer 0: the empty sentinel
        self._opcodes: list[tuple[int, str]] = []  # (builtin code, custom code)
        self._ops: list[_Op] = []
        self._inputs: list[int] = []
        self._outputs: list[int] = []
        self._finished: list[_Subgraph] = []  # the subgraphs before the current one
        self._name = "main"

    def begin_subgraph(self, name: str) -> int:
        """Finish the current subgraph and start an empty one (its tensors and ops indexed
        from 0); returns the new subgraph's index. Buffers and operator codes are shared."""
        self._finished.append(_Subgraph(self._name, self._tensors, self._ops, self._inputs, self._outputs))
        self._tensors, self._ops, self._inputs, self._outputs = [], [], [], []
        self._name = name
        return len(self._finished)

    def add_tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str,
        scale: float | Sequence[float] | None = None,
        zero_point: int | Sequence[int] | None = None,
        quantized_dimension: int = 0,
        data: np.ndarray | None = None,
        shape_signature: Sequence[int] | None = None,
        sparsity: Sparsity | None = None,
    ) -> int:
        """Add a tensor; `data` makes it a constant with its own buffer (with `sparsity`, `data`
        holds the stored values in traversal order, as the converter writes a sparse
        constant). Returns its index."""
        if dtype not in _TYPES:
            raise ValueError(f"unsupported dtype '{dtype}' (one of {', '.join(_TYPES)})")
        scales = None if scale is None else [float(s) for s in np.atleast_1d(scale)]
        zero_points = None
        if scales is not None:
            zps = 0 if zero_point is None else zero_point
            zero_points = [int(z) for z in np.atleast_1d(zps)]
            if len(zero_points) == 1 and len(scales) > 1:
                zero_points *= len(scales)
        elif zero_point is not None:
            raise ValueError(f"tensor '{name}': a zero point needs a scale")
        buffer = 0
        if data is not None:
            # '<' forces little-endian bytes whatever the host; bool stays one byte per element.
            array = np.ascontiguousarray(data, dtype=np.dtype(dtype).newbyteorder("<"))
            self._buffers.append(array.tobytes())
            buffer = len(self._buffers) - 1
        self._tensors.append(
            _Tensor(
                name=name,
                shape=[int(d) for d in shape],
                type=_TYPES[dtype],
                buffer=buffer,
                scale=scales,
                zero_point=zero_points,
                quantized_dimension=quantized_dimension,
                shape_signature=None if shape_signature is None else [int(d) for d in shape_signature],
                sparsity=sparsity,
            )
        )
        return len(self._tensors) - 1

    def add_op(
        self,
        builtin: str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        options: dict | None = None,
        *,
        options_table: bool = True,
    ) -> int:
        """Add a builtin op; input -1 marks an omitted optional input. Returns its op index.

        options_table=False writes no options table at all, as some writers do: runtimes then
        use their own defaults, not the schema's."""
        code = _builtin_code(builtin)
        if options and builtin not in _OPTIONS:
            raise ValueError(f"options for {builtin} are not supported by ModelBuilder")
        op = _Op(self._opcode(code, ""), list(inputs), list(outputs), builtin, dict(options or {}),
                 options_table)
        self._ops.append(op)
        return len(self._ops) - 1

    def add_custom_op(self, custom_code: str, inputs: Sequence[int], outputs: Sequence[int],
                      custom_options: bytes = b"") -> int:
        """Add a CUSTOM op with the given custom code and raw custom options (a flexbuffer, say)."""
        op = _Op(self._opcode(tflite.BuiltinOperator.CUSTOM, custom_code), list(inputs), list(outputs),
                 custom_options=custom_options)
        self._ops.append(op)
        return len(self._ops) - 1

    def set_io(self, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        self._inputs = list(inputs)
        self._outputs = list(outputs)

    def build(self, version: int = 3) -> bytes:
        """Serialise the model; `version` is the schema version written in the file."""
        b = flatbuffers.Builder(1024)
        # Flatbuffers are written back to front: every vector, string and sub-table must exist
        # before the table that points at it is started.
        buffers = table_vector(b, tflite.ModelStartBuffersVector, [buffer_table(b, d) for d in self._buffers])
        current = _Subgraph(self._name, self._tensors, self._ops, self._inputs, self._outputs)
        subgraphs = table_vector(b, tflite.ModelStartSubgraphsVector,
                                 [_subgraph(b, s) for s in [*self._finished, current]])
        codes = table_vector(b, tflite.ModelStartOperatorCodesVector, [_opcode(b, c, s) for c, s in self._opcodes])
        description = b.CreateString(self.description)
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, version)
        tflite.ModelAddOperatorCodes(b, codes)
        tflite.ModelAddSubgraphs(b, subgraphs)
        tflite.ModelAddDescription(b, description)
        tflite.ModelAddBuffers(b, buffers)
        b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def _opcode(self, code: int, custom: str) -> int:
        key = (code, custom)
        if key not in self._opcodes:
            self._opcodes.append(key)
        return self._opcodes.index(key)



def _subgraph(b: flatbuffers.Builder, subgraph: _Subgraph) -> int:
    tensors = table_vector(b, tflite.SubGraphStartTensorsVector, [_tensor(b, t) for t in subgraph.tensors])
    ops = table_vector(b, tflite.SubGraphStartOperatorsVector, [_operator(b, op) for op in subgraph.ops])
    inputs = _ints(b, subgraph.inputs)
    outputs = _ints(b, subgraph.outputs)
    name = b.CreateString(subgraph.name)
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tensors)
    tflite.SubGraphAddInputs(b, inputs)
    tflite.SubGraphAddOutputs(b, outputs)
    tflite.SubGraphAddOperators(b, ops)
    tflite.SubGraphAddName(b, name)
    return tflite.SubGraphEnd(b)


def _ints(b: flatbuffers.Builder, values: Sequence[int], dtype: str = "<i4") -> int:
    return b.CreateNumpyVector(np.asarray(values, dtype=dtype))


def table_vector(b: flatbuffers.Builder, start: Any, offsets: list[int]) -> int:
    """A vector of table offsets; prepended in reverse so element 0 comes first."""
    start(b, len(offsets))
    for offset in reversed(offsets):
        b.PrependUOffsetTRelative(offset)
    return b.EndVector()


def buffer_table(b: flatbuffers.Builder, data: bytes) -> int:
    data_vector = None
    if data:
        # The schema asks for 16-byte alignment (force_align) so kernels may read int32/float
        # constants in place; the generated StartDataVector would only align to 1.
        b.StartVector(1, len(data), 16)
        b.head -= len(data)
        b.Bytes[b.head : b.head + len(data)] = data
        data_vector = b.EndVector()
    tflite.BufferStart(b)
    if data_vector is not None:
        tflite.BufferAddData(b, data_vector)
    return tflite.BufferEnd(b)


def _opcode(b: flatbuffers.Builder, code: int, custom: str) -> int:
    custom_string = b.CreateString(custom) if custom else None
    tflite.OperatorCodeStart(b)
    # Readers take max(deprecated, new): codes above 127 store 127 in the old byte.
    tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
    tflite.OperatorCodeAddBuiltinCode(b, code)
    tflite.OperatorCodeAddVersion(b, 1)
    if custom_string is not None:
        tflite.OperatorCodeAddCustomCode(b, custom_string)
    return tflite.OperatorCodeEnd(b)


def _tensor(b: flatbuffers.Builder, t: _Tensor) -> int:
    quant = _quantization(b, t) if t.scale is not None else None
    sparsity = _sparsity(b, t.sparsity) if t.sparsity is not None else None
    signature = _ints(b, t.shape_signature) if t.shape_signature is not None else None
    shape = _ints(b, t.shape)
    name = b.CreateString(t.name)
    tflite.TensorStart(b)
    tflite.TensorAddShape(b, shape)
    tflite.TensorAddType(b, t.type)
    tflite.TensorAddBuffer(b, t.buffer)
    tflite.TensorAddName(b, name)
    if quant is not None:
        tflite.TensorAddQuantization(b, quant)
    if signature is not None:
        tflite.TensorAddShapeSignature(b, signature)
    if sparsity is not None:
        tflite.TensorAddSparsity(b, sparsity)
    return tflite.TensorEnd(b)


_INDEX_VECTORS = {"int32": ("Int32Vector", "<i4"), "uint16": ("Uint16Vector", "<u2"), "uint8": ("Uint8Vector", "u1")}


def _index_vector(b: flatbuffers.Builder, values: Sequence[int], index_type: str) -> tuple[int, int]:
    """(SparseIndexVector union type, table) holding `values`."""
    table, dtype = _INDEX_VECTORS[index_type]
    vector = b.CreateNumpyVector(np.asarray(values, dtype=dtype))
    getattr(tflite, f"{table}Start")(b)
    getattr(tflite, f"{table}AddValues")(b, vector)
    return getattr(tflite.SparseIndexVector, table), getattr(tflite, f"{table}End")(b)


def _dimension(b: flatbuffers.Builder, level: tuple, index_type: str) -> int:
    if level[0] == "DENSE":
        tflite.DimensionMetadataStart(b)
        tflite.DimensionMetadataAddFormat(b, tflite.DimensionType.DENSE)
        tflite.DimensionMetadataAddDenseSize(b, int(level[1]))
        return tflite.DimensionMetadataEnd(b)
    segments = _index_vector(b, level[1], index_type)
    indices = _index_vector(b, level[2], index_type)
    tflite.DimensionMetadataStart(b)
    tflite.DimensionMetadataAddFormat(b, tflite.DimensionType.SPARSE_CSR)
    tflite.DimensionMetadataAddArraySegmentsType(b, segments[0])
    tflite.DimensionMetadataAddArraySegments(b, segments[1])
    tflite.DimensionMetadataAddArrayIndicesType(b, indices[0])
    tflite.DimensionMetadataAddArrayIndices(b, indices[1])
    return tflite.DimensionMetadataEnd(b)


def _sparsity(b: flatbuffers.Builder, sparsity: Sparsity) -> int:
    levels = table_vector(b, tflite.SparsityParametersStartDimMetadataVector,
                          [_dimension(b, level, sparsity.index_type) for level in sparsity.levels])
    order = _ints(b, sparsity.traversal_order)
    block_map = _ints(b, sparsity.block_map)
    tflite.SparsityParametersStart(b)
    tflite.SparsityParametersAddTraversalOrder(b, order)
    tflite.SparsityParametersAddBlockMap(b, block_map)
    tflite.SparsityParametersAddDimMetadata(b, levels)
    return tflite.SparsityParametersEnd(b)


def _quantization(b: flatbuffers.Builder, t: _Tensor) -> int:
    scale = b.CreateNumpyVector(np.asarray(t.scale, dtype="<f4"))
    zero_point = _ints(b, t.zero_point or [], "<i8")
    tflite.QuantizationParametersStart(b)
    tflite.QuantizationParametersAddScale(b, scale)
    tflite.QuantizationParametersAddZeroPoint(b, zero_point)
    tflite.QuantizationParametersAddQuantizedDimension(b, t.quantized_dimension)
    return tflite.QuantizationParametersEnd(b)


def _operator(b: flatbuffers.Builder, op: _Op) -> int:
    options = _options(b, op.builtin, op.options) if op.options_table else None
    inputs = _ints(b, op.inputs)
    outputs = _ints(b, op.outputs)
    custom = b.CreateNumpyVector(np.frombuffer(op.custom_options, np.uint8)) if op.custom_options else None
    tflite.OperatorStart(b)
    tflite.OperatorAddOpcodeIndex(b, op.opcode)
    tflite.OperatorAddInputs(b, inputs)
    tflite.OperatorAddOutputs(b, outputs)
    if custom is not None:
        tflite.OperatorAddCustomOptions(b, custom)
    if options is not None:
        tflite.OperatorAddBuiltinOptionsType(b, options[0])
        tflite.OperatorAddBuiltinOptions(b, options[1])
    return tflite.OperatorEnd(b)


def _options(b: flatbuffers.Builder, builtin: str, given: dict[str, Any]) -> tuple[int, int] | None:
    """Write the op's options table; returns (union type, table offset) or None for no table."""
    if builtin not in _OPTIONS:
        return None
    table, defaults = _OPTIONS[builtin]
    values = {**defaults, **given}
    if not values:
        return None
    adders = {}
    for key in values:
        adder = getattr(tflite, f"{table}Add{_camel(key)}", None)
        if adder is None:
            raise ValueError(f"{builtin}: {table} has no field '{key}'")
        adders[key] = adder
    # Vectors first: they cannot be created while the table is open.
    encoded = {
        key: _ints(b, value) if isinstance(value, (list, tuple, np.ndarray))
        else b.CreateString(value) if key in _STRING_FIELDS else _scalar(key, value)
        for key, value in values.items()
    }
    getattr(tflite, f"{table}Start")(b)
    for key, value in encoded.items():
        adders[key](b, value)
    return getattr(tflite.BuiltinOptions, table), getattr(tflite, f"{table}End")(b)


def _scalar(key: str, value: Any) -> Any:
    if isinstance(value, str):
        enum = _ENUM_FIELDS.get(key)
        if enum is None or not isinstance(getattr(enum, value, None), int):
            raise ValueError(f"option '{key}': unknown value '{value}'")
        return getattr(enum, value)
    return value
