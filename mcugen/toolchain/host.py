"""Compile the generated C with the host compiler into a test program, run it, read outputs.

Compiled programs are cached under $MCUGEN_CACHE_DIR (default ~/.cache/mcugen) by a key made
of the model's bytes, the build options, the compiler, the flags and a fingerprint of mcugen's
own sources and templates, so a second run of the same model skips generation and compilation.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..codegen.generate import render_harness
from ..driver import BuildOptions, compile_model, write_files
from ..errors import BuildError, ModelError
from ..ir import CustomKernel
from ..quantization import Rounding
from ..records import dataclass
from .process import run_tool

PACKAGE = Path(__file__).resolve().parents[1]
# -ffp-contract=off as in mcugen.mk: float islands must not fuse multiply-adds.
WARNING_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-ffp-contract=off"]
RELEASE_FLAGS = ["-O2"]
SANITIZE_FLAGS = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                  "-fno-sanitize-recover=all"]
# A pathological kernel must fail the build, not hang it (a model compiles in seconds).
COMPILE_TIMEOUT_S = 300
RUN_TIMEOUT_S = 600


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class HostProgram:
    """A compiled harness and the layout of its inputs and outputs."""

    path: Path
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]


def cache_root() -> Path:
    return Path(os.environ.get("MCUGEN_CACHE_DIR") or Path.home() / ".cache" / "mcugen")


def compiler() -> str:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise BuildError(f"no C compiler '{cc}' on PATH (set CC to one)")
    return cc


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """A hash of mcugen's Python sources and templates: a new mcugen invalidates the cache."""
    digest = hashlib.sha256()
    # mcugen/templates is a symbolic link, which rglob does not follow: walk it on its own
    # (without this a changed kernel or template reused a program compiled from the old one).
    templates = PACKAGE / "templates"
    paths = [(path, path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*")]
    paths += [(path, Path("templates") / path.relative_to(templates.resolve()))
              for path in templates.resolve().rglob("*")]
    for path, name in sorted(paths, key=lambda item: str(item[1])):
        if path.is_file() and path.suffix in {".py", ".c", ".h", ".j2"} and "__pycache__" not in path.parts:
            digest.update(str(name).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _cache_key(model: bytes, options: BuildOptions, flags: Sequence[str], cc: str) -> str:
    digest = hashlib.sha256()
    for part in (hashlib.sha256(model).hexdigest(), options.key(), " ".join(flags), cc, source_fingerprint()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _load_program(directory: Path) -> HostProgram | None:
    """A cached program, its input and output layout read from the build's report.json."""
    binary, report = directory / "model_test", directory / "report.json"
    if not (binary.exists() and report.exists()):
        return None
    io = json.loads(report.read_text())

    def specs(items: list[dict]) -> tuple[TensorSpec, ...]:
        return tuple(TensorSpec(i["name"], tuple(i["shape"]), i["dtype"]) for i in items)

    return HostProgram(binary, specs(io["inputs"]), specs(io["outputs"]))


def _first_error(stderr: str) -> str:
    """The compiler's first line that names an error (the first line is often 'In file included')."""
    lines = stderr.strip().splitlines() or ["(no output)"]
    return next((line for line in lines if "error" in line), lines[0])


def _failed_part(kernels: Sequence[CustomKernel], error: str) -> str:
    """What the compiler's error is in: a user's custom-op kernel (its copy keeps the user's
    file name through #line) or mcugen's own C."""
    for kernel in kernels:
        if error.startswith(f"{kernel.source_name}:"):
            return f"the kernel {kernel.source_name} of --custom-op {kernel.name}"
    return "the generated C"


def _missing_kernel(kernels: Sequence[CustomKernel], stderr: str) -> str | None:
    """The linker's complaint about a kernel file that defines no `<NAME>_kernel`, in words."""
    for kernel in kernels:
        if re.search(rf"undefined reference to .{kernel.c_name}_kernel\b", stderr):
            return (f"the kernel {kernel.source_name} of --custom-op {kernel.name} defines no function "
                    f"{kernel.c_name}_kernel (docs/custom_ops.md)")
    return None


def build_program(model: bytes, options: BuildOptions, label: str, sanitize: bool = False,
                  dump: bool = False, profile: bool = False) -> HostProgram:
    """Generate the C for `model`, compile it with its harness, and cache the program.

    `dump` compiles in the MCUGEN_DUMP hook: the program then takes a third file argument and
    writes every op's outputs to it (run_program's `dump_to`, read by analysis/per_layer.py).
    `profile` compiles in the MCUGEN_PROFILE hook: the program prints per-op times to stdout
    (run_profiled; read by analysis/profile.py).
    """
    cc = compiler()
    flags = WARNING_FLAGS + (SANITIZE_FLAGS if sanitize else RELEASE_FLAGS) + (["-DMCUGEN_DUMP"] if dump else [])
    flags += ["-DMCUGEN_PROFILE"] if profile else []
    # The harness runs any --target's C on the host on purpose (the portable paths, the same
    # outputs): the model's check that the compiler builds for the planned core stays quiet.
    flags += ["-DMCUGEN_NO_TARGET_CHECK"] if options.target.is_cross else []
    directory = cache_root() / "harness" / _cache_key(model, options, flags, cc)
    cached = _load_program(directory)
    if cached is not None:
        return cached

    compiled = compile_model(model, options, label)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=directory.parent))
    try:
        write_files(compiled, staging)
        (staging / "harness_main.c").write_text(render_harness(compiled.prefix, label, compiled.graph))
        sources = [name for name in sorted(compiled.code.files) if name.endswith(".c")] + ["harness_main.c"]
        command = [cc, *flags, "-I.", *sources, "-o", "model_test", "-lm"]  # float kernels use libm
        try:
            result = subprocess.run(command, check=False, cwd=staging, capture_output=True, text=True,
                                    timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BuildError(f"{label}: compiling the generated C took over {COMPILE_TIMEOUT_S} s") from None
        if result.returncode != 0:
            kernels, first = compiled.options.custom_ops, _first_error(result.stderr)
            missing = _missing_kernel(kernels, result.stderr)
            raise BuildError(f"{label}: {missing}" if missing else
                             f"{label}: {_failed_part(kernels, first)} failed to compile: {first}")
        try:
            staging.rename(directory)
        except OSError:  # another process cached the same program first
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    program = _load_program(directory)
    assert program is not None
    return program


def check_inputs(program: HostProgram, inputs: Sequence[np.ndarray], where: str) -> list[np.ndarray]:
    """The model's inputs, in order, each of the model's dtype and element count."""
    if len(inputs) != len(program.inputs):
        raise ModelError(f"{where}: {len(inputs)} inputs given, the model takes {len(program.inputs)}")
    checked = []
    for i, (value, spec) in enumerate(zip(inputs, program.inputs)):
        array = np.asarray(value)
        if array.dtype != np.dtype(spec.dtype):
            raise ModelError(f"{where}: input{i} is {array.dtype}, the model's '{spec.name}' is {spec.dtype}")
        if tuple(array.shape) != tuple(spec.shape):
            raise ModelError(
                f"{where}: input{i} has shape {list(array.shape)}, the model's '{spec.name}' is {list(spec.shape)}"
            )
        checked.append(np.ascontiguousarray(array).reshape(spec.shape))
    return checked


def run_program(program: HostProgram, cases: Sequence[Sequence[np.ndarray]],
                dump_to: Path | None = None, where: str = "run",
                timeout: float = RUN_TIMEOUT_S) -> list[list[np.ndarray]]:
    """Run every case (a list of inputs) in one process; returns the outputs of each case.
    A program built with dump=True needs `dump_to`, the file its hook writes; `where` names
    the inputs' source in messages (the .npz a user gave). A run past `timeout` seconds is a
    BuildError."""
    with tempfile.TemporaryDirectory(prefix="mcugen-run-") as tmp:
        in_path, out_path = Path(tmp) / "in.bin", Path(tmp) / "out.bin"
        with open(in_path, "wb") as stream:
            for case in cases:
                stream.writelines(value.tobytes() for value in check_inputs(program, case, where))
        extra = [] if dump_to is None else [str(dump_to)]
        try:
            result = subprocess.run([str(program.path), str(in_path), str(out_path), *extra], check=False,
                                    capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BuildError(f"{where}: the compiled model ran for over {timeout:g} s and was stopped") from None
        if result.returncode != 0:
            detail = " ".join(result.stderr.split())[:400] or "no message"
            raise BuildError(f"the compiled model exited with status {result.returncode}: {detail}")
        data = out_path.read_bytes()
    outputs: list[list[np.ndarray]] = []
    position = 0
    for _ in cases:
        case_outputs = []
        for spec in program.outputs:
            chunk = data[position : position + spec.nbytes]
            position += spec.nbytes
            case_outputs.append(np.frombuffer(chunk, dtype=spec.dtype).reshape(spec.shape).copy())
        outputs.append(case_outputs)
    if position != len(data):
        raise BuildError(f"the compiled model wrote {len(data)} bytes, expected {position}")
    return outputs


def run_profiled(program: HostProgram, case: Sequence[np.ndarray], runs: int) -> str:
    """Run one case `runs` times through a program built with profile=True; its stdout (the
    PROFILE lines of templates/harness_main.c.j2)."""
    with tempfile.TemporaryDirectory(prefix="mcugen-profile-") as tmp:
        in_path, out_path = Path(tmp) / "in.bin", Path(tmp) / "out.bin"
        in_path.write_bytes(b"".join(v.tobytes() for v in check_inputs(program, case, "profile")) * runs)
        result = run_tool([str(program.path), str(in_path), str(out_path)], RUN_TIMEOUT_S, capture_output=True)
    if result.returncode != 0:
        raise BuildError(f"the profiled model exited with status {result.returncode}: "
                         f"{' '.join(result.stderr.split())[:300]}")
    return result.stdout


def run_model(model: Path, cases: Sequence[Sequence[np.ndarray]], options: BuildOptions,
              sanitize: bool = False, where: str = "run") -> list[list[np.ndarray]]:
    if not model.is_file():
        raise ModelError(f"{model}: no such file")
    program = build_program(model.read_bytes(), options, model.name, sanitize)
    return run_program(program, cases, where=where)


def run_tflite_bytes(model: bytes, inputs: Sequence[np.ndarray], rounding: Rounding,
                     sanitize: bool = False) -> list[np.ndarray]:
    """One inference of an in-memory model through the compiled C (for tests)."""
    program = build_program(model, BuildOptions(rounding=rounding), "model.tflite", sanitize)
    return run_program(program, [inputs])[0]
