"""The user's custom-op kernels in a build: each kernel file copied into the output directory.

A kernel serves every CUSTOM op of its custom code (mcugen/ops/custom/), so its copy,
`mcugen_custom_<NAME>.c`, is listed with the runtime files: each once in mcugen.mk and
CMakeLists.txt, and two models of one directory that use the same kernel share it (two different
kernels for one custom code are an error there, as C allows one `<NAME>_kernel`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import __version__
from ..ir import CustomKernel, CustomOptions, Op, OpKind
from .cnames import comment

_SAFE_FILE_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")


def used_kernels(order: Sequence[Op]) -> list[CustomKernel]:
    """The kernels of the CUSTOM ops in `order`, each once, by custom code."""
    found: dict[str, CustomKernel] = {}
    for op in order:
        if op.kind is OpKind.CUSTOM:
            assert isinstance(op.options, CustomOptions) and op.options.kernel is not None
            found.setdefault(op.options.kernel.name, op.options.kernel)
    return [found[name] for name in sorted(found)]


def kernel_file_name(kernel: CustomKernel) -> str:
    return f"mcugen_custom_{kernel.c_name}.c"


def kernel_files(order: Sequence[Op]) -> dict[str, str]:
    """file name -> text of every kernel the ops use. The prototype in front makes a definition
    of another type a compile error (the model calls it through this one); the #line directive
    makes the compiler's messages name the user's own file and lines."""
    files = {}
    for kernel in used_kernels(order):
        line = f'#line 1 "{kernel.source_name}"\n' if _SAFE_FILE_NAME.match(kernel.source_name) else ""
        files[kernel_file_name(kernel)] = (
            f"/* Copied by mcugen {__version__} from {comment(kernel.source_name)} (--custom-op "
            f"{comment(kernel.name)}): edit the original, not this copy. */\n"
            f'#include "mcugen_custom.h"\n'
            f"mcugen_status {kernel.c_name}_kernel(const mcugen_custom_args *args);\n{line}{kernel.source}")
    return files
