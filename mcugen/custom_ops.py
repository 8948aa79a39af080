"""Custom ops that the user supplies: `--custom-op NAME=path/to/kernel.c[:path/to/reference.py]`.

A model's CUSTOM op (other than Vela's `ethos-u`) runs the user's C kernel for its custom code
NAME (docs/custom_ops.md): the kernel file is read here, once, with the scratch it declares (a
line `// mcugen: scratch BYTES`), and the optional Python reference, a module that defines
`reference(inputs, custom_options, outputs_like)`, is loaded for `mcugen verify`. `bind_kernels`
hands each CUSTOM op of a graph the kernel of its code; the support rule of the CUSTOM kind
(mcugen/ops/custom/) refuses an op that has none, naming the option to pass.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .digest import sha256
from .errors import McugenError
from .ir import CustomKernel, CustomOptions, Graph, OpKind

SPEC_RULE = "the rule: NAME=path/to/kernel.c[:path/to/reference.py]"
# `// mcugen: scratch 1024` or `/* mcugen: scratch 1024 */` at the start of a line of kernel.c
_SCRATCH = re.compile(r"^\s*(?://|/\*)\s*mcugen:\s*scratch\b(.*?)(?:\*/)?\s*$", re.MULTILINE)
MAX_SCRATCH_BYTES = 2**31 - 1


def c_name(code: str) -> str:
    """The C name of a custom code: every character other than a letter, digit or '_' becomes
    '_', and a leading digit gets a '_' in front."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", code)
    return f"_{name}" if name[:1].isdigit() else name


def parse_custom_ops(specs: Sequence[str]) -> tuple[CustomKernel, ...]:
    """Every --custom-op, read; one NAME at most once."""
    kernels = tuple(parse_custom_op(spec) for spec in specs)
    seen: set[str] = set()
    for kernel in kernels:
        if kernel.name in seen:
            raise McugenError(f"--custom-op {kernel.name}: given twice; the rule: one kernel per custom code")
        seen.add(kernel.name)
    return kernels


def _split(spec: str) -> tuple[str, Path, Path | None]:
    name, equals, paths = spec.partition("=")
    if not equals or not name.strip() or not paths:
        raise McugenError(f"--custom-op '{spec}': {SPEC_RULE}")
    kernel, colon, reference = paths.rpartition(":")
    if not colon or not reference.endswith(".py") or not kernel:
        kernel, reference = paths, ""
    return name.strip(), Path(kernel), Path(reference) if reference else None


def parse_custom_op(spec: str) -> CustomKernel:
    """One --custom-op: the kernel file read and its scratch declaration checked, the reference
    loaded. Each problem is a one-line McugenError naming the option and the file."""
    name, kernel_path, reference_path = _split(spec)
    where = f"--custom-op {name}"
    if not kernel_path.is_file():
        raise McugenError(f"{where}: kernel file {kernel_path}: no such file")
    try:
        source = kernel_path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise McugenError(f"{where}: kernel file {kernel_path}: cannot be read ({error})") from None
    scratch = declared_scratch(source, f"{where}: {kernel_path}")
    reference = None
    digest = sha256(source.encode())
    if reference_path is not None:
        reference = load_reference(reference_path, where)
        digest.update(reference_path.read_bytes())
    option = f"{name}={kernel_path.resolve()}" + ("" if reference_path is None else f":{reference_path.resolve()}")
    return CustomKernel(name=name, c_name=c_name(name), source_name=kernel_path.name, source=source,
                        sha256=digest.hexdigest(), scratch_bytes=scratch, reference=reference,
                        reference_name=None if reference_path is None else reference_path.name, option=option)


def declared_scratch(source: str, where: str) -> int:
    """The bytes of scratch a kernel declares with a line `// mcugen: scratch BYTES` (0 without
    one): a fixed count, known when the model is built, as the arena plan needs it."""
    found = _SCRATCH.findall(source)
    if not found:
        return 0
    if len(found) > 1:
        raise McugenError(f"{where}: {len(found)} 'mcugen: scratch' lines; the rule: at most one")
    text = found[0].strip()
    if not re.fullmatch(r"[0-9]+", text) or not 0 <= int(text) <= MAX_SCRATCH_BYTES:
        raise McugenError(f"{where}: 'mcugen: scratch {text}'; the rule: `// mcugen: scratch BYTES` with BYTES a "
                          f"whole number of bytes, at most {MAX_SCRATCH_BYTES}")
    return int(text)


def load_reference(path: Path, where: str) -> Any:
    """The function `reference` of the Python file `path`."""
    if not path.is_file():
        raise McugenError(f"{where}: reference file {path}: no such file")
    module_name = f"mcugen_custom_reference_{c_name(path.stem)}_{sha256(str(path).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise McugenError(f"{where}: reference file {path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001 - the user's module may raise anything; one line, no traceback
        raise McugenError(f"{where}: reference file {path} cannot be loaded: {type(error).__name__}: {error}") \
            from None
    function = getattr(module, "reference", None)
    if not callable(function):
        raise McugenError(f"{where}: reference file {path} defines no function "
                          "reference(inputs, custom_options, outputs_like)")
    return function


def bind_kernels(graph: Graph, kernels: Sequence[CustomKernel]) -> None:
    """Give every CUSTOM op the kernel of its custom code, where one was given. A kernel that
    no op of this graph uses is not an error: one build may list kernels for several models."""
    by_name = {kernel.name: kernel for kernel in kernels}
    for op in graph.ops:
        if op.kind is OpKind.CUSTOM:
            assert isinstance(op.options, CustomOptions)
            op.options = dataclasses.replace(op.options, kernel=by_name.get(op.options.code))


def kernels_key(kernels: Sequence[CustomKernel]) -> str:
    """The part of a build's cache key that the kernels make."""
    return ",".join(f"{k.name}:{k.sha256[:16]}" for k in kernels)
