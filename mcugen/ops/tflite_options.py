"""Readers of TFLite options tables, shared by the op families (mcugen/ops/<family>/).

Each op kind's definition names the builtin code it reads and the reader of its options; the
helpers here turn flatbuffer fields into the IR's typed options and reject unknown enum values
with a ModelError naming the op.
"""

from __future__ import annotations

from typing import Any

import flatbuffers
import tflite

from ..errors import ModelError
from ..ir import (
    Activation,
    DType,
    NoOptions,
    Padding,
)

DTYPES: dict[int, DType] = {
    tflite.TensorType.INT8: DType.INT8,
    tflite.TensorType.UINT8: DType.UINT8,
    tflite.TensorType.INT16: DType.INT16,
    tflite.TensorType.INT32: DType.INT32,
    tflite.TensorType.INT64: DType.INT64,
    tflite.TensorType.FLOAT32: DType.FLOAT32,
    tflite.TensorType.FLOAT16: DType.FLOAT16,
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


def quantized_bias_type(options: Any) -> DType | None:
    """The options' quantized_bias_type; the schema default (FLOAT32) means not set."""
    value = options.QuantizedBiasType()
    return None if value == tflite.TensorType.FLOAT32 else DTYPES.get(value)


def read_none(op: Any, where: str) -> NoOptions:
    return NoOptions()
