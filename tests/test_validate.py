"""The validation stage (mcugen/frontend/validate.py): one test per kind of check, each on a small
model that breaks exactly that rule, with the message in the house format (what, where, the
rule, the value) on one line. The fuzz harness (test_fuzz.py) covers the combinations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from modelbuilder import ModelBuilder

from mcugen.driver import BuildOptions, compile_model
from mcugen.errors import ModelError
from mcugen.frontend.tflite import parse_model
from mcugen.frontend.validate import DEFAULT_MAX_TENSOR_BYTES


def _relu(shape: list[int], dtype: str = "int8", scale: float = 0.1, zero_point: int = 0,
          out_shape: list[int] | None = None) -> ModelBuilder:
    b = ModelBuilder()
    x = b.add_tensor("x", shape, dtype, scale=scale, zero_point=zero_point)
    y = b.add_tensor("y", out_shape or shape, dtype, scale=scale, zero_point=zero_point)
    b.add_op("RELU", [x], [y])
    b.set_io([x], [y])
    return b


def _depthwise(options: dict, out_hw: tuple[int, int] = (8, 8)) -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8, 8, 4], "int8", scale=0.1)
    w = b.add_tensor("w", [1, 3, 3, 4], "int8", scale=[0.01] * 4, quantized_dimension=3,
                     data=np.ones((1, 3, 3, 4), np.int8))
    bias = b.add_tensor("b", [4], "int32", scale=[0.001] * 4, data=np.zeros(4, np.int32))
    y = b.add_tensor("y", [1, *out_hw, 4], "int8", scale=0.1)
    b.add_op("DEPTHWISE_CONV_2D", [x, w, bias], [y], {"padding": "SAME", **options})
    b.set_io([x], [y])
    return b.build()


def _refused(model: bytes, pattern: str) -> str:
    with pytest.raises(ModelError, match=pattern) as caught:
        parse_model(model, "m.tflite")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("m.tflite: ")
    return message


def test_a_valid_model_passes() -> None:
    assert len(parse_model(_relu([1, 4]).build(), "m.tflite").ops) == 1
    parse_model(_depthwise({}), "m.tflite")


def test_an_output_shape_that_does_not_follow_is_refused() -> None:
    _refused(_relu([1, 4], out_shape=[1, 2**24]).build(),
             r"RELU \(op 0, 'y'\): the output shape does not follow from the op: The output has the "
             r"input's shape\. Got: input \[1, 4\], output \[1, 16777216\]")
    _refused(_depthwise({}, out_hw=(8, 9)), r"ComputeOutSize.*Got: output \[1, 8, 9, 4\], expected \[1, 8, 8, 4\]")


def test_element_counts_fit_int32() -> None:
    _refused(_relu([1, 2**16, 2**16]).build(),
             r"tensor 0 'x': shape \[1, 65536, 65536\] has 4294967296 elements; the rule: at most 2147483647")


def test_the_size_limit_is_the_default_and_configurable() -> None:
    too_big = DEFAULT_MAX_TENSOR_BYTES + 1
    _refused(_relu([too_big]).build(), rf"is {too_big} bytes; the rule: at most {DEFAULT_MAX_TENSOR_BYTES} "
                                      r"\(--max-tensor-bytes\)")
    model = _relu([1, 64]).build()
    compile_model(model, BuildOptions(max_tensor_bytes=64))
    with pytest.raises(ModelError, match=r"is 64 bytes; the rule: at most 63"):
        compile_model(model, BuildOptions(max_tensor_bytes=63))


def test_the_size_limit_on_the_command_line(tmp_path: Path) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(_relu([1, 64]).build())
    for limit, status in (("63", 2), ("1K", 0), ("0", 2)):
        result = subprocess.run([sys.executable, "-m", "mcugen", "build", str(model), "-o", str(tmp_path / limit),
                                 "--max-tensor-bytes", limit], capture_output=True, text=True, check=False, cwd=REPO)
        assert result.returncode == status, result.stderr
        assert status == 0 or (len(result.stderr.splitlines()) == 1 and "--max-tensor-bytes" in result.stderr)


def test_zero_points_lie_in_the_dtype_range() -> None:
    _refused(_relu([1, 4], zero_point=200).build(),
             r"tensor 0 'x': zero point 200; the rule: zero points of int8 lie in \[-128, 127\]")
    _refused(_relu([1, 4], dtype="int16", zero_point=-40000).build(), r"zero points of int16 lie in")


def test_scales_are_finite_positive_and_in_range() -> None:
    # (0, inf, nan and negative scales: the reader refuses them; the range is the validation's.)
    _refused(_relu([1, 4], scale=1e-30).build(), r"scale 1e-30; the rule: scales are finite, positive and within")


def test_per_channel_arrays_run_along_a_dimension_within_the_rank() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1)
    w = b.add_tensor("w", [3, 4], "int8", scale=[0.01] * 4, quantized_dimension=-1, data=np.ones((3, 4), np.int8))
    y = b.add_tensor("y", [1, 3], "int8", scale=0.1)
    b.add_op("FULLY_CONNECTED", [x, w], [y])
    b.set_io([x], [y])
    _refused(b.build(), r"tensor 1 'w': 4 per-channel scales along axis -1 of shape \[3, 4\]; the rule: one scale")


def test_graph_inputs_are_distinct_and_not_constant() -> None:
    b = _relu([1, 4])
    b.set_io([0, 0], [1])
    _refused(b.build(), r"graph input 'x' is listed twice; the rule: each input once")
    b = ModelBuilder()
    c = b.add_tensor("c", [1, 4], "int8", scale=0.1, data=np.zeros((1, 4), np.int8))
    y = b.add_tensor("y", [1, 4], "int8", scale=0.1)
    b.add_op("RELU", [c], [y])
    b.set_io([c], [y])
    _refused(b.build(), r"tensor 0 'c': a graph input that is a constant")


def test_each_tensor_has_one_writer_written_before_it_is_read() -> None:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1)
    y = b.add_tensor("y", [1, 4], "int8", scale=0.1)
    z = b.add_tensor("z", [1, 4], "int8", scale=0.1)
    b.add_op("RELU", [y], [z])  # reads y before the op that writes it
    b.add_op("RELU", [x], [y])
    b.set_io([x], [z])
    _refused(b.build(), r"input 'y' is used before it is produced; the rule: one writer per tensor")


def test_strides_and_float_options() -> None:
    _refused(_depthwise({"stride_h": 0}), r"DEPTHWISE_CONV_2D \(op 0, 'y'\): stride_h 0; the rule: strides")
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1)
    y = b.add_tensor("y", [1, 4], "int8", scale=0.1)
    b.add_op("LEAKY_RELU", [x], [y], {"alpha": float("nan")})
    b.set_io([x], [y])
    _refused(b.build(), r"LEAKY_RELU \(op 0, 'y'\): alpha nan; the rule: float options are finite")


def test_a_window_whose_tap_offsets_overflow_int32_is_refused() -> None:
    """A dilation of 2^28 with SAME padding: the output is still 8 x 8, but the taps in the
    padding lie 2^28 rows away, 2^28 x 32 elements: past int32 (the depthwise tap-offset bound)."""
    _refused(_depthwise({"dilation_h_factor": 2**28}),
             r"the window reaches 536870920 x 10 of an input \[1, 8, 8, 4\]; the rule: \(rows x width")
    parse_model(_depthwise({"dilation_h_factor": 2**20}), "m.tflite")  # 2^21 rows x 32: within int32
