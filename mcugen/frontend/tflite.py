"""TFLite flatbuffer -> IR. The only module that imports the `tflite` package.

The reader validates what it reads (file identifier, schema version, buffer ranges, tensor
indices, data sizes against shapes) and raises ModelError with a one-line message naming the
file and the element that is wrong. Ops that mcugen does not know are collected and reported
all at once as UnsupportedError, so a user sees the whole list in one run.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import tflite

from ..digest import sha256
from ..errors import ModelError, UnsupportedError
from ..ir import (
    CustomOptions,
    Graph,
    Op,
    OpKind,
    Quant,
    Tensor,
)
from ..ops import registry
from ..ops.tflite_options import DTYPES
from ..records import dataclass
from . import sparsity, variables, vela
from .validate import DEFAULT_LIMITS, Limits, validate_graph

SUPPORTED_SCHEMA_VERSION = 3

_BUILTIN_NAMES: dict[int, str] = {
    value: name for name, value in vars(tflite.BuiltinOperator).items() if not name.startswith("_")
}
_TYPE_NAMES: dict[int, str] = {
    value: name for name, value in vars(tflite.TensorType).items() if not name.startswith("_")
}




@dataclass(frozen=True)
class UnknownOp:
    """An op of a builtin mcugen does not know, kept aside by a lenient read (`mcugen inspect`)."""

    index: int
    builtin: str
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]


def builtin_name(code: int) -> str:
    return _BUILTIN_NAMES.get(code, f"builtin {code}")


def read_model(path: str | os.PathLike[str], limits: Limits = DEFAULT_LIMITS) -> Graph:
    """Read and validate a .tflite file into a Graph."""
    file = Path(path)
    if not file.exists():
        raise ModelError(f"{file}: no such file")
    if not file.is_file():
        raise ModelError(f"{file}: not a regular file")
    data = file.read_bytes()
    return parse_model(data, file.name, limits)


def parse_model(data: bytes, label: str, limits: Limits = DEFAULT_LIMITS) -> Graph:
    """Parse flatbuffer bytes and validate what they say (frontend/validate.py); `label` names
    the source in messages."""
    graph = decode_model(data, label)
    validate_graph(graph, label, limits)
    return graph


def decode_model(data: bytes, label: str, unknown: list[UnknownOp] | None = None) -> Graph:
    """The Graph that flatbuffer bytes describe, their structure checked but not their contents
    (parse_model validates those): for tests of the reader itself, and for `mcugen inspect`,
    which passes `unknown` to get the ops of unknown builtins there instead of an error (the
    graph then lacks them)."""
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise ModelError(f"{label}: not a TFLite flatbuffer (no 'TFL3' file identifier)")
    try:
        return _Reader(data, label, unknown).graph()
    except (ModelError, UnsupportedError):
        raise
    except Exception as exc:  # noqa: BLE001 - the flatbuffers runtime raises bare errors on a corrupt file
        raise ModelError(
            f"{label}: corrupt or truncated flatbuffer ({type(exc).__name__}: {exc})"
        ) from None


class _Reader:
    def __init__(self, data: bytes, label: str, unknown: list[UnknownOp] | None = None) -> None:
        self.data = data
        self.label = label
        self.unknown = unknown
        root = int.from_bytes(data[0:4], "little")
        if root + 4 > len(data):
            raise ModelError(f"{label}: truncated flatbuffer (root table at {root} of {len(data)} bytes)")
        self.model = tflite.Model.GetRootAsModel(data, 0)
        self._codes: dict[int, int] = {}  # opcode index -> builtin code (_code)

    def graph(self) -> Graph:
        model = self.model
        if model.Version() != SUPPORTED_SCHEMA_VERSION:
            raise UnsupportedError(
                f"{self.label}: schema version {model.Version()} is not supported "
                f"(mcugen reads version {SUPPORTED_SCHEMA_VERSION})"
            )
        if model.SubgraphsLength() < 1:
            raise ModelError(f"{self.label}: the model has no subgraphs")
        subgraph = model.Subgraphs(0)
        # Stateful models: variables become state tensors, CALL_ONCE and VAR_HANDLE go (variables.py)
        state = variables.resolve(model, self._code, self._tensor, self.label)
        tensors = [state.by_handle.get(i) or self._tensor(subgraph, i) for i in range(subgraph.TensorsLength())]
        ops = self._ops(subgraph, tensors, state.dropped)
        inputs = [self._tensor_ref(tensors, int(i), "graph input") for i in self._ints(subgraph.InputsAsNumpy())]
        outputs = [self._tensor_ref(tensors, int(i), "graph output") for i in self._ints(subgraph.OutputsAsNumpy())]
        if not inputs or not outputs:
            raise ModelError(f"{self.label}: the graph has no inputs or no outputs")
        if any(op.kind is OpKind.ETHOS_U for op in ops):
            offsets = vela.offline_offsets(self._metadata(vela.OFFLINE_METADATA), len(tensors), self.label)
            vela.pin_tensors(tensors, ops, offsets, self.label)
        name = Path(self.label).stem
        description = (model.Description() or b"").decode("utf-8", "replace")
        graph = Graph(
            name=name,
            tensors=tensors,
            ops=ops,
            inputs=inputs,
            outputs=outputs,
            sha256=sha256(self.data).hexdigest(),
            description=description,
        )
        graph.link()
        return graph

    def _metadata(self, name: str) -> bytes | None:
        """The bytes of the model's metadata entry `name`, or None."""
        model = self.model
        for i in range(model.MetadataLength()):
            entry = model.Metadata(i)
            if (entry.Name() or b"").decode("utf-8", "replace") == name:
                return self._buffer_bytes(entry.Buffer(), f"{self.label}: metadata '{name}'") or b""
        return None

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
        if type_code not in DTYPES:
            raise UnsupportedError(
                f"{where}: dtype {_TYPE_NAMES.get(type_code, type_code)} is not supported "
                f"(supported: {', '.join(d.short for d in DTYPES.values())})"
            )
        dtype = DTYPES[type_code]
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
        if t.Sparsity() is not None:  # a pruned constant, stored sparse (no buffer: all zeros)
            data = sparsity.densify(sparsity.read_layout(t.Sparsity(), where), raw or b"", shape, dtype, where)
        elif raw is not None:
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
        scales = tuple(q.ScaleAsNumpy().tolist())  # float32 values as Python floats, exactly
        zero_points = tuple(self._ints(q.ZeroPointAsNumpy())) if q.ZeroPointLength() else (0,) * len(scales)
        axis = int(q.QuantizedDimension())
        if len(zero_points) != len(scales):
            raise ModelError(f"{where}: {len(scales)} scales but {len(zero_points)} zero points")
        if len(scales) > 1 and (axis >= len(shape) or shape[axis] != len(scales)):
            raise ModelError(
                f"{where}: {len(scales)} per-channel scales on axis {axis} do not match shape {list(shape)}"
            )
        if not all(math.isfinite(s) and s > 0 for s in scales):
            raise ModelError(f"{where}: quantization scales must be finite and positive, got {scales[:4]}")
        return Quant(scale=scales, zero_point=zero_points, axis=axis)

    def _code(self, op: Any, index: int) -> int:
        """The builtin code of flatbuffer operator `op` (op `index` of its subgraph); read once per
        opcode (the reader and variables.py ask for every op several times)."""
        model = self.model
        code_index = op.OpcodeIndex()
        known = self._codes.get(code_index)
        if known is not None:
            return known
        if not 0 <= code_index < model.OperatorCodesLength():
            raise ModelError(f"{self.label}: op {index} uses opcode index {code_index}, out of range")
        opcode = model.OperatorCodes(code_index)
        # Schema v3a: the real code is the larger of the deprecated byte and the new int field.
        code = self._codes[code_index] = max(int(opcode.BuiltinCode()), int(opcode.DeprecatedBuiltinCode()))
        return code

    def _ops(self, subgraph: Any, tensors: list[Tensor], dropped: set[int]) -> list[Op]:
        model = self.model
        ops: list[Op] = []
        unknown: list[str] = []
        for index in range(subgraph.OperatorsLength()):
            if index in dropped:  # CALL_ONCE, VAR_HANDLE: resolved at build time (variables.py)
                continue
            op = subgraph.Operators(index)
            code = self._code(op, index)
            outputs_idx = self._ints(op.OutputsAsNumpy())
            first_name = ""
            if outputs_idx and 0 <= outputs_idx[0] < len(tensors):
                first_name = tensors[outputs_idx[0]].name
            if code == tflite.BuiltinOperator.CUSTOM:
                custom = (model.OperatorCodes(op.OpcodeIndex()).CustomCode() or b"?").decode("utf-8", "replace")
                options = op.CustomOptionsAsNumpy().tobytes() if op.CustomOptionsLength() else b""
                if custom != vela.CUSTOM_CODE:  # the user's kernel, bound by the build (--custom-op)
                    inputs = [None if i < 0 else self._tensor_ref(tensors, i, f"CUSTOM (op {index}) input")
                              for i in self._ints(op.InputsAsNumpy())]
                    outputs = [self._tensor_ref(tensors, i, f"CUSTOM (op {index}) output") for i in outputs_idx]
                    ops.append(Op(kind=OpKind.CUSTOM, inputs=inputs, outputs=outputs,
                                  options=CustomOptions(custom, options), index=index))
                    continue
                where = f"{self.label}: ETHOS_U (op {index}, '{first_name}')"
                inputs = [None if i < 0 else self._tensor_ref(tensors, i, f"ETHOS_U (op {index}) input")
                          for i in self._ints(op.InputsAsNumpy())]
                outputs = [self._tensor_ref(tensors, i, f"ETHOS_U (op {index}) output") for i in outputs_idx]
                ops.append(vela.ethos_u_op(index, inputs, outputs, options, where))
                continue
            definition = registry.by_builtin(code)
            if definition is None:
                unknown.append(f"op {index} {builtin_name(code)} ('{first_name}')")
                if self.unknown is not None:
                    read = tuple(self._tensor_ref(tensors, i, f"op {index} input")
                                 for i in self._ints(op.InputsAsNumpy()) if i >= 0)
                    kept = tuple(self._tensor_ref(tensors, i, f"op {index} output") for i in outputs_idx)
                    self.unknown.append(UnknownOp(index, builtin_name(code), read, kept))
                continue
            kind, read_options = definition.kind, definition.read_options
            where = f"{self.label}: {kind.name} (op {index}, '{first_name}')"
            inputs = [
                None if i < 0 else self._tensor_ref(tensors, i, f"{kind.name} (op {index}) input")
                for i in self._ints(op.InputsAsNumpy())
            ]
            outputs = [self._tensor_ref(tensors, i, f"{kind.name} (op {index}) output") for i in outputs_idx]
            ops.append(Op(kind=kind, inputs=inputs, outputs=outputs, options=read_options(op, where), index=index))
        if unknown and self.unknown is None:
            raise UnsupportedError(
                f"{self.label}: {len(unknown)} unsupported op(s): {'; '.join(unknown[:3])}"
                f"{f'; and {len(unknown) - 3} more' if len(unknown) > 3 else ''} (docs/supported_ops.md lists the "
                "supported ones; `mcugen inspect` on the model lists every op and every reason)"
            )
        return ops
