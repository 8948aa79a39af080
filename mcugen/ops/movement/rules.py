"""Support rules of the data-movement kernels (CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V,
STRIDED_SLICE, SLICE, PAD, PADV2, TRANSPOSE, GATHER); the shape family uses some of them too.

Each rule returns None when the op satisfies it, else the offending value; its docstring is
the rule shown to users. The rules follow TensorFlow Lite Micro's Prepare and Eval: the dtypes
each TFLM kernel has, its rank limits, which operands must be constant, and the quantization
checks of TFLite (which copies values and never rescales). mcugen's byte kernels would take any
dtype; the numpy reference kernels do (the constant folder runs them), but a model is held to
what TFLM can run. Configurations only LiteRT runs (STRIDED_SLICE's ellipsis/new-axis masks and
offset, int64 GATHER indices, int64 SHAPE) are refused here or, where the rule depends on the
mode, by STRIDED_SLICE's PrepareRules in TFLM mode (strided_slice.py).
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir import Activation, DType, Op, Tensor

Rule = Callable[[Op], "str | None"]
_INTEGER_DTYPES = (DType.INT8, DType.INT16)
MOVE_4 = (DType.FLOAT32, DType.INT8, DType.INT16, DType.INT32)  # the dtypes most TFLM kernels copy

ANY_INPUT: tuple[int, ...] = ()


def _data_tensors(op: Op, positions: tuple[int, ...]) -> list[Tensor]:
    """The inputs at `positions` (every input for ()) that are present, and every output."""
    chosen = op.inputs if not positions else [op.inputs[i] for i in positions if i < len(op.inputs)]
    return [t for t in chosen if t is not None] + list(op.outputs)


def data_dtypes(*allowed: DType, inputs: tuple[int, ...] = (0,)) -> Rule:
    """Rule factory: the data inputs and the outputs have one of the allowed dtypes."""

    def check(op: Op) -> str | None:
        tensors = _data_tensors(op, inputs)
        bad = [f"'{t.name}' is {t.dtype.short}" for t in tensors if t.dtype not in allowed]
        if not bad and len({t.dtype for t in tensors}) > 1:  # the copy moves elements of one size
            bad = [f"'{t.name}' is {t.dtype.short}" for t in tensors]
        return ", ".join(bad) or None

    names = [d.short for d in allowed]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    which = "inputs" if not inputs else "input"
    check.__doc__ = (f"The data {which} and outputs are {listed}, all of one dtype (TFLM has no kernel "
                     "for other types).")
    return check


def same_data_dtype(op: Op) -> str | None:
    """Every data input has the output's dtype."""
    dtype = op.outputs[0].dtype
    bad = [f"'{t.name}' is {t.dtype.short}" for t in op.inputs if t is not None and t.dtype is not dtype]
    return ", ".join(bad) or None


def max_rank(limit: int) -> Rule:
    """Rule factory: the data tensors have at most `limit` dimensions."""

    def check(op: Op) -> str | None:
        bad = [f"'{t.name}' has shape {list(t.shape)}" for t in _data_tensors(op, (0,)) if len(t.shape) > limit]
        return ", ".join(bad) or None

    check.__doc__ = f"The input and output have at most {limit} dimensions (TFLM's limit)."
    return check


def constant_indices(*positions: int, what: str, dtypes: tuple[DType, ...] = (DType.INT32,)) -> Rule:
    """Rule factory: the inputs at `positions` are constant integer tensors of `dtypes`."""

    def check(op: Op) -> str | None:
        bad = []
        for index in positions:
            tensor = op.inputs[index] if index < len(op.inputs) else None
            if tensor is None or not tensor.is_constant or tensor.dtype not in dtypes:
                name = "missing" if tensor is None else f"'{tensor.name}' ({tensor.dtype.short}" + (
                    ")" if tensor.is_constant else ", not constant)")
                bad.append(f"input {index} {name}")
        return ", ".join(bad) or None

    kinds = " or ".join(d.short for d in dtypes)
    one = len(positions) == 1
    check.__doc__ = f"The {what} input{' is a' if one else 's are'} constant {kinds} tensor{'' if one else 's'}."
    return check


def no_fused_activation(op: Op) -> str | None:
    """There is no fused activation (TFLite's CONCATENATION rejects one)."""
    activation = getattr(op.options, "activation", Activation.NONE)
    return None if activation is Activation.NONE else f"fused activation {activation.name}"


def at_most_ten_inputs(op: Op) -> str | None:
    """At most 10 inputs (TFLM's CONCATENATION limit)."""
    return None if len(op.inputs) <= 10 else f"{len(op.inputs)} inputs"


def _quant_key(tensor: Tensor) -> tuple[float, int] | None:
    return None if tensor.quant is None else (tensor.quant.single_scale, tensor.quant.single_zero_point)


def concatenation_quant(op: Op) -> str | None:
    """int8 inputs have the output's scale and zero point; int16 inputs and output have zero
    point 0 (their scales may differ: TFLite copies the raw values without rescaling)."""
    out = op.outputs[0]
    bad = []
    for t in op.inputs:
        if t is None:
            continue
        if t.dtype is DType.INT8 and _quant_key(t) != _quant_key(out):
            bad.append(f"'{t.name}' quantization {_quant_key(t)}, output {_quant_key(out)}")
    if out.dtype is DType.INT16:
        bad += [f"'{t.name}' zero point {t.quant.single_zero_point}" for t in [*op.inputs, out]
                if t is not None and t.quant is not None and t.quant.single_zero_point != 0]
    return ", ".join(bad) or None


def same_quant_everywhere(op: Op) -> str | None:
    """Quantized inputs and outputs share one scale and zero point (TFLite does not rescale)."""
    keys = {_quant_key(t) for t in [*op.inputs, *op.outputs] if t is not None and t.dtype in _INTEGER_DTYPES}
    return None if len(keys) <= 1 else f"quantizations {sorted(keys, key=str)}"


def pad_constant_value(op: Op) -> str | None:
    """The constant_values input is one element of the input's dtype; for int8 and int16 it
    has the output's scale and zero point (TFLite checks, it does not requantize)."""
    value, out = op.inputs[2] if len(op.inputs) > 2 else None, op.outputs[0]
    if value is None:
        return "no constant_values input"
    if value.dtype is not out.dtype or value.num_elements != 1:
        return f"'{value.name}' is {value.dtype.short} with {value.num_elements} elements"
    if out.dtype in _INTEGER_DTYPES and out.quant is not None and _quant_key(value) != _quant_key(out):
        return f"'{value.name}' quantization {_quant_key(value)}, output {_quant_key(out)}"
    return None


def gather_int32_indices(op: Op) -> str | None:
    """The indices are int32 (TFLM's GATHER takes no int64 positions)."""
    indices = op.inputs[1] if len(op.inputs) > 1 else None
    if indices is None or indices.dtype is DType.INT32:
        return None
    return f"indices '{indices.name}' are {indices.dtype.short}"


def inputs_of_output_rank(op: Op) -> str | None:
    """Every input has the output's rank."""
    rank = len(op.outputs[0].shape)
    bad = [f"'{t.name}' has shape {list(t.shape)}" for t in op.inputs if t is not None and len(t.shape) != rank]
    return f"{', '.join(bad)} for an output of rank {rank}" if bad else None


def inputs_present(op: Op) -> str | None:
    """Every input is present (none of the data inputs is omitted)."""
    missing = [str(i) for i, t in enumerate(op.inputs) if t is None]
    return f"input {', '.join(missing)} missing" if missing else None


def rank_four(op: Op) -> str | None:
    """The input and output are 4-D (NHWC), as TFLite requires."""
    bad = [f"'{t.name}' has shape {list(t.shape)}" for t in _data_tensors(op, (0,)) if len(t.shape) != 4]
    return ", ".join(bad) or None


def positive_block_size(op: Op) -> str | None:
    """block_size is at least 1."""
    size = getattr(op.options, "block_size", 1)
    return None if size >= 1 else f"block_size {size}"


def densify_dtypes(op: Op) -> str | None:
    """The input and output are float32 or int8, of one dtype (LiteRT's DENSIFY; TFLM has none)."""
    bad = [f"'{t.name}' is {t.dtype.short}" for t in _data_tensors(op, (0,))
           if t.dtype not in (DType.FLOAT32, DType.INT8)]
    if not bad and len({t.dtype for t in _data_tensors(op, (0,))}) > 1:
        bad = [f"'{t.name}' is {t.dtype.short}" for t in _data_tensors(op, (0,))]
    return ", ".join(bad) or None


def constant_input(op: Op) -> str | None:
    """The input is a constant (the sparse tensor stored in the model), as TFLite requires."""
    source = op.inputs[0] if op.inputs else None
    return None if source is not None and source.is_constant else "the input is not a constant"
