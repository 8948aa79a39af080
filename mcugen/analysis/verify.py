"""`mcugen verify` of the whole model: every case's outputs of the compiled C against the reference.

Where the C runs:

- the host (default): the test harness (toolchain/host.py) compiled with the host compiler,
  for --target's C and memory plan (its portable C: the host has no DSP or Helium);
- the emulated core (`--target cortex-m4|cortex-m55 --qemu`, ST's `validate --mode target`):
  firmware/common's test application cross-compiled for the target (its fast kernels: DSP on
  Cortex-M4, Helium on Cortex-M55) with every case baked into ONE image (case.h with
  CASE_NUM_CASES, toolchain/cross.py's build_firmware, the same machinery as `profile --qemu`),
  run once on QEMU; the application writes each case's outputs back through semihosting
  (-DAPP_WRITE_OUTPUTS, read with per_layer.read_dump) and the host compares them here. The
  cases live in the image's flash, so more than CASE_BYTES_PER_IMAGE of them go in batches:
  the same build directory, where make recompiles only main.c and relinks for each batch.

The reference is mcugen's Python reference (reference.run_outputs) for every case; on the
emulated core also the runtime that the rounding mode reproduces (TFLM for tflm, LiteRT's
reference kernels for litert; analysis/oracle.py), unless `--reference python` or the runtime
is not installed, which the result line then says.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BuildError
from ..ir import Graph
from ..records import dataclass
from ..reference import run_outputs
from .oracle import REFERENCE_NAMES, reference_tensors
from .per_layer import read_dump

OUTPUTS_FILE = "mcugen_outputs.bin"  # main.c's APP_OUTPUTS_PATH default
# Input and expected output bytes of the cases in one image: with the model, the runtime and the
# weights they must fit the board's code memory (2 MiB on mps3-an547, 4 MiB on mps2-an386).
CASE_BYTES_PER_IMAGE = 512 * 1024
KERNELS = {"dsp": "DSP kernels", "mve": "Helium (MVE) kernels", None: "portable C kernels"}

Outputs = list[np.ndarray]


@dataclass
class VerifyResult:
    """The comparison of every case's outputs with each reference."""

    model: str
    cases: int
    outputs: int  # per case
    where: str  # "--target cortex-m4 on the host" or "--target cortex-m4 on QEMU mps2-an386 (DSP kernels)"
    rounding: str
    references: list[str] = field(default_factory=list)  # the references every output was held to
    mismatches: list[str] = field(default_factory=list)  # one line per differing output
    notes: list[str] = field(default_factory=list)  # why a reference was not used

    @property
    def failures(self) -> int:
        return len(self.mismatches)

    def summary(self) -> str:
        total = self.cases * self.outputs
        held_to = f"{' and '.join(self.references)} (rounding {self.rounding})"
        if self.mismatches:
            return f"{self.model}: {self.failures} output(s) of {total} differ from {held_to}, {self.where}"
        return f"{self.model}: {self.cases} cases, all {total} outputs bit-exact with {held_to}, {self.where}"


def where_text(options: Any, qemu: bool) -> str:
    target = options.target
    if not qemu:
        return f"--target {target.name} on the host"
    assert target.qemu is not None
    return f"--target {target.name} on QEMU {target.qemu.machine} ({KERNELS[target.fast_path]})"


def case_archive(cases: Sequence[Sequence[np.ndarray]], expected: Sequence[Outputs]) -> dict[str, np.ndarray]:
    """The firmware's case.npz for several cases: num_cases, then every input and expected
    output with a leading case axis (npz_to_header.py)."""
    archive: dict[str, np.ndarray] = {"num_cases": np.asarray(len(cases))}
    for i in range(len(cases[0])):
        archive[f"input{i}"] = np.stack([np.asarray(case[i]) for case in cases])
    for i in range(len(expected[0])):
        archive[f"output{i}"] = np.stack([np.asarray(outputs[i]) for outputs in expected])
    return archive


def batches(graph: Graph, count: int) -> list[range]:
    """The cases of each image: as many as CASE_BYTES_PER_IMAGE holds (at least one)."""
    per_case = sum(t.nbytes for t in graph.inputs) + sum(t.nbytes for t in graph.outputs)
    size = max(1, CASE_BYTES_PER_IMAGE // max(per_case, 1))
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def run_cases_on_core(model: Path, graph: Graph, options: Any, cases: Sequence[Sequence[np.ndarray]],
                      expected: Sequence[Outputs], build: Path) -> list[Outputs]:
    """Every case through the C on the emulated core of options.target, in as few images and
    QEMU runs as the board's memory allows (one, unless the cases are large); each case's
    outputs as the application wrote them back."""
    from ..toolchain.cross import require_firmware_tools
    from ..toolchain.qemu import qemu_board

    qemu_board(options.target)
    require_firmware_tools()
    # the application compares bytes: the expected outputs in the model's dtypes and shapes
    expected = [[np.asarray(v).astype(t.dtype.numpy, copy=False).reshape(t.shape) for v, t in zip(outputs, graph.outputs)]
                for outputs in expected]
    results: list[Outputs] = []
    for batch in batches(graph, len(cases)):
        results += _run_batch(model, graph, options, [cases[i] for i in batch], [expected[i] for i in batch], build)
    return results


def _run_batch(model: Path, graph: Graph, options: Any, cases: Sequence[Sequence[np.ndarray]],
               expected: Sequence[Outputs], build: Path) -> list[Outputs]:
    """One image with `cases`, one QEMU run."""
    from ..toolchain.cross import build_firmware, firmware_dir
    from ..toolchain.qemu import run_qemu

    elf = build_firmware(model, options, case_archive(cases, expected), build, extra_cflags="-DAPP_WRITE_OUTPUTS")
    run_dir = firmware_dir(build, options.target)
    written = run_dir / OUTPUTS_FILE
    written.unlink(missing_ok=True)
    run_qemu(elf, options.target, count_instructions=False, cwd=run_dir, require_pass=False)
    if not written.exists():
        raise BuildError(f"{elf}: the application wrote no outputs file through semihosting")
    results: list[Outputs] = [[] for _ in cases]
    for record in read_dump(written):
        number, index = record.op_index, record.tensor_index  # case and output number
        tensor = graph.outputs[index]
        if not 0 <= number < len(cases) or len(results[number]) != index or len(record.data) != tensor.nbytes:
            raise BuildError(f"{written}: unexpected record: case {number}, output {index}, "
                             f"{len(record.data)} bytes")
        results[number].append(np.frombuffer(record.data, dtype=tensor.dtype.numpy).reshape(tensor.shape).copy())
    if any(len(outputs) != len(graph.outputs) for outputs in results):
        raise BuildError(f"{written}: the application wrote {sum(map(len, results))} outputs, "
                         f"expected {len(cases) * len(graph.outputs)}")
    return results


def run_cases_on_host(model: Path, options: Any, cases: Sequence[Sequence[np.ndarray]]) -> list[Outputs]:
    from ..toolchain.host import build_program, run_program

    program = build_program(model.read_bytes(), options, model.name)
    return [list(outputs) for outputs in run_program(program, [list(case) for case in cases])]


def runtime_outputs(model: Path, graph: Graph, options: Any,
                    cases: Sequence[Sequence[np.ndarray]]) -> tuple[list[Outputs] | None, str]:
    """The outputs of the runtime that the rounding reproduces, or None and why not."""
    name = REFERENCE_NAMES[options.rounding]
    try:
        values = [reference_tensors(model.read_bytes(), list(case), options.rounding) for case in cases]
    except BuildError as error:  # the runtime's package is not installed
        return None, f"{name} not used: {error}"
    except (RuntimeError, ValueError) as error:  # the runtime cannot run this model
        return None, f"{name} not used: it failed on this model: {' '.join(str(error).split())[:200]}"
    missing = [t.name for t in graph.outputs if any(t.index not in values_of for values_of in values)]
    if missing:
        return None, f"{name} not used: it returned no value for output '{missing[0]}'"
    return [[values_of[t.index] for t in graph.outputs] for values_of in values], name


def compare_cases(result: VerifyResult, got: Sequence[Outputs], want: Sequence[Outputs], reference: str) -> None:
    """One mismatch line per output of a case that differs from `want` at all."""
    for number, (outputs, wanted) in enumerate(zip(got, want)):
        for index, (value, expected) in enumerate(zip(outputs, wanted)):
            expected = np.asarray(expected)
            value = np.asarray(value).reshape(expected.shape)
            differ = int(np.count_nonzero(value != expected))
            if differ:
                worst = np.max(np.abs(value.astype(np.float64) - expected.astype(np.float64)))
                result.mismatches.append(f"case {number} output{index}: {differ} of {expected.size} elements "
                                         f"differ from {reference} (max |diff| {worst:g})")


def verify_model(model: Path, graph: Graph, options: Any, cases: Sequence[Sequence[np.ndarray]],
                 qemu: bool = False, reference: str = "runtime",
                 progress: Callable[[str], None] = lambda _: None) -> VerifyResult:
    """Every case through the compiled C (on the host, or with `qemu` on the emulated core of
    options.target) against mcugen's Python reference and, on the core, the runtime."""
    python = [run_outputs(graph, list(case), options.rounding) for case in cases]
    progress("the Python reference")
    if qemu:
        with tempfile.TemporaryDirectory(prefix="mcugen-verify-") as build:
            got = run_cases_on_core(model, graph, options, cases, python, Path(build))
    else:
        got = run_cases_on_host(model, options, cases)
    progress(f"ran the C on {where_text(options, qemu)}")
    result = VerifyResult(model.name, len(cases), len(graph.outputs), where_text(options, qemu),
                          options.rounding.value)
    result.references.append("mcugen's Python reference")
    compare_cases(result, got, python, result.references[-1])
    if qemu and reference == "runtime":
        runtime, name = runtime_outputs(model, graph, options, cases)
        if runtime is None:
            result.notes.append(name)
        else:
            result.references.append(name)
            compare_cases(result, got, runtime, name)
    return result
