"""Per-layer accuracy: every intermediate tensor of the compiled C against a reference.

`mcugen verify --per-layer` compiles the generated C with -DMCUGEN_DUMP: after each op the
generated invoke calls the harness's hook with every output tensor's index and bytes, and the
harness writes them to a file (harness_main.c.j2). Each dumped tensor is compared with the same
tensor (by index in the .tflite file) of the reference: TensorFlow Lite Micro for --rounding
tflm, LiteRT's reference kernels for --rounding litert (analysis/oracle.py), or mcugen's numpy
reference with --reference python. Tensors that the passes folded into constants or removed
have no op on the device and are not dumped; an alias (a RESHAPE with no code) is dumped after
its step, from the bytes it shares with its input.

The per-layer build runs without tiling (materialized()), so that every tensor exists whole.

Per tensor: mismatching elements and the largest difference in quantization steps (the
bit-exactness contract), and on dequantized values the cosine similarity and the Euclidean
distance. The first tensor in execution order that differs at all is the first divergence.

`compare_float` does the same between a quantized model (its compiled C) and its float
original run by LiteRT, tensors matched by name, both sides dequantized: there the first
divergence is the first tensor whose cosine similarity falls below a threshold.
"""

from __future__ import annotations

import json
import struct
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BuildError
from ..ir import Graph, Op, Tensor
from ..records import dataclass
from .oracle import REFERENCE_NAMES, litert_tensor_names, reference_tensors

_HEADER = struct.Struct("<iii")  # op index, tensor index, bytes (the harness's record header)


@dataclass(frozen=True)
class Dumped:
    """One record of the dump hook: an op's output tensor right after the op ran."""

    op_index: int
    tensor_index: int
    data: bytes


def read_dump(path: Path) -> list[Dumped]:
    """The records of a dump file, in the order invoke wrote them (execution order)."""
    raw = path.read_bytes()
    records, position = [], 0
    while position < len(raw):
        if position + _HEADER.size > len(raw):
            raise BuildError(f"{path}: truncated dump record at byte {position}")
        op_index, tensor_index, size = _HEADER.unpack_from(raw, position)
        position += _HEADER.size
        if size < 0 or position + size > len(raw):
            raise BuildError(f"{path}: dump record of op {op_index} claims {size} bytes")
        records.append(Dumped(op_index, tensor_index, raw[position: position + size]))
        position += size
    return records


@dataclass
class LayerRow:
    """One op output compared with the reference."""

    step: int  # position in the C's execution order
    op_index: int  # the op's index in the .tflite file
    kind: str
    tensor_index: int
    tensor: str
    dtype: str
    shape: list[int]
    elements: int
    mismatches: int  # elements that differ at all
    max_abs_diff: float  # in the tensor's own units: quantization steps for integers
    max_abs_diff_real: float  # on dequantized values
    euclidean: float  # on dequantized values
    cosine: float  # on dequantized values
    reference_tensor: str = ""  # the matched reference tensor's name (float comparison)


@dataclass
class PerLayerResult:
    model: str
    reference: str
    rounding: str
    rows: list[LayerRow] = field(default_factory=list)
    first_divergence: LayerRow | None = None
    unmatched: list[str] = field(default_factory=list)  # dumped tensors with no reference value
    threshold: float | None = None  # cosine threshold (float comparison only)
    where: str = "the host"  # where the C ran: the host or "QEMU <machine> (<target>)"

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model, "reference": self.reference, "rounding": self.rounding, "where": self.where,
            "threshold": self.threshold, "layers": [asdict(r) for r in self.rows],
            "first_divergence": None if self.first_divergence is None else asdict(self.first_divergence),
            "unmatched": self.unmatched, "all_exact": self.first_divergence is None and self.threshold is None,
        }


def dequantize(tensor: Tensor, values: np.ndarray) -> np.ndarray:
    """Real values of a tensor (per-tensor quantization; float and unquantized tensors as they are)."""
    real = values.astype(np.float64)
    quant = tensor.quant
    if quant is None or values.dtype.kind == "f":
        return real
    scales = np.asarray(quant.scale, dtype=np.float64).ravel()
    zero_points = np.asarray(quant.zero_point, dtype=np.float64).ravel()
    if scales.size == 1:
        return (real - zero_points[0]) * scales[0]
    axis_shape = [1] * values.ndim
    axis_shape[quant.axis] = scales.size
    return (real - zero_points.reshape(axis_shape)) * scales.reshape(axis_shape)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity; two all-zero tensors are identical (1.0), one all-zero one is 0.0."""
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    if norms == 0.0:
        return 1.0 if not (np.any(a) or np.any(b)) else 0.0
    return float(np.clip(np.dot(a, b) / norms, -1.0, 1.0))  # rounding can step just past 1


def compare(got: np.ndarray, want: np.ndarray, got_real: np.ndarray, want_real: np.ndarray) -> dict[str, float]:
    wide = np.float64 if got.dtype.kind == "f" or want.dtype.kind == "f" else np.int64
    diff = np.abs(got.astype(wide) - want.astype(wide))
    real_diff = got_real - want_real
    return {
        "mismatches": int(np.count_nonzero(got != want)),
        "max_abs_diff": float(diff.max()) if diff.size else 0.0,
        "max_abs_diff_real": float(np.abs(real_diff).max()) if real_diff.size else 0.0,
        "euclidean": float(np.linalg.norm(real_diff)),
        "cosine": cosine(got_real, want_real),
    }


def _row(step: int, op: Op, tensor: Tensor, got: np.ndarray, want: np.ndarray, **extra: Any) -> LayerRow:
    return LayerRow(step=step, op_index=op.index, kind=op.kind.name, tensor_index=tensor.index,
                    tensor=tensor.name, dtype=tensor.dtype.short, shape=list(tensor.shape),
                    elements=tensor.num_elements, **extra)


def _dumped_values(graph: Graph, records: list[Dumped]) -> list[tuple[Op, Tensor, np.ndarray]]:
    by_index = {t.index: t for t in graph.tensors}
    ops = {op.index: op for op in graph.ops}
    values = []
    for record in records:
        tensor, op = by_index[record.tensor_index], ops[record.op_index]
        if len(record.data) != tensor.nbytes:
            raise BuildError(f"dump of tensor {tensor.index} '{tensor.name}': {len(record.data)} bytes, "
                             f"expected {tensor.nbytes}")
        array = np.frombuffer(record.data, dtype=tensor.dtype.numpy).reshape(tensor.shape).copy()
        values.append((op, tensor, array))
    return values


Progress = Callable[[str], None]


def materialized(options: Any) -> Any:
    """The build options with every intermediate tensor whole in memory: without tiling, whose
    chains run in stripes and never hold their intermediate tensors whole. The per-layer build
    is therefore untiled; `mcugen verify` (outputs only) checks the tiled build."""
    if getattr(options, "tiling", False):
        return replace(options, tiling=False)
    return options


def _no_progress(_: str) -> None:
    return None


def dump_layers(model: Path, inputs: Sequence[np.ndarray], options: Any,
                progress: Progress = _no_progress) -> tuple[Graph, list[tuple[Op, Tensor, np.ndarray]]]:
    """Compile the model with the dump hook, run one inference, and read every op's outputs."""
    from ..driver import load_graph
    from ..toolchain.host import build_program, run_program

    graph = load_graph(model, rounding=options.rounding, custom_ops=options.custom_ops)
    progress("compile the C with the dump hook")
    program = build_program(model.read_bytes(), materialized(options), model.name, dump=True)
    progress("run the C")
    with tempfile.TemporaryDirectory(prefix="mcugen-dump-") as tmp:
        dump_path = Path(tmp) / "dump.bin"
        run_program(program, [list(inputs)], dump_to=dump_path)
        records = read_dump(dump_path)
    return graph, _dumped_values(graph, records)


def dump_layers_qemu(model: Path, inputs: Sequence[np.ndarray], options: Any, build: Path,
                     progress: Progress = _no_progress) -> tuple[Graph, list[tuple[Op, Tensor, np.ndarray]]]:
    """dump_layers on the emulated core of options.target: firmware/common's test application
    built with -DMCUGEN_DUMP (main.c writes the records through semihosting), run on QEMU.
    `build` is the firmware build directory (make reuses what is up to date there)."""
    from ..driver import load_graph
    from ..toolchain.cross import build_firmware, firmware_dir
    from ..toolchain.qemu import run_qemu

    graph = load_graph(model, rounding=options.rounding, custom_ops=options.custom_ops)
    options = materialized(options)
    # The application compares the outputs with the case's; zeros do (the dump is the point).
    case = {f"input{i}": np.asarray(v) for i, v in enumerate(inputs)}
    case.update({f"output{i}": np.zeros(t.shape, t.dtype.numpy) for i, t in enumerate(graph.outputs)})
    progress(f"cross-compile the C with the dump hook for {options.target.name}")
    elf = build_firmware(model, options, case, build, extra_cflags="-DMCUGEN_DUMP")
    run_dir = firmware_dir(build, options.target)
    dump_path = run_dir / "mcugen_dump.bin"
    dump_path.unlink(missing_ok=True)
    progress(f"run it on QEMU {options.target.qemu.machine}")
    run_qemu(elf, options.target, count_instructions=False, cwd=run_dir, require_pass=False)
    if not dump_path.exists():
        raise BuildError(f"{elf}: the application wrote no dump file through semihosting")
    return graph, _dumped_values(graph, read_dump(dump_path))


def per_layer(model: Path, inputs: Sequence[np.ndarray], options: Any, reference: str = "runtime",
              progress: Progress = _no_progress, qemu: bool = False) -> PerLayerResult:
    """Every op output of the compiled C against the reference, in execution order.

    `reference` is "runtime" (TFLM or LiteRT, as the rounding mode reproduces) or "python"
    (mcugen's numpy reference, which needs no TFLite runtime). With `qemu` the C runs on the
    emulated core of options.target (dump_layers_qemu), else on the host.
    """
    from ..reference import run_graph

    if qemu:  # the emulated core (mcugen verify --per-layer --target T --qemu)
        with tempfile.TemporaryDirectory(prefix="mcugen-per-layer-") as build:
            graph, dumped = dump_layers_qemu(model, inputs, options, Path(build), progress)
    else:
        graph, dumped = dump_layers(model, inputs, options, progress)
    progress("run the reference")
    if reference == "python":
        expected = run_graph(graph, list(inputs), options.rounding)
        reference_name = "mcugen Python reference"
    else:
        expected = reference_tensors(model.read_bytes(), inputs, options.rounding)
        reference_name = REFERENCE_NAMES[options.rounding]
    progress("compare")
    where = f"QEMU {options.target.qemu.machine} ({options.target.name})" if qemu else "the host"
    result = PerLayerResult(model.name, reference_name, options.rounding.value, where=where)
    return compare_layers(result, dumped, expected)


def compare_layers(result: PerLayerResult, dumped: list[tuple[Op, Tensor, np.ndarray]],
                   expected: dict[int, np.ndarray]) -> PerLayerResult:
    """Fill `result` with one row per dumped tensor against `expected` (by tensor index)."""
    for step, (op, tensor, got) in enumerate(dumped):
        want = expected.get(tensor.index)
        if want is None or want.size != got.size:
            result.unmatched.append(tensor.name)
            continue
        want = np.asarray(want).astype(got.dtype, copy=False).reshape(got.shape)
        stats = compare(got, want, dequantize(tensor, got), dequantize(tensor, want))
        row = _row(step, op, tensor, got, want, **stats)
        result.rows.append(row)
        if result.first_divergence is None and row.mismatches:
            result.first_divergence = row
    return result


def float_inputs_for(graph: Graph, float_values: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The quantized model's inputs for the float model's inputs: quantized with the input's
    scale and zero point (round half away from zero, saturated), or as they are for float inputs."""
    converted = []
    for tensor, value in zip(graph.inputs, float_values):
        dtype = tensor.dtype.numpy
        if dtype.kind == "f" or tensor.quant is None:
            converted.append(np.asarray(value, dtype=dtype).reshape(tensor.shape))
            continue
        scaled = np.asarray(value, dtype=np.float64) / tensor.quant.single_scale
        rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) + tensor.quant.single_zero_point
        info = np.iinfo(dtype)
        converted.append(np.clip(rounded, info.min, info.max).astype(dtype).reshape(tensor.shape))
    return converted


def compare_float(model: Path, float_model: Path, float_values: Sequence[np.ndarray], options: Any,
                  threshold: float = 0.99, progress: Progress = _no_progress) -> PerLayerResult:
    """The quantized model's C, layer by layer, against its float original (by tensor name)."""
    from ..driver import load_graph

    graph = load_graph(model, rounding=options.rounding, custom_ops=options.custom_ops)
    inputs = float_inputs_for(graph, float_values)
    graph, dumped = dump_layers(model, inputs, options, progress)
    progress("run the float model")
    floats = litert_tensor_names(float_model.read_bytes(), float_values)
    progress("compare")
    result = PerLayerResult(model.name, f"float model {float_model.name} (LiteRT)", options.rounding.value,
                            threshold=threshold)
    for step, (op, tensor, got) in enumerate(dumped):
        name = match_name(tensor.name, floats)
        if name is None or floats[name].size != got.size:
            result.unmatched.append(tensor.name)
            continue
        want = np.asarray(floats[name], dtype=np.float64).reshape(got.shape)
        got_real = dequantize(tensor, got)
        stats = compare(got_real, want, got_real, want)
        stats["mismatches"] = int(np.count_nonzero(np.abs(got_real - want) > _half_step(tensor)))
        row = _row(step, op, tensor, got, want, reference_tensor=name, **stats)
        result.rows.append(row)
        if result.first_divergence is None and row.cosine < threshold:
            result.first_divergence = row
    return result


def _half_step(tensor: Tensor) -> float:
    """Rounding alone moves a quantized value by half a step: larger errors count as mismatches."""
    if tensor.quant is None or tensor.dtype.numpy.kind == "f":
        return 0.0
    return 0.5 * float(np.max(tensor.quant.scale))


def match_name(name: str, candidates: dict[str, Any]) -> str | None:
    """The float tensor with the quantized tensor's name; failing that, one whose name is a
    ';'-separated part of it (the converter joins fused ops' names with ';')."""
    if name in candidates:
        return name
    parts = [p for p in name.split(";") if p]
    for part in parts:
        if part in candidates:
            return part
    for candidate in candidates:
        if any(p in parts for p in candidate.split(";") if p):
            return candidate
    return None


def result_lines(result: PerLayerResult, as_json: bool = False) -> list[str]:
    """The per-layer table as text (or JSON): one row per op output, in execution order."""
    if as_json:
        return [json.dumps(result.to_json(), indent=2, sort_keys=True)]
    lines = [(f"{result.model}: {len(result.rows)} tensors against {result.reference} ({result.rounding}), "
              f"the C on {result.where}"),
             (f"  {'step':>4} {'op':>4}  {'kind':<18} {'tensor':<36} {'cosine':>10} {'euclid':>10} "
             f"{'max|d|':>8} {'differ':>8}")]
    for row in result.rows:
        name = row.tensor if len(row.tensor) <= 36 else row.tensor[:33] + "..."
        diff = f"{row.max_abs_diff:.4g}" if result.threshold is not None else f"{int(row.max_abs_diff)}"
        lines.append(f"  {row.step:>4} {row.op_index:>4}  {row.kind:<18} {name:<36} {row.cosine:>10.6f} "
                     f"{row.euclidean:>10.4g} {diff:>8} {row.mismatches:>8}")
    for name in result.unmatched:
        lines.append(f"  (no reference value for '{name}')")
    first = result.first_divergence
    if first is None:
        what = (f"every tensor has cosine >= {result.threshold}" if result.threshold is not None
                else "every tensor is bit-exact")
        lines.append(f"no divergence: {what}")
    else:
        why = (f"cosine {first.cosine:.6f} < {result.threshold}" if result.threshold is not None
               else f"{first.mismatches} of {first.elements} elements differ, max |diff| {int(first.max_abs_diff)}")
        lines.append(f"first divergence: step {first.step}, op {first.op_index} {first.kind} "
                     f"'{first.tensor}': {why}")
    return lines


def real_inputs(graph: Graph, case: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Float inputs for a float model: a quantized case dequantized, a float case as it is."""
    values = []
    for tensor, value in zip(graph.inputs, case):
        array = np.asarray(value)
        real = dequantize(tensor, array) if array.dtype.kind in "iu" else array
        values.append(np.asarray(real, dtype=np.float32).reshape(tensor.shape))
    return values


def verify_per_layer(model: Path, graph: Graph, options: Any, case: Sequence[np.ndarray], reference: str,
                     float_model: Path | None, threshold: float, as_json: bool,
                     qemu: bool = False) -> tuple[list[str], str]:
    """`mcugen verify --per-layer`: the table's lines and, when a layer diverges, why (else "")."""
    from .progress import progress_steps

    if float_model is not None and not float_model.is_file():
        raise BuildError(f"--float {float_model}: no such file")
    with progress_steps(f"{model.name} per layer", 4) as advance:
        if float_model is None:
            result = per_layer(model, case, options, reference, advance, qemu)
        else:
            result = compare_float(model, float_model, real_inputs(graph, case), options, threshold, advance)
    first = result.first_divergence
    reason = "" if first is None else (f"first divergence at op {first.op_index} {first.kind} '{first.tensor}' "
                                       f"(step {first.step})")
    return result_lines(result, as_json), reason
