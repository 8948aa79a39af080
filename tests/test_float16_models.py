"""Float models in the TFLite converter's float16 form, and float models with quantized edges.

The converter's float16 quantization (`target_spec.supported_types = [tf.float16]`) stores each
weight and bias as a FLOAT16 constant read through a DEQUANTIZE to float32; the models here are
built in exactly that form with the test model builder (TensorFlow is not a dependency), and
run end to end against LiteRT's reference kernels (TFLM has no float16 DEQUANTIZE), bit for bit (float32 compared as
bits; see test_float_kernels). mcugen widens the float16 constants at build time, so no
DEQUANTIZE runs on the device.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from modelbuilder import ModelBuilder
from oracles import run_litert
from test_firmware import require_tools
from test_float_kernels import assert_bits, check

from mcugen.driver import BuildOptions
from mcugen.frontend.tflite import parse_model
from mcugen.ir import DType, OpKind
from mcugen.passes import Rewrite, run_passes
from mcugen.quantization import Rounding
from mcugen.targets import target as find_target
from mcugen.toolchain.cross import build_firmware
from mcugen.toolchain.host import run_tflite_bytes
from mcugen.toolchain.qemu import run_qemu

RNG = np.random.default_rng(1416)


def _weights(shape: tuple[int, ...], scale: float = 0.4) -> np.ndarray:
    return (RNG.normal(0.0, scale, size=shape)).astype(np.float16)


class Float16Model:
    """A ModelBuilder wrapper that adds weights the converter's way: FLOAT16 + DEQUANTIZE."""

    def __init__(self, name: str) -> None:
        self.b = ModelBuilder(name)
        self.count = 0

    def weight(self, values: np.ndarray) -> int:
        self.count += 1
        half = self.b.add_tensor(f"w{self.count}_f16", values.shape, "float16", data=values)
        wide = self.b.add_tensor(f"w{self.count}_dequantized", values.shape, "float32")
        self.b.add_op("DEQUANTIZE", [half], [wide])
        return wide

    def activation(self, name: str, shape: tuple[int, ...]) -> int:
        return self.b.add_tensor(name, shape, "float32")


def small_cnn() -> bytes:
    """conv (s2, RELU) -> depthwise (RELU6) -> max pool -> 1x1 conv -> reshape -> FC -> softmax,
    float32 activations, float16 weights: the shape of a small vision model after the converter."""
    m = Float16Model("float16 small cnn")
    x = m.activation("input", (1, 12, 12, 3))
    c1 = m.activation("conv1", (1, 6, 6, 8))
    m.b.add_op("CONV_2D", [x, m.weight(_weights((8, 3, 3, 3))), m.weight(_weights((8,)))], [c1],
               {"padding": "SAME", "stride_h": 2, "stride_w": 2, "fused_activation_function": "RELU"})
    d1 = m.activation("dw1", (1, 6, 6, 8))
    m.b.add_op("DEPTHWISE_CONV_2D", [c1, m.weight(_weights((1, 3, 3, 8))), m.weight(_weights((8,)))], [d1],
               {"padding": "SAME", "depth_multiplier": 1, "fused_activation_function": "RELU6"})
    p1 = m.activation("pool1", (1, 3, 3, 8))
    m.b.add_op("MAX_POOL_2D", [d1], [p1], {"padding": "VALID", "stride_h": 2, "stride_w": 2,
                                           "filter_height": 2, "filter_width": 2})
    c2 = m.activation("conv2", (1, 3, 3, 4))
    m.b.add_op("CONV_2D", [p1, m.weight(_weights((4, 1, 1, 8))), m.weight(_weights((4,)))], [c2],
               {"padding": "VALID"})
    a1 = m.activation("avg", (1, 3, 3, 4))
    m.b.add_op("AVERAGE_POOL_2D", [c2], [a1], {"padding": "SAME", "stride_h": 1, "stride_w": 1,
                                               "filter_height": 2, "filter_width": 2})
    shape = m.b.add_tensor("shape", (2,), "int32", data=np.array([1, 36], np.int32))
    flat = m.activation("flat", (1, 36))
    m.b.add_op("RESHAPE", [a1, shape], [flat], {"new_shape": [1, 36]})
    logits = m.activation("logits", (1, 5))
    m.b.add_op("FULLY_CONNECTED", [flat, m.weight(_weights((5, 36))), m.weight(_weights((5,)))], [logits])
    probs = m.activation("probs", (1, 5))
    m.b.add_op("SOFTMAX", [logits], [probs], {"beta": 1.0})
    m.b.set_io([x], [probs, logits])
    return m.b.build()


def test_float16_cnn_matches_litert_and_tflm_bit_for_bit() -> None:
    model = small_cnn()
    for seed in range(3):
        x = np.random.default_rng(seed).normal(0.0, 1.5, size=(1, 12, 12, 3)).astype(np.float32)
        check(model, [x], "float16_cnn.tflite", tflm=False)  # TFLM has no float16 DEQUANTIZE


def test_float16_weights_fold_and_leave_no_dequantize() -> None:
    """Every DEQUANTIZE of a float16 weight folds at build time; no float16 tensor is left."""
    graph = parse_model(small_cnn(), "float16_cnn.tflite")
    report = run_passes(graph, Rounding.LITERT)
    assert [op.kind for op in graph.ops] == [OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.MAX_POOL_2D,
                                             OpKind.CONV_2D, OpKind.AVERAGE_POOL_2D, OpKind.RESHAPE,
                                             OpKind.FULLY_CONNECTED, OpKind.SOFTMAX]
    folded = [r for r in report.rewrites if r.rewrite is Rewrite.FOLDED]
    assert len(folded) == 8  # 4 weights and 4 biases
    used = {id(t): t for op in graph.ops for t in op.inputs if t is not None}
    assert all(t.dtype is not DType.FLOAT16 for t in used.values())


def test_float16_weights_read_directly_are_widened() -> None:
    """A float16 constant that a float32 op reads without a DEQUANTIZE is widened: the result is
    LiteRT's for the same model with the widened (exact) float32 weights."""
    weights, bias = _weights((4, 3, 3, 2)), _weights((4,))

    def model(dtype: str) -> bytes:
        b = ModelBuilder("direct float16 weights")
        x = b.add_tensor("x", (1, 6, 6, 2), "float32")
        w = b.add_tensor("w", weights.shape, dtype, data=weights.astype(dtype))
        c = b.add_tensor("b", bias.shape, dtype, data=bias.astype(dtype))
        y = b.add_tensor("y", (1, 6, 6, 4), "float32")
        b.add_op("CONV_2D", [x, w, c], [y], {"padding": "SAME"})
        b.set_io([x], [y])
        return b.build()

    x = RNG.normal(0.0, 1.0, size=(1, 6, 6, 2)).astype(np.float32)
    (expected,) = run_litert(model("float32"), [x])
    (actual,) = run_tflite_bytes(model("float16"), [x], Rounding.LITERT)
    assert_bits(actual, expected)


def test_float16_activation_is_refused_in_one_line(tmp_path: Path) -> None:
    """A float16 tensor that is not a constant cannot be widened at build time: build names it
    and exits 2, in one line."""
    b = ModelBuilder("float16 input")
    x = b.add_tensor("half_input", (1, 4), "float16")
    y = b.add_tensor("y", (1, 4), "float32")
    b.add_op("DEQUANTIZE", [x], [y])
    b.set_io([x], [y])
    path = tmp_path / "half.tflite"
    path.write_bytes(b.build())
    proc = subprocess.run([sys.executable, "-m", "mcugen.cli", "build", str(path), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "DEQUANTIZE" in lines[0] and "float16" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def hybrid_edges() -> bytes:
    """int8 in, DEQUANTIZE, float conv + FC (float16 weights), QUANTIZE, int8 out: a float
    model whose converter kept quantized inputs and outputs."""
    m = Float16Model("float model with int8 edges")
    q_in = m.b.add_tensor("q_in", (1, 8, 8, 2), "int8", scale=0.05, zero_point=-4)
    x = m.activation("x", (1, 8, 8, 2))
    m.b.add_op("DEQUANTIZE", [q_in], [x])
    c = m.activation("c", (1, 4, 4, 3))
    m.b.add_op("CONV_2D", [x, m.weight(_weights((3, 3, 3, 2))), m.weight(_weights((3,)))], [c],
               {"padding": "SAME", "stride_h": 2, "stride_w": 2, "fused_activation_function": "RELU"})
    shape = m.b.add_tensor("shape", (2,), "int32", data=np.array([1, 48], np.int32))
    flat = m.activation("flat", (1, 48))
    m.b.add_op("RESHAPE", [c, shape], [flat], {"new_shape": [1, 48]})
    y = m.activation("y", (1, 6))
    m.b.add_op("FULLY_CONNECTED", [flat, m.weight(_weights((6, 48))), m.weight(_weights((6,)))], [y])
    q_out = m.b.add_tensor("q_out", (1, 6), "int8", scale=0.02, zero_point=3)
    m.b.add_op("QUANTIZE", [y], [q_out])
    m.b.set_io([q_in], [q_out])
    return m.b.build()


def test_float_model_with_quantized_edges() -> None:
    model = hybrid_edges()
    for seed in range(3):
        q = np.random.default_rng(seed).integers(-128, 128, size=(1, 8, 8, 2)).astype(np.int8)
        check(model, [q], "hybrid.tflite", tflm=False)


def test_converter_float32_model_matches_litert_and_tflm() -> None:
    """The TFLite converter's own float32 output (tests/fixtures_float, made by TensorFlow):
    conv, depthwise, 1x1 conv, average pool, FC and softmax, bit for bit."""
    model = (Path(__file__).parent / "fixtures_float" / "small_cnn_float.tflite").read_bytes()
    for seed in range(2):
        x = np.random.default_rng(seed).normal(0.0, 1.0, size=(1, 16, 16, 3)).astype(np.float32)
        check(model, [x], "small_cnn_float.tflite")


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_float16_cnn_on_the_emulated_core(target: str, tmp_path: Path) -> None:
    """The float16 CNN cross-compiled for the core (hard float: -mfloat-abi=hard, fpv4-sp-d16 on
    the M4) and run on QEMU: the application prints PASS only when every output byte equals
    LiteRT's (float32 bits)."""
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    model = tmp_path / "float16_cnn.tflite"
    model.write_bytes(small_cnn())
    x = np.random.default_rng(5).normal(0.0, 1.5, size=(1, 12, 12, 3)).astype(np.float32)
    expected = run_litert(model.read_bytes(), [x])
    case = {"input0": x, **{f"output{i}": e for i, e in enumerate(expected)}}
    options = BuildOptions(target=find_target(target), rounding=Rounding.LITERT)
    elf = build_firmware(model, options, case, tmp_path / "build")
    output = run_qemu(elf, options.target, count_instructions=False, cwd=elf.parent)
    assert "PASS" in output


@pytest.mark.parametrize("target", ["host", "cortex-m4", "cortex-m55"])
def test_float_plan_has_four_bytes_per_element_and_no_scratch(target: str) -> None:
    """Every float32 activation gets 4 bytes per element; the float kernels ask for no scratch
    (the int8 fast paths' scratch does not leak onto float ops)."""
    plan = _plan(CONVERTER_FLOAT, target)
    graph = parse_model(CONVERTER_FLOAT.read_bytes(), CONVERTER_FLOAT.name)
    elements = {t.name: t.num_elements for t in graph.tensors if t.dtype is DType.FLOAT32}
    buffers = plan["buffers"]
    assert not any(b["scratch"] for b in buffers)
    sized = [(b["bytes"], elements[b["name"]]) for b in buffers if b["name"] in elements]
    assert len(sized) >= 3 and all(size >= 4 * count for size, count in sized), sized
    assert any(size == 4 * count for size, count in sized)


def _plan(path: Path, target: str, *options: str) -> dict:
    from click.testing import CliRunner

    from mcugen.cli import main

    result = CliRunner().invoke(main, ["plan", str(path), "--json", "--target", target, *options])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


CONVERTER_FLOAT = Path(__file__).parent / "fixtures_float" / "small_cnn_float.tflite"


def test_tiled_float_chain_matches_litert_and_tflm() -> None:
    """Tiling runs the converter model's float conv/depthwise/conv/pool chain in stripes (each
    with its own top padding), in less arena than untiled, and the result keeps TFLite's bits
    (test_converter_float32_model_matches_litert_and_tflm runs the same build)."""
    tiled, untiled = _plan(CONVERTER_FLOAT, "host"), _plan(CONVERTER_FLOAT, "host", "--no-tiling")
    chains = tiled["tiling"]["chains"]
    assert chains and {"CONV_2D", "DEPTHWISE_CONV_2D"} <= set(chains[0]["kinds"])
    assert tiled["arena_bytes"] < untiled["arena_bytes"]
    x = np.random.default_rng(9).normal(0.0, 1.0, size=(1, 16, 16, 3)).astype(np.float32)
    check(CONVERTER_FLOAT.read_bytes(), [x], CONVERTER_FLOAT.name)
