"""Transitional: OpDefs for the kinds whose code has not yet moved into mcugen/ops/<family>/.

Each definition is assembled from the tables the old modules fill (emitters, scratch, reference
kernels, support rules, traits); a kind leaves this module when its family defines it.
"""

from __future__ import annotations

from collections.abc import Callable

import tflite

from ..ir import DType, Op, OpKind
from . import rules as r
from . import tflite_options as o
from .base import InputRoles, OpDef, OptionsReader, Rule, Traits, no_fast_path_scratch, no_scratch

# TFLite builtin code and options reader per kind.
READERS: dict[int, tuple[OpKind, Callable[[], OptionsReader]]] = {
    tflite.BuiltinOperator.CONV_2D: (OpKind.CONV_2D, lambda: o.read_conv),
    tflite.BuiltinOperator.DEPTHWISE_CONV_2D: (OpKind.DEPTHWISE_CONV_2D, lambda: o.read_depthwise),
    tflite.BuiltinOperator.TRANSPOSE_CONV: (OpKind.TRANSPOSE_CONV, lambda: o.read_transpose_conv),
    tflite.BuiltinOperator.FULLY_CONNECTED: (OpKind.FULLY_CONNECTED, lambda: o.read_fully_connected),
    tflite.BuiltinOperator.BATCH_MATMUL: (OpKind.BATCH_MATMUL, lambda: o.read_batch_matmul),
    tflite.BuiltinOperator.AVERAGE_POOL_2D: (OpKind.AVERAGE_POOL_2D, lambda: o.read_pool),
    tflite.BuiltinOperator.MAX_POOL_2D: (OpKind.MAX_POOL_2D, lambda: o.read_pool),
    tflite.BuiltinOperator.ADD: (OpKind.ADD, lambda: o.read_arithmetic(tflite.AddOptions)),
    tflite.BuiltinOperator.SUB: (OpKind.SUB, lambda: o.read_arithmetic(tflite.SubOptions)),
    tflite.BuiltinOperator.MUL: (OpKind.MUL, lambda: o.read_arithmetic(tflite.MulOptions)),
    tflite.BuiltinOperator.SQUARED_DIFFERENCE: (OpKind.SQUARED_DIFFERENCE, lambda: o.read_none),
    tflite.BuiltinOperator.MAXIMUM: (OpKind.MAXIMUM, lambda: o.read_none),
    tflite.BuiltinOperator.MINIMUM: (OpKind.MINIMUM, lambda: o.read_none),
    tflite.BuiltinOperator.MEAN: (OpKind.MEAN, lambda: o.read_reducer),
    tflite.BuiltinOperator.SUM: (OpKind.SUM, lambda: o.read_reducer),
    tflite.BuiltinOperator.REDUCE_MAX: (OpKind.REDUCE_MAX, lambda: o.read_reducer),
    tflite.BuiltinOperator.SOFTMAX: (OpKind.SOFTMAX, lambda: o.read_softmax),
    tflite.BuiltinOperator.LOGISTIC: (OpKind.LOGISTIC, lambda: o.read_none),
    tflite.BuiltinOperator.TANH: (OpKind.TANH, lambda: o.read_none),
    tflite.BuiltinOperator.HARD_SWISH: (OpKind.HARD_SWISH, lambda: o.read_none),
    tflite.BuiltinOperator.RELU: (OpKind.RELU, lambda: o.read_none),
    tflite.BuiltinOperator.RELU6: (OpKind.RELU6, lambda: o.read_none),
    tflite.BuiltinOperator.LEAKY_RELU: (OpKind.LEAKY_RELU, lambda: o.read_leaky_relu),
    tflite.BuiltinOperator.PRELU: (OpKind.PRELU, lambda: o.read_none),
    tflite.BuiltinOperator.RSQRT: (OpKind.RSQRT, lambda: o.read_none),
    tflite.BuiltinOperator.NEG: (OpKind.NEG, lambda: o.read_none),
    tflite.BuiltinOperator.ABS: (OpKind.ABS, lambda: o.read_none),
    tflite.BuiltinOperator.QUANTIZE: (OpKind.QUANTIZE, lambda: o.read_none),
    tflite.BuiltinOperator.DEQUANTIZE: (OpKind.DEQUANTIZE, lambda: o.read_none),
    tflite.BuiltinOperator.RESHAPE: (OpKind.RESHAPE, lambda: o.read_none),
    tflite.BuiltinOperator.SQUEEZE: (OpKind.SQUEEZE, lambda: o.read_squeeze),
    tflite.BuiltinOperator.EXPAND_DIMS: (OpKind.EXPAND_DIMS, lambda: o.read_none),
    tflite.BuiltinOperator.SHAPE: (OpKind.SHAPE, lambda: o.read_shape),
    tflite.BuiltinOperator.CONCATENATION: (OpKind.CONCATENATION, lambda: o.read_concatenation),
    tflite.BuiltinOperator.PACK: (OpKind.PACK, lambda: o.read_pack),
    tflite.BuiltinOperator.UNPACK: (OpKind.UNPACK, lambda: o.read_unpack),
    tflite.BuiltinOperator.SPLIT: (OpKind.SPLIT, lambda: o.read_split(tflite.SplitOptions)),
    tflite.BuiltinOperator.SPLIT_V: (OpKind.SPLIT_V, lambda: o.read_split(tflite.SplitVOptions)),
    tflite.BuiltinOperator.STRIDED_SLICE: (OpKind.STRIDED_SLICE, lambda: o.read_strided_slice),
    tflite.BuiltinOperator.SLICE: (OpKind.SLICE, lambda: o.read_none),
    tflite.BuiltinOperator.PAD: (OpKind.PAD, lambda: o.read_none),
    tflite.BuiltinOperator.PADV2: (OpKind.PADV2, lambda: o.read_none),
    tflite.BuiltinOperator.TRANSPOSE: (OpKind.TRANSPOSE, lambda: o.read_none),
    tflite.BuiltinOperator.GATHER: (OpKind.GATHER, lambda: o.read_gather),
    tflite.BuiltinOperator.RESIZE_NEAREST_NEIGHBOR: (OpKind.RESIZE_NEAREST_NEIGHBOR, lambda: o.read_resize(tflite.ResizeNearestNeighborOptions)),
    tflite.BuiltinOperator.RESIZE_BILINEAR: (OpKind.RESIZE_BILINEAR, lambda: o.read_resize(tflite.ResizeBilinearOptions)),
    tflite.BuiltinOperator.ARG_MAX: (OpKind.ARG_MAX, lambda: o.read_arg_max),
}


RULES: dict[OpKind, Callable[[], list[Rule]]] = {
    OpKind.CONV_2D: lambda: [r.input_arity(2), *r._WEIGHTED_DTYPES, r.same_input_output_dtype,
                     r.per_tensor_activation_quant, r.input_rank_4, r.constant_int8_weights, r.symmetric_per_channel_weights, r.clamp_activation,
                     r.weighted_bias(DType.INT64, DType.INT32), r.symmetric_conv_weights,
                     r.conv_channels, r.positive_strides_and_dilations],
    OpKind.DEPTHWISE_CONV_2D: lambda: [r.input_arity(2), *r._WEIGHTED_DTYPES, r.same_input_output_dtype,
                               r.per_tensor_activation_quant, r.input_rank_4, r.constant_int8_weights, r.symmetric_per_channel_weights, r.clamp_activation,
                               r.weighted_bias(DType.INT64), r.symmetric_conv_weights,
                               r.depthwise_channels, r.positive_strides_and_dilations],
    OpKind.FULLY_CONNECTED: lambda: [r.input_arity(2), *r._WEIGHTED_DTYPES, r.same_input_output_dtype,
                             r.per_tensor_activation_quant, r.constant_int8_weights, r.symmetric_per_channel_weights, r.clamp_activation,
                             r.weighted_bias(DType.INT64, DType.INT32), r.fully_connected_shapes],
    OpKind.AVERAGE_POOL_2D: lambda: [r.input_arity(1), r.activation_dtypes(DType.INT8, DType.INT16),
                             r.same_input_output_dtype, r.per_tensor_activation_quant,
                             r.pool_quant_matches_input, r.input_rank_4, r.clamp_activation, r.pool_shapes,
                             r.positive_strides_and_dilations],
    OpKind.MAX_POOL_2D: lambda: [r.input_arity(1), r.activation_dtypes(DType.INT8, DType.INT16),
                         r.same_input_output_dtype, r.per_tensor_activation_quant,
                         r.pool_quant_matches_input, r.input_rank_4, r.clamp_activation, r.pool_shapes,
                         r.positive_strides_and_dilations],
    OpKind.ADD: lambda: [*r._BINARY, r.clamp_activation],
    OpKind.MEAN: lambda: [r.input_arity(2), r.activation_dtypes(DType.INT8, DType.INT16, DType.FLOAT32),
                  r.same_input_output_dtype, r.integer_per_tensor_quant, r.int16_zero_points_zero,
                  r.rank_at_most_4, r.constant_int32_axis, r.reduced_count_fits_int32],
    OpKind.SOFTMAX: lambda: [r.input_arity(1), *_activation_rules()["SOFTMAX"]],
    OpKind.RESHAPE: lambda: [r.input_arity(1), *_movement_rules()["RESHAPE"]],
    # Rules below are the first cut for the operator-coverage work; each family refines its own.
    OpKind.TRANSPOSE_CONV: lambda: [r.input_arity(3), r.transpose_conv_activations, r.int16_zero_points,
                            r.transpose_conv_shapes, r.constant_int8_weights, r.symmetric_per_channel_weights, r.clamp_activation, r.weighted_bias(DType.INT64),
                            r.symmetric_conv_weights, r.positive_strides_and_dilations],
    OpKind.BATCH_MATMUL: lambda: [r.input_arity(2), r.batch_matmul_operands, r.int16_zero_points,
                          r.batch_matmul_shapes],
    OpKind.SUB: lambda: [*r._BINARY, r.clamp_activation],
    OpKind.MUL: lambda: [*r._BINARY, r.clamp_activation],
    OpKind.SQUARED_DIFFERENCE: lambda: r._BINARY,
    OpKind.MAXIMUM: lambda: r._BINARY,
    OpKind.MINIMUM: lambda: r._BINARY,
    OpKind.SUM: lambda: [r.input_arity(2), r.activation_dtypes(DType.INT8, DType.INT16, DType.FLOAT32),
                 r.same_input_output_dtype, r.integer_per_tensor_quant, r.int16_zero_points_zero,
                 r.rank_at_most_4, r.constant_int32_axis, r.reduced_count_fits_int32],
    OpKind.REDUCE_MAX: lambda: [r.input_arity(2), r.activation_dtypes(DType.INT8, DType.FLOAT32),
                        r.same_input_output_dtype, r.integer_per_tensor_quant, r.same_quant_as_input,
                        r.rank_at_most_4, r.constant_int32_axis],
    OpKind.LOGISTIC: lambda: [r.input_arity(1), *_activation_rules()["LOGISTIC"]],
    OpKind.TANH: lambda: [r.input_arity(1), *_activation_rules()["TANH"]],
    OpKind.HARD_SWISH: lambda: [r.input_arity(1), *_activation_rules()["HARD_SWISH"]],
    OpKind.RELU: lambda: [r.input_arity(1), *_activation_rules()["RELU"]],
    OpKind.RELU6: lambda: [r.input_arity(1), *_activation_rules()["RELU6"]],
    OpKind.LEAKY_RELU: lambda: [r.input_arity(1), *_activation_rules()["LEAKY_RELU"]],
    OpKind.PRELU: lambda: [r.input_arity(2), r.prelu_dtypes, r.binary_quantization, r.broadcast_shapes,
                   r.prelu_shapes],
    OpKind.RSQRT: lambda: [r.input_arity(1), *_activation_rules()["RSQRT"]],
    OpKind.NEG: lambda: [r.input_arity(1), *_activation_rules()["NEG"]],
    OpKind.ABS: lambda: [r.input_arity(1), *_activation_rules()["ABS"]],
    OpKind.QUANTIZE: lambda: [r.input_arity(1), *_activation_rules()["QUANTIZE"]],
    OpKind.DEQUANTIZE: lambda: [r.input_arity(1), *_activation_rules()["DEQUANTIZE"]],
    OpKind.SQUEEZE: lambda: [r.input_arity(1), *_movement_rules()["SQUEEZE"]],
    OpKind.EXPAND_DIMS: lambda: [r.input_arity(2), *_movement_rules()["EXPAND_DIMS"]],
    OpKind.SHAPE: lambda: [r.input_arity(1), *_movement_rules()["SHAPE"]],
    OpKind.CONCATENATION: lambda: [r.input_arity(1), *_movement_rules()["CONCATENATION"]],
    OpKind.PACK: lambda: [r.input_arity(1), *_movement_rules()["PACK"]],
    OpKind.UNPACK: lambda: [r.input_arity(1), *_movement_rules()["UNPACK"]],
    OpKind.SPLIT: lambda: [r.input_arity(2), *_movement_rules()["SPLIT"]],
    OpKind.SPLIT_V: lambda: [r.input_arity(3), *_movement_rules()["SPLIT_V"]],
    OpKind.STRIDED_SLICE: lambda: [r.input_arity(4), *_movement_rules()["STRIDED_SLICE"]],
    OpKind.SLICE: lambda: [r.input_arity(3), *_movement_rules()["SLICE"]],
    OpKind.PAD: lambda: [r.input_arity(2), *_movement_rules()["PAD"]],
    OpKind.PADV2: lambda: [r.input_arity(3), *_movement_rules()["PADV2"]],
    OpKind.TRANSPOSE: lambda: [r.input_arity(2), *_movement_rules()["TRANSPOSE"]],
    OpKind.GATHER: lambda: [r.input_arity(2), *_movement_rules()["GATHER"]],
    OpKind.RESIZE_NEAREST_NEIGHBOR: lambda: [r.input_arity(2),
                                     r.activation_dtypes(DType.INT8, DType.INT16, DType.FLOAT32),
                                     r.same_input_output_dtype, r.input_rank_4, r.constant_resize_size],
    OpKind.RESIZE_BILINEAR: lambda: [r.input_arity(2), r.activation_dtypes(DType.INT8, DType.FLOAT32),
                             r.same_input_output_dtype, r.input_rank_4, r.constant_resize_size,
                             r.bilinear_flags],
    OpKind.ARG_MAX: lambda: [r.input_arity(2), r.arg_max_dtypes, r.single_constant_axis],
}




_ROLES = {
    OpKind.CONV_2D: InputRoles(weights=1, bias=2, weights_channel_axis=0),
    OpKind.DEPTHWISE_CONV_2D: InputRoles(weights=1, bias=2, weights_channel_axis=3),
    OpKind.FULLY_CONNECTED: InputRoles(weights=1, bias=2, weights_channel_axis=0),
    OpKind.TRANSPOSE_CONV: InputRoles(weights=1, bias=3, weights_channel_axis=0),
}
_ALIAS = {OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS}
_IN_PLACE = {
    OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.SQUARED_DIFFERENCE, OpKind.MAXIMUM, OpKind.MINIMUM,
    OpKind.PRELU, OpKind.RELU, OpKind.RELU6, OpKind.LEAKY_RELU, OpKind.LOGISTIC, OpKind.TANH,
    OpKind.HARD_SWISH, OpKind.ABS, OpKind.NEG, OpKind.RSQRT, OpKind.QUANTIZE,
}
_WINDOW = {OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D}


def _activation_rules() -> dict[str, list[Rule]]:
    from ..support_activation import ACTIVATION_RULES

    return ACTIVATION_RULES


def _movement_rules() -> dict[str, list[Rule]]:
    from ..support_movement import MOVEMENT_RULES

    return MOVEMENT_RULES


def _rows_emitters(todo: set[OpKind]) -> dict[OpKind, Callable[..., object]]:
    rows: dict[OpKind, Callable[..., object]] = {}
    if todo & {OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D}:
        from ..codegen.ops_conv import emit_convolution_rows

        rows.update({OpKind.CONV_2D: emit_convolution_rows, OpKind.DEPTHWISE_CONV_2D: emit_convolution_rows})
    if todo & {OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D}:
        from ..codegen.ops_pool import emit_pool_rows

        rows.update({OpKind.AVERAGE_POOL_2D: emit_pool_rows, OpKind.MAX_POOL_2D: emit_pool_rows})
    return rows


def _no_prepare(op: Op, setting: object) -> None:
    """Legacy kinds compute their parameters in their emitters and reference kernels."""
    return


def legacy_definitions(done: set[OpKind]) -> list[OpDef]:
    """OpDefs of every kind not in `done` (the kinds the families already define)."""
    from ..codegen import load_emitters
    from ..codegen.emit import EMITTERS, FAST_PATH_SCRATCH, SCRATCH
    from ..reference import KERNELS
    from .legacy_macs import op_macs

    load_emitters()
    todo = {kind for kind, _ in READERS.values()} - done
    rows = _rows_emitters(todo)
    definitions = []
    for code, (kind, reader) in READERS.items():
        if kind in done:
            continue
        definitions.append(OpDef(
            kind=kind, builtin=code, read_options=reader(), rules=tuple(RULES[kind]()),
            prepare=_no_prepare, emit=EMITTERS[kind], scratch=SCRATCH.get(kind, no_scratch),
            fast_path_scratch=FAST_PATH_SCRATCH.get(kind, no_fast_path_scratch),
            reference=KERNELS[kind], macs=op_macs, roles=_ROLES.get(kind, InputRoles()),
            traits=Traits(alias=kind in _ALIAS, in_place=kind in _IN_PLACE, window=kind in _WINDOW),
            emit_rows=rows.get(kind)))
    return definitions
