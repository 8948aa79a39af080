"""Build a model for several NPU sizes with one set of runtime objects (tests' helper).

A --npu build differs between U55 sizes only in the model's own files (the payloads, the CONFIG
word): the runtime (the CPU kernels, the driver, the simulated device) is the same text. Each
runtime .c is compiled once per session under ASan/UBSan, keyed by its text and the headers
beside it; per size only the model's .c and the harness are compiled and linked. That keeps the
fixture sweep (every fixture x four sizes) at a few minutes instead of a full build per size.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from mcugen.codegen.generate import render_harness
from mcugen.driver import Compiled, write_files
from mcugen.toolchain.host import SANITIZE_FLAGS, WARNING_FLAGS, HostProgram, TensorSpec, compiler

FLAGS = WARNING_FLAGS + SANITIZE_FLAGS


class ObjectCache:
    """Runtime objects by the hash of their source and of every header of the build."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.objects: dict[str, Path] = {}

    def runtime_object(self, build: Path, source: str, headers: str) -> Path:
        key = hashlib.sha256((build / source).read_bytes() + headers.encode()).hexdigest()[:24]
        if key not in self.objects:
            target = self.directory / f"{Path(source).stem}-{key}.o"
            _cc(build, ["-c", source, "-o", str(target)])
            self.objects[key] = target
        return self.objects[key]

    def program(self, compiled: Compiled, label: str, build: Path) -> HostProgram:
        """`compiled`'s harness in `build` (an empty directory), runtime objects from the cache."""
        write_files(compiled, build)
        (build / "harness_main.c").write_text(render_harness(compiled.prefix, label, compiled.graph))
        sources = sorted(name for name in compiled.code.files if name.endswith(".c"))
        own = [name for name in sources if name.startswith(f"{compiled.prefix}_")]
        headers = hashlib.sha256(b"".join((build / name).read_bytes() for name in sorted(compiled.code.files)
                                          if name.endswith(".h") and not name.startswith(f"{compiled.prefix}_")))
        objects = [str(self.runtime_object(build, name, headers.hexdigest()))
                   for name in sources if name not in own]
        _cc(build, [*own, "harness_main.c", *objects, "-o", "model_test", "-lm"])
        io = json.loads((build / "report.json").read_text())

        def specs(items: list[dict]) -> tuple[TensorSpec, ...]:
            return tuple(TensorSpec(i["name"], tuple(i["shape"]), i["dtype"]) for i in items)

        return HostProgram(build / "model_test", specs(io["inputs"]), specs(io["outputs"]))


def _cc(cwd: Path, arguments: list[str]) -> None:
    result = subprocess.run([compiler(), *FLAGS, "-I.", *arguments], cwd=cwd, capture_output=True, text=True,
                            check=False, timeout=300)
    assert result.returncode == 0, f"{arguments}: status {result.returncode}: {result.stderr[-2000:]}"
