"""Run mutants (tests/mutate.py) through mcugen and judge each: the fuzz harness's oracle.

A mutant passes when mcugen either refuses it with one McugenError line (what the CLI prints
as one `error:` line with exit status 2) or builds C that compiles with -Wall -Wextra -Werror
and runs on random inputs under AddressSanitizer and UBSan, with canaries after every buffer,
without a finding. Anything else is a finding: another exception (a traceback at the CLI), a
message over several lines, a build that takes too long, a compile error, a sanitizer report,
a touched canary, a non-zero exit of the compiled program.
"""

from __future__ import annotations

import hashlib
import signal
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from mutate import Mutant

from mcugen.driver import BuildOptions, Compiled, compile_model
from mcugen.errors import McugenError
from mcugen.toolchain.host import TensorSpec, build_program, run_program

GUARD = 16  # canary bytes after every buffer (driver.BuildOptions.guard)
OPTIONS = BuildOptions(guard=GUARD)
BUILD_TIMEOUT_S = 60  # a mutant's build in Python; real models take well under a second
RANDOM_CASES = 2
RUN_TIMEOUT_S = 60.0  # a mutant's compiled program (ASan and UBSan slow it down several times)

REFUSED, BUILT, FINDING = "refused", "built", "finding"


@dataclass
class Outcome:
    mutant: Mutant
    verdict: str  # REFUSED, BUILT or FINDING
    detail: str  # the message, or what went wrong
    code_key: str = ""  # for BUILT: the generated C and its I/O, to compile each distinct program once


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def _code_key(compiled: Compiled) -> str:
    digest = hashlib.sha256()
    for name, text in sorted(compiled.code.files.items()):
        digest.update(name.encode())
        # The stamp names the model's sha256, which every mutant changes.
        digest.update("\n".join(line for line in text.splitlines() if "sha256" not in line).encode())
    for tensor in [*compiled.graph.inputs, *compiled.graph.outputs]:
        digest.update(f"{tensor.shape}{tensor.dtype}".encode())
    return digest.hexdigest()


def try_build(mutant: Mutant, options: BuildOptions = OPTIONS) -> Outcome:
    """Build the mutant in Python: refused, built, or a finding."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(BUILD_TIMEOUT_S)
    try:
        compiled = compile_model(mutant.data, options, f"{mutant.source}")
    except McugenError as error:
        message = str(error)
        if not message or "\n" in message or "Traceback" in message:
            return Outcome(mutant, FINDING, f"message not one line: {message!r}")
        return Outcome(mutant, REFUSED, message)
    except _Timeout:
        return Outcome(mutant, FINDING, f"build took over {BUILD_TIMEOUT_S} s")
    except (Exception, RecursionError) as error:  # noqa: BLE001 - any other exception is the finding
        where = traceback.extract_tb(error.__traceback__)[-1]
        return Outcome(mutant, FINDING, f"{type(error).__name__}: {error} at {where.filename}:{where.lineno}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(mutant, BUILT, "built", _code_key(compiled))


def random_inputs(specs: Sequence[TensorSpec], rng: np.random.Generator) -> list[np.ndarray]:
    """Random values over each input's whole range (float32: a wide normal spread)."""
    arrays = []
    for spec in specs:
        dtype = np.dtype(spec.dtype)
        if dtype.kind == "f":
            arrays.append((rng.standard_normal(spec.shape) * 100).astype(dtype))
        elif dtype.kind == "b":
            arrays.append(rng.integers(0, 2, spec.shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            arrays.append(rng.integers(info.min, info.max, spec.shape, dtype=dtype, endpoint=True))
    return arrays


def run_sanitized(outcome: Outcome, seed: int, options: BuildOptions = OPTIONS) -> Outcome:
    """Compile a built mutant with ASan and UBSan and run it on random inputs."""
    mutant = outcome.mutant
    try:
        program = build_program(mutant.data, options, mutant.source, sanitize=True)
        rng = np.random.default_rng(seed)
        run_program(program, [random_inputs(program.inputs, rng) for _ in range(RANDOM_CASES)],
                    timeout=RUN_TIMEOUT_S)
    except McugenError as error:
        return Outcome(mutant, FINDING, f"compiled program: {error}", outcome.code_key)
    return Outcome(mutant, BUILT, "ran clean", outcome.code_key)


def distinct_programs(outcomes: Iterable[Outcome]) -> list[Outcome]:
    """One built outcome per distinct generated program."""
    seen: dict[str, Outcome] = {}
    for outcome in outcomes:
        if outcome.verdict == BUILT and outcome.code_key not in seen:
            seen[outcome.code_key] = outcome
    return list(seen.values())
