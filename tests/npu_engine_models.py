"""The single-op (and two-op) models of tests/test_npu_engine.py, one `Row` each.

Most come from the builders of the reference tests (test_ref_conv, test_ref_fully_connected,
test_ref_transpose_conv, test_ref_pool, test_ref_reduce, test_ref_conv_int16), whose scales
are chosen so that outputs spread over many values; the few models here add what those do not
have: requantization multipliers far above and below 1, a convolution followed by an op that
Vela turns into the convolution's LUT activation, and a chain whose intermediate lives in
the NPU's NHCWB16 layout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import test_ref_conv as conv
import test_ref_conv_int16 as conv16
import test_ref_fully_connected as fc
import test_ref_pool as pool
import test_ref_reduce as reduce
import test_ref_resize as resize
import test_ref_transpose_conv as tconv
from modelbuilder import ModelBuilder

MAIN = (128,)
ALL_SIZES = (64, 128, 256)


@dataclass(frozen=True)
class Row:
    """One model: the TFLite op it tests, the NPU operations Vela must make of it, the sizes."""

    id: str
    tflite_op: str
    npu_ops: tuple[str, ...]  # harness op counts that must be nonzero (CONV, DEPTHWISE, POOL)
    build: Callable[[], bytes]
    inputs: Callable[[], list[np.ndarray]]
    configs: tuple[int, ...] = MAIN


def _bind(build: Callable[[Any], bytes], case: object) -> Callable[[], bytes]:
    return lambda: build(case)


def _bind_input(make: Callable[[Any], np.ndarray], case: object) -> Callable[[], list[np.ndarray]]:
    return lambda: [make(case)]


def _conv_row(case: conv.ConvCase, npu_ops: tuple[str, ...], configs: tuple[int, ...] = MAIN) -> Row:
    op = "DEPTHWISE_CONV_2D" if case.depthwise else "CONV_2D"
    return Row(case.id, op, npu_ops, lambda: conv.build_model(case), lambda: [conv.random_input(case)], configs)


_BASE = conv.ConvCase(False, 1, 9, 7, 4, 6, (3, 3), (1, 1), (1, 1), "SAME", "NONE", True, -128, 3, 5000)


def conv_rows() -> list[Row]:
    c = ("CONV",)
    return [
        _conv_row(replace(_BASE, kernel=(1, 1), in_channels=20, out_channels=24, seed=5001), c, ALL_SIZES),
        _conv_row(replace(_BASE, seed=5002), c, ALL_SIZES),
        _conv_row(replace(_BASE, kernel=(5, 5), stride=(2, 2), padding="VALID", height=13, width=13,
                          activation="RELU", input_zero_point=0, seed=5003), c),
        _conv_row(replace(_BASE, kernel=(7, 7), stride=(3, 3), height=14, width=15, activation="RELU6",
                          input_zero_point=5, seed=5004), c, ALL_SIZES),
        _conv_row(replace(_BASE, kernel=(9, 9), height=12, width=12, in_channels=3, out_channels=5,
                          seed=5005), c, ALL_SIZES),
        _conv_row(replace(_BASE, kernel=(10, 11), padding="VALID", height=14, width=15, in_channels=2,
                          out_channels=4, input_zero_point=127, seed=5006), c),
        _conv_row(replace(_BASE, dilation=(2, 2), height=11, width=10, seed=5007), c),
        _conv_row(replace(_BASE, kernel=(3, 2), dilation=(2, 1), stride=(2, 1), padding="VALID", height=13,
                          seed=5008), c),
        _conv_row(replace(_BASE, in_channels=40, out_channels=37, activation="RELU_N1_TO_1", input_zero_point=5,
                          seed=5009), c, ALL_SIZES),
        _conv_row(replace(_BASE, in_channels=70, out_channels=20, kernel=(2, 2), height=6, width=5, seed=5010), c),
        _conv_row(replace(_BASE, height=24, width=24, in_channels=8, out_channels=48, seed=5011), c),
        _conv_row(replace(_BASE, per_channel=False, input_zero_point=127, out_channels=17, seed=5012), c),
        _conv_row(replace(_BASE, pow2_scales=True, seed=5013), c),
        _conv_row(replace(_BASE, batch=2, stride=(1, 2), seed=5014), c),
    ]


def depthwise_rows() -> list[Row]:
    d = ("DEPTHWISE",)
    dw = replace(_BASE, depthwise=True, in_channels=20, out_channels=20, seed=5100)
    return [
        _conv_row(dw, d, ALL_SIZES),
        _conv_row(replace(dw, in_channels=5, out_channels=10, kernel=(5, 5), stride=(2, 2), height=13, width=11,
                          activation="RELU", seed=5101), d, ALL_SIZES),
        _conv_row(replace(dw, in_channels=3, out_channels=9, dilation=(2, 2), height=11, width=11,
                          input_zero_point=-37, seed=5102), d),
        _conv_row(replace(dw, in_channels=33, out_channels=33, stride=(3, 3), padding="VALID", height=12,
                          width=13, activation="RELU6", seed=5103), d),
        _conv_row(replace(dw, in_channels=8, out_channels=8, pow2_scales=True, seed=5104), d),
    ]


def fully_connected_rows() -> list[Row]:
    cases = [fc.CASES[0], fc.CASES[1], fc.CASES[2], fc.CASES[6]]
    return [Row(c.id, "FULLY_CONNECTED", ("CONV",), _bind(fc.build_model, c), _bind_input(fc.random_input, c),
                ALL_SIZES if i == 0 else MAIN) for i, c in enumerate(cases)]


def transpose_conv_rows() -> list[Row]:
    base = tconv.Case("int8", 1, (5, 6), (10, 12), 3, 4, (3, 3), (2, 2), "SAME", "NONE", True, True, -128, 3, 5200)
    cases = [
        base,
        replace(base, kernel=(4, 4), out_hw=(12, 14), padding="VALID", activation="RELU", input_zero_point=7,
                seed=5201),
        replace(base, kernel=(2, 2), in_channels=20, out_channels=17, per_channel=False, seed=5202),
        tconv.CASES[0],
        next(c for c in tconv.CASES if c.dtype == "int16"),
    ]
    return [Row(c.id, "TRANSPOSE_CONV", ("CONV",), _bind(tconv.build_model, c),
                _bind_input(tconv.random_input, c), ALL_SIZES if i == 0 else MAIN) for i, c in enumerate(cases)]


def pool_rows() -> list[Row]:
    avg, mx = "AVERAGE_POOL_2D", "MAX_POOL_2D"
    cases = [
        (pool.PoolCase(mx, 1, 11, 10, 20, (3, 3), (2, 2), "SAME", "NONE", -5, 5300), ALL_SIZES),
        (pool.PoolCase(mx, 2, 8, 9, 5, (2, 2), (2, 2), "VALID", "RELU", -60, 5301), MAIN),

        (pool.PoolCase(mx, 1, 9, 9, 6, (3, 3), (2, 2), "SAME", "RELU6", 0, 5303, "int16"), MAIN),
        (pool.PoolCase(avg, 1, 11, 10, 20, (3, 3), (2, 2), "SAME", "NONE", -5, 5310), ALL_SIZES),
        (pool.PoolCase(avg, 2, 8, 9, 5, (2, 3), (2, 1), "VALID", "RELU6", -100, 5311), MAIN),
        (pool.PoolCase(avg, 1, 12, 12, 8, (12, 12), (1, 1), "VALID", "NONE", 0, 5312), ALL_SIZES),
        (pool.PoolCase(avg, 1, 13, 13, 4, (9, 9), (1, 1), "VALID", "NONE", 17, 5313), MAIN),
        (pool.PoolCase(avg, 1, 16, 16, 3, (4, 4), (4, 4), "VALID", "NONE", -3, 5314), MAIN),
        (pool.PoolCase(avg, 1, 9, 9, 3, (5, 5), (2, 2), "SAME", "RELU", 0, 5315, "int16"), MAIN),
    ]
    rows = [Row(c.id, c.kind, ("POOL",), _bind(pool.build_model, c), _bind_input(pool.random_input, c), sizes)
            for c, sizes in cases]
    # A 9x9 maximum of random values is nearly always the top of the range: a ramp with noise
    # makes every window's maximum a different element.
    big = pool.PoolCase(mx, 1, 12, 12, 4, (9, 9), (1, 1), "SAME", "NONE", 33, 5302)
    rows.append(Row(big.id, mx, ("POOL",), lambda: pool.build_model(big), lambda: [_ramp((1, 12, 12, 4), 5302)]))
    return rows


def _ramp(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """int8 values rising along the rows and columns, with noise of a few steps."""
    _, h, w, _ = shape
    y, x = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    base = -120 + 240 * (y * w + x) / (h * w - 1)
    noise = np.random.default_rng(seed).integers(-4, 5, size=shape)
    return np.clip(np.round(base[None, :, :, None] + noise), -128, 127).astype(np.int8)


def mean_rows() -> list[Row]:
    """MEAN, which Vela 5.2 lowers to a DEPTHWISE sum and a 32-bit ELEMENTWISE MUL."""
    cases = [reduce.MeanCase((1, 2, 2, 64), (1, 2), True, 2.0**-4, 2.0**-4, 3, -5, 5400),
             reduce.MeanCase((1, 6, 7, 8), (1, 2), True, 0.05, 0.05, -10, -10, 5401)]
    return [Row(c.id, "MEAN", ("DEPTHWISE", "ELEMENTWISE"), _bind(reduce.build_model, c), _bind_input(reduce.random_input, c))
            for c in cases]


def int16_rows() -> list[Row]:
    cases = [c for c in conv16.CASES if c.kind == "conv"][:2] + [c for c in conv16.CASES if c.kind == "dw"][:1]
    cases += [c for c in conv16.CASES if c.kind == "fc"][:1]
    ops = {"conv": ("CONV",), "dw": ("DEPTHWISE",), "fc": ("CONV",)}
    names = {"conv": "CONV_2D", "dw": "DEPTHWISE_CONV_2D", "fc": "FULLY_CONNECTED"}
    return [Row(f"int16-{c.id}", names[c.kind], ops[c.kind], _bind(conv16.build_model, c),
                _bind_input(conv16.random_input, c)) for c in cases]


def resize_rows() -> list[Row]:
    """2x resizes, which Vela makes an AVERAGE pool of the IFM upscaled (IFM_UPSCALE NEAREST)."""
    nearest = resize.ResizeCase("RESIZE_NEAREST_NEIGHBOR", "int8", 1, (4, 5), (8, 10), 3, False, False, 5600)
    cases = [nearest, replace(nearest, dtype="int16", seed=5601),
             replace(nearest, kind="RESIZE_BILINEAR", in_hw=(5, 6), out_hw=(10, 12), seed=5602)]
    return [Row(c.id, c.kind, ("POOL",), _bind(resize.build_model, c), _bind_input(resize.random_input, c),
                ALL_SIZES if i == 2 else MAIN) for i, c in enumerate(cases)]


# ---- models the reference tests do not have ------------------------------------------------------

def _scaled_conv(name: str, multiplier: float, seed: int) -> tuple[Callable[[], bytes], Callable[[], list[np.ndarray]]]:
    """A 3x3 CONV_2D whose requantization multipliers are `multiplier` times 0.8..1.25 per channel:
    above 1 (Vela's shift below 31: TFLite shifts the accumulator left first) with tiny inputs
    and weights, or far below 1 (shift above 31) with full-range ones, so that the outputs
    still spread over tens of steps."""
    rng = np.random.default_rng(seed)
    large = multiplier > 1
    channels_in, channels_out = (2, 8) if large else (16, 8)
    w_limit, x_limit = (1, 2) if large else (127, 127)
    output_scale = 0.05
    weight_scales = (rng.uniform(0.8, 1.25, channels_out) * 0.01).astype(np.float32)
    input_scale = multiplier * output_scale / 0.01
    weights = rng.integers(-w_limit, w_limit + 1, size=(channels_out, 3, 3, channels_in), dtype=np.int8)
    bias = rng.integers(-20, 21, channels_out).astype(np.int32)
    x_shape = (1, 7, 8, channels_in)

    def build() -> bytes:
        b = ModelBuilder(name)
        x = b.add_tensor("input", x_shape, "int8", scale=input_scale, zero_point=0)
        w = b.add_tensor("weights", weights.shape, "int8", scale=weight_scales.tolist(), zero_point=0,
                          data=weights)
        bs = b.add_tensor("bias", (channels_out,), "int32", scale=(np.float32(input_scale) * weight_scales).tolist(),
                          zero_point=0, data=bias)
        y = b.add_tensor("output", (1, 7, 8, channels_out), "int8", scale=output_scale, zero_point=2)
        b.add_op("CONV_2D", [x, w, bs], [y], {"padding": "SAME", "stride_h": 1, "stride_w": 1,
                                              "fused_activation_function": "NONE"})
        b.set_io([x], [y])
        return b.build()

    def inputs() -> list[np.ndarray]:
        return [np.random.default_rng(seed + 1).integers(-x_limit, x_limit + 1, size=x_shape, dtype=np.int8)]

    return build, inputs


def _conv_then(name: str, activation_op: str, seed: int) -> tuple[Callable[[], bytes], Callable[[], list[np.ndarray]]]:
    """CONV_2D followed by `activation_op` (a LUT activation for Vela) or by a second CONV_2D."""
    case = replace(_BASE, in_channels=6, out_channels=20, seed=seed)
    rng = np.random.default_rng(seed)

    def build() -> bytes:
        return _append_op(conv.build_model(case), activation_op, rng)

    return build, lambda: [conv.random_input(case)]


def _append_op(model: bytes, op: str, rng: np.random.Generator) -> bytes:
    """Rebuild a single-CONV_2D model with `op` applied to its output."""
    import tflite

    m = tflite.Model.GetRootAsModel(model, 0)
    sg = m.Subgraphs(0)
    b = ModelBuilder(f"conv+{op}")
    indices = {}
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        q = t.Quantization()
        scale = q.ScaleAsNumpy() if q is not None and q.ScaleLength() else None
        zp = q.ZeroPointAsNumpy() if q is not None and q.ZeroPointLength() else None
        dtype = {tflite.TensorType.INT8: "int8", tflite.TensorType.INT32: "int32"}[t.Type()]
        data = m.Buffers(t.Buffer()).DataAsNumpy()
        array = np.frombuffer(data.tobytes(), dtype=dtype).reshape(t.ShapeAsNumpy()) if isinstance(data, np.ndarray) else None
        indices[i] = b.add_tensor(t.Name().decode(), t.ShapeAsNumpy(), dtype, scale=scale, zero_point=zp,
                                  quantized_dimension=q.QuantizedDimension() if q is not None else 0, data=array)
    op0 = sg.Operators(0)
    conv_out = indices[int(op0.OutputsAsNumpy()[0])]
    b.add_op("CONV_2D", [indices[int(i)] for i in op0.InputsAsNumpy()], [conv_out],
             {"padding": "SAME", "stride_h": 1, "stride_w": 1, "fused_activation_function": "NONE"})
    shape = sg.Tensors(int(op0.OutputsAsNumpy()[0])).ShapeAsNumpy()
    if op == "CONV_2D":
        w = rng.integers(-127, 128, size=(8, 1, 1, int(shape[-1])), dtype=np.int8)
        ws = b.add_tensor("w2", w.shape, "int8", scale=[0.004], zero_point=0, data=w)
        y = b.add_tensor("y", (*shape[:3], 8), "int8", scale=0.1, zero_point=-4)
        b.add_op("CONV_2D", [conv_out, ws], [y], {"padding": "VALID", "stride_h": 1, "stride_w": 1,
                                                  "fused_activation_function": "RELU"})
    elif op == "LOGISTIC":
        y = b.add_tensor("y", shape, "int8", scale=1.0 / 256, zero_point=-128)
        b.add_op("LOGISTIC", [conv_out], [y])
    else:  # TANH
        y = b.add_tensor("y", shape, "int8", scale=1.0 / 128, zero_point=0)
        b.add_op("TANH", [conv_out], [y])
    b.set_io([indices[int(sg.InputsAsNumpy()[0])]], [y])
    return b.build()


def extra_rows() -> list[Row]:
    rows = []
    for name, multiplier, seed in (("conv-multiplier-5", 5.0, 5500), ("conv-multiplier-2^-12", 2.0**-12, 5501)):
        build, inputs = _scaled_conv(name, multiplier, seed)
        rows.append(Row(name, "CONV_2D", ("CONV",), build, inputs))
    for name, then, seed in (("conv-then-logistic-lut", "LOGISTIC", 5510), ("conv-then-tanh-lut", "TANH", 5511),
                             ("conv-then-conv-nhcwb16", "CONV_2D", 5512)):
        build, inputs = _conv_then(name, then, seed)
        rows.append(Row(name, "CONV_2D", ("CONV",), build, inputs, ALL_SIZES if then == "CONV_2D" else MAIN))
    return rows


def all_rows() -> list[Row]:
    return (conv_rows() + depthwise_rows() + fully_connected_rows() + transpose_conv_rows() + pool_rows()
            + resize_rows() + mean_rows() + int16_rows() + extra_rows())
