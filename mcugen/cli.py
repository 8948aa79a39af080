"""Command line: parse, call the pipeline, print. Errors become one line and an exit status."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np

from . import __version__
from .errors import McugenError, ModelError, VerifyMismatch
from .gcpause import frozen_imports
from .npu.config import CONFIGS as NPU_CONFIGS
from .npu.config import NpuConfig, npu_config
from .quantization import Rounding
from .targets import QEMU_TARGET_NAMES, TARGET_NAMES, TARGETS


def _fail_cleanly(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn an McugenError into 'error: ...' on stderr and its exit status, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with frozen_imports():  # gcpause.py: ~5 % of a build
                return command(*args, **kwargs)
        except McugenError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(error.exit_code)

    return wrapper


def _writable_file(path: Path) -> Path:
    """A file path the command may write: its parent is an existing, writable directory and the
    path itself is not a directory. Checked before any work, so a typo costs nothing."""
    parent = path.parent
    if path.is_dir():
        raise McugenError(f"{path}: is a directory; give a file name")
    if not parent.exists():
        raise McugenError(f"{path}: the directory {parent} does not exist")
    _writable_directory(parent, path)
    return path


def _writable_directory(directory: Path, wanted: Path) -> None:
    """`directory` exists (or can be created under an existing directory) and is writable."""
    existing = directory
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise McugenError(f"{wanted}: cannot be created: {existing} is not a directory")
    if existing == directory and not os.access(directory, os.W_OK | os.X_OK):
        raise McugenError(f"{wanted}: {directory} is not writable")
    if existing != directory and not os.access(existing, os.W_OK | os.X_OK):
        raise McugenError(f"{wanted}: cannot be created: {existing} is not writable")


def _output_directory(path: Path) -> Path:
    """A directory build may write into: an existing writable directory, or one it can create."""
    if path.exists() and not path.is_dir():
        raise McugenError(f"{path}: exists and is not a directory")
    _writable_directory(path, path)
    return path


QEMU_BOARDS = ", ".join(f"{t.name}: {t.qemu.machine}" for t in TARGETS.values() if t.qemu is not None)

POOL_OPTION = click.option(
    "--pool", "pools", multiple=True, metavar="NAME:SIZE[:fast|normal|slow]",
    help="A memory pool (repeatable), e.g. DTCM:64K:fast SRAM:320K PSRAM:8M:slow; default: one arena.")


TILING_OPTION = click.option(
    "--tiling/--no-tiling", "tiling", default=True, show_default=True,
    help="Run the memory-peak chains of spatial ops in stripes when that lowers the arena.")


OPTIMIZE_OPTION = click.option(
    "--optimize", "optimize", default="balanced", show_default=True, type=click.Choice(["ram", "balanced", "speed"]),
    help="ram: the least RAM at any instruction cost (stripes, and portable kernels where a fast path's scratch "
         "raises the arena); speed: the fewest estimated instructions (no tiling unless free); balanced: the "
         "least RAM within 3% of the fastest (docs/memory.md).")


KERNEL_CHOICE_OPTION = click.option(
    "--kernel-choice/--no-kernel-choice", "kernel_choice", default=True, show_default=True,
    help="Let --optimize run an op's portable C where leaving out its fast path's scratch lowers the arena "
         "(--no-kernel-choice: every op keeps its fast path; docs/memory.md).")


TARGET_OPTION = click.option(
    "--target", default="host", show_default=True, type=click.Choice(TARGET_NAMES),
    help="The CPU: its kernels' fast paths (and the scratch planned for them), compiler flags, emulator and clock.")


def _npu_value(_ctx: click.Context, _param: click.Parameter, name: str | None) -> NpuConfig | None:
    return None if name is None else npu_config(name)


# The Ethos-U55 beside the core, as an NpuConfig (None: no NPU); inspect and build share it.
NPU_OPTION = click.option(
    "--npu", "npu", default=None, type=click.Choice(list(NPU_CONFIGS)), callback=_npu_value,
    help="An Ethos-U55 of this size beside the core: runs of ops it takes become NPU segments with mcugen's "
         "own command streams (docs/npu.md).")
NPU_WEIGHTS_OPTION = click.option(
    "--npu-weights", "npu_weights", type=click.Choice(["auto", "sram", "flash"]), default="auto", show_default=True,
    help="With --npu: where NPU ops read their weights. sram: a DMA copies each op's weights into an arena buffer "
         "while the previous op runs; flash: straight from flash; auto: SRAM where that does not grow the arena.")
PREFIX_OPTION = click.option("--prefix", default=None, help="C name prefix (default: from the model's file name).")
# build takes several models: --prefix once per model, in their order
PREFIXES_OPTION = click.option(
    "--prefix", "prefixes", multiple=True, metavar="NAME",
    help="C name prefix, once per model in the models' order (default: from each model's file name).")


MAX_TENSOR_BYTES_OPTION = click.option(
    "--max-tensor-bytes", "max_tensor_bytes", default=None, metavar="BYTES[K|M]",
    help="Refuse a model with a tensor larger than this (default 256M: more than any microcontroller holds; "
         "see docs/validation.md).")


def _max_tensor_bytes(text: str | None) -> int | None:
    """--max-tensor-bytes: a positive byte count, with an optional K or M suffix (binary)."""
    if text is None:
        return None
    match = re.fullmatch(r"\s*([0-9]+)\s*([kKmM]?)\s*", text)
    value = int(match.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20}[match.group(2).lower()] if match else 0
    if value <= 0:
        raise McugenError(f"--max-tensor-bytes '{text}': the rule: a positive byte count, such as 65536, 64K or 8M")
    return value


def _with_npu(options: Any, npu: NpuConfig | None) -> Any:
    """--npu NAME: the target with that Ethos-U55 configuration (Target.npu)."""
    if npu is None:
        return options
    return dataclasses.replace(options, target=dataclasses.replace(options.target, npu=npu))


CUSTOM_OP_OPTION = click.option(
    "--custom-op", "custom_ops", multiple=True, metavar="NAME=KERNEL.c[:REFERENCE.py]",
    help="The C kernel (and optional Python reference) for the model's CUSTOM ops of custom code NAME "
         "(repeatable; see docs/custom_ops.md).")


def _build_options(function: Callable[..., Any], prefix: Any = PREFIX_OPTION) -> Callable[..., Any]:
    options = [
        click.option("--rounding", type=click.Choice([r.value for r in Rounding]), default="tflm",
                     show_default=True,
                     help="tflm: bit-exact with TensorFlow Lite Micro; litert: with LiteRT's reference kernels."),
        prefix,
        TARGET_OPTION,
        POOL_OPTION,
        CUSTOM_OP_OPTION,
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _options(rounding: str, prefix: str | None, target_name: str, pools: Sequence[str] = (),
             tiling: bool = True, arena: str = "static", max_tensor_bytes: str | None = None,
             custom_ops: Sequence[str] = (), optimize: str = "balanced") -> Any:
    from .custom_ops import parse_custom_ops
    from .driver import BuildOptions
    from .frontend.validate import DEFAULT_MAX_TENSOR_BYTES
    from .memory.pools import parse_pools
    from .targets import target

    limit = _max_tensor_bytes(max_tensor_bytes)
    return BuildOptions(rounding=Rounding(rounding), prefix=prefix, target=target(target_name),
                        pools=parse_pools(pools), tiling=tiling, arena=arena,
                        max_tensor_bytes=DEFAULT_MAX_TENSOR_BYTES if limit is None else limit,
                        custom_ops=parse_custom_ops(custom_ops), optimize=optimize)


MODEL = click.argument("model", type=click.Path(path_type=Path))


@click.group()
@click.version_option(__version__, prog_name="mcugen")
def main() -> None:
    """Compile quantized TensorFlow Lite models into plain C for microcontrollers."""


@main.command()
@click.argument("models", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Directory for the generated C, mcugen.mk, CMakeLists.txt and report.json.")
@click.option("--size/--no-size", "size", default=None,
              help="Measure code size (arm-none-eabi-gcc -Os) into report.json; default: for Cortex-M targets.")
@click.option("--instructions", is_flag=True,
              help="Run the model on the emulated core of --target (QEMU, as mcugen profile --qemu) and record "
                   "instructions per inference and per op in report.json.")
@click.option("--arena", type=click.Choice(["static", "external"]), default="static", show_default=True,
              help="static: each model owns its arena; external: the application binds one with "
                   "<prefix>_init_arena(), and models that run in turn can share it.")
@click.option("--weights-file", is_flag=True,
              help="Write each model's weights to DIR/<prefix>_weights.bin instead of C arrays; the "
                   "application binds the blob with <prefix>_init_weights().")
@click.option("--sparse", "sparse_weights", is_flag=True,
              help="Keep int8 FULLY_CONNECTED weights sparse (a bit mask and the non-zero values) where that "
                   "takes less flash; report.json's sparse_weights gives both sizes per op.")
@click.option("--npu-async", "npu_async", is_flag=True,
              help="With --npu: start each NPU segment, run the CPU ops that do not depend on it, then wait "
                   "(the planner keeps their buffers off the NPU's).")
@functools.partial(_build_options, prefix=PREFIXES_OPTION)
@TILING_OPTION
@OPTIMIZE_OPTION
@KERNEL_CHOICE_OPTION
@MAX_TENSOR_BYTES_OPTION
@NPU_OPTION
@NPU_WEIGHTS_OPTION
@_fail_cleanly
def build(models: Sequence[Path], out_dir: Path, rounding: str, prefixes: Sequence[str], target: str,
          pools: Sequence[str], size: bool | None, instructions: bool, tiling: bool, arena: str,
          max_tensor_bytes: str | None, weights_file: bool, npu: NpuConfig | None, sparse_weights: bool,
          custom_ops: Sequence[str], npu_async: bool, optimize: str, kernel_choice: bool,
          npu_weights: str) -> None:
    """Generate C sources for one or more MODELS into one directory (one shared runtime)."""
    from .analysis.measure import build_models
    from .modelset import check_output_dir

    _output_directory(out_dir)
    if prefixes:
        check_output_dir(out_dir, prefixes)  # before the work, when the prefixes are known
    options = _options(rounding, None, target, pools, tiling, arena, max_tensor_bytes, custom_ops, optimize)
    options = _with_npu(dataclasses.replace(options, weights_file=weights_file, sparse_weights=sparse_weights,
                                            npu_async=npu_async, npu_weights=npu_weights,
                                            kernel_choice=kernel_choice), npu)
    for compiled in build_models(models, out_dir, options, prefixes, size=size, instructions=instructions):
        _print_build(compiled, out_dir)
    if len(models) > 1:
        click.echo(f"{len(models)} models, one runtime -> {out_dir}/mcugen.mk, {out_dir}/CMakeLists.txt")


def _print_build(compiled: Any, out_dir: Path) -> None:
    from .memory.plan import state_bytes_of

    target, rounding = compiled.options.target.name, compiled.options.rounding.value
    plan = compiled.plan
    click.echo(
        f"{compiled.model_label}: {len(compiled.order)} ops, arena {plan.arena_size} bytes "
        f"(lower bound {plan.lower_bound}, TFLite's order {plan.file_lower_bound}, gap {plan.gap_percent:+.1f}%), "
        f"weights {compiled.code.weights_bytes} bytes, "
        + (f"state {state} bytes (kept across invokes), " if (state := state_bytes_of(plan)) else "")
        + f"rounding {rounding} -> {out_dir}/{compiled.prefix}_model.c"
    )
    if plan.trade_off is not None:
        click.echo(plan.trade_off.line())
    if compiled.options.sparse_weights:
        _print_sparse(compiled.report()["sparse_weights"])
    code = compiled.code_size
    if code.get("measured"):
        click.echo(f"code size ({target}, -Os): runtime {code['runtime_flash_bytes']} bytes of flash "
                   f"(text {code['text']}, rodata {code['rodata']}, data {code['data']}), bss {code['bss']}, "
                   f"weights {code['weights_bytes']}")
    counted = compiled.instructions
    if counted.get("measured"):
        click.echo(f"instructions ({counted['where']}): {counted['per_inference']:,} per inference, "
                   f"{counted['per_mac']} per MAC")


def _print_sparse(sparse: dict[str, Any]) -> None:
    """--sparse: the weights' flash both ways, and each op that stays dense with its reason."""
    built = [op for op in sparse["ops"] if op["built"] == "sparse"]
    click.echo(f"sparse weights: {len(built)} op(s) sparse, weights of weighted ops {sparse['built_bytes']} bytes "
               f"as built, {sparse['dense_bytes']} dense (saved {sparse['saved_bytes']})")
    for op in sparse["ops"]:
        if op["built"] == "dense":
            click.echo(f"  {op['kind']} (op {op['index']}, '{op['name']}'): {op['reason']}")


def _load_cases(path: Path) -> list[np.ndarray]:
    """input0, input1, ... of an .npz, in that order (other arrays, such as expected outputs,
    are ignored); a gap in the numbering is an error, not a silently shifted input."""
    if path.is_file() and path.suffix.lower() == ".npy":
        raise ModelError(f"{path}: a single .npy array; inputs come in an .npz with arrays "
                         "input0, input1, ... (numpy.savez)")
    try:
        with np.load(path) as data:
            numbered = {int(k[5:]): k for k in data.files if re.fullmatch(r"input(0|[1-9][0-9]*)", k)}
            if not numbered:
                raise ModelError(f"{path}: no arrays named input0, input1, ...")
            if sorted(numbered) != list(range(len(numbered))):
                raise ModelError(f"{path}: inputs must be input0..input{len(numbered) - 1}, "
                                 f"found {', '.join(numbered[i] for i in sorted(numbered))}")
            return [data[numbered[i]] for i in range(len(numbered))]
    except (OSError, ValueError, TypeError, AttributeError) as error:
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
@TILING_OPTION
@OPTIMIZE_OPTION
@MAX_TENSOR_BYTES_OPTION
@NPU_OPTION
@NPU_WEIGHTS_OPTION
@click.option("--sequence", is_flag=True,
              help="Axis 0 of every input indexes successive invokes of one model instance (a stateful "
                   "model's state carried across); outputs are stacked on axis 0.")
@_fail_cleanly
def run(model: Path, input_path: Path, output_path: Path | None, rounding: str,
        prefix: str | None, target: str, pools: Sequence[str], tiling: bool, max_tensor_bytes: str | None,
        npu: NpuConfig | None, custom_ops: Sequence[str], sequence: bool, optimize: str,
        npu_weights: str) -> None:
    """Compile MODEL's C on the host, run it on the inputs, print and save the outputs."""
    from .analysis.sequence import split_steps, stack_steps
    from .toolchain.host import run_model

    if output_path is not None:
        _writable_file(output_path)
    inputs = _load_cases(input_path)
    options = _with_npu(dataclasses.replace(_options(rounding, prefix, "host", pools, tiling,
                                                     max_tensor_bytes=max_tensor_bytes, custom_ops=custom_ops,
                                                     optimize=optimize),
                                            npu_weights=npu_weights), npu)
    steps = split_steps(inputs, str(input_path)) if sequence else [inputs]
    results = run_model(model, steps, options, where=str(input_path))
    outputs = stack_steps(results) if sequence else results[0]
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
@click.option("--cases", default=5, show_default=True, help="Random input cases to add (0 or more).")
@click.option("--input", "input_paths", multiple=True, type=click.Path(path_type=Path),
              help="Also check these .npz inputs (repeatable).")
@click.option("--seed", default=0, show_default=True)
@click.option("--rounding", type=click.Choice([r.value for r in Rounding]), default="tflm", show_default=True)
@click.option("--per-layer", is_flag=True,
              help="Compare every intermediate tensor of the C (first --input case, else one random case) "
                   "with the reference, and name the first layer that diverges.")
@click.option("--reference", type=click.Choice(["runtime", "python"]), default="runtime", show_default=True,
              help="runtime = TFLM (tflm) or LiteRT (litert); python = mcugen's numpy reference. --per-layer: the "
                   "one reference; the whole model on --qemu: mcugen's Python reference, and the runtime too "
                   "unless python.")
@click.option("--float", "float_model", type=click.Path(path_type=Path), default=None,
              help="--per-layer against this float original of MODEL (tensors matched by name, dequantized).")
@click.option("--threshold", default=0.99, show_default=True,
              help="With --float: a layer diverges when its cosine similarity falls below this.")
@click.option("--json", "as_json", is_flag=True, help="With --per-layer: print the table as JSON.")
@click.option("--qemu", is_flag=True,
              help=f"Run the C on the emulated core of --target ({QEMU_BOARDS}; its fast kernels) instead of "
                   "the host: the whole model for every case, or with --per-layer every layer.")
@TARGET_OPTION
@TILING_OPTION
@OPTIMIZE_OPTION
@CUSTOM_OP_OPTION
@_fail_cleanly
def verify(model: Path, cases: int, input_paths: Sequence[Path], seed: int, rounding: str, per_layer: bool,
           reference: str, float_model: Path | None, threshold: float, as_json: bool, qemu: bool,
           target: str,
           tiling: bool, custom_ops: Sequence[str], optimize: str) -> None:
    """Check the compiled C against the reference, case by case (exit 1 on mismatch)."""
    from .driver import load_graph

    if as_json and not (per_layer or float_model is not None):
        raise click.UsageError("--json goes with --per-layer or --float")
    if qemu and float_model is not None:
        raise click.UsageError("--qemu does not go with --float (the float comparison runs on the host)")
    if cases < 0:
        raise McugenError(f"--cases {cases}: the number of random cases is 0 or more")
    if cases == 0 and not input_paths:
        raise McugenError("--cases 0 and no --input: nothing to verify")
    _check_qemu_target(qemu, target)
    # --target: the C and memory plan for that core, run on the host (its portable paths);
    # with --qemu: run on that emulated core (its fast paths)
    options = _options(rounding, None, target, (), tiling, custom_ops=custom_ops, optimize=optimize)
    graph = load_graph(model, rounding=options.rounding, target=options.target, custom_ops=options.custom_ops)
    rng = np.random.default_rng(seed)
    if per_layer or float_model is not None:
        from .analysis.per_layer import verify_per_layer

        case = _load_cases(input_paths[0]) if input_paths else _random_inputs(graph, rng)
        lines, diverged = verify_per_layer(model, graph, options, case, reference, float_model, threshold, as_json,
                                           qemu)
        for line in lines:
            click.echo(line)
        if diverged:
            raise VerifyMismatch(f"{model.name}: {diverged}")
        return
    from .state import state_bytes

    if state_bytes(graph):
        _verify_stateful(model, graph, options, input_paths, cases, rng)
        return
    all_cases = [_load_cases(p) for p in input_paths] + [_random_inputs(graph, rng) for _ in range(cases)]
    _verify_cases(model, graph, options, all_cases, qemu, reference)


def _check_qemu_target(qemu: bool, target: str) -> None:
    """--qemu runs on the emulated core of --target: a one-line error when it has none."""
    if qemu and target not in QEMU_TARGET_NAMES:
        raise McugenError(f"--qemu with --target {target}: --qemu runs on the emulated core of --target; "
                          f"give --target {' or '.join(QEMU_TARGET_NAMES)}")


def _verify_cases(model: Path, graph: Any, options: Any, cases: Sequence[Sequence[np.ndarray]], qemu: bool,
                  reference: str) -> None:
    """verify of the whole model: a line per differing output, then the verdict (exit 1 on mismatch)."""
    from .analysis.progress import progress_steps
    from .analysis.verify import verify_model

    with progress_steps(f"verify {model.name}", 2) as advance:
        result = verify_model(model, graph, options, cases, qemu, reference, advance)
    for line in result.mismatches + result.notes:
        click.echo(line)
    if result.failures:
        raise VerifyMismatch(result.summary())
    click.echo(result.summary())


def _verify_stateful(model: Path, graph: Any, options: Any, input_paths: Sequence[Path], cases: int,
                     rng: np.random.Generator) -> None:
    """A stateful model: each --input is a sequence (steps on axis 0), each random case a random
    sequence of MIN_SEQUENCE_STEPS invokes, checked against the runtime and the reference."""
    from .analysis.oracle import REFERENCE_NAMES
    from .analysis.sequence import MIN_SEQUENCE_STEPS, split_steps, verify_sequences

    sequences = [split_steps(_load_cases(p), str(p)) for p in input_paths]
    sequences += [[_random_inputs(graph, rng) for _ in range(MIN_SEQUENCE_STEPS)] for _ in range(cases)]
    lines, failed = verify_sequences(model, graph, sequences, options)
    for line in lines:
        click.echo(line)
    steps = sum(len(s) for s in sequences)
    if failed:
        raise VerifyMismatch(f"{model.name}: {failed} of {len(sequences)} sequences differ")
    click.echo(f"{model.name}: stateful; {len(sequences)} sequences of invokes ({steps} steps), every output "
               f"bit-exact with {REFERENCE_NAMES[options.rounding]} and the reference ({options.rounding.value})")


@main.command()
@MODEL
@click.option("--rounding", type=click.Choice([r.value for r in Rounding]), default="tflm", show_default=True,
              help="Check the rules of this mode (some differ: litert mode refuses quantized SUM).")
@NPU_OPTION
@CUSTOM_OP_OPTION
@_fail_cleanly
def inspect(model: Path, rounding: str, npu: NpuConfig | None, custom_ops: Sequence[str]) -> None:
    """List ops, tensors, MACs and parameters, and what mcugen cannot run and why.

    Every op is listed with every reason it cannot run (index, kind, rule, value); the exit
    status is then 2, with a one-line summary on stderr. With --npu, every op also says whether
    mcugen's NPU compiler puts it on the NPU or the CPU and every reason, and the NPU segments
    are listed.
    """
    from .analysis.inspect import inspect_model
    from .custom_ops import parse_custom_ops
    from .errors import UnsupportedError
    from .ops.base import Setting

    result = inspect_model(model, Setting(Rounding(rounding)), npu, parse_custom_ops(custom_ops))
    for line in result.lines:
        click.echo(line)
    if result.unsupported or result.model_problems:
        raise UnsupportedError(result.summary(model.name))


@main.command()
@MODEL
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (the numbers of report.json).")
@click.option("--picture", type=click.Path(path_type=Path), default=None,
              help="Also draw the plan as an SVG: time across, address up, one box per buffer.")
@click.option("--rounding", type=click.Choice([r.value for r in Rounding]), default="tflm", show_default=True)
@TARGET_OPTION
@POOL_OPTION
@TILING_OPTION
@OPTIMIZE_OPTION
@CUSTOM_OP_OPTION
@_fail_cleanly
def plan(model: Path, as_json: bool, picture: Path | None, rounding: str, target: str, pools: Sequence[str],
         tiling: bool, custom_ops: Sequence[str], optimize: str) -> None:
    """The memory plan: pools, lower bounds and gap, and every buffer's pool, offset and lifetime."""
    from .analysis.memory_plan import plan_lines, plan_svg, planned

    if picture is not None:
        _writable_file(picture)
    compiled = planned(model, _options(rounding, None, target, pools, tiling, custom_ops=custom_ops,
                                       optimize=optimize))
    if picture is not None:
        picture.write_text(plan_svg(compiled))
    for line in plan_lines(compiled, as_json):
        click.echo(line)


@main.command()
@MODEL
@click.option("--qemu", is_flag=True, help=f"Run on the emulated core of --target ({QEMU_BOARDS}) and count "
              "instructions; default: the host.")
@click.option("--runs", default=1, show_default=True, type=click.IntRange(min=1), help="Inferences to average.")
@click.option("--per-op", is_flag=True, help="One row per op instead of per op type.")
@click.option("--cpu-mhz", default=None, type=click.FloatRange(min=0, min_open=True),
              help="With --qemu: the clock that turns instructions into ns (one instruction a cycle); "
                   "default: the target's clock (100 MHz).")
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON.")
@TILING_OPTION
@OPTIMIZE_OPTION
@_build_options
@NPU_OPTION
@_fail_cleanly
def profile(model: Path, qemu: bool, runs: int, per_op: bool, cpu_mhz: float | None, as_json: bool, rounding: str,
            prefix: str | None, target: str, pools: Sequence[str], tiling: bool, npu: NpuConfig | None,
            custom_ops: Sequence[str], optimize: str) -> None:
    """Run MODEL's C with per-op timing: time per op type (or op) and the memory table."""
    import json

    from .analysis.profile import PROFILE_STEPS, profile_lines, profile_model
    from .analysis.progress import progress_steps

    with progress_steps(f"profile {model.name}", PROFILE_STEPS[qemu]) as advance:
        options = _with_npu(_options(rounding, prefix, target, pools, tiling, custom_ops=custom_ops,
                                     optimize=optimize), npu)
        result = profile_model(model, options, qemu=qemu, runs=runs, cpu_mhz=cpu_mhz, progress=advance)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    for line in profile_lines(result, per_op):
        click.echo(line)


@main.command()
@MODEL
@click.option("-o", "--output", "out", required=True, type=click.Path(path_type=Path), help="The HTML file to write.")
@click.option("--runs", default=3, show_default=True, help="Inferences to average for the time per op.")
@click.option("--input", "input_path", type=click.Path(path_type=Path), default=None,
              help=".npz with input0, ... for the profile and accuracy runs (default: one random case).")
@click.option("--reference", type=click.Choice(["runtime", "python"]), default="runtime", show_default=True,
              help="Accuracy reference: runtime = TFLM (tflm) or LiteRT (litert); python = mcugen's numpy reference.")
@click.option("--json", "as_json", is_flag=True, help="Also print the report's numbers as JSON.")
@click.option("--rounding", type=click.Choice([r.value for r in Rounding]), default="tflm", show_default=True)
@click.option("--qemu", is_flag=True, help=f"Profile and check every layer on the emulated core of --target "
              f"({QEMU_BOARDS}): instructions per op on the core.")
@TARGET_OPTION
@POOL_OPTION
@CUSTOM_OP_OPTION
@_fail_cleanly
def report(model: Path, out: Path, runs: int, input_path: Path | None, reference: str, as_json: bool,
           rounding: str, qemu: bool, target: str, pools: Sequence[str], custom_ops: Sequence[str]) -> None:
    """One self-contained HTML report: summary, per-op charts, time, memory plan, per-layer accuracy."""
    from .analysis.report_html import report_json, write_report

    if not model.is_file():
        raise ModelError(f"{model}: no such file")
    _writable_file(out)
    _check_qemu_target(qemu, target)
    case = _load_cases(input_path) if input_path is not None else None
    data = write_report(model, _options(rounding, None, target, pools, custom_ops=custom_ops), out, runs, reference,
                        case, qemu)
    if as_json:
        click.echo(report_json(data))
    else:
        summary = data["summary"]
        click.echo(f"{model.name}: {summary['ops']} ops, {summary['macs']} MACs, arena {summary['arena_bytes']} "
                   f"bytes, weights {summary['weights_bytes']} bytes -> {out}")


if __name__ == "__main__":
    main()
