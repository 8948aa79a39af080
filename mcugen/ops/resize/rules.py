"""Support rules of RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR.

Each rule returns None when the op satisfies it, else the offending value; its docstring is the
rule users read. The generic rules (dtypes, rank) live in mcugen.ops.rules.
"""

from __future__ import annotations

from ...ir import DType, Op


def constant_resize_size(op: Op) -> str | None:
    """The size input is a constant int32 [height, width] equal to the output's height and width."""
    size, y = op.inputs[1] if len(op.inputs) > 1 else None, op.outputs[0]
    if (size is None or not size.is_constant or size.dtype is not DType.INT32
            or size.num_elements != 2):
        return "size is not a constant int32 tensor of two values"
    values = [int(v) for v in size.data.reshape(-1)]  # type: ignore[union-attr]
    if len(y.shape) != 4 or values != [y.shape[1], y.shape[2]] or min(values) < 1:
        return f"size {values} for output shape {list(y.shape)}"
    return None


def bilinear_flags(op: Op) -> str | None:
    """align_corners and half_pixel_centers are not both set (TFLite rejects the pair)."""
    o = op.options
    both = getattr(o, "align_corners", False) and getattr(o, "half_pixel_centers", False)
    return "align_corners and half_pixel_centers" if both else None


def resize_keeps_batch_and_channels(op: Op) -> str | None:
    """The output has the input's batch and channels (only height and width are resized)."""
    x, y = op.inputs[0] if op.inputs else None, op.outputs[0]
    if x is None or len(x.shape) != 4 or len(y.shape) != 4:
        return None  # input_rank_4 and constant_resize_size report these
    if (x.shape[0], x.shape[3]) == (y.shape[0], y.shape[3]):
        return None
    return f"input {list(x.shape)}, output {list(y.shape)}"


def resize_output_shape(op: Op) -> str | None:
    """The output is [batch, height, width, channels]: the input's batch and channels, the size input's height and width."""
    x = op.inputs[0] if op.inputs else None
    size = op.inputs[1] if len(op.inputs) > 1 else None
    if (x is None or len(x.shape) != 4 or size is None or size.data is None
            or size.dtype is not DType.INT32 or size.num_elements != 2):
        return None  # input_rank_4 and constant_resize_size report these (after folding)
    height, width = (int(v) for v in size.data.reshape(-1))
    expected = [x.shape[0], height, width, x.shape[3]]
    y = op.outputs[0]
    return None if list(y.shape) == expected else f"output {list(y.shape)}, expected {expected}"
