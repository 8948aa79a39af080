"""ModelBuilder writes models that LiteRT, TFLM and mcugen's frontend all read the same way;
the oracles reproduce the stored outputs of a public reference model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite
from modelbuilder import ModelBuilder
from oracles import litert_all_tensors, run_litert, run_oracle, run_tflm

from mcugen.driver import load_graph
from mcugen.errors import UnsupportedError
from mcugen.frontend.tflite import decode_model, parse_model
from mcugen.ir import (
    Activation,
    ArithmeticOptions,
    Conv2DOptions,
    CustomOptions,
    DepthwiseConv2DOptions,
    DType,
    FullyConnectedOptions,
    NoOptions,
    OpKind,
    Padding,
    Pool2DOptions,
    ReducerOptions,
    SoftmaxOptions,
)
from mcugen.quantization import Rounding

MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "models"


def conv_model(seed: int = 0) -> tuple[bytes, dict[str, np.ndarray]]:
    """One int8 CONV_2D, SAME, stride 2, RELU, per-channel weights on axis 0."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(-127, 128, size=(4, 3, 3, 3), dtype=np.int8)
    w_scales = rng.uniform(0.002, 0.02, size=4)
    bias = rng.integers(-2000, 2000, size=4, dtype=np.int32)
    b = ModelBuilder("conv test")
    x = b.add_tensor("input", [1, 9, 9, 3], "int8", scale=0.04, zero_point=-7)
    w = b.add_tensor("weights", weights.shape, "int8", scale=w_scales, data=weights)
    k = b.add_tensor("bias", [4], "int32", scale=0.04 * w_scales, data=bias)
    y = b.add_tensor("output", [1, 5, 5, 4], "int8", scale=0.08, zero_point=3)
    options = {"padding": "SAME", "stride_w": 2, "stride_h": 2, "fused_activation_function": "RELU"}
    b.add_op("CONV_2D", [x, w, k], [y], options)
    b.set_io([x], [y])
    return b.build(), {"weights": weights, "w_scales": w_scales, "bias": bias}


def test_conv_runs_in_both_oracles() -> None:
    model, _ = conv_model()
    x = np.random.default_rng(1).integers(-128, 128, size=(1, 9, 9, 3), dtype=np.int8)
    (litert,) = run_litert(model, [x])
    (tflm,) = run_tflm(model, [x])
    assert litert.shape == tflm.shape == (1, 5, 5, 4)
    assert litert.dtype == tflm.dtype == np.int8
    # Both runtimes round a conv's rescale twice, so they agree (at most one apart is all this
    # checks); real kernels ran, so RELU clamps at 3.
    assert np.abs(litert.astype(np.int32) - tflm).max() <= 1
    assert litert.min() >= 3 and len(np.unique(litert)) > 3
    np.testing.assert_array_equal(run_oracle(model, [x], Rounding.TFLM)[0], tflm)
    np.testing.assert_array_equal(run_oracle(model, [x], Rounding.LITERT)[0], litert)


def test_all_tensors_by_index() -> None:
    model, consts = conv_model()
    x = np.zeros((1, 9, 9, 3), dtype=np.int8)
    values = litert_all_tensors(model, [x])
    assert sorted(values) == [0, 1, 2, 3]
    np.testing.assert_array_equal(values[1], consts["weights"])
    np.testing.assert_array_equal(values[3], run_litert(model, [x])[0])


def test_conv_reads_back_through_frontend() -> None:
    model, consts = conv_model()
    graph = parse_model(model, "x.tflite")
    assert graph.description == "conv test"
    assert [t.name for t in graph.tensors] == ["input", "weights", "bias", "output"]
    x, w, k, y = graph.tensors
    assert (x.shape, x.dtype, x.quant.scale, x.quant.zero_point) == (
        (1, 9, 9, 3), DType.INT8, (pytest.approx(0.04),), (-7,))
    assert w.dtype is DType.INT8 and w.quant.axis == 0 and w.quant.zero_point == (0,) * 4
    np.testing.assert_allclose(w.quant.scale, consts["w_scales"].astype(np.float32))
    np.testing.assert_array_equal(w.data, consts["weights"])
    assert k.dtype is DType.INT32 and k.data.dtype == np.int32
    np.testing.assert_array_equal(k.data, consts["bias"])
    assert y.shape == (1, 5, 5, 4) and y.quant.zero_point == (3,) and y.data is None
    (op,) = graph.ops
    assert op.kind is OpKind.CONV_2D and op.inputs == [x, w, k] and op.outputs == [y]
    assert op.options == Conv2DOptions(Padding.SAME, 2, 2, 1, 1, Activation.RELU)
    assert graph.inputs == [x] and graph.outputs == [y]


def test_file_layout_matches_converter() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1)
    h = b.add_tensor("h", [1, 4], "int8", scale=0.1)
    c = b.add_tensor("c", [300], "int16", data=np.arange(300, dtype=np.int16))
    for size in (3, 5, 7):  # odd sizes, so only a forced alignment lands every start on 16
        b.add_tensor(f"pad{size}", [size], "int8", data=np.ones(size, np.int8))
    y = b.add_tensor("y", [1, 4], "int8", scale=0.1)
    b.add_op("ADD", [x, x], [h])
    b.add_op("BATCH_MATMUL", [h, c], [y])  # builtin code 126
    b.add_op("ADD", [h, h], [y])
    b.add_op("STABLEHLO_ADD", [h, h], [y])  # builtin code > 127
    b.set_io([x], [y])
    data = b.build()
    assert data[4:8] == b"TFL3"
    model = tflite.Model.GetRootAsModel(data, 0)
    assert model.Version() == 3
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    assert [(o.DeprecatedBuiltinCode(), o.BuiltinCode()) for o in codes] == [
        (0, 0), (126, 126), (127, tflite.BuiltinOperator.STABLEHLO_ADD)]
    ops = model.Subgraphs(0)
    assert [ops.Operators(i).OpcodeIndex() for i in range(4)] == [0, 1, 0, 2]
    assert model.Buffers(0).DataLength() == 0 and model.BuffersLength() == 5
    starts = [model.Buffers(i)._tab.Vector(model.Buffers(i)._tab.Offset(4)) for i in range(1, 5)]
    assert all(start % 16 == 0 for start in starts)  # the schema's force_align: 16
    assert data[starts[0]:starts[0] + 600] == np.arange(300, dtype="<i2").tobytes()


def options_model(builtin: str, options: dict | None) -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4, 4, 2], "int8", scale=0.1)
    y = b.add_tensor("y", [1, 4, 4, 2], "int8", scale=0.1)
    b.add_op(builtin, [x], [y], options)
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize(
    "builtin, options, expected",
    [
        ("CONV_2D", None, Conv2DOptions(Padding.VALID, 1, 1, 1, 1, Activation.NONE)),
        ("CONV_2D", {"dilation_w_factor": 2, "dilation_h_factor": 3, "stride_w": 4,
                     "fused_activation_function": "RELU_N1_TO_1"},
         Conv2DOptions(Padding.VALID, 1, 4, 3, 2, Activation.RELU_N1_TO_1)),
        ("DEPTHWISE_CONV_2D", {"padding": "SAME", "depth_multiplier": 3, "stride_h": 2,
                               "fused_activation_function": "RELU6"},
         DepthwiseConv2DOptions(Padding.SAME, 2, 1, 1, 1, 3, Activation.RELU6)),
        ("FULLY_CONNECTED", {"keep_num_dims": True, "fused_activation_function": "TANH"},
         FullyConnectedOptions(Activation.TANH, True, False)),
        ("AVERAGE_POOL_2D", {"filter_width": 3, "filter_height": 2, "stride_w": 2},
         Pool2DOptions(Padding.VALID, 1, 2, 2, 3, Activation.NONE)),
        ("MAX_POOL_2D", {"padding": "SAME", "fused_activation_function": "RELU"},
         Pool2DOptions(Padding.SAME, 1, 1, 1, 1, Activation.RELU)),
        ("ADD", {"fused_activation_function": "RELU6"}, ArithmeticOptions(Activation.RELU6, pot_scale_int16=True)),  # the schema default
        ("MEAN", {"keep_dims": True}, ReducerOptions(True)),
        ("MEAN", None, ReducerOptions(False)),
        ("SOFTMAX", None, SoftmaxOptions(1.0)),
        ("SOFTMAX", {"beta": 0.5}, SoftmaxOptions(0.5)),
        ("RESHAPE", {"new_shape": [1, 32]}, NoOptions()),
    ],
)
def test_options_read_back(builtin: str, options: dict | None, expected: object) -> None:
    (op,) = decode_model(options_model(builtin, options), "x.tflite").ops  # the reader alone: a toy graph
    assert op.kind is OpKind[builtin]
    assert op.options == expected


def test_bad_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="no field 'strides'"):
        options_model("CONV_2D", {"strides": 2})
    with pytest.raises(ValueError, match="unknown value 'FULL'"):
        options_model("CONV_2D", {"padding": "FULL"})
    with pytest.raises(ValueError, match="options for TANH"):
        options_model("TANH", {"beta": 2.0})
    with pytest.raises(ValueError, match="NOT_AN_OP"):
        options_model("NOT_AN_OP", None)


def test_reshape_softmax_runs_in_both_oracles() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 2, 5], "int8", scale=0.1, zero_point=2)
    shape = b.add_tensor("shape", [2], "int32", data=np.array([1, 10], dtype=np.int32))
    r = b.add_tensor("r", [1, 10], "int8", scale=0.1, zero_point=2)
    # TFLite requires int8 softmax output scale 1/256 and zero point -128.
    y = b.add_tensor("y", [1, 10], "int8", scale=1 / 256, zero_point=-128)
    b.add_op("RESHAPE", [x, shape], [r], {"new_shape": [1, 10]})
    b.add_op("SOFTMAX", [r], [y], {"beta": 1.0})
    b.set_io([x], [y])
    model = b.build()
    x_value = np.arange(-20, 80, 10, dtype=np.int8).reshape(1, 2, 5)
    (litert,) = run_litert(model, [x_value])
    (tflm,) = run_tflm(model, [x_value])
    assert litert.shape == tflm.shape == (1, 10) and litert.dtype == tflm.dtype == np.int8
    probs = (litert.astype(np.float64) + 128) / 256
    expected = np.exp(0.1 * (x_value.reshape(1, 10) - 2.0))
    np.testing.assert_allclose(probs, expected / expected.sum(), atol=2 / 256)
    assert np.abs(litert.astype(np.int32) - tflm).max() <= 1
    assert [op.kind for op in parse_model(model, "x.tflite").ops] == [OpKind.RESHAPE, OpKind.SOFTMAX]


def test_unsupported_builtin_is_writable_and_named() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "float32")
    y = b.add_tensor("sqrt_out", [1, 8], "float32")
    b.add_op("SQRT", [x], [y])
    b.set_io([x], [y])
    model = b.build()
    (out,) = run_litert(model, [np.arange(8, dtype=np.float32).reshape(1, 8)])
    assert out.shape == (1, 8)
    with pytest.raises(UnsupportedError, match=r"op 0 SQRT \('sqrt_out'\)"):
        parse_model(model, "x.tflite")


def test_custom_op_is_named() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [4], "float32")
    y = b.add_tensor("y", [4], "float32")
    b.add_custom_op("MyFancyOp", [x], [y], custom_options=b"\x01\x02")
    b.set_io([x], [y])
    (op,) = parse_model(b.build(), "x.tflite").ops
    assert op.options == CustomOptions("MyFancyOp", b"\x01\x02")
    with pytest.raises(UnsupportedError, match="custom code 'MyFancyOp' and no kernel for it: pass --custom-op MyFancyOp="):
        load_graph(b.build(), "x.tflite")


@pytest.mark.skipif(not (MODELS / "kws_dscnn.tflite").exists(), reason=f"no models in {MODELS}")
def test_oracles_reproduce_reference_outputs() -> None:
    model = (MODELS / "kws_dscnn.tflite").read_bytes()
    case = np.load(MODELS / "kws_dscnn.case0.npz")
    (tflm,) = run_tflm(model, [case["input0"]])
    (litert,) = run_litert(model, [case["input0"]])
    np.testing.assert_array_equal(tflm, case["tflm_output0"])
    np.testing.assert_array_equal(litert, case["output0"])
    assert tflm.dtype == litert.dtype == case["output0"].dtype
