"""Command line: parse, call the pipeline, print. Errors become one line and an exit status."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import click
import numpy as np

from . import __version__
from .errors import McugenError, ModelError, VerifyMismatch
from .quantization import Rounding


def _fail_cleanly(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn an McugenError into 'error: ...' on stderr and its exit status, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except McugenError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(error.exit_code)

    return wrapper


POOL_OPTION = click.option(
    "--pool", "pools", multiple=True, metavar="NAME:SIZE[:fast|normal|slow]",
    help="A memory pool (repeatable), e.g. DTCM:64K:fast SRAM:320K PSRAM:8M:slow; default: one arena.")


def _build_options(function: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--rounding", type=click.Choice([r.value for r in Rounding]), default="tflm",
                     show_default=True,
                     help="tflm: bit-exact with TensorFlow Lite Micro; litert: with LiteRT's reference kernels."),
        click.option("--prefix", default=None, help="C name prefix (default: from the model's file name)."),
        click.option("--target", default="host", show_default=True,
                     type=click.Choice(["host", "cortex-m4", "cortex-m7", "cortex-m55"])),
        POOL_OPTION,
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _options(rounding: str, prefix: Optional[str], target: str, pools: Sequence[str] = ()) -> Any:
    from .driver import BuildOptions
    from .pools import parse_pools

    return BuildOptions(rounding=Rounding(rounding), prefix=prefix, target=target, pools=parse_pools(pools))


MODEL = click.argument("model", type=click.Path(path_type=Path))


@click.group()
@click.version_option(__version__, prog_name="mcugen")
def main() -> None:
    """Compile quantized TensorFlow Lite models into plain C for microcontrollers."""


@main.command()
@MODEL
@click.option("-o", "--output-dir", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Directory for the generated C, mcugen.mk and report.json.")
@_build_options
@_fail_cleanly
def build(model: Path, out_dir: Path, rounding: str, prefix: Optional[str], target: str,
          pools: Sequence[str]) -> None:
    """Generate C sources for MODEL into a directory."""
    from .driver import build as run_build

    compiled = run_build(model, out_dir, _options(rounding, prefix, target, pools))
    plan = compiled.plan
    click.echo(
        f"{model.name}: {len(compiled.order)} ops, arena {plan.arena_size} bytes "
        f"(lower bound {plan.lower_bound}, TFLite's order {plan.file_lower_bound}, gap {plan.gap_percent:+.1f}%), "
        f"weights {compiled.code.weights_bytes} bytes, "
        f"rounding {rounding} -> {out_dir}/{compiled.prefix}_model.c"
    )


def _load_cases(path: Path) -> list[np.ndarray]:
    """input0, input1, ... of an .npz, in that order (other arrays, such as expected outputs,
    are ignored); a gap in the numbering is an error, not a silently shifted input."""
    try:
        with np.load(path) as data:
            numbered = {int(k[5:]): k for k in data.files if re.fullmatch(r"input(0|[1-9][0-9]*)", k)}
            if not numbered:
                raise ModelError(f"{path}: no arrays named input0, input1, ...")
            if sorted(numbered) != list(range(len(numbered))):
                raise ModelError(f"{path}: inputs must be input0..input{len(numbered) - 1}, "
                                 f"found {', '.join(numbered[i] for i in sorted(numbered))}")
            return [data[numbered[i]] for i in range(len(numbered))]
    except (OSError, ValueError) as error:
        raise ModelError(f"{path}: cannot read as .npz ({error})") from None


def _describe(index: int, value: np.ndarray) -> str:
    flat = value.ravel()
    shown = np.array2string(flat[:16], separator=" ", max_line_width=200)
    more = f" ... ({flat.size} values)" if flat.size > 16 else ""
    top = f", argmax {int(np.argmax(flat))}" if 1 < flat.size <= 1000 else ""
    return f"output{index} {value.dtype}{list(value.shape)}{top}: {shown}{more}"


@main.command()
@MODEL
@click.option("--input", "input_path", required=True, type=click.Path(path_type=Path),
              help=".npz with input0, input1, ... in the model's input order.")
@click.option("--output", "output_path", type=click.Path(path_type=Path), default=None,
              help="Write output0, output1, ... to this .npz.")
@_build_options
@_fail_cleanly
def run(model: Path, input_path: Path, output_path: Optional[Path], rounding: str,
        prefix: Optional[str], target: str, pools: Sequence[str]) -> None:
    """Compile MODEL's C on the host, run it on the inputs, print and save the outputs."""
    from .harness import run_model

    inputs = _load_cases(input_path)
    outputs = run_model(model, [inputs], _options(rounding, prefix, "host", pools))[0]
    for index, value in enumerate(outputs):
        click.echo(_describe(index, value))
    if output_path is not None:
        arrays: dict[str, Any] = {f"output{i}": v for i, v in enumerate(outputs)}
        np.savez(output_path, **arrays)


def _random_inputs(graph: Any, rng: np.random.Generator) -> list[np.ndarray]:
    """One random case: integers over their whole range, bools, floats around the input's
    quantization range (or the unit normal when it has none)."""
    cases = []
    for tensor in graph.inputs:
        dtype = tensor.dtype.numpy
        if dtype.kind == "b":
            cases.append(rng.integers(0, 2, size=tensor.shape).astype(bool))
        elif dtype.kind == "f":
            scale = 1.0 if tensor.quant is None else 128 * tensor.quant.single_scale
            cases.append((rng.standard_normal(size=tensor.shape) * scale).astype(dtype))
        else:
            info = np.iinfo(dtype)
            cases.append(rng.integers(info.min, info.max, size=tensor.shape, endpoint=True, dtype=dtype))
    return cases


@main.command()
@MODEL
@click.option("--cases", default=5, show_default=True, help="Random input cases to add.")
@click.option("--input", "input_paths", multiple=True, type=click.Path(path_type=Path),
              help="Also check these .npz inputs (repeatable).")
@click.option("--seed", default=0, show_default=True)
@click.option("--rounding", type=click.Choice([r.value for r in Rounding]), default="tflm", show_default=True)
@_fail_cleanly
def verify(model: Path, cases: int, input_paths: Sequence[Path], seed: int, rounding: str) -> None:
    """Check the compiled C against mcugen's Python reference, case by case (exit 1 on mismatch)."""
    from .driver import BuildOptions, load_graph
    from .harness import build_program, run_program
    from .reference import run_outputs

    options = BuildOptions(rounding=Rounding(rounding))
    graph = load_graph(model, rounding=options.rounding)
    rng = np.random.default_rng(seed)
    all_cases = [_load_cases(p) for p in input_paths] + [_random_inputs(graph, rng) for _ in range(cases)]
    program = build_program(model.read_bytes(), options, model.name)
    results = run_program(program, all_cases)
    failures = 0
    for number, (inputs, c_outputs) in enumerate(zip(all_cases, results)):
        expected = run_outputs(graph, inputs, options.rounding)
        for index, (got, want) in enumerate(zip(c_outputs, expected)):
            differ = int(np.count_nonzero(got.reshape(want.shape) != want))
            if differ:
                failures += 1
                worst = int(np.max(np.abs(got.reshape(want.shape).astype(np.int64) - want.astype(np.int64))))
                click.echo(f"case {number} output{index}: {differ} of {want.size} elements differ (max |diff| {worst})")
    total = len(all_cases) * len(graph.outputs)
    if failures:
        raise VerifyMismatch(f"{model.name}: {failures} of {total} outputs differ from the reference")
    click.echo(f"{model.name}: {len(all_cases)} cases, all {total} outputs bit-exact with the reference ({rounding})")


@main.command()
@MODEL
@_fail_cleanly
def inspect(model: Path) -> None:
    """List ops, tensors, MACs and parameters, and what mcugen cannot run and why.

    Every unsupported op is listed at once (index, kind, rule, value); the exit status is then
    2, with a one-line summary on stderr.
    """
    from .analysis.inspect import inspect_model
    from .errors import UnsupportedError

    result = inspect_model(model)
    for line in result.lines:
        click.echo(line)
    if result.unsupported:
        ops = ", ".join(f"op {op.index} {op.kind.name}" for op in result.unsupported)
        raise UnsupportedError(f"{model.name}: {len(result.unsupported)} unsupported op(s): {ops}")


@main.command()
@MODEL
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (the numbers of report.json).")
@click.option("--picture", type=click.Path(path_type=Path), default=None,
              help="Also draw the plan as an SVG: time across, address up, one box per buffer.")
@click.option("--rounding", type=click.Choice([r.value for r in Rounding]), default="tflm", show_default=True)
@POOL_OPTION
@_fail_cleanly
def plan(model: Path, as_json: bool, picture: Optional[Path], rounding: str, pools: Sequence[str]) -> None:
    """The memory plan: pools, lower bounds and gap, and every buffer's pool, offset and lifetime."""
    from .analysis.memory_plan import plan_lines, plan_svg, planned

    compiled = planned(model, _options(rounding, None, "host", pools))
    if picture is not None:
        picture.write_text(plan_svg(compiled))
    for line in plan_lines(compiled, as_json):
        click.echo(line)


if __name__ == "__main__":
    main()
