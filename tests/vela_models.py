"""Vela's output .tflite, read as TFLM's ethos-u kernel uses it, and run on the simulated NPU.

`compile_model` runs the `vela` CLI (ethos-u-vela 5.2) on a model for one Ethos-U55 size and
reads the result: the `ethos-u` custom op's inputs are the driver payload (command stream),
the read-only (flash) tensor, the scratch and fast-scratch tensors, then the IFMs; its outputs
are the OFMs. TFLM gives the driver one base address per tensor after the payload, in that
order (inputs, then outputs), so the command stream's region n is that tensor. The IFMs and
OFMs are not addressed through their own regions: Vela places them in the scratch arena, at the
offsets of the model's `OfflineMemoryAllocation` metadata ([version, subgraphs, tensor count,
one arena offset per tensor, -1 for none]), and addresses them in the scratch region relative to
the scratch tensor's offset. `run_npu` loads the inputs there, runs the payload through our
driver, device and engine in the host harness (firmware_tests/npu/npu_harness.c, built with
ASan/UBSan) and reads the outputs back from the same place.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tflite

from mcugen.ir import NpuSegmentOptions, Op, OpKind
from mcugen.toolchain.host import SANITIZE_FLAGS, WARNING_FLAGS, compiler

REPO = Path(__file__).resolve().parents[1]
NPU = REPO / "templates" / "runtime" / "npu"
HARNESS = REPO / "firmware_tests" / "npu" / "npu_harness.c"

_NUMPY_TYPES = {tflite.TensorType.INT8: np.int8, tflite.TensorType.UINT8: np.uint8,
                tflite.TensorType.INT16: np.int16, tflite.TensorType.INT32: np.int32,
                tflite.TensorType.FLOAT32: np.float32}
_BUILTIN_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}


@dataclass(frozen=True)
class Feature:
    """An IFM or OFM: where it lives in the scratch region, and what it holds."""

    offset: int
    shape: tuple[int, ...]
    dtype: type

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class VelaEstimate:
    """Vela's own figures for the compilation (its summary CSV and register listing)."""

    cycles: int  # cycles_total
    flash_cycles: int  # cycles_off_chip_flash_access
    npu_ops: int  # NPU_OP_CONV/DEPTHWISE/POOL/ELEMENTWISE/DMA_START in the command stream
    stream_bytes: int  # the payload's COMMAND_STREAM part


@dataclass(frozen=True)
class VelaModel:
    name: str
    macs: int
    payload: Path
    regions: list[str]  # harness region specs in TFLM's base-address order
    scratch_region: int
    inputs: list[Feature]
    outputs: list[Feature]
    cpu_ops: list[str]  # builtin operators Vela left for the CPU
    listing: str  # Vela's --verbose-register-command-stream output
    estimate: VelaEstimate | None  # None when Vela made no single ethos-u op


def build_harness(out: Path, flags: Sequence[str] = (*WARNING_FLAGS, *SANITIZE_FLAGS)) -> Path:
    """The harness with driver, device and engine (default: under ASan and UBSan)."""
    sources = [str(HARNESS), *(str(p) for p in sorted(NPU.glob("*.c")))]
    subprocess.run([compiler(), *flags, f"-I{NPU}", *sources, "-o", str(out)],
                   check=True, capture_output=True, text=True)
    return out


def segment_runs(order: Sequence[Op], harness: Path, macs: int, work: Path) -> Iterator[tuple[Op, str]]:
    """Each ethos-u segment of a compiled `order` run alone on the simulated u55-`macs` (pools
    zero-filled, the cycles do not depend on the data): the segment and the harness's output."""
    work.mkdir()
    for n, op in enumerate(o for o in order if o.kind is OpKind.ETHOS_U):
        assert isinstance(op.options, NpuSegmentOptions) and op.inputs[0] is not None and op.inputs[1] is not None
        payload, weights = work / f"payload{n}.bin", work / f"weights{n}.bin"
        payload.write_bytes(op.inputs[0].data.tobytes())
        weights.write_bytes(op.inputs[1].data.tobytes())
        regions = [f"file:{weights}"] + [f"zero:{pool.size}" for pool in op.options.pools]
        yield op, subprocess.run([str(harness), str(macs), str(payload), *regions], check=True, capture_output=True,
                                 text=True).stdout


def model_cycles(output: str) -> int:
    """The MODEL_CYCLES a harness run printed."""
    found = re.search(r"^model cycles (\d+)$", output, re.MULTILINE)
    assert found is not None, output
    return int(found[1])


def device_cycles(order: Sequence[Op], harness: Path, macs: int, work: Path) -> int:
    """segment_runs' MODEL_CYCLES summed."""
    return sum(model_cycles(out) for _, out in segment_runs(order, harness, macs, work))


def _offline_offsets(model: tflite.Model) -> list[int]:
    for i in range(model.MetadataLength()):
        metadata = model.Metadata(i)
        if metadata.Name() == b"OfflineMemoryAllocation":
            words = model.Buffers(metadata.Buffer()).DataAsNumpy().view(np.int32)
            count = int(words[2])
            return [int(v) for v in words[3:3 + count]]
    raise AssertionError("Vela's output has no OfflineMemoryAllocation metadata")


def _feature(sg: tflite.SubGraph, index: int, arena_offset: int) -> Feature:
    tensor = sg.Tensors(index)
    shape = tuple(int(d) for d in tensor.ShapeAsNumpy()) if tensor.ShapeLength() else (1,)
    return Feature(arena_offset, shape, _NUMPY_TYPES[tensor.Type()])


def compile_model(model: bytes, macs: int, workdir: Path, name: str = "model",
                  optimise: str = "Performance") -> VelaModel:
    """Vela's compilation of `model` for ethos-u55-`macs` (Vela's default system config,
    Ethos_U55_High_End_Embedded with Shared_Sram; --optimise `optimise`, Vela's default
    Performance or Size)."""
    workdir.mkdir(parents=True, exist_ok=True)
    source = workdir / "model.tflite"
    source.write_bytes(model)
    result = subprocess.run(
        [sys.executable, "-m", "ethosu.vela", str(source), "--accelerator-config", f"ethos-u55-{macs}",
         "--output-dir", str(workdir / "out"), "--verbose-register-command-stream", "--optimise", optimise],
        check=True, capture_output=True, text=True)
    buf = (workdir / "out" / "model_vela.tflite").read_bytes()
    vela = tflite.Model.GetRootAsModel(buf, 0)
    sg = vela.Subgraphs(0)
    ops = [sg.Operators(i) for i in range(sg.OperatorsLength())]
    codes = [vela.OperatorCodes(op.OpcodeIndex()) for op in ops]
    ethos = [op for op, code in zip(ops, codes) if code.CustomCode() == b"ethos-u"]
    cpu_ops = [_BUILTIN_NAMES.get(max(c.BuiltinCode(), c.DeprecatedBuiltinCode()), "?") for c in codes
               if c.CustomCode() != b"ethos-u"]
    if len(ethos) != 1:
        return VelaModel(name, macs, workdir, [], 1, [], [], cpu_ops or ["no ethos-u op"], result.stdout, None)
    op = ethos[0]
    inputs, outputs = [int(i) for i in op.InputsAsNumpy()], [int(i) for i in op.OutputsAsNumpy()]
    offsets = _offline_offsets(vela)
    payload_index, read_only, scratch = inputs[0], inputs[1], inputs[2]
    base = offsets[scratch]
    # In the model's input/output order (the op's own order may differ: SQUARED_DIFFERENCE).
    ifms = [_feature(sg, i, offsets[i] - base) for i in _in_graph_order(inputs[4:], sg.InputsAsNumpy())]
    ofms = [_feature(sg, i, offsets[i] - base) for i in _in_graph_order(outputs, sg.OutputsAsNumpy())]
    scratch_bytes = max([_feature(sg, scratch, 0).nbytes] + [f.offset + f.nbytes for f in ifms + ofms])
    payload = workdir / "payload.bin"
    payload.write_bytes(_buffer(vela, sg, payload_index))
    estimate = _estimate(workdir / "out", result.stdout, payload.read_bytes())
    flash = workdir / "read_only.bin"
    flash.write_bytes(_buffer(vela, sg, read_only) or b"\0" * 16)
    regions = [f"file:{flash}", f"zero:{scratch_bytes}"]
    # The fast scratch and the feature maps' own regions: the stream addresses the arena through
    # the scratch region; they alias it here (TFLM's pointers lie inside the same arena).
    regions += ["same:1"] * (len(inputs) - 3 + len(outputs))
    return VelaModel(name, macs, payload, regions, 1, ifms, ofms, cpu_ops, result.stdout, estimate)


def _estimate(out: Path, listing: str, payload: bytes) -> VelaEstimate:
    with open(next(out.glob("model_summary_*.csv")), newline="") as f:
        summary = next(csv.DictReader(f))
    ops = sum(1 for line in listing.splitlines()
              if re.search(r" - NPU_OP_(CONV|DEPTHWISE|POOL|ELEMENTWISE|DMA_START)\b", line))
    return VelaEstimate(int(float(summary["cycles_total"])), int(float(summary["cycles_off_chip_flash_access"])),
                        ops, _stream_bytes(payload))


def stream_start(words: np.ndarray) -> int:
    """The first command word of a COP1 payload: after the magic and the driver actions (CONFIG
    carries two more words), behind the COMMAND_STREAM tag."""
    i = 1
    while int(words[i]) & 0xFF != 0x02:
        i += 3 if int(words[i]) & 0xFF == 0x01 else 1
    return i + 1


def cmd0_positions(words: np.ndarray, opcode: int) -> list[int]:
    """Indices of the cmd0 words with `opcode` in a COP1 payload's command stream (cmd1 data
    words skipped)."""
    positions, i = [], stream_start(words)
    while i < len(words):
        word = int(words[i])
        if (word >> 14) & 3 == 1:
            i += 2
            continue
        if word & 0x3FF == opcode:
            positions.append(i)
        i += 1
    return positions


def _stream_bytes(payload: bytes) -> int:
    """The COMMAND_STREAM length of a COP1 payload (driver actions: 1 CONFIG +2 words, 2 stream, 5 NOP)."""
    words = np.frombuffer(payload, dtype="<u4")
    i = 1
    while i < len(words):
        action = int(words[i]) & 0xFF
        if action == 2:
            return ((int(words[i]) >> 16) | ((int(words[i]) >> 8 & 0xFF) << 16)) * 4
        i += 3 if action == 1 else 1
    raise ValueError("payload without COMMAND_STREAM")


def _in_graph_order(tensors: list[int], graph_tensors: np.ndarray) -> list[int]:
    """`tensors` sorted by their position among the graph's inputs (or outputs), if all are."""
    order = [int(t) for t in graph_tensors]
    return sorted(tensors, key=order.index) if set(tensors) <= set(order) else tensors


def _buffer(model: tflite.Model, sg: tflite.SubGraph, index: int) -> bytes:
    data = model.Buffers(sg.Tensors(index).Buffer()).DataAsNumpy()
    return data.tobytes() if isinstance(data, np.ndarray) else b""


@dataclass(frozen=True)
class NpuRun:
    outputs: list[np.ndarray]
    rc: int
    fault: int
    stdout: str


def run_npu(harness: Path, vm: VelaModel, macs: int, inputs: list[np.ndarray], workdir: Path) -> NpuRun:
    """Run the payload on the device with the engine; the OFMs as the scratch arena holds them."""
    workdir.mkdir(parents=True, exist_ok=True)
    args = [str(harness), str(macs), str(vm.payload), *vm.regions, "-E"]
    for n, (feature, value) in enumerate(zip(vm.inputs, inputs, strict=True)):
        path = workdir / f"ifm{n}.bin"
        path.write_bytes(np.ascontiguousarray(value, dtype=feature.dtype).tobytes())
        args += ["-l", f"{vm.scratch_region}:{feature.offset}:{path}"]
    for n, feature in enumerate(vm.outputs):
        args += ["-d", f"{vm.scratch_region}:{feature.offset}:{feature.nbytes}:{workdir / f'ofm{n}.bin'}"]
    result = subprocess.run(args, check=False, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"harness failed ({result.returncode}): {result.stderr[-3000:]}"
    summary = next(line for line in result.stdout.splitlines() if line.startswith("result "))
    words = summary.split()
    rc, fault = int(words[1]), int(words[5])
    outputs: list[np.ndarray] = [np.fromfile(workdir / f"ofm{n}.bin", dtype=f.dtype).reshape(f.shape)
               for n, f in enumerate(vm.outputs)]
    return NpuRun(outputs, rc, fault, result.stdout)
