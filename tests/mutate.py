"""Structured mutations of TFLite models, for the fuzz harness (tests/test_fuzz.py, benchmarks/fuzz).

The `tflite` package has no object API, so `decode` reads a model into plain dataclasses (every
field mcugen reads: tensors, quantization, buffers, operator codes, options, graph wiring) and
`encode` writes them back with flatbuffers. A mutation changes one thing in a decoded model,
well-formed as a flatbuffer but possibly wrong in content: a shape, a scale, an index, an option,
a buffer, an operator code, the graph's wiring. Each mutation returns a one-line description
of what it changed, or None when the model has nothing it can change.

    for mutant in mutants(models, seed=1, count=300):
        mutant.kind, mutant.description, mutant.data   # data: the mutated .tflite bytes
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
import tflite
from modelbuilder import buffer_table, table_vector

INT32_MAX = 2**31 - 1

# --- a decoded model ---------------------------------------------------------------------------


@dataclass
class TensorSpec:
    name: str
    shape: list[int]
    type: int
    buffer: int
    scale: list[float] | None = None
    zero_point: list[int] | None = None
    quantized_dimension: int = 0
    shape_signature: list[int] | None = None


@dataclass
class OpSpec:
    opcode_index: int
    inputs: list[int]
    outputs: list[int]
    options_type: int = 0  # tflite.BuiltinOptions member; 0: no options table
    options: dict[str, Any] = field(default_factory=dict)  # field name (CamelCase) -> value or list


@dataclass
class OpcodeSpec:
    deprecated_code: int
    builtin_code: int
    custom_code: str = ""
    version: int = 1


@dataclass
class ModelSpec:
    version: int
    opcodes: list[OpcodeSpec]
    buffers: list[bytes]
    tensors: list[TensorSpec]
    ops: list[OpSpec]
    inputs: list[int]
    outputs: list[int]
    description: str = ""

    def code_of(self, op: OpSpec) -> int:
        opcode = self.opcodes[op.opcode_index]
        return max(opcode.deprecated_code, opcode.builtin_code)


_OPTIONS_NAMES = {value: name for name, value in vars(tflite.BuiltinOptions).items() if not name.startswith("_")}


def _ints(values: Any) -> list[int]:
    return [] if isinstance(values, int) else [int(v) for v in values]


def _read_options(op: Any) -> tuple[int, dict[str, Any]]:
    kind = int(op.BuiltinOptionsType())
    table = op.BuiltinOptions()
    name = _OPTIONS_NAMES.get(kind)
    if table is None or name is None or not hasattr(tflite, name):
        return 0, {}
    reader = getattr(tflite, name)()
    reader.Init(table.Bytes, table.Pos)
    prefix = f"{name}Add"
    values: dict[str, Any] = {}
    for adder in (n for n in dir(tflite) if n.startswith(prefix)):
        fname = adder[len(prefix):]
        if hasattr(reader, f"{fname}AsNumpy"):
            values[fname] = _ints(getattr(reader, f"{fname}AsNumpy")())
        elif hasattr(reader, fname):
            value = getattr(reader, fname)()
            if isinstance(value, (bool, int, float)):
                values[fname] = value
    return kind, values


def decode(data: bytes) -> ModelSpec:
    """Read a one-subgraph .tflite model into a ModelSpec."""
    model = tflite.Model.GetRootAsModel(data, 0)
    graph = model.Subgraphs(0)
    opcodes = []
    for i in range(model.OperatorCodesLength()):
        c = model.OperatorCodes(i)
        opcodes.append(OpcodeSpec(int(c.DeprecatedBuiltinCode()), int(c.BuiltinCode()),
                                  (c.CustomCode() or b"").decode(), int(c.Version())))
    buffers = []
    for i in range(model.BuffersLength()):
        b = model.Buffers(i)
        buffers.append(b.DataAsNumpy().tobytes() if b.DataLength() else b"")
    tensors = []
    for i in range(graph.TensorsLength()):
        t = graph.Tensors(i)
        q = t.Quantization()
        scale = zero_point = None
        axis = 0
        if q is not None and q.ScaleLength():
            scale = [float(s) for s in q.ScaleAsNumpy()]
            zero_point = _ints(q.ZeroPointAsNumpy()) if q.ZeroPointLength() else []
            axis = int(q.QuantizedDimension())
        signature = _ints(t.ShapeSignatureAsNumpy()) if t.ShapeSignatureLength() else None
        tensors.append(TensorSpec((t.Name() or b"").decode("utf-8", "replace"), _ints(t.ShapeAsNumpy()),
                                  int(t.Type()), int(t.Buffer()), scale, zero_point, axis, signature))
    ops = []
    for i in range(graph.OperatorsLength()):
        o = graph.Operators(i)
        kind, options = _read_options(o)
        ops.append(OpSpec(int(o.OpcodeIndex()), _ints(o.InputsAsNumpy()), _ints(o.OutputsAsNumpy()),
                          kind, options))
    return ModelSpec(int(model.Version()), opcodes, buffers, tensors, ops, _ints(graph.InputsAsNumpy()),
                     _ints(graph.OutputsAsNumpy()), (model.Description() or b"").decode("utf-8", "replace"))


# --- encoding -----------------------------------------------------------------------------------


def _vector_of_ints(b: flatbuffers.Builder, values: Sequence[int], dtype: str = "<i4") -> int:
    """A vector of integers; values the type cannot hold (a doubled 2^31-1) are clipped into it."""
    info = np.iinfo(np.dtype(dtype))
    return b.CreateNumpyVector(np.asarray([min(max(int(v), info.min), info.max) for v in values], dtype=dtype))


def _write_tensor(b: flatbuffers.Builder, t: TensorSpec) -> int:
    quant = None
    if t.scale is not None:
        # Values outside float32 or int64 are clipped into them: the file can only hold those.
        scale = b.CreateNumpyVector(np.asarray(t.scale, dtype=np.float64).astype("<f4"))
        zp = _vector_of_ints(b, [max(-(2**63), min(2**63 - 1, z)) for z in (t.zero_point or [])], "<i8")
        tflite.QuantizationParametersStart(b)
        tflite.QuantizationParametersAddScale(b, scale)
        tflite.QuantizationParametersAddZeroPoint(b, zp)
        tflite.QuantizationParametersAddQuantizedDimension(b, t.quantized_dimension)
        quant = tflite.QuantizationParametersEnd(b)
    signature = _vector_of_ints(b, t.shape_signature) if t.shape_signature is not None else None
    shape = _vector_of_ints(b, t.shape)
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
    return tflite.TensorEnd(b)


def _write_options(b: flatbuffers.Builder, kind: int, values: dict[str, Any]) -> int | None:
    name = _OPTIONS_NAMES.get(kind)
    if not kind or name is None:
        return None
    encoded = {k: _vector_of_ints(b, v) if isinstance(v, list) else v for k, v in values.items()}
    getattr(tflite, f"{name}Start")(b)
    for key, value in encoded.items():
        _add_field(getattr(tflite, f"{name}Add{key}"), b, value)
    return int(getattr(tflite, f"{name}End")(b))


def _add_field(adder: Callable[..., Any], b: flatbuffers.Builder, value: Any) -> None:
    """Write a scalar field; a hostile integer the field's type cannot hold wraps into it."""
    if not isinstance(value, int) or isinstance(value, bool):
        adder(b, value)
        return
    for bits in (64, 32, 16, 8):
        for candidate in (value, (value + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1), value % 2**bits):
            try:
                adder(b, candidate)
                return
            except TypeError:
                continue
    raise ValueError(f"no integer type holds {value}")


def _write_op(b: flatbuffers.Builder, op: OpSpec) -> int:
    options = _write_options(b, op.options_type, op.options)
    inputs, outputs = _vector_of_ints(b, op.inputs), _vector_of_ints(b, op.outputs)
    tflite.OperatorStart(b)
    tflite.OperatorAddOpcodeIndex(b, op.opcode_index)
    tflite.OperatorAddInputs(b, inputs)
    tflite.OperatorAddOutputs(b, outputs)
    if options is not None:
        tflite.OperatorAddBuiltinOptionsType(b, op.options_type)
        tflite.OperatorAddBuiltinOptions(b, options)
    return tflite.OperatorEnd(b)


def _write_opcode(b: flatbuffers.Builder, c: OpcodeSpec) -> int:
    custom = b.CreateString(c.custom_code) if c.custom_code else None
    tflite.OperatorCodeStart(b)
    tflite.OperatorCodeAddDeprecatedBuiltinCode(b, c.deprecated_code)
    tflite.OperatorCodeAddBuiltinCode(b, c.builtin_code)
    tflite.OperatorCodeAddVersion(b, c.version)
    if custom is not None:
        tflite.OperatorCodeAddCustomCode(b, custom)
    return tflite.OperatorCodeEnd(b)


def encode(spec: ModelSpec) -> bytes:
    b = flatbuffers.Builder(1024)
    buffers = table_vector(b, tflite.ModelStartBuffersVector, [buffer_table(b, d) for d in spec.buffers])
    tensors = table_vector(b, tflite.SubGraphStartTensorsVector, [_write_tensor(b, t) for t in spec.tensors])
    ops = table_vector(b, tflite.SubGraphStartOperatorsVector, [_write_op(b, o) for o in spec.ops])
    inputs, outputs = _vector_of_ints(b, spec.inputs), _vector_of_ints(b, spec.outputs)
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tensors)
    tflite.SubGraphAddInputs(b, inputs)
    tflite.SubGraphAddOutputs(b, outputs)
    tflite.SubGraphAddOperators(b, ops)
    subgraph = tflite.SubGraphEnd(b)
    subgraphs = table_vector(b, tflite.ModelStartSubgraphsVector, [subgraph])
    codes = table_vector(b, tflite.ModelStartOperatorCodesVector, [_write_opcode(b, c) for c in spec.opcodes])
    description = b.CreateString(spec.description)
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, spec.version)
    tflite.ModelAddOperatorCodes(b, codes)
    tflite.ModelAddSubgraphs(b, subgraphs)
    tflite.ModelAddDescription(b, description)
    tflite.ModelAddBuffers(b, buffers)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


# --- mutations ------------------------------------------------------------------------------------

Mutation = Callable[[ModelSpec, random.Random], "str | None"]

HOSTILE_INTS = (0, -1, 2, 3, 7, 99, 255, 256, 65536, 2**24, INT32_MAX, -(2**31))
HOSTILE_DIMS = (0, 1, 2, 3, 1000, 65537, 2**24, 2**31 - 1)
HOSTILE_SCALES = (0.0, float("inf"), float("nan"), -0.5, 1e30, 1e-30, 1e-45, 3.4e38, 2.0**-60, 2.0**60, 1e-12, 1e12)
HOSTILE_ZERO_POINTS = (128, -129, 255, 256, 32768, -32769, 2**31, -(2**40), 2**62)


def _constants(spec: ModelSpec) -> list[int]:
    return [i for i, t in enumerate(spec.tensors) if 0 <= t.buffer < len(spec.buffers) and spec.buffers[t.buffer]]


def _pick(rng: random.Random, items: Sequence[Any]) -> Any:
    return items[rng.randrange(len(items))] if items else None


def shape_dim(spec: ModelSpec, rng: random.Random) -> str | None:
    """One dimension of one tensor set to a hostile extent."""
    index = _pick(rng, [i for i, t in enumerate(spec.tensors) if t.shape])
    if index is None:
        return None
    t = spec.tensors[index]
    axis = rng.randrange(len(t.shape))
    t.shape[axis] = rng.choice([*HOSTILE_DIMS, t.shape[axis] + 1, t.shape[axis] * 2, max(t.shape[axis] - 1, 0)])
    return f"tensor {index} '{t.name}' shape -> {t.shape}"


def shape_rank(spec: ModelSpec, rng: random.Random) -> str | None:
    """A tensor gains or loses a dimension, or its shape is replaced by a flat one."""
    index = rng.randrange(len(spec.tensors))
    t = spec.tensors[index]
    choice = rng.randrange(3)
    if choice == 0 and t.shape:
        t.shape.pop(rng.randrange(len(t.shape)))
    elif choice == 1:
        t.shape.insert(rng.randrange(len(t.shape) + 1), rng.choice((1, 2)))
    else:
        t.shape = [int(np.prod(t.shape, dtype=np.int64))] if t.shape else [1]
    return f"tensor {index} '{t.name}' shape -> {t.shape}"


def quant_scale(spec: ModelSpec, rng: random.Random) -> str | None:
    """A scale set to 0, inf, nan, a negative, a huge or a tiny value."""
    index = _pick(rng, [i for i, t in enumerate(spec.tensors) if t.scale])
    if index is None:
        return None
    t = spec.tensors[index]
    k = rng.randrange(len(t.scale or []))
    value = rng.choice(HOSTILE_SCALES)
    assert t.scale is not None
    t.scale[k] = value
    return f"tensor {index} '{t.name}' scale[{k}] -> {value}"


def quant_zero_point(spec: ModelSpec, rng: random.Random) -> str | None:
    """A zero point out of its dtype's range (or merely changed)."""
    index = _pick(rng, [i for i, t in enumerate(spec.tensors) if t.zero_point])
    if index is None:
        return None
    t = spec.tensors[index]
    assert t.zero_point is not None
    k = rng.randrange(len(t.zero_point))
    value = rng.choice([*HOSTILE_ZERO_POINTS, -t.zero_point[k] - 1, t.zero_point[k] + 1])
    t.zero_point[k] = value
    return f"tensor {index} '{t.name}' zero_point[{k}] -> {value}"


def quant_channels(spec: ModelSpec, rng: random.Random) -> str | None:
    """Per-channel arrays one short or one long, or the quantized dimension moved."""
    index = _pick(rng, [i for i, t in enumerate(spec.tensors) if t.scale and len(t.scale) > 1])
    if index is None:
        return None
    t = spec.tensors[index]
    assert t.scale is not None and t.zero_point is not None
    choice = rng.randrange(4)
    if choice == 0:
        t.scale.pop()
        t.zero_point.pop()
    elif choice == 1:
        t.scale.append(t.scale[0])
        t.zero_point.append(0)
    elif choice == 2:
        t.zero_point = t.zero_point[:-1]
    else:
        t.quantized_dimension = rng.choice((1, 2, 3, 4, -1, 99))
    return f"tensor {index} '{t.name}' per-channel: {len(t.scale)} scales, {len(t.zero_point)} zero points, " \
           f"axis {t.quantized_dimension}"


def quant_drop(spec: ModelSpec, rng: random.Random) -> str | None:
    """A tensor loses its quantization, or a per-tensor one becomes two-channel."""
    index = _pick(rng, [i for i, t in enumerate(spec.tensors) if t.scale])
    if index is None:
        return None
    t = spec.tensors[index]
    if rng.random() < 0.5:
        t.scale = t.zero_point = None
        return f"tensor {index} '{t.name}' quantization removed"
    assert t.scale is not None
    t.scale, t.zero_point = [t.scale[0]] * 2, [0, 0]
    return f"tensor {index} '{t.name}' two scales"


def dtype(spec: ModelSpec, rng: random.Random) -> str | None:
    """A tensor's element type changed."""
    index = rng.randrange(len(spec.tensors))
    types = (tflite.TensorType.INT8, tflite.TensorType.UINT8, tflite.TensorType.INT16, tflite.TensorType.INT32,
             tflite.TensorType.INT64, tflite.TensorType.FLOAT32, tflite.TensorType.BOOL, 99)
    spec.tensors[index].type = rng.choice(types)
    return f"tensor {index} type -> {spec.tensors[index].type}"


def index_op_input(spec: ModelSpec, rng: random.Random) -> str | None:
    """An op input index out of range, negative, or another tensor."""
    op_index = rng.randrange(len(spec.ops))
    op = spec.ops[op_index]
    if not op.inputs:
        return None
    k = rng.randrange(len(op.inputs))
    op.inputs[k] = rng.choice([len(spec.tensors), len(spec.tensors) + 5, -2, INT32_MAX,
                               rng.randrange(len(spec.tensors)), -1])
    return f"op {op_index} input {k} -> {op.inputs[k]}"


def index_op_output(spec: ModelSpec, rng: random.Random) -> str | None:
    """An op output index out of range or pointing at another tensor."""
    op_index = rng.randrange(len(spec.ops))
    op = spec.ops[op_index]
    if not op.outputs:
        return None
    op.outputs[0] = rng.choice([len(spec.tensors), -1, rng.randrange(len(spec.tensors))])
    return f"op {op_index} output 0 -> {op.outputs[0]}"


def index_buffer(spec: ModelSpec, rng: random.Random) -> str | None:
    """A tensor's buffer index out of range or pointing at another buffer."""
    index = rng.randrange(len(spec.tensors))
    spec.tensors[index].buffer = rng.choice([len(spec.buffers), INT32_MAX, rng.randrange(len(spec.buffers))])
    return f"tensor {index} buffer -> {spec.tensors[index].buffer}"


def index_opcode(spec: ModelSpec, rng: random.Random) -> str | None:
    """An op's opcode index out of range or another opcode."""
    op_index = rng.randrange(len(spec.ops))
    spec.ops[op_index].opcode_index = rng.choice([len(spec.opcodes), INT32_MAX, rng.randrange(len(spec.opcodes))])
    return f"op {op_index} opcode index -> {spec.ops[op_index].opcode_index}"


def index_graph_io(spec: ModelSpec, rng: random.Random) -> str | None:
    """A graph input or output index out of range, a constant, or another tensor."""
    side = spec.inputs if rng.random() < 0.5 else spec.outputs
    if not side:
        return None
    k = rng.randrange(len(side))
    side[k] = rng.choice([len(spec.tensors), -1, rng.randrange(len(spec.tensors)),
                          _pick(rng, _constants(spec)) or 0])
    return f"graph {'input' if side is spec.inputs else 'output'} {k} -> {side[k]}"


def option_value(spec: ModelSpec, rng: random.Random) -> str | None:
    """One scalar option (stride, dilation, filter, padding, activation, axis, ...) set to a hostile value."""
    candidates = [(i, k) for i, op in enumerate(spec.ops) for k, v in op.options.items() if not isinstance(v, list)]
    if not candidates:
        return None
    op_index, key = rng.choice(candidates)
    value = spec.ops[op_index].options[key]
    new: Any = rng.choice([*HOSTILE_INTS, value + 1, value - 1]) if not isinstance(value, float) else \
        rng.choice([0.0, -1.0, float("inf"), float("nan"), 1e30])
    if isinstance(value, bool):
        new = not value
    spec.ops[op_index].options[key] = new
    return f"op {op_index} option {key} {value} -> {new}"


def option_table(spec: ModelSpec, rng: random.Random) -> str | None:
    """An op's options table removed, or replaced by another op's."""
    op_index = rng.randrange(len(spec.ops))
    op = spec.ops[op_index]
    if rng.random() < 0.5 or len(spec.ops) < 2:
        op.options_type, op.options = 0, {}
        return f"op {op_index} options table removed"
    other = spec.ops[rng.randrange(len(spec.ops))]
    op.options_type, op.options = other.options_type, dict(other.options)
    return f"op {op_index} options table of another op"


def buffer_size(spec: ModelSpec, rng: random.Random) -> str | None:
    """A constant's buffer one byte short, half its size, emptied or grown."""
    index = _pick(rng, _constants(spec))
    if index is None:
        return None
    t = spec.tensors[index]
    data = spec.buffers[t.buffer]
    choice = rng.randrange(4)
    new = [data[:-1], data[: len(data) // 2], b"", data + data[:4]][choice]
    spec.buffers[t.buffer] = new
    return f"tensor {index} '{t.name}' buffer {len(data)} -> {len(new)} bytes"


def buffer_values(spec: ModelSpec, rng: random.Random) -> str | None:
    """A constant's values replaced by extremes (int32 min/max bias, huge shape operands, ...)."""
    index = _pick(rng, _constants(spec))
    if index is None:
        return None
    t = spec.tensors[index]
    data = bytearray(spec.buffers[t.buffer])
    width = {tflite.TensorType.INT32: 4, tflite.TensorType.INT64: 8, tflite.TensorType.INT16: 2,
             tflite.TensorType.FLOAT32: 4}.get(t.type, 1)
    count = len(data) // width
    if count == 0:
        return None
    fill = rng.choice([b"\xff", b"\x7f", b"\x80", b"\x00"])
    k = rng.randrange(count)
    for j in range(width):
        data[k * width + j] = fill[0] if j < width - 1 else (fill[0] ^ (0x80 if fill == b"\x00" else 0))
    spec.buffers[t.buffer] = bytes(data)
    return f"tensor {index} '{t.name}' element {k} -> bytes {fill.hex()}"


def opcode_code(spec: ModelSpec, rng: random.Random) -> str | None:
    """An operator code changed to another builtin, an unknown one or CUSTOM."""
    k = rng.randrange(len(spec.opcodes))
    known = sorted({max(c.deprecated_code, c.builtin_code) for c in spec.opcodes})
    code = rng.choice([*known, rng.randrange(0, 160), 32, 255, 1000])
    spec.opcodes[k] = OpcodeSpec(min(code, 127), code, "mystery" if code == 32 else "", spec.opcodes[k].version)
    return f"opcode {k} -> builtin {code}"


def wiring_two_writers(spec: ModelSpec, rng: random.Random) -> str | None:
    """Two ops write the same tensor."""
    if len(spec.ops) < 2:
        return None
    a, b = rng.sample(range(len(spec.ops)), 2)
    if not spec.ops[a].outputs or not spec.ops[b].outputs:
        return None
    spec.ops[b].outputs[0] = spec.ops[a].outputs[0]
    return f"op {b} writes op {a}'s output {spec.ops[a].outputs[0]}"


def wiring_read_later(spec: ModelSpec, rng: random.Random) -> str | None:
    """An op reads a tensor written only by a later op (a cycle when it is its own)."""
    op_index = rng.randrange(len(spec.ops))
    later = [t for op in spec.ops[op_index:] for t in op.outputs]
    op = spec.ops[op_index]
    if not later or not op.inputs:
        return None
    k = rng.randrange(len(op.inputs))
    op.inputs[k] = rng.choice(later)
    return f"op {op_index} input {k} -> tensor {op.inputs[k]}, written at or after it"


def wiring_order(spec: ModelSpec, rng: random.Random) -> str | None:
    """Two ops swapped, or one op dropped or duplicated."""
    if len(spec.ops) < 2:
        return None
    choice = rng.randrange(3)
    a, b = sorted(rng.sample(range(len(spec.ops)), 2))
    if choice == 0:
        spec.ops[a], spec.ops[b] = spec.ops[b], spec.ops[a]
        return f"ops {a} and {b} swapped"
    if choice == 1:
        del spec.ops[a]
        return f"op {a} dropped"
    spec.ops.insert(b, copy.deepcopy(spec.ops[a]))
    return f"op {a} duplicated at {b}"


MUTATIONS: dict[str, list[Mutation]] = {
    "shape": [shape_dim, shape_rank],
    "quantization": [quant_scale, quant_zero_point, quant_channels, quant_drop],
    "dtype": [dtype],
    "index": [index_op_input, index_op_output, index_buffer, index_opcode, index_graph_io],
    "option": [option_value, option_table],
    "buffer": [buffer_size, buffer_values],
    "opcode": [opcode_code],
    "wiring": [wiring_two_writers, wiring_read_later, wiring_order],
}


@dataclass(frozen=True)
class Mutant:
    source: str  # the model's file name
    kind: str  # a key of MUTATIONS
    description: str
    data: bytes

    @property
    def label(self) -> str:
        return f"{self.source} [{self.kind}: {self.description}]"


def mutants(models: Sequence[tuple[str, bytes]], seed: int, count: int) -> Iterator[Mutant]:
    """`count` mutants of the models, each one or two mutations of one model, reproducible by seed."""
    rng = random.Random(seed)
    decoded = [(name, decode(data)) for name, data in models]
    kinds = sorted(MUTATIONS)
    made = 0
    while made < count:
        name, original = decoded[rng.randrange(len(decoded))]
        spec = copy.deepcopy(original)
        kind = kinds[rng.randrange(len(kinds))]
        described = [rng.choice(MUTATIONS[kind])(spec, rng)]
        if rng.random() < 0.2:  # sometimes a second mutation of the same kind
            described.append(rng.choice(MUTATIONS[kind])(spec, rng))
        done = [d for d in described if d]
        if not done:
            continue
        made += 1
        yield Mutant(name, kind, "; ".join(done), encode(spec))
