"""Stateful streaming models in the TFLite converter's form, written with the test model builder.

A streaming convolution keeps the last K-1 frames of its input in a resource variable: each
invoke reads the variable, concatenates the new frame, convolves over the K frames, and writes
the newest K-1 back. The converter emits this (for a Keras layer with a `tf.Variable` state,
as streaming wake-word models are built) as:

    subgraph 0 (main):  CALL_ONCE(init_subgraph_index=1)
                        VAR_HANDLE(container, shared_name) -> resource handle
                        READ_VARIABLE(handle) -> state value
                        CONCATENATION(state, frame) on the time axis
                        STRIDED_SLICE(the concatenation) -> the newest K-1 frames
                        ASSIGN_VARIABLE(handle, slice)
                        DEPTHWISE_CONV_2D / CONV_2D(the concatenation)
    subgraph 1 (init):  VAR_HANDLE(same shared_name) -> handle
                        ASSIGN_VARIABLE(handle, constant initial value)

Variables are matched by (container, shared_name) across subgraphs, as TFLite's resource
variables are. LiteRT and TensorFlow Lite Micro run these files as they are and keep the
variables between invoke() calls: they are the oracles.
"""

from __future__ import annotations

import numpy as np
from modelbuilder import ModelBuilder

FRAME = 8  # channels of one frame
KERNEL_1 = 3  # frames the depthwise layer convolves over
KERNEL_2 = 2  # frames the second (conv) layer convolves over
OUT_CHANNELS = 6


def _variable(b: ModelBuilder, name: str) -> int:
    handle = b.add_tensor(f"{name}/handle", [], "resource")
    b.add_op("VAR_HANDLE", [], [handle], {"container": "", "shared_name": name})
    return handle


def streaming_model(seed: int = 7, initial_1: int = 5) -> bytes:
    """Two streaming layers with a ring-buffer state each: a depthwise conv over KERNEL_1
    frames, then a conv over KERNEL_2 frames. The first state starts at `initial_1` (not
    zero, so that an init which only clears memory is caught), the second at zero."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("mcugen streaming test model")
    s_x, z_x = 0.05, -3
    s_y, z_y = 0.04, -128
    s_o, z_o = 0.08, 2
    x = b.add_tensor("frame", [1, 1, 1, FRAME], "int8", scale=s_x, zero_point=z_x)
    b.add_op("CALL_ONCE", [], [], {"init_subgraph_index": 1})
    h1 = _variable(b, "stream/state1")
    state1 = b.add_tensor("stream/read1", [1, KERNEL_1 - 1, 1, FRAME], "int8", scale=s_x, zero_point=z_x)
    b.add_op("READ_VARIABLE", [h1], [state1])
    window1 = b.add_tensor("stream/concat1", [1, KERNEL_1, 1, FRAME], "int8", scale=s_x, zero_point=z_x)
    b.add_op("CONCATENATION", [state1, x], [window1], {"axis": 1})
    tail1 = b.add_tensor("stream/tail1", [1, KERNEL_1 - 1, 1, FRAME], "int8", scale=s_x, zero_point=z_x)
    _slice(b, window1, tail1, KERNEL_1)
    b.add_op("ASSIGN_VARIABLE", [h1, tail1], [])
    w1 = b.add_tensor("dw/weights", [1, KERNEL_1, 1, FRAME], "int8", scale=[0.02] * FRAME,
                      quantized_dimension=3, data=rng.integers(-127, 128, size=(1, KERNEL_1, 1, FRAME)))
    b1 = b.add_tensor("dw/bias", [FRAME], "int32", scale=[s_x * 0.02] * FRAME,
                      data=rng.integers(-500, 500, size=FRAME))
    y1 = b.add_tensor("dw/out", [1, 1, 1, FRAME], "int8", scale=s_y, zero_point=z_y)
    b.add_op("DEPTHWISE_CONV_2D", [window1, w1, b1], [y1], {"fused_activation_function": "RELU"})

    h2 = _variable(b, "stream/state2")
    state2 = b.add_tensor("stream/read2", [1, KERNEL_2 - 1, 1, FRAME], "int8", scale=s_y, zero_point=z_y)
    b.add_op("READ_VARIABLE", [h2], [state2])
    window2 = b.add_tensor("stream/concat2", [1, KERNEL_2, 1, FRAME], "int8", scale=s_y, zero_point=z_y)
    b.add_op("CONCATENATION", [state2, y1], [window2], {"axis": 1})
    tail2 = b.add_tensor("stream/tail2", [1, KERNEL_2 - 1, 1, FRAME], "int8", scale=s_y, zero_point=z_y)
    _slice(b, window2, tail2, KERNEL_2)
    b.add_op("ASSIGN_VARIABLE", [h2, tail2], [])
    w2 = b.add_tensor("conv/weights", [OUT_CHANNELS, KERNEL_2, 1, FRAME], "int8", scale=[0.01] * OUT_CHANNELS,
                      data=rng.integers(-127, 128, size=(OUT_CHANNELS, KERNEL_2, 1, FRAME)))
    b2 = b.add_tensor("conv/bias", [OUT_CHANNELS], "int32", scale=[s_y * 0.01] * OUT_CHANNELS,
                      data=rng.integers(-800, 800, size=OUT_CHANNELS))
    y2 = b.add_tensor("conv/out", [1, 1, 1, OUT_CHANNELS], "int8", scale=s_o, zero_point=z_o)
    b.add_op("CONV_2D", [window2, w2, b2], [y2])
    b.set_io([x], [y2])

    b.begin_subgraph("init")
    for name, shape, scale, zero_point, value in (
            ("stream/state1", [1, KERNEL_1 - 1, 1, FRAME], s_x, z_x, initial_1),
            ("stream/state2", [1, KERNEL_2 - 1, 1, FRAME], s_y, z_y, z_y)):
        handle = _variable(b, name)
        constant = b.add_tensor(f"{name}/initial", shape, "int8", scale=scale, zero_point=zero_point,
                                data=np.full(shape, value, dtype=np.int8))
        b.add_op("ASSIGN_VARIABLE", [handle, constant], [])
    return b.build()


def _slice(b: ModelBuilder, window: int, tail: int, kernel: int) -> None:
    """tail = window[:, 1:kernel] (the newest kernel-1 frames), as STRIDED_SLICE with constant
    begin, end and strides, the converter's form."""
    begin = b.add_tensor(f"slice{window}/begin", [4], "int32", data=np.array([0, 1, 0, 0]))
    end = b.add_tensor(f"slice{window}/end", [4], "int32", data=np.array([1, kernel, 1, FRAME]))
    strides = b.add_tensor(f"slice{window}/strides", [4], "int32", data=np.array([1, 1, 1, 1]))
    b.add_op("STRIDED_SLICE", [window, begin, end, strides], [tail])


def frames(count: int, seed: int = 0) -> np.ndarray:
    """`count` random frames stacked on axis 0: the input of `run --sequence`."""
    rng = np.random.default_rng(seed)
    return rng.integers(-128, 128, size=(count, 1, 1, 1, FRAME), dtype=np.int8)


SPATIAL = [1, 16, 16, 8]


def spatial_state_model(assign_first: bool, seed: int = 3) -> bytes:
    """A state the size of the input, read by a chain of two 3x3 convolutions that tiling can
    run in stripes, plus the input (out = conv(conv(previous input)) + input), the input then
    assigned to the state. With `assign_first` the file assigns the new value before the
    convolutions read the old one: the read must stay a copy, made before the assignment."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("mcugen spatial state test model")
    s_x, z_x = 0.05, -3
    x = b.add_tensor("image", SPATIAL, "int8", scale=s_x, zero_point=z_x)
    b.add_op("CALL_ONCE", [], [], {"init_subgraph_index": 1})
    handle = _variable(b, "previous")
    old = b.add_tensor("previous/read", SPATIAL, "int8", scale=s_x, zero_point=z_x)
    b.add_op("READ_VARIABLE", [handle], [old])
    if assign_first:
        b.add_op("ASSIGN_VARIABLE", [handle, x], [])
    w1 = b.add_tensor("c1/w", [16, 3, 3, 8], "int8", scale=[0.01] * 16, data=rng.integers(-127, 128, (16, 3, 3, 8)))
    b1 = b.add_tensor("c1/b", [16], "int32", scale=[s_x * 0.01] * 16, data=rng.integers(-300, 300, 16))
    y1 = b.add_tensor("c1/out", [1, 16, 16, 16], "int8", scale=0.06, zero_point=-128)
    b.add_op("CONV_2D", [old, w1, b1], [y1], {"padding": "SAME", "fused_activation_function": "RELU"})
    w2 = b.add_tensor("c2/w", [8, 3, 3, 16], "int8", scale=[0.01] * 8, data=rng.integers(-127, 128, (8, 3, 3, 16)))
    b2 = b.add_tensor("c2/b", [8], "int32", scale=[0.06 * 0.01] * 8, data=rng.integers(-300, 300, 8))
    y2 = b.add_tensor("c2/out", SPATIAL, "int8", scale=0.1, zero_point=4)
    b.add_op("CONV_2D", [y1, w2, b2], [y2], {"padding": "SAME"})
    out = b.add_tensor("sum", SPATIAL, "int8", scale=0.12, zero_point=-1)
    b.add_op("ADD", [y2, x], [out])
    if not assign_first:
        b.add_op("ASSIGN_VARIABLE", [handle, x], [])
    b.set_io([x], [out])

    b.begin_subgraph("init")
    handle = _variable(b, "previous")
    first = b.add_tensor("previous/initial", SPATIAL, "int8", scale=s_x, zero_point=z_x,
                         data=rng.integers(-128, 128, SPATIAL))
    b.add_op("ASSIGN_VARIABLE", [handle, first], [])
    return b.build()


def images(count: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-128, 128, size=(count, *SPATIAL), dtype=np.int8)
