"""The intermediate representation: small typed dataclasses, no framework imports.

A Graph holds Tensors and Ops in execution order. The frontend builds it, passes rewrite it,
the planner and code generator read it. ``verify_graph`` checks its invariants between stages.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import field
from typing import Any

import numpy as np

from .errors import ModelError
from .records import dataclass


class DType(enum.Enum):
    """Tensor element types: (numpy dtype name, C type, bytes per element)."""

    INT8 = ("int8", "int8_t", 1)
    UINT8 = ("uint8", "uint8_t", 1)
    INT16 = ("int16", "int16_t", 2)
    INT32 = ("int32", "int32_t", 4)
    INT64 = ("int64", "int64_t", 8)
    FLOAT32 = ("float32", "float", 4)
    # Constants only: the passes widen them to FLOAT32 (passes/float16.py); never reaches C.
    FLOAT16 = ("float16", "uint16_t", 2)
    BOOL = ("bool", "bool", 1)

    def __init__(self, short: str, ctype: str, itemsize: int) -> None:
        # Plain attributes, not properties over .value (an enum descriptor): the planner asks
        # for itemsize thousands of times a build.
        self.short = short
        self.ctype = ctype
        self.itemsize = itemsize

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(self.short)


@dataclass(frozen=True)
class Quant:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per channel on `axis`."""

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1

    @property
    def single_scale(self) -> float:
        return self.scale[0]

    @property
    def single_zero_point(self) -> int:
        return self.zero_point[0]


class Padding(enum.Enum):
    SAME = "same"
    VALID = "valid"


class Activation(enum.Enum):
    """Fused activations; the C kernels apply them as a clamp in the output's quantized domain."""

    NONE = "none"
    RELU = "relu"
    RELU6 = "relu6"
    RELU_N1_TO_1 = "relu_n1_to_1"
    TANH = "tanh"
    SIGN_BIT = "sign_bit"


@dataclass(frozen=True)
class Conv2DOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    activation: Activation
    # The schema's quantized_bias_type (None: not set). For int16 ops it picks the accumulator
    # width when there is no bias (TFLM) and how LiteRT reads an int32 bias.
    quantized_bias_type: DType | None = None


@dataclass(frozen=True)
class DepthwiseConv2DOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    depth_multiplier: int
    activation: Activation


@dataclass(frozen=True)
class FullyConnectedOptions:
    activation: Activation
    keep_num_dims: bool
    shuffled_weights: bool
    quantized_bias_type: DType | None = None  # as in Conv2DOptions


@dataclass(frozen=True)
class Pool2DOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    activation: Activation


@dataclass(frozen=True)
class ArithmeticOptions:
    """ADD, SUB, MUL: a fused activation; pot_scale_int16 selects TFLite's legacy int16 path
    for power-of-two scales (ADD and SUB only)."""

    activation: Activation
    pot_scale_int16: bool = False


@dataclass(frozen=True)
class ReducerOptions:
    keep_dims: bool


@dataclass(frozen=True)
class SoftmaxOptions:
    beta: float


@dataclass(frozen=True)
class NoOptions:
    pass


@dataclass(frozen=True)
class Pin:
    """Where Vela fixed a tensor (its `OfflineMemoryAllocation` metadata): `offset` bytes into
    the NPU memory area `area` ("scratch" or "scratch_fast"), which the planner places whole."""

    area: str
    offset: int


@dataclass(frozen=True, eq=False)
class EthosUOptions:
    """Vela's `ethos-u` custom op. Its IR inputs are the driver payload (the command stream),
    the read-only area (weights) and the IFMs; the scratch and fast scratch tensors of the
    file are areas (`Tensor.pin` offset 0) that no op produces, held here for the base
    addresses. `fast_scratch` is `scratch` itself when Vela gave both regions one tensor."""

    scratch: Tensor
    fast_scratch: Tensor


@dataclass(frozen=True, eq=False)
class NpuPoolRegion:
    """A memory pool as an NPU region of an mcugen-compiled segment: its base address is
    `anchor`'s address minus `anchor_offset` (the anchor: a tensor planned in the pool)."""

    pool: str
    anchor: Tensor
    anchor_offset: int
    size: int


@dataclass(frozen=True, eq=False)
class NpuSegmentOptions:
    """An NPU segment mcugen compiled itself (--npu, mcugen/npu/segments.py): `ops` lowered
    into one command stream. Its inputs are the driver payload, the read-only image (encoded
    weights and scales: region 0) and the IFMs; its outputs the OFMs. Region 1 + n is the pool
    `pools[n]`: the stream addresses feature maps at their planned offsets in their pool."""

    ops: tuple[Op, ...]
    pools: tuple[NpuPoolRegion, ...]
    # --npu-async: the ops after it in the order that run before invoke waits for the NPU
    concurrent: int = 0
    # --npu-weights: the ops whose weights a DMA copies into an SRAM buffer (npu/weight_dma.py)
    sram_weights: tuple[Op, ...] = ()


@dataclass(frozen=True)
class TransposeConvOptions:
    padding: Padding
    stride_h: int
    stride_w: int
    activation: Activation


@dataclass(frozen=True)
class BatchMatMulOptions:
    adj_x: bool
    adj_y: bool


@dataclass(frozen=True)
class LeakyReluOptions:
    alpha: float


@dataclass(frozen=True)
class SqueezeOptions:
    squeeze_dims: tuple[int, ...]  # empty: every dimension of extent 1


@dataclass(frozen=True)
class ConcatenationOptions:
    axis: int
    activation: Activation


@dataclass(frozen=True)
class PackOptions:
    values_count: int
    axis: int


@dataclass(frozen=True)
class UnpackOptions:
    num: int
    axis: int


@dataclass(frozen=True)
class SplitOptions:
    """SPLIT and SPLIT_V."""

    num_splits: int


@dataclass(frozen=True)
class StridedSliceOptions:
    begin_mask: int
    end_mask: int
    ellipsis_mask: int
    new_axis_mask: int
    shrink_axis_mask: int
    offset: bool


@dataclass(frozen=True)
class ShapeOptions:
    out_type: DType


@dataclass(frozen=True)
class GatherOptions:
    axis: int
    batch_dims: int


@dataclass(frozen=True)
class ArgMaxOptions:
    output_type: DType


@dataclass(frozen=True)
class ResizeOptions:
    """RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR."""

    align_corners: bool
    half_pixel_centers: bool


@dataclass(frozen=True)
class BlockSizeOptions:
    """DEPTH_TO_SPACE and SPACE_TO_DEPTH."""

    block_size: int


@dataclass(frozen=True, eq=False)
class CustomKernel:
    """A user's C kernel for CUSTOM ops of one custom code (`--custom-op NAME=kernel.c[:reference.py]`,
    read by mcugen/custom_ops.py): the source copied into the build, the C function it defines,
    the scratch bytes it declares, and the optional numpy reference for `mcugen verify`."""

    name: str  # the custom code it serves
    c_name: str  # the function is `<c_name>_kernel`
    source_name: str  # the kernel file's name, for messages and #line
    source: str
    sha256: str  # of the source and the reference, for build caches
    scratch_bytes: int = 0
    reference: Callable[..., Any] | None = None  # reference(inputs, custom_options, outputs_like) -> list
    reference_name: str | None = None
    option: str = ""  # the --custom-op that gives it, with absolute paths (for builds in other directories)


@dataclass(frozen=True)
class CustomOptions:
    """A CUSTOM op that is not Vela's: its custom code, the raw custom options (a flexbuffer, as
    the converter writes them) and the kernel bound to it by the build (None: none given)."""

    code: str
    data: bytes = b""
    kernel: CustomKernel | None = None


OpOptions = (
    Conv2DOptions
    | DepthwiseConv2DOptions
    | FullyConnectedOptions
    | Pool2DOptions
    | ArithmeticOptions
    | ReducerOptions
    | SoftmaxOptions
    | NoOptions
    | TransposeConvOptions
    | BatchMatMulOptions
    | LeakyReluOptions
    | SqueezeOptions
    | ConcatenationOptions
    | PackOptions
    | UnpackOptions
    | SplitOptions
    | StridedSliceOptions
    | ShapeOptions
    | GatherOptions
    | ArgMaxOptions
    | ResizeOptions
    | EthosUOptions
    | NpuSegmentOptions
    | BlockSizeOptions
    | CustomOptions
)


class OpKind(enum.Enum):
    """Operator kinds, each with its family (for grouping and docs) and its options type.

    The member's own name leads each value: members with equal values would silently become
    aliases of one another (MAX_POOL_2D of AVERAGE_POOL_2D, say).
    """

    CONV_2D = ("CONV_2D", "conv", Conv2DOptions)
    DEPTHWISE_CONV_2D = ("DEPTHWISE_CONV_2D", "conv", DepthwiseConv2DOptions)
    TRANSPOSE_CONV = ("TRANSPOSE_CONV", "conv", TransposeConvOptions)
    FULLY_CONNECTED = ("FULLY_CONNECTED", "matmul", FullyConnectedOptions)
    BATCH_MATMUL = ("BATCH_MATMUL", "matmul", BatchMatMulOptions)
    AVERAGE_POOL_2D = ("AVERAGE_POOL_2D", "pool", Pool2DOptions)
    MAX_POOL_2D = ("MAX_POOL_2D", "pool", Pool2DOptions)
    ADD = ("ADD", "elementwise", ArithmeticOptions)
    SUB = ("SUB", "elementwise", ArithmeticOptions)
    MUL = ("MUL", "elementwise", ArithmeticOptions)
    SQUARED_DIFFERENCE = ("SQUARED_DIFFERENCE", "elementwise", NoOptions)
    MAXIMUM = ("MAXIMUM", "elementwise", NoOptions)
    MINIMUM = ("MINIMUM", "elementwise", NoOptions)
    MEAN = ("MEAN", "reduce", ReducerOptions)
    SUM = ("SUM", "reduce", ReducerOptions)
    REDUCE_MAX = ("REDUCE_MAX", "reduce", ReducerOptions)
    SOFTMAX = ("SOFTMAX", "activation", SoftmaxOptions)
    LOGISTIC = ("LOGISTIC", "activation", NoOptions)
    TANH = ("TANH", "activation", NoOptions)
    HARD_SWISH = ("HARD_SWISH", "activation", NoOptions)
    RELU = ("RELU", "activation", NoOptions)
    RELU6 = ("RELU6", "activation", NoOptions)
    LEAKY_RELU = ("LEAKY_RELU", "activation", LeakyReluOptions)
    PRELU = ("PRELU", "activation", NoOptions)
    RSQRT = ("RSQRT", "unary", NoOptions)
    NEG = ("NEG", "unary", NoOptions)
    ABS = ("ABS", "unary", NoOptions)
    QUANTIZE = ("QUANTIZE", "quantize", NoOptions)
    DEQUANTIZE = ("DEQUANTIZE", "quantize", NoOptions)
    RESHAPE = ("RESHAPE", "shape", NoOptions)
    SQUEEZE = ("SQUEEZE", "shape", SqueezeOptions)
    EXPAND_DIMS = ("EXPAND_DIMS", "shape", NoOptions)
    SHAPE = ("SHAPE", "shape", ShapeOptions)
    CONCATENATION = ("CONCATENATION", "movement", ConcatenationOptions)
    PACK = ("PACK", "movement", PackOptions)
    UNPACK = ("UNPACK", "movement", UnpackOptions)
    SPLIT = ("SPLIT", "movement", SplitOptions)
    SPLIT_V = ("SPLIT_V", "movement", SplitOptions)
    STRIDED_SLICE = ("STRIDED_SLICE", "movement", StridedSliceOptions)
    SLICE = ("SLICE", "movement", NoOptions)
    PAD = ("PAD", "movement", NoOptions)
    PADV2 = ("PADV2", "movement", NoOptions)
    TRANSPOSE = ("TRANSPOSE", "movement", NoOptions)
    GATHER = ("GATHER", "movement", GatherOptions)
    DEPTH_TO_SPACE = ("DEPTH_TO_SPACE", "movement", BlockSizeOptions)
    SPACE_TO_DEPTH = ("SPACE_TO_DEPTH", "movement", BlockSizeOptions)
    DENSIFY = ("DENSIFY", "movement", NoOptions)
    RESIZE_NEAREST_NEIGHBOR = ("RESIZE_NEAREST_NEIGHBOR", "resize", ResizeOptions)
    RESIZE_BILINEAR = ("RESIZE_BILINEAR", "resize", ResizeOptions)
    ARG_MAX = ("ARG_MAX", "reduce", ArgMaxOptions)
    ETHOS_U = ("ETHOS_U", "npu", EthosUOptions)  # CUSTOM 'ethos-u', Vela's NPU op
    CUSTOM = ("CUSTOM", "custom", CustomOptions)  # any other CUSTOM op: the user's C kernel
    # Resource variables (mcugen/ops/state): inputs[0] is the variable's state tensor
    READ_VARIABLE = ("READ_VARIABLE", "state", NoOptions)
    ASSIGN_VARIABLE = ("ASSIGN_VARIABLE", "state", NoOptions)  # inputs [state, value], no outputs

    @property
    def family(self) -> str:
        return self.value[1]

    @property
    def options_type(self) -> type:
        return self.value[2]


@dataclass(frozen=True, eq=False)
class Variable:
    """A resource variable of a stateful model: its name in the file (container/shared_name)
    and the value the init subgraph gives it, resolved at build time. Its Tensor is the state
    buffer, kept across invokes; READ_VARIABLE and ASSIGN_VARIABLE take it as input 0."""

    name: str
    initial: np.ndarray


@dataclass(eq=False)
class Tensor:
    """A tensor: activations have data None, constants carry their numpy array."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: DType
    quant: Quant | None = None
    data: np.ndarray | None = None
    producer: Op | None = field(default=None, repr=False)
    consumers: list[Op] = field(default_factory=list, repr=False)
    # Axes the model leaves open (shape_signature -1, e.g. a dynamic batch). MCU code is static:
    # each is fixed at its stored extent (1 for a converter's dynamic batch), as TFLite does
    # when nothing resizes the input.
    dynamic_axes: tuple[int, ...] = ()
    # Vela-compiled models: the offset Vela fixed in an NPU memory area (None: planned freely).
    pin: Pin | None = None
    # Stateful models: this tensor is a resource variable's state (None: an ordinary tensor).
    variable: Variable | None = None

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def num_elements(self) -> int:
        return int(math.prod(self.shape))  # not np.prod: the planner asks thousands of times

    @property
    def nbytes(self) -> int:
        return self.num_elements * self.dtype.itemsize


@dataclass(eq=False)
class Op:
    """One operator. `index` is its position in the TFLite file, used in every message."""

    kind: OpKind
    inputs: list[Tensor | None]
    outputs: list[Tensor]
    options: OpOptions
    index: int
    backend: str = "cpu"

    @property
    def name(self) -> str:
        """Its first output's name; an op without outputs (ASSIGN_VARIABLE) goes by its first input's."""
        if self.outputs:
            return self.outputs[0].name
        first = self.inputs[0] if self.inputs else None
        return first.name if first is not None else f"op{self.index}"

    def where(self) -> str:
        return f"{self.kind.name} (op {self.index}, '{self.name}')"


@dataclass(eq=False)
class Graph:
    """A whole model: tensors, ops in execution order, graph inputs and outputs."""

    name: str
    tensors: list[Tensor]
    ops: list[Op]
    inputs: list[Tensor]
    outputs: list[Tensor]
    sha256: str = ""
    description: str = ""

    def link(self) -> None:
        """Recompute producer and consumer links from the op list."""
        for tensor in self.tensors:
            tensor.producer = None
            tensor.consumers = []
        for op in self.ops:
            for used in op.inputs:
                if used is not None:
                    used.consumers.append(op)
            for tensor in op.outputs:
                tensor.producer = op


def verify_graph(graph: Graph) -> None:
    """Check the IR invariants; raise ModelError naming the first broken one.

    Every tensor is produced at most once; constants and graph inputs are never produced; every
    op input is a constant, a graph input, a variable's state or produced by an earlier op; every graph output is
    produced, is an input or is a constant (folded at build time, copied out by invoke);
    element counts of constants match their shapes.
    """
    known = {id(t) for t in graph.tensors}
    # graph inputs and variables' states hold values before the first op
    available = {id(t) for t in graph.inputs} | {id(t) for t in graph.tensors if t.variable is not None}
    produced: set[int] = set()
    for tensor in graph.tensors:
        if tensor.data is not None and tensor.data.size != tensor.num_elements:
            raise ModelError(
                f"tensor {tensor.index} '{tensor.name}': constant data has {tensor.data.size} "
                f"elements but its shape {list(tensor.shape)} needs {tensor.num_elements}"
            )
    for op in graph.ops:
        for used in op.inputs:
            if used is None:
                continue
            if id(used) not in known:
                raise ModelError(f"{op.where()}: input '{used.name}' is not in the graph")
            if not used.is_constant and id(used) not in available:
                raise ModelError(f"{op.where()}: input '{used.name}' is used before it is produced")
        for tensor in op.outputs:
            if id(tensor) in produced or id(tensor) in {id(t) for t in graph.inputs}:
                raise ModelError(f"{op.where()}: tensor '{tensor.name}' is produced twice")
            if tensor.is_constant or tensor.variable is not None:
                raise ModelError(f"{op.where()}: output '{tensor.name}' is a constant or a variable's state")
            produced.add(id(tensor))
            available.add(id(tensor))
    for tensor in graph.outputs:
        if id(tensor) not in available and not tensor.is_constant:
            raise ModelError(f"graph output '{tensor.name}' is never produced")
