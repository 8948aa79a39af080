"""What makes code generation fast must not change what it writes.

- Constant arrays are formatted from one tolist() per array (cnames.c_array_body): the C
  compiler reading the literals back is the oracle, for every integer dtype of the IR (ir.DType)
  and its extremes (INT64_MIN is no literal of its own).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcugen.codegen.cnames import c_array_body

CC = shutil.which("cc") or shutil.which("gcc")
CTYPES = {np.int8: "int8_t", np.uint8: "uint8_t", np.int16: "int16_t", np.uint16: "uint16_t",
          np.int32: "int32_t", np.uint32: "uint32_t", np.int64: "int64_t", np.bool_: "uint8_t"}
FORMATS = {"int64_t": "%lld"}


def _values(dtype: Any, rng: np.random.Generator) -> np.ndarray:
    if dtype is np.bool_:
        return rng.integers(0, 2, 61).astype(bool)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, 61, dtype=dtype, endpoint=True)
    values[:3] = [info.min, info.max, 0]
    return values


@pytest.mark.skipif(CC is None, reason="needs a host C compiler")
def test_integer_arrays_read_back_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(16)
    arrays = {dtype: _values(dtype, rng) for dtype in CTYPES}
    lines = ["#include <stdint.h>", "#include <stdio.h>"]
    body = []
    for n, (dtype, values) in enumerate(arrays.items()):
        ctype = CTYPES[dtype]
        lines.append(f"static const {ctype} a{n}[{values.size}] = {{\n{c_array_body(values.reshape(1, -1))}\n}};")
        cast = "(long long)" if ctype == "int64_t" else "(long)"
        fmt = FORMATS.get(ctype, "%ld")
        body.append(f'for (int i = 0; i < {values.size}; ++i) printf("{fmt}\\n", {cast}a{n}[i]);')
    lines.append("int main(void) {\n" + "\n".join(body) + "\nreturn 0;\n}")
    (tmp_path / "arrays.c").write_text("\n".join(lines) + "\n")
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "arrays.c", "-o", "arrays"],
                   cwd=tmp_path, check=True)
    printed = subprocess.run([str(tmp_path / "arrays")], check=True, capture_output=True, text=True).stdout.split()
    expected = [str(int(v)) for values in arrays.values() for v in values.tolist()]
    assert printed == expected


def test_array_layout_is_24_literals_a_line() -> None:
    body = c_array_body(np.arange(50, dtype=np.int8))
    rows = body.split(",\n")
    assert [len(r.split(", ")) for r in rows] == [24, 24, 2]
    assert all(r.startswith("    ") for r in rows)
    assert c_array_body(np.array([True, False])) == "    1, 0"
    assert c_array_body(np.zeros(0, dtype=np.int8)) == ""

