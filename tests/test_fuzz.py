"""The fuzz harness: structured mutants of the public and fixture models (tests/mutate.py) either
are refused in one line (exit 2 at the CLI, no traceback) or build C that compiles warning-free
and runs clean on random inputs under AddressSanitizer and UBSan, with canaries after every
buffer (tests/fuzzing.py). A fixed-seed run here; benchmarks/fuzz/ runs the long campaign.

Every defect the fuzzer found has a row in the regression tables below: a mutation of one
model, and what must happen now.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import PUBLIC_MODELS, REPO
from fuzzing import (
    BUILT,
    FINDING,
    OPTIONS,
    REFUSED,
    Outcome,
    distinct_programs,
    run_sanitized,
    try_build,
)
from mutate import ModelSpec, Mutant, decode, encode, mutants

from mcugen.errors import BuildError
from mcugen.toolchain.host import build_program, run_program

FIXTURES = REPO / "tests" / "fixtures"
SEED = 17
COUNT = 300  # about 10 s of Python builds
SANITIZED_SAMPLE = 6  # distinct built programs compiled with ASan and UBSan (each a few seconds)
CLI_SAMPLE = 3  # refused mutants also run through the real command line


def _models() -> list[tuple[str, bytes]]:
    paths = sorted(PUBLIC_MODELS.glob("*.tflite")) + sorted(FIXTURES.glob("*.tflite"))
    return [(path.name, path.read_bytes()) for path in paths]


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return [try_build(mutant) for mutant in mutants(_models(), SEED, COUNT)]


def _findings(found: list[Outcome]) -> str:
    return "; ".join(f"{o.mutant.label}: {o.detail}" for o in found if o.verdict == FINDING)


def test_every_mutant_is_refused_in_one_line_or_builds(outcomes: list[Outcome]) -> None:
    assert not _findings(outcomes)
    verdicts = Counter(o.verdict for o in outcomes)
    # The mix is what makes the run worth having: most mutants refused, some built.
    assert verdicts[REFUSED] > COUNT // 2 and verdicts[BUILT] > COUNT // 20, verdicts
    assert {o.mutant.kind for o in outcomes} >= {"shape", "quantization", "index", "option", "buffer",
                                                 "opcode", "wiring", "dtype"}


def test_built_mutants_run_clean_under_the_sanitizers(outcomes: list[Outcome]) -> None:
    """A sample of the distinct built programs (compiling each costs seconds): every one
    compiles with -Wall -Wextra -Werror and runs on random inputs with no sanitizer report."""
    programs = distinct_programs(outcomes)
    step = max(len(programs) // SANITIZED_SAMPLE, 1)
    sample = programs[::step][:SANITIZED_SAMPLE]
    assert len(sample) == min(SANITIZED_SAMPLE, len(programs))
    ran = [run_sanitized(outcome, SEED) for outcome in sample]
    assert not _findings(ran)


def test_refused_mutants_get_one_line_and_exit_2_at_the_command_line(outcomes: list[Outcome],
                                                                      tmp_path: Path) -> None:
    refused = [o for o in outcomes if o.verdict == REFUSED][:CLI_SAMPLE]
    for k, outcome in enumerate(refused):
        model = tmp_path / f"mutant{k}.tflite"
        model.write_bytes(outcome.mutant.data)
        result = subprocess.run([sys.executable, "-m", "mcugen", "build", str(model), "-o", str(tmp_path / f"out{k}")],
                                capture_output=True, text=True, check=False, cwd=REPO)
        assert result.returncode == 2, (outcome.mutant.label, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (outcome.mutant.label, result.stderr)
        assert "Traceback" not in result.stderr
        assert not (tmp_path / f"out{k}").exists()  # no partial output


# --- regressions: each a defect the fuzzer found ------------------------------------------

Mutation = Callable[[ModelSpec], None]


def _mutant(model: str, mutation: Mutation) -> Mutant:
    path = (PUBLIC_MODELS if (PUBLIC_MODELS / model).exists() else FIXTURES) / model
    spec = decode(path.read_bytes())
    mutation(spec)
    return Mutant(model, "regression", mutation.__doc__ or "", encode(spec))


def _set_shape(tensor: int, shape: list[int]) -> Mutation:
    def mutate(spec: ModelSpec) -> None:
        spec.tensors[tensor].shape = shape
    mutate.__doc__ = f"tensor {tensor} shape {shape}"
    return mutate


def _set_output_shape(op: int, shape: list[int]) -> Mutation:
    def mutate(spec: ModelSpec) -> None:
        spec.tensors[spec.ops[op].outputs[0]].shape = shape
    return mutate


def _set_input(op: int, position: int, tensor: int) -> Mutation:
    def mutate(spec: ModelSpec) -> None:
        spec.ops[op].inputs[position] = tensor
    return mutate


def _set_option(op: int, name: str, value: object) -> Mutation:
    def mutate(spec: ModelSpec) -> None:
        spec.ops[op].options[name] = value
    return mutate


def _set_scale(tensor: int, scale: float) -> Mutation:
    def mutate(spec: ModelSpec) -> None:
        spec.tensors[tensor].scale = [scale]
    return mutate


def _set_scales(scales: dict[int, float]) -> Mutation:
    def mutate(spec: ModelSpec) -> None:
        for tensor, scale in scales.items():
            spec.tensors[tensor].scale = [scale]
    return mutate


def _set_type(tensor: int, tensor_type: int) -> Mutation:
    def mutate(spec: ModelSpec) -> None:
        spec.tensors[tensor].type = tensor_type
    return mutate


def _no_options(op: int) -> Mutation:
    def mutate(spec: ModelSpec) -> None:
        spec.ops[op].options_type, spec.ops[op].options = 0, {}
    return mutate


def _output_is_input(spec: ModelSpec) -> None:
    spec.outputs = list(spec.inputs)


REFUSED_ROWS = [
    # (model, mutation, what the one-line message must say); before the fix: the comment.
    ("depthwise_same_relu6_i16.tflite", _set_shape(0, [1, 8, 8, 0]), r"has no elements"),  # ZeroDivisionError
    ("leaky_relu_i16.tflite", _set_input(0, 0, -1), r"at least 1 input"),  # AssertionError in a rule
    ("conv2d_per_tensor.tflite", _set_shape(0, [1, 8, 4]), r"input is a 4-D NHWC tensor"),  # IndexError
    ("leaky_relu.tflite", _set_option(0, "Alpha", float("inf")), r"alpha inf; the rule: float options are finite"),
    ("relu6.tflite", _set_scale(0, 1e-45), r"scales are finite, positive and within"),  # OverflowError
    ("concat_channels.tflite", _no_options(0), r"differ outside the axis 0"),  # ASan memcpy-param-overlap
    # UBSan: shift exponent 100 too large (a rescale factor of 1e30 in mcugen_requantize)
    ("leaky_relu_i16.tflite", _set_option(0, "Alpha", 1e30), r"rescale factor .* Got: factor 1\.09755e\+30 \(shift 100\)"),
    ("leaky_relu.tflite", _set_scales({0: 2.0**60, 1: 2.0**-60}), r"rescale factor .*\(shift 118\)"),
    # invoke failed with MCUGEN_ARG_ERROR (the kernel's shift check) on every input: the next two
    ("tanh.tflite", _set_scales({0: 1e12}), r"an input scale below 16 .* Got: input scale 1e\+12"),
    # A canary after a buffer touched (SPLIT copied int32 elements into int8 outputs)
    ("split_channels.tflite", _set_type(0, 2), r"all of one dtype .* Got: 'xs_0' is int32"),
    ("softmax_rank2_i16.tflite", _set_scales({0: 1e12}), r"rescale factor .*\(shift 5[0-9]\)"),
    ("tanh.tflite", _set_shape(1, [144]), r"output shape does not follow .* Got: input"),  # accepted
    ("batch_matmul_i16.tflite", _set_shape(2, [1, 4, 3]), r"output shape does not follow"),  # invoke failed
    ("mean_hw_keepdims_i16.tflite", _set_shape(2, [1, 1, 1, 1000]), r"output shape does not follow"),  # accepted
    # The example, an activation of 2^24 rows: refused now by the size and shape checks
    # (before: by whichever support rule of a later op noticed, or not at all).
    ("ic_resnet8.tflite", _set_output_shape(0, [1, 2**24, 32, 16]), r"elements; the rule: at most 2147483647"),
    ("ic_resnet8.tflite", _set_output_shape(0, [1, 2**24, 1, 1]), r"output shape does not follow"),
]


@pytest.mark.parametrize("model, mutation, message", REFUSED_ROWS, ids=[f"{r[0]}-{r[2][:20]}" for r in REFUSED_ROWS])
def test_a_defect_the_fuzzer_found_is_refused(model: str, mutation: Mutation, message: str) -> None:
    outcome = try_build(_mutant(model, mutation))
    assert outcome.verdict == REFUSED, outcome.detail
    assert "\n" not in outcome.detail
    assert re.search(message, outcome.detail), outcome.detail


def test_a_model_whose_output_is_its_input_builds_guarded_and_runs_clean() -> None:
    """The graph output set to the graph input: every op is dead. The guarded build left its
    canary check unused (-Werror=unused-function); now it checks the pools at the end of invoke."""
    outcome = try_build(_mutant("abs.tflite", _output_is_input))
    assert outcome.verdict == BUILT, outcome.detail
    ran = run_sanitized(outcome, SEED)
    assert ran.verdict == BUILT, ran.detail


def test_a_program_that_runs_too_long_is_a_one_line_error() -> None:
    """run_program's timeout was a subprocess.TimeoutExpired traceback (a hanging mutant)."""
    program = build_program((FIXTURES / "abs.tflite").read_bytes(), OPTIONS, "abs.tflite")
    case = [np.zeros(spec.shape, spec.dtype) for spec in program.inputs]
    with pytest.raises(BuildError, match=r"ran for over 1e-06 s"):
        run_program(program, [case] * 2000, timeout=1e-6)
