"""The conv family: CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV, int8 and int16x8 (int16
activations, int8 weights), bit-exact with TFLite's reference integer kernels.

rules.py holds the family's own support rules (the weighted-op ones it shares with the matmul
family stay in mcugen.ops.rules), prepare.py TFLite's Prepare (rescale, offsets, padding,
clamp), emit.py the C emitters and their scratch, reference.py the numpy kernels.
"""

from __future__ import annotations

from typing import Any

import tflite

from ...ir import Conv2DOptions, DepthwiseConv2DOptions, DType, Op, OpKind, TransposeConvOptions
from .. import rules as r
from ..base import InputRoles, OpDef, Traits, no_fast_path_scratch, no_scratch
from ..float32 import FLOAT_NOTE, by_dtype
from ..float32 import emit as float_emit
from ..float32 import no_scratch as no_float_scratch
from ..float32 import reference as float_reference
from ..float32.prepare import prepare_float_window
from ..float32.rules import WEIGHTED_DTYPES, finite_float_weights, float_weights, quantized_only
from ..tflite_options import ACTIVATIONS, PADDINGS, enum_value, options_table, quantized_bias_type
from . import emit, reference
from . import rules as conv_rules
from .prepare import LITERT_INT32_BIAS, SHIFT_RULE, prepare_conv, prepare_transpose_conv

# --- options --------------------------------------------------------------------------------


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


def read_transpose_conv(op: Any, where: str) -> TransposeConvOptions:
    o = options_table(op, tflite.TransposeConvOptions)
    return TransposeConvOptions(
        padding=enum_value(PADDINGS, o.Padding(), "padding", where),
        stride_h=o.StrideH(),
        stride_w=o.StrideW(),
        activation=enum_value(ACTIVATIONS, o.FusedActivationFunction(), "activation", where),
    )


# --- multiply-accumulates (as TFLite-based tools count them) ---------------------------------


def conv_macs(op: Op) -> int:
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    if weights is None:
        return 0
    _, kh, kw, in_c = weights.shape
    return op.outputs[0].num_elements * kh * kw * in_c


def depthwise_macs(op: Op) -> int:
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    if weights is None:
        return 0
    _, kh, kw, _ = weights.shape
    return op.outputs[0].num_elements * kh * kw


def transpose_conv_macs(op: Op) -> int:
    """Every input element meets kh * kw * out_c weights (weights [out_c, kh, kw, in_c]),
    taps later cropped by the padding included: the multiplies the scatter performs."""
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    x = op.inputs[2] if len(op.inputs) > 2 else None
    if weights is None or x is None or len(weights.shape) != 4:
        return 0
    out_c, kh, kw, _ = weights.shape
    return x.num_elements * kh * kw * out_c


# --- definitions ------------------------------------------------------------------------------

_WINDOW = Traits(window=True)  # tiling may run it in stripes of output rows (emit_rows)

# The rules that read quantization apply to int8 and int16 ops only; float32 ones have theirs.
_QUANT_ACTIVATIONS = quantized_only(r.per_tensor_activation_quant)
_INT8_WEIGHTS = quantized_only(r.constant_int8_weights)
_FLOAT_RULES = (float_weights, finite_float_weights)

OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.CONV_2D, builtin=tflite.BuiltinOperator.CONV_2D, read_options=read_conv,
        rules=(r.input_arity(2), *WEIGHTED_DTYPES, r.same_input_output_dtype,
               _QUANT_ACTIVATIONS, r.input_rank_4, _INT8_WEIGHTS,
               r.symmetric_per_channel_weights(0), r.clamp_activation,
               quantized_only(r.weighted_bias(DType.INT64, DType.INT32)), conv_rules.symmetric_conv_weights,
               conv_rules.conv_channels, r.positive_strides_and_dilations,
               conv_rules.dilations_fit_int16, conv_rules.int8_zero_points_in_range, *_FLOAT_RULES),
        prepare=by_dtype(prepare_conv, prepare_float_window), prepare_rules=(SHIFT_RULE, LITERT_INT32_BIAS),
        emit=by_dtype(emit.emit_conv_2d, float_emit.emit_float_convolution),
        emit_rows=by_dtype(emit.emit_convolution_rows, float_emit.emit_float_convolution),
        scratch=no_scratch, fast_path_scratch=by_dtype(emit.conv_scratch_bytes, no_float_scratch),
        reference=by_dtype(reference.conv_2d, float_reference.conv_2d), macs=conv_macs,
        roles=InputRoles(weights=1, bias=2, weights_channel_axis=0), traits=_WINDOW,
        shape_rules=(conv_rules.conv_output_shape,), notes=(FLOAT_NOTE,),
    ),
    OpDef(
        kind=OpKind.DEPTHWISE_CONV_2D, builtin=tflite.BuiltinOperator.DEPTHWISE_CONV_2D,
        read_options=read_depthwise,
        rules=(r.input_arity(2), *WEIGHTED_DTYPES, r.same_input_output_dtype,
               _QUANT_ACTIVATIONS, r.input_rank_4, _INT8_WEIGHTS,
               r.symmetric_per_channel_weights(3), r.clamp_activation,
               quantized_only(r.weighted_bias(DType.INT64)),
               conv_rules.symmetric_conv_weights, conv_rules.depthwise_channels,
               r.positive_strides_and_dilations, conv_rules.dilations_fit_int16,
               conv_rules.int8_zero_points_in_range, *_FLOAT_RULES),
        prepare=by_dtype(prepare_conv, prepare_float_window), prepare_rules=(SHIFT_RULE,),
        emit=by_dtype(emit.emit_depthwise_conv_2d, float_emit.emit_float_convolution),
        emit_rows=by_dtype(emit.emit_convolution_rows, float_emit.emit_float_convolution),
        scratch=no_scratch, fast_path_scratch=by_dtype(emit.depthwise_scratch_bytes, no_float_scratch),
        reference=by_dtype(reference.depthwise_conv_2d, float_reference.depthwise_conv_2d),
        macs=depthwise_macs,
        roles=InputRoles(weights=1, bias=2, weights_channel_axis=3), traits=_WINDOW,
        shape_rules=(conv_rules.conv_output_shape,), notes=(FLOAT_NOTE,),
    ),
    OpDef(
        kind=OpKind.TRANSPOSE_CONV, builtin=tflite.BuiltinOperator.TRANSPOSE_CONV,
        read_options=read_transpose_conv,
        rules=(r.input_arity(3), conv_rules.transpose_conv_activations, r.int16_zero_points,
               conv_rules.transpose_conv_shapes, _INT8_WEIGHTS,
               r.symmetric_per_channel_weights(0), r.clamp_activation,
               quantized_only(r.weighted_bias(DType.INT64)),
               conv_rules.symmetric_conv_weights, r.positive_strides_and_dilations, *_FLOAT_RULES),
        prepare=by_dtype(prepare_transpose_conv, prepare_float_window), prepare_rules=(SHIFT_RULE,),
        emit=by_dtype(emit.emit_transpose_conv, float_emit.emit_float_convolution),
        scratch=no_scratch,
        fast_path_scratch=no_fast_path_scratch,
        reference=by_dtype(reference.transpose_conv, float_reference.transpose_conv),
        macs=transpose_conv_macs,
        roles=InputRoles(weights=1, bias=3, weights_channel_axis=0),
        shape_rules=(conv_rules.transpose_conv_output_shape,), notes=(FLOAT_NOTE,),
    ),
]
