"""The fast paths' scratch sizes, every instruction set, checked on the host.

Each ISA's *_buffer_size functions (templates/runtime/kernels/mcugen_conv_fast_dsp.c, _mve.c)
are plain arithmetic compiled on every core, so a small host program can call all of them.
They must equal what mcugen plans for the target that compiles that path
(each kind's fast_path_scratch in its op definition, mcugen/ops): with less,
a fast path declines silently and the portable loops run; with more, RAM is wasted. The shapes
reach every branch of the C formulas: DSP conv five columns (taps <= 256) and four (> 256),
DSP depthwise chunks limited by the channel count, by the 1280-byte budget, and at least one
quad (a window too large for the budget); MVE blocks of eight channels, whole and partial.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcugen.ir import DType, NoOptions, Op, OpKind, Tensor
from mcugen.ops.registry import op_def
from mcugen.targets import target as find_target
from tests.test_firmware import require_tools

KERNELS = Path(__file__).resolve().parents[1] / "templates" / "runtime" / "kernels"
SOURCES = ("mcugen_conv_fast.c", "mcugen_conv_fast_dsp.c", "mcugen_conv_fast_mve.c")
# the instruction set each Cortex-M target compiles (mcugen_platform.h)
PATHS = {"cortex-m4": "dsp", "cortex-m7": "dsp", "cortex-m55": "mve"}

# (kind, filter h, w, c, n as mcugen_dims): conv (out_c, kh, kw, in_c), depthwise (1, kh, kw,
# channels), fully connected (units, depth) with the depth in n
SHAPES: list[tuple[OpKind, tuple[int, int, int, int]]] = [
    (OpKind.CONV_2D, (3, 3, 8, 16)),      # 72 taps: five DSP columns
    (OpKind.CONV_2D, (1, 1, 3, 5)),       # 3 taps, rounded up to 4
    (OpKind.CONV_2D, (3, 3, 29, 7)),      # 261 taps: four DSP columns
    (OpKind.CONV_2D, (16, 16, 1, 2)),     # 256 taps: the boundary, five columns
    (OpKind.CONV_2D, (10, 4, 64, 64)),    # deep: 2560 taps
    (OpKind.DEPTHWISE_CONV_2D, (3, 3, 8, 1)),     # channels limit the chunk (2 quads)
    (OpKind.DEPTHWISE_CONV_2D, (3, 3, 7, 1)),     # a partial quad and a partial MVE block
    (OpKind.DEPTHWISE_CONV_2D, (3, 3, 256, 1)),   # the 1280-byte budget limits the chunk
    (OpKind.DEPTHWISE_CONV_2D, (13, 13, 64, 1)),  # one quad is over the budget: at least one
    (OpKind.DEPTHWISE_CONV_2D, (10, 4, 9, 1)),    # MVE: two blocks of eight, one partial
    (OpKind.FULLY_CONNECTED, (1, 1, 10, 250)),    # depth 250, rounded up to 252
    (OpKind.FULLY_CONNECTED, (1, 1, 4, 640)),
    (OpKind.FULLY_CONNECTED, (1, 1, 3, 1)),
]
C_NAMES = {OpKind.CONV_2D: "convolve", OpKind.DEPTHWISE_CONV_2D: "depthwise_conv",
           OpKind.FULLY_CONNECTED: "fully_connected"}


def _op(kind: OpKind, dims: tuple[int, int, int, int]) -> Op:
    """An int8 op whose weights have the mcugen_dims `dims` (h, w, c, n) in TFLite's layout."""
    h, w, c, n = dims
    if kind is OpKind.CONV_2D:
        weights, out_c, in_c = (n, h, w, c), n, c
    elif kind is OpKind.DEPTHWISE_CONV_2D:
        weights, out_c, in_c = (1, h, w, c), c, c
    else:
        weights, out_c, in_c = (c, n), c, n
    x = Tensor(0, "x", (1, 8, 8, in_c) if kind is not OpKind.FULLY_CONNECTED else (1, in_c),
               DType.INT8)
    wt = Tensor(1, "w", weights, DType.INT8, data=np.zeros(weights, np.int8))
    b = Tensor(2, "b", (out_c,), DType.INT32, data=np.zeros(out_c, np.int32))
    y = Tensor(3, "y", (1, 8, 8, out_c) if kind is not OpKind.FULLY_CONNECTED else (1, out_c),
               DType.INT8)
    return Op(kind, [x, wt, b], [y], NoOptions(), 0)


def _program() -> str:
    lines = ['#include <stdio.h>', '#include "mcugen_conv_fast.h"', "", "int main(void)", "{"]
    for index, (kind, (h, w, c, n)) in enumerate(SHAPES):
        lines.append(f"    {{ const mcugen_dims d = {{{n}, {h}, {w}, {c}}};")
        for isa in ("dsp", "mve"):
            function = f"mcugen_{C_NAMES[kind]}_fast_{isa}_s8_buffer_size"
            lines.append(f'      printf("{index} {isa} %ld\\n", (long){function}(&d)); }}'
                         if isa == "mve" else
                         f'      printf("{index} {isa} %ld\\n", (long){function}(&d));')
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


def c_buffer_sizes(tmp_path: Path, kernels: Path = KERNELS) -> dict[tuple[int, str], int]:
    """(shape index, isa) -> bytes, from the C size functions compiled on the host."""
    require_tools("cc")
    main = tmp_path / "scratch_sizes.c"
    main.write_text(_program())
    exe = tmp_path / "scratch_sizes"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{kernels}",
                    str(main), *(str(kernels / s) for s in SOURCES), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    sizes = {}
    for line in out.split("\n"):
        if line:
            index, isa, value = line.split()
            sizes[(int(index), isa)] = int(value)
    return sizes


def planned(kind: OpKind, dims: tuple[int, int, int, int], target: str) -> int:
    """The fast-path scratch mcugen plans for this op on `target`."""
    op = _op(kind, dims)
    return op_def(kind).fast_path_scratch(op, find_target(target))


def takes_fast_path(kind: OpKind, dims: tuple[int, int, int, int], isa: str) -> bool:
    """Whether the C fast path runs at all: a depthwise of channels not in whole four-channel
    groups (DSP) or under eight (MVE) declines whatever its scratch, so none is planned."""
    channels = dims[2]
    if kind is not OpKind.DEPTHWISE_CONV_2D:
        return True
    return channels % 4 == 0 if isa == "dsp" else channels >= 8


def mismatches(sizes: dict[tuple[int, str], int]) -> list[str]:
    return [f"{kind.name} {dims} on {target}: C {sizes[(i, isa)]}, "
            f"planned {planned(kind, dims, target)}"
            for i, (kind, dims) in enumerate(SHAPES) for target, isa in PATHS.items()
            if (sizes[(i, isa)] if takes_fast_path(kind, dims, isa) else 0)
            != planned(kind, dims, target)]


def test_c_scratch_sizes_equal_the_plan(tmp_path: Path) -> None:
    sizes = c_buffer_sizes(tmp_path)
    assert not mismatches(sizes)
    # the table is not trivial: every ISA asks for scratch somewhere, and the two differ
    assert any(sizes[(i, "dsp")] != sizes[(i, "mve")] for i in range(len(SHAPES)))
    assert all(sizes[(i, "dsp")] > 0 for i in range(len(SHAPES)))


# (file, right, wrong): one formula of each ISA and kind off by a little
WRONG_FORMULAS = [
    ("mcugen_conv_fast_dsp.c", "return size4 <= 256 ? 5 : 4;", "return size4 < 256 ? 5 : 4;"),
    ("mcugen_conv_fast_dsp.c", "return q < 1 ? 1 : q;", "return q;"),
    ("mcugen_conv_fast_dsp.c", "#define DW_CHUNK_BYTES 1280", "#define DW_CHUNK_BYTES 1024"),
    ("mcugen_conv_fast_dsp.c", "return 2 * round_up4(filter_dims->n);",
     "return 2 * filter_dims->n;"),
    ("mcugen_conv_fast_mve.c", "+ 12 * filter_dims->n;", "+ 8 * filter_dims->n;"),
    ("mcugen_conv_fast_mve.c", "return 96 * ((filter_dims->c + 7) / 8);",
     "return 96 * (filter_dims->c / 8);"),
]


@pytest.mark.parametrize(("name", "right", "wrong"), WRONG_FORMULAS)
def test_a_wrong_c_formula_fails(name: str, right: str, wrong: str, tmp_path: Path) -> None:
    """The shape table reaches each formula's branches: a small change to any of them shows."""
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    for source in KERNELS.iterdir():
        text = source.read_text()
        if source.name == name:
            assert text.count(right) == 1, right
            text = text.replace(right, wrong)
        (kernels / source.name).write_text(text)
    assert mismatches(c_buffer_sizes(tmp_path, kernels))
