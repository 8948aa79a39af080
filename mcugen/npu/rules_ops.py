"""NPU support rules of MEAN, CONCATENATION and SOFTMAX, one small function per rule, as in
mcugen/npu/rules.py (None: the op keeps the rule; else the offending value; the docstring is
the text users read). The facts are Vela 5.2's (tflite_model_semantic.py,
tflite_supported_operators.py) where mcugen does as much as Vela, and mcugen's own lowering's
where it does less (then the rule says so).
"""

from __future__ import annotations

from ..errors import McugenError
from ..ir import DType, Op
from ..ops.reduce.prepare import quant_reduce_params, resolve_axes
from .featuremap import LoweringError
from .lower_reduce import MAX_KERNEL_SIDE, mean_views
from .lower_softmax import MAX_ROW, softmax_rows
from .rules import MAX_DIMENSION, MAX_SCALE_SHIFT

MEAN_MAX_RANK = 4


def mean_input_rank(op: Op) -> str | None:
    """MEAN: the input has 2 to 4 dimensions (Vela's rule)."""
    x = op.inputs[0]
    return None if x is None or 2 <= len(x.shape) <= MEAN_MAX_RANK else f"input of rank {len(x.shape)}"


def mean_axes(op: Op) -> str | None:
    """MEAN: the reduced axes are the height and/or the width; the depth only when one of the input's last three dimensions is 1 (Vela's rule; the input is then read as rows of the reduced elements) and no kept axis of extent above 1 follows a reduced one; the batch only where it is 1."""
    x = op.inputs[0]
    if x is None or not 2 <= len(x.shape) <= MEAN_MAX_RANK:
        return None
    try:
        axes = resolve_axes(op)
    except (AssertionError, McugenError):
        return "axes not constant"
    shape = tuple(x.shape)
    if len(shape) >= 3 and len(shape) - 1 in axes and shape[-1] > 1 and 1 not in shape[-3:]:
        return f"reduces the depth of {list(shape)}"
    try:
        mean_views(op)
    except LoweringError as e:
        return str(e)
    return None


def mean_kernel_size(op: Op) -> str | None:
    """MEAN: at most 64 elements are reduced along each of the two axes the NPU sees (a DEPTHWISE kernel of up to 64 x 64; Vela 5.2 splits a larger reduction into several operations, mcugen does not)."""
    if mean_axes(op) is not None or mean_input_rank(op) is not None:
        return None
    _, _, kernel = mean_views(op)
    side = MAX_KERNEL_SIDE
    return None if max(kernel.height, kernel.width) <= side else f"{kernel.height}x{kernel.width} reduced elements"


def mean_rescale(op: Op) -> str | None:
    """MEAN: TFLite's multiplier of input scale / output scale with 1/count folded in is a 31-bit multiplier with a right shift of 0 to 63 (the bias/scale entry)."""
    try:
        params = quant_reduce_params(op)
    except (AssertionError, McugenError) as e:
        return f"no TFLite rescale ({e})"
    shift = 31 - params.shift
    return None if 0 <= shift <= MAX_SCALE_SHIFT else f"shift {shift}"


# --- SOFTMAX ------------------------------------------------------------------------------


def softmax_int8(op: Op) -> str | None:
    """SOFTMAX: int8 input and int8 output (mcugen does not lower the int16 program, which Vela 5.2 runs through the hardware's exp and 1/(1+x) tables; int8 -> int16 is not an NPU op)."""
    x, y = op.inputs[0], op.outputs[0] if op.outputs else None
    if x is None or y is None or (x.dtype is DType.INT8 and y.dtype is DType.INT8):
        return None
    return f"{x.dtype.short} -> {y.dtype.short}"


def softmax_rows_fit(op: Op) -> str | None:
    """SOFTMAX: the last axis holds at most 256 elements (the MAX pool that finds each row's maximum spans the row; Vela 5.2 has no such limit) and there are at most 65535 rows (Vela's limit on the input's width times height)."""
    rows, length = softmax_rows(op)
    if length <= MAX_ROW and rows <= MAX_DIMENSION:
        return None
    return f"{rows} rows of {length} elements"


def softmax_output_quantization(op: Op) -> str | None:
    """SOFTMAX: the int8 output has zero point -128 (the program adds it to the unsigned probability; TFLite requires it too)."""
    y = op.outputs[0] if op.outputs else None
    if y is None or y.quant is None or y.dtype is not DType.INT8 or y.quant.single_zero_point == -128:
        return None
    return f"output zero point {y.quant.single_zero_point}"
