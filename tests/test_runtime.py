"""The C runtime as a whole: every kernel header and source can share one program.

A generated model includes the headers of every kernel family it uses in one translation unit
and links their sources together, so two families that define the same type or function name
break only the models that happen to use both. This test includes every header at once and
links every source, with the generated code's warning flags.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from mcugen.codegen.generate import RUNTIME
from mcugen.toolchain.host import WARNING_FLAGS, compiler


def test_every_kernel_header_and_source_link_into_one_program(tmp_path: Path) -> None:
    for source in RUNTIME.iterdir():
        shutil.copy(source, tmp_path / source.name)
    headers = sorted(p.name for p in tmp_path.glob("*.h"))
    sources = sorted(p.name for p in tmp_path.glob("*.c"))
    assert len(headers) > 10 and len(sources) > 10
    includes = "".join(f'#include "{h}"\n' for h in headers)
    (tmp_path / "all_headers.c").write_text(includes + "int main(void) { return 0; }\n")
    result = subprocess.run(
        [compiler(), *WARNING_FLAGS, "-O1", "-I.", "all_headers.c", *sources, "-lm", "-o", "all"],
        check=False, cwd=tmp_path, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
