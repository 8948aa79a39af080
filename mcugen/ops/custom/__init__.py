"""The custom family: a CUSTOM op (any custom code but Vela's 'ethos-u') runs the user's C kernel.

The kernel comes with the build (`--custom-op NAME=kernel.c[:reference.py]`, read by
mcugen/custom_ops.py and bound to the op as `CustomOptions.kernel`); the generated step fills a
`mcugen_custom_args` (templates/runtime/kernels/mcugen_custom.h: data pointers, dtypes, shapes,
quantization, the raw custom options and the planned scratch) and calls `<NAME>_kernel(&args)`,
whose status other than MCUGEN_OK ends invoke with that status. The kernel file itself is copied
into the build by the code generator (codegen/generate.py). The numpy reference is the user's
`reference()`, when given; without it `mcugen verify` refuses the model in one line.

A custom op is never folded at build time (passes/fold.py): what it computes is its kernel's.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import tflite

from ...errors import McugenError, UnsupportedError
from ...ir import CustomKernel, CustomOptions, DType, Op, OpKind, Tensor
from ...quantization import Rounding
from ..base import OpDef, no_fast_path_scratch, no_macs
from ..emitting import EmitContext, KernelCall

MAX_RANK = 6  # MCUGEN_CUSTOM_MAX_RANK
C_DTYPES: dict[DType, str] = {
    DType.INT8: "MCUGEN_DTYPE_INT8", DType.UINT8: "MCUGEN_DTYPE_UINT8", DType.INT16: "MCUGEN_DTYPE_INT16",
    DType.INT32: "MCUGEN_DTYPE_INT32", DType.INT64: "MCUGEN_DTYPE_INT64", DType.FLOAT32: "MCUGEN_DTYPE_FLOAT32",
    DType.BOOL: "MCUGEN_DTYPE_BOOL",
}


def _options(op: Op) -> CustomOptions:
    assert isinstance(op.options, CustomOptions)
    return op.options


def kernel_given(op: Op) -> str | None:
    """A CUSTOM op runs the user's C kernel for its custom code, given to the build with
    --custom-op NAME=path/to/kernel.c[:path/to/reference.py] (docs/custom_ops.md)."""
    options = _options(op)
    if options.kernel is not None:
        return None
    return (f"custom code '{options.code}' and no kernel for it: pass --custom-op "
            f"{options.code}=path/to/kernel.c[:path/to/reference.py]")


def tensors_fit_the_interface(op: Op) -> str | None:
    """Every input and output has at most 6 dimensions and a dtype that mcugen_custom.h names
    (int8, uint8, int16, int32, int64, float32, bool)."""
    for tensor in [t for t in op.inputs if t is not None] + op.outputs:
        if len(tensor.shape) > MAX_RANK or tensor.dtype not in C_DTYPES:
            return f"'{tensor.name}' is {tensor.dtype.short}{list(tensor.shape)}"
    return None


def read_no_options(operator: object, where: str) -> CustomOptions:
    raise UnsupportedError(f"{where}: a CUSTOM op is read by mcugen/frontend/tflite.py")


def prepare_custom(op: Op, setting: object) -> None:
    """Nothing to compute: the kernel reads what it needs from its arguments."""


def kernel_scratch(op: Op) -> int:
    kernel = _options(op).kernel
    return 0 if kernel is None else kernel.scratch_bytes


def _kernel(op: Op) -> CustomKernel:
    kernel = _options(op).kernel
    if kernel is None:  # the support rule refuses such an op before any emitter or reference runs
        raise UnsupportedError(f"{op.where()}: {kernel_given(op)}")
    return kernel


# --- the C ----------------------------------------------------------------------------------


def _info(tensor: Tensor, ctx: EmitContext, hint: str) -> str:
    """A mcugen_custom_tensor_info initialiser."""
    dims = list(tensor.shape) + [0] * (MAX_RANK - len(tensor.shape))
    quant = tensor.quant
    if quant is None:
        count, axis, scale, zero_point = 0, 0, "NULL", "NULL"
    else:
        count, axis = len(quant.scale), quant.axis if quant.per_channel else 0
        scale = ctx.constant(f"{hint}_scale", np.asarray(quant.scale, np.float32), "float")
        zero_point = ctx.constant(f"{hint}_zero_point", np.asarray(quant.zero_point, np.int32), "int32_t")
    return (f"{{ {C_DTYPES[tensor.dtype]}, {len(tensor.shape)}, {{ {', '.join(str(d) for d in dims)} }}, "
            f"{count}, {axis}, {scale}, {zero_point} }}")


def _entries(tensors: Sequence[Tensor | None], ctx: EmitContext, hint: str) -> list[str]:
    entries = []
    for position, tensor in enumerate(tensors):
        if tensor is None:
            entries.append(f"{{ NULL, {{ MCUGEN_DTYPE_INT8, 0, {{ {', '.join(['0'] * MAX_RANK)} }}, 0, 0, NULL, NULL }} }}")
        else:
            entries.append(f"{{ {ctx.ptr(tensor)}, {_info(tensor, ctx, f'{hint}{position}')} }}")
    return entries


def emit_custom(op: Op, ctx: EmitContext) -> KernelCall:
    options, kernel = _options(op), _kernel(op)
    function = f"{kernel.c_name}_kernel"
    inputs = _entries(op.inputs, ctx, f"custom{op.index}_in")
    outputs = _entries(op.outputs, ctx, f"custom{op.index}_out")
    if options.data:
        blob = ctx.constant(f"custom{op.index}_options", np.frombuffer(options.data, np.uint8), "uint8_t")
    else:
        blob = "NULL"
    scratch, scratch_bytes = ctx.scratch(op)
    # C has no empty arrays: an op without inputs gets one unused entry and a count of 0.
    input_array = inputs or ["{ NULL, { MCUGEN_DTYPE_INT8, 0, { 0 }, 0, 0, NULL, NULL } }"]
    declarations = [
        f"mcugen_status {function}(const mcugen_custom_args *args);",
        f"const mcugen_custom_input custom_inputs[{len(input_array)}] = {{ {', '.join(input_array)} }};",
        f"const mcugen_custom_output custom_outputs[{len(outputs)}] = {{ {', '.join(outputs)} }};",
        (f"const mcugen_custom_args custom_args = {{ custom_inputs, {len(inputs)}, custom_outputs, {len(outputs)}, "
         f"{blob}, {len(options.data)}, {scratch}, {scratch_bytes}, {op.index} }};"),
    ]
    return KernelCall(declarations=declarations, calls=[f"{function}(&custom_args)"], runtime={"mcugen_custom"})


# --- the reference --------------------------------------------------------------------------


def run_reference(op: Op, inputs: list[np.ndarray | None], rounding: Rounding) -> list[np.ndarray]:
    """The user's reference(inputs, custom_options, outputs_like[, quantization]), its results
    checked against the op's outputs (count, element count, dtype). `quantization` goes to a
    reference that has a parameter of that name: {"inputs": [...], "outputs": [...]}, each entry
    (scales, zero points) as tuples, or None for a tensor without quantization."""
    options, kernel = _options(op), _kernel(op)
    if kernel.reference is None:
        raise UnsupportedError(
            f"{op.where()}: custom code '{options.code}' has no Python reference, so its outputs cannot be "
            f"checked; give one: --custom-op {options.code}={kernel.source_name}:path/to/reference.py")
    where = f"{op.where()}: {kernel.reference_name}: reference()"
    outputs_like = [np.zeros(t.shape, t.dtype.numpy) for t in op.outputs]
    extra = {"quantization": _quantization(op)} if "quantization" in _parameters(kernel.reference) else {}
    try:
        results = kernel.reference([None if x is None else np.array(x) for x in inputs], options.data, outputs_like,
                                   **extra)
    except Exception as error:  # noqa: BLE001 - the user's code may raise anything; one line, no traceback
        raise McugenError(f"{where} raised {type(error).__name__}: {error}") from None
    return _checked(results, op.outputs, where)


def _parameters(function: Any) -> set[str]:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):  # a builtin or a callable without a signature
        return set()


def _quantization(op: Op) -> dict[str, list[tuple[tuple[float, ...], tuple[int, ...]] | None]]:
    def entry(tensor: Tensor | None) -> tuple[tuple[float, ...], tuple[int, ...]] | None:
        return None if tensor is None or tensor.quant is None else (tensor.quant.scale, tensor.quant.zero_point)

    return {"inputs": [entry(t) for t in op.inputs], "outputs": [entry(t) for t in op.outputs]}


def _checked(results: Any, outputs: list[Tensor], where: str) -> list[np.ndarray]:
    if not isinstance(results, (list, tuple)) or len(results) != len(outputs):
        count = len(results) if isinstance(results, (list, tuple)) else type(results).__name__
        raise McugenError(f"{where} returned {count}; the rule: a list of {len(outputs)} arrays, one per output")
    checked = []
    for position, (result, tensor) in enumerate(zip(results, outputs)):
        array = np.asarray(result)
        if array.dtype != tensor.dtype.numpy or array.size != tensor.num_elements:
            raise McugenError(f"{where}: output {position} is {array.dtype}{list(array.shape)}; the rule: "
                              f"{tensor.dtype.short}{list(tensor.shape)}, as the model's '{tensor.name}'")
        checked.append(array.reshape(tensor.shape))
    return checked


NOTE = ("Any custom code but 'ethos-u'. The kernel's C signature, scratch and Python reference: "
        "docs/custom_ops.md. mcugen counts no MACs for it.")

OPS: list[OpDef] = [
    OpDef(
        kind=OpKind.CUSTOM, builtin=tflite.BuiltinOperator.CUSTOM, read_options=read_no_options,
        rules=(kernel_given, tensors_fit_the_interface), prepare=prepare_custom, emit=emit_custom,
        scratch=kernel_scratch, fast_path_scratch=no_fast_path_scratch, reference=run_reference, macs=no_macs,
        notes=(NOTE,)),
]
