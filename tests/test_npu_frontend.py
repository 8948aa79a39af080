"""Vela-compiled models through `mcugen build` / `run` / `profile` (tracker issue 12).

The oracle is TFLite Micro on the original int8 model (the model before Vela), and Vela
itself (its CLI compiles every model here; its summary CSV names the configuration). Facts the
report states are read again here with the `tflite` package, independently of mcugen's reader.

Tests whose model needs an NPU operation that the compute engine does not compute yet
(templates/runtime/npu, mcugen_npu_engine_*.c) are skipped with the driver's code for an
unmodelled operation (-15) and the op in the reason; a wrong result, or any other error, fails.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tflite
from click.testing import CliRunner
from conftest import public_model
from modelbuilder import ModelBuilder
from oracles import run_tflm

from mcugen.cli import main
from mcugen.codegen.generate import render_harness
from mcugen.driver import BuildOptions, compile_model, write_files
from mcugen.errors import BuildError
from mcugen.memory.pools import PoolSpec
from mcugen.modelset import write_set
from mcugen.toolchain.host import SANITIZE_FLAGS, WARNING_FLAGS, compiler, run_model

CONFIGS = ("ethos-u55-64", "ethos-u55-128", "ethos-u55-256")
UNMODELLED = -15  # MCUGEN_NPU_ERR_CMD_UNSUPPORTED: an operation the engine does not compute yet
CMD1_FLAG = 0x4000
SET_IFM_BASE0 = CMD1_FLAG | 0x000
SET_WEIGHT_BASE = CMD1_FLAG | 0x020
SET_WEIGHT_LENGTH = CMD1_FLAG | 0x021


# ---- models ------------------------------------------------------------------------------------


def conv_model(seed: int = 1, shape: Sequence[int] = (1, 8, 8, 4), cout: int = 8, stride: int = 1,
               padding: str = "SAME", gather: bool = False) -> bytes:
    """int8 CONV_2D (3x3), optionally followed by a GATHER on channels (Vela leaves it on the
    CPU) and a second CONV_2D: a mixed model with two NPU parts."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_tensor("x", shape, "int8", scale=0.05, zero_point=-2)

    def conv(source: int, cin: int, out: int, name: str, in_scale: float, size: Sequence[int]) -> int:
        w = b.add_tensor(f"{name}_w", [out, 3, 3, cin], "int8", scale=[0.02 + 0.001 * i for i in range(out)],
                         quantized_dimension=0, data=rng.integers(-127, 128, (out, 3, 3, cin)))
        bias = b.add_tensor(f"{name}_b", [out], "int32", scale=[in_scale * (0.02 + 0.001 * i) for i in range(out)],
                            data=rng.integers(-2000, 2000, out))
        y = b.add_tensor(f"{name}_y", size, "int8", scale=0.12, zero_point=3)
        b.add_op("CONV_2D", [source, w, bias], [y], {"padding": padding, "stride_h": stride, "stride_w": stride})
        return y

    n, h, w_, c = shape
    oh = (h + stride - 1) // stride if padding == "SAME" else (h - 3) // stride + 1
    ow = (w_ + stride - 1) // stride if padding == "SAME" else (w_ - 3) // stride + 1
    y = conv(x, c, cout, "c1", 0.05, [n, oh, ow, cout])
    if not gather:
        b.set_io([x], [y])
        return b.build()
    idx = b.add_tensor("idx", [cout], "int32", data=np.arange(cout)[::-1].copy())
    g = b.add_tensor("g", [n, oh, ow, cout], "int8", scale=0.12, zero_point=3)
    b.add_op("GATHER", [y, idx], [g], {"axis": 3})
    z = conv(g, cout, 6, "c2", 0.12, [n, oh, ow, 6])
    b.set_io([x], [z])
    return b.build()


@dataclass
class Vela:
    original: bytes
    compiled: Path  # the *_vela.tflite
    summary: dict[str, str]  # Vela's summary CSV row


def vela(model: bytes, config: str, out: Path, name: str = "model") -> Vela:
    """Compile with Vela's CLI (its default system configuration and memory mode)."""
    out.mkdir(parents=True, exist_ok=True)
    source = out / f"{name}.tflite"
    source.write_bytes(model)
    subprocess.run(["vela", "--accelerator-config", config, "--output-dir", str(out), str(source)],
                   check=True, capture_output=True, text=True, timeout=600)
    summary = next(out.glob(f"{name}_summary_*.csv"))
    with open(summary, newline="") as stream:
        row = next(csv.DictReader(stream))
    return Vela(model, out / f"{name}_vela.tflite", row)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Vela:
    return vela(conv_model(seed=3, gather=True), "ethos-u55-128", tmp_path_factory.mktemp("mixed"))


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Vela:
    return vela(conv_model(seed=5), "ethos-u55-128", tmp_path_factory.mktemp("single"))


# ---- reading the file independently -----------------------------------------------------------


def _model(data: bytes) -> tflite.Model:
    return tflite.Model.GetRootAsModel(data, 0)


def tensor_span(data: bytes, name: str) -> tuple[int, int]:
    """(file offset, bytes) of the first constant tensor called `name`."""
    model = _model(data)
    subgraph = model.Subgraphs(0)
    for i in range(subgraph.TensorsLength()):
        tensor = subgraph.Tensors(i)
        if tensor.Name().decode() == name:
            buffer = model.Buffers(tensor.Buffer())
            return buffer._tab.Vector(buffer._tab.Offset(4)), buffer.DataLength()
    raise KeyError(name)


def tensor_sizes(data: bytes) -> dict[str, int]:
    subgraph = _model(data).Subgraphs(0)
    return {subgraph.Tensors(i).Name().decode(): int(np.prod(subgraph.Tensors(i).ShapeAsNumpy()))
            for i in range(subgraph.TensorsLength())}


def offline_offsets(data: bytes) -> dict[str, int]:
    model = _model(data)
    subgraph = model.Subgraphs(0)
    for i in range(model.MetadataLength()):
        if model.Metadata(i).Name() == b"OfflineMemoryAllocation":
            words = np.frombuffer(model.Buffers(model.Metadata(i).Buffer()).DataAsNumpy().tobytes(), "<i4")
            return {subgraph.Tensors(t).Name().decode(): int(words[3 + t]) for t in range(int(words[2]))}
    raise KeyError("OfflineMemoryAllocation")


def custom_ops(data: bytes) -> int:
    model = _model(data)
    subgraph = model.Subgraphs(0)
    return sum(1 for i in range(subgraph.OperatorsLength())
               if model.OperatorCodes(subgraph.Operators(i).OpcodeIndex()).CustomCode() == b"ethos-u")


def commands(payload: bytes) -> list[tuple[int, int]]:
    """(byte offset in the payload, command word) of every command of the payload's stream:
    'COP1', the CONFIG action (3 words), NOPs, then the COMMAND_STREAM action's words."""
    words = np.frombuffer(payload, "<u4")
    i = 1
    while words[i] & 0xFF != 2:  # skip CONFIG (1: +3 words) and NOP (5: +1 word)
        i += 3 if words[i] & 0xFF == 1 else 1
    start, end = i + 1, i + 1 + int(((words[i] >> 8) & 0xFF) << 16 | (words[i] >> 16))
    found, j = [], start
    while j < end:
        found.append((4 * j, int(words[j])))
        j += 2 if words[j] & CMD1_FLAG else 1
    return found


def patched(vela_model: Path, out: Path, edits: dict[int, int], name: str = "ethos_u_command_stream") -> Path:
    """A copy of the Vela model with payload words replaced: {byte offset in payload: word}."""
    data = bytearray(vela_model.read_bytes())
    start, _ = tensor_span(bytes(data), name)
    for offset, word in edits.items():
        data[start + offset:start + offset + 4] = int(word).to_bytes(4, "little")
    out.write_bytes(bytes(data))
    return out


def first_command(payload: bytes, word: int) -> int:
    """Byte offset of the first command `word` (opcode and flags, any parameter)."""
    return next(at for at, w in commands(payload) if w & 0xFFFF == word)


# ---- running --------------------------------------------------------------------------------


def run_or_skip(model: Path, inputs: list[np.ndarray], what: str) -> list[np.ndarray]:
    """`mcugen run`'s path (compiled on the host, the simulated NPU linked in); a skip only when
    the engine refuses an operation it does not compute yet (-15)."""
    try:
        return run_model(model, [inputs], BuildOptions())[0]
    except BuildError as error:
        if f"npu error {UNMODELLED}" in str(error):
            pytest.skip(f"{what}: the NPU engine does not compute an operation of it yet ({error})")
        raise


def assert_bit_exact(actual: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_array_equal(a, e)
    values = np.concatenate([e.ravel() for e in expected])
    assert len(np.unique(values)) >= min(3, values.size), "oracle output has no spread"


def random_input(shape: Sequence[int], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, size=shape, dtype=np.int8)


# ---- bit-exact with TFLM ------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("variant", [{}, {"stride": 2, "padding": "VALID", "shape": (1, 9, 11, 3), "cout": 16}],
                         ids=["same-s1", "valid-s2"])
def test_single_conv_bit_exact_with_tflm(tmp_path: Path, config: str, variant: dict) -> None:
    model = conv_model(seed=7, **variant)
    compiled = vela(model, config, tmp_path)
    x = random_input(variant.get("shape", (1, 8, 8, 4)), seed=11)
    actual = run_or_skip(compiled.compiled, [x], f"CONV_2D on {config}")
    assert_bit_exact(actual, run_tflm(model, [x]))


def test_mcugen_run_cli_runs_a_vela_model(single: Vela, tmp_path: Path) -> None:
    x = random_input((1, 8, 8, 4), seed=2)
    np.savez(tmp_path / "case.npz", input0=x)
    result = CliRunner().invoke(main, ["run", str(single.compiled), "--input", str(tmp_path / "case.npz"),
                                       "--output", str(tmp_path / "out.npz")])
    if result.exit_code != 0 and f"npu error {UNMODELLED}" in result.output:
        pytest.skip(f"the NPU engine does not compute CONV_2D yet: {result.output.strip()}")
    assert result.exit_code == 0, result.output
    assert_bit_exact([np.load(tmp_path / "out.npz")["output0"]], run_tflm(single.original, [x]))


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", ["kws_dscnn", "ad_autoencoder", "ic_resnet8", "vww_mobilenet_v1_025"])
def test_public_models_bit_exact_with_tflm(tmp_path: Path, name: str, config: str) -> None:
    source = public_model(name)
    compiled = vela(source.read_bytes(), config, tmp_path, name)
    for number in range(3):
        case = np.load(source.with_name(f"{name}.case{number}.npz"))
        inputs = [case["input0"]]
        actual = run_or_skip(compiled.compiled, inputs, f"{name} on {config}")
        expected = run_tflm(source.read_bytes(), inputs)
        assert_bit_exact(actual, expected)  # (the stored outputs are LiteRT's, one off TFLM in FULLY_CONNECTED)


def test_mixed_model_runs_cpu_op_between_npu_parts(mixed: Vela) -> None:
    data = mixed.compiled.read_bytes()
    assert custom_ops(data) == 2  # Vela left GATHER on the CPU between two NPU parts
    built = compile_model(mixed.compiled, BuildOptions())
    assert [op.kind.name for op in built.order] == ["ETHOS_U", "GATHER", "ETHOS_U"]
    # the GATHER reads and writes the tensors at the offsets Vela fixed in the scratch area
    offsets = offline_offsets(data)
    for tensor in ("c1_y", "g"):
        assert built.plan.offset_of(next(t for t in built.graph.tensors if t.name == tensor)) == \
            built.plan.offset_of(next(t for t in built.graph.tensors if t.name == "scratch")) + offsets[tensor]
    x = random_input((1, 8, 8, 4), seed=4)
    actual = run_or_skip(mixed.compiled, [x], "the mixed model's CONV_2D")
    assert_bit_exact(actual, run_tflm(mixed.original, [x]))
    sanitized = run_model(mixed.compiled, [[x]], BuildOptions(), sanitize=True)[0]  # ASan + UBSan
    assert_bit_exact(sanitized, run_tflm(mixed.original, [x]))


def test_pinned_offsets_are_checked_against_the_order(mixed: Vela) -> None:
    """Vela's offsets must hold for the order mcugen runs: two pinned tensors that share bytes
    while both live are an error, except an ethos-u op's IFM and OFM (the NPU reads the IFM
    before writing over it; Vela overlaps them, vww's first IFM and its output for one)."""
    from mcugen.frontend.tflite import read_model
    from mcugen.ir import Pin
    from mcugen.memory.liveness import check_pinned

    graph = read_model(mixed.compiled)
    assert check_pinned(graph, graph.ops) is None
    by_name = {t.name: t for t in graph.tensors}
    original = by_name["g"].pin
    by_name["g"].pin = Pin("scratch", by_name["c1_y"].pin.offset)  # the CPU GATHER's input and output
    assert "'c1_y'" in (check_pinned(graph, graph.ops) or "")
    by_name["g"].pin = original
    assert check_pinned(graph, graph.ops) is None
    by_name["c2_y"].pin = original  # over the bytes of its own ethos-u op's IFM, g
    assert check_pinned(graph, graph.ops) is None


# ---- report.json -----------------------------------------------------------------------------


def test_report_npu_matches_the_file_and_vela(mixed: Vela, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", str(mixed.compiled), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    npu = report["npu"]
    data = mixed.compiled.read_bytes()
    sizes = tensor_sizes(data)
    # Vela's summary names the configuration: "Ethos_U55_128"
    assert npu["config"] == mixed.summary["accelerator_configuration"].lower().replace("_", "-")
    assert npu["ops_on_npu"] == custom_ops(data) == 2
    assert npu["ops_on_cpu"] == 1
    subgraph = _model(data).Subgraphs(0)
    payloads = [int(np.prod(subgraph.Tensors(i).ShapeAsNumpy())) for i in range(subgraph.TensorsLength())
                if subgraph.Tensors(i).Name() == b"ethos_u_command_stream"]
    assert npu["command_stream_bytes"] == sum(payloads)
    assert npu["weights_encoded_bytes"] == sizes["read_only"]
    regions = [r for r in npu["regions"] if r["op"] == npu["regions"][0]["op"]]
    assert [r["region"] for r in regions] == [0, 1, 2, 3, 4]
    assert [r["tensor"] for r in regions] == ["read_only", "scratch", "scratch", "x", "c1_y"]
    assert regions[1]["bytes"] == sizes["scratch"]
    assert f"{offline_offsets(data)['x']} bytes into the npu scratch area" in regions[3]["placed"]
    # cycles: measured by running the device, or null with the reason
    stream_commands = len(commands(data[slice(*_span_slice(data))]))
    if npu["cycles"] is None:
        assert npu["cycles_source"].startswith("the simulated run failed")
    else:
        assert npu["cycles"] >= stream_commands  # every command costs the device a cycle at least
    assert "npu" not in json.loads(_plain_report(tmp_path))


def _span_slice(data: bytes) -> tuple[int, int]:
    start, length = tensor_span(data, "ethos_u_command_stream")
    return start, start + length


def _plain_report(tmp_path: Path) -> str:
    plain = tmp_path / "plain.tflite"
    plain.write_bytes(conv_model())
    out = tmp_path / "plain"
    assert CliRunner().invoke(main, ["build", str(plain), "-o", str(out)]).exit_code == 0
    return (out / "report.json").read_text()


def test_scratch_area_goes_to_a_pool(mixed: Vela) -> None:
    built = compile_model(mixed.compiled, BuildOptions(pools=(PoolSpec("SRAM", 4096),)))
    area = next(b for b in built.plan.buffers if b.name == "npu scratch area")
    assert area.pool == "SRAM" and area.offset % 16 == 0
    assert area.first == 0 and area.last == len(built.order)


def test_npu_runtime_only_with_npu_ops(mixed: Vela, tmp_path: Path) -> None:
    npu_files = {f for f in compile_model(mixed.compiled, BuildOptions()).code.files if "npu" in f or "ethosu" in f}
    assert {"mcugen_npu_model.c", "mcugen_npu_device.c", "mcugen_npu_driver.c", "ethosu_driver.h"} <= npu_files
    plain = compile_model(conv_model(), BuildOptions(), label="plain.tflite")
    assert not [f for f in plain.code.files if "npu" in f or "ethosu" in f]
    result = CliRunner().invoke(main, ["build", str(mixed.compiled), "-o", str(tmp_path / "gen"), "--prefix", "mixed"])
    assert result.exit_code == 0, result.output
    mk = (tmp_path / "gen" / "mcugen.mk").read_text()
    sim = mk.split("MCUGEN_NPU_SIM_SRCS :=")[1].splitlines()[0]
    assert "mcugen_npu_device.c" in sim and "mcugen_npu_model.c" not in sim
    # the driver glue is shared by the directory's models: runtime, though not the simulated NPU
    assert "mcugen_npu_model.c" not in mk.split("MCUGEN_mixed_SRCS :=")[1].splitlines()[0]
    runtime = mk.split("MCUGEN_RUNTIME_ALL :=")[1].splitlines()[0]
    assert "mcugen_npu_model.c" in runtime and "mcugen_npu_device.c" not in runtime


def test_cortex_m55_build_compiles_the_simulated_npu(single: Vela, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", str(single.compiled), "-o", str(tmp_path / "m55"),
                                       "--target", "cortex-m55", "--size"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "m55" / "report.json").read_text())
    assert report["code_size"]["measured"] is True


# ---- bad input: one line, exit 2 -----------------------------------------------------------------


def test_unsupported_configuration_word_is_refused(single: Vela, tmp_path: Path) -> None:
    payload = single.compiled.read_bytes()[slice(*_span_slice(single.compiled.read_bytes()))]
    config_at = 8  # 'COP1', the CONFIG action word, then the CONFIG word
    assert int.from_bytes(payload[4:8], "little") & 0xFF == 1
    word = int.from_bytes(payload[config_at:config_at + 4], "little")
    bad = patched(single.compiled, tmp_path / "bad_vela.tflite", {config_at: (word & ~0xF) | 9})  # 512 MACs
    result = CliRunner().invoke(main, ["build", str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "ETHOS_U (op 0" in result.output and "512" in result.output and "Traceback" not in result.output


def test_ethos_u_op_not_written_by_vela_is_refused(tmp_path: Path) -> None:
    """No coprocessor type in the custom options (and no offsets): one line, exit 2."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "int8", scale=0.1)
    y = b.add_tensor("y", [1, 4], "int8", scale=0.1)
    cms = b.add_tensor("cms", [16], "uint8", data=np.zeros(16, np.uint8))
    ro = b.add_tensor("ro", [16], "uint8", data=np.zeros(16, np.uint8))
    scratch = b.add_tensor("scratch", [64], "uint8")
    b.add_custom_op("ethos-u", [cms, ro, scratch, scratch, x], [y])
    b.set_io([x], [y])
    path = tmp_path / "no_offsets.tflite"
    path.write_bytes(b.build())
    result = CliRunner().invoke(main, ["build", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "custom options" in result.output or "OfflineMemoryAllocation" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_other_commands_on_a_vela_model(mixed: Vela, tmp_path: Path) -> None:
    """inspect and plan show what runs where and the pinned area as the build plans it; verify
    and report, which compare with a numpy reference or TFLite layer by layer, refuse in one line."""
    result = CliRunner().invoke(main, ["inspect", str(mixed.compiled)])
    assert result.exit_code == 0 and re.search(r"ETHOS_U .* npu ", result.output), result.output
    result = CliRunner().invoke(main, ["plan", str(mixed.compiled), "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    built = compile_model(mixed.compiled, BuildOptions())
    assert plan["order"] == [op.index for op in built.order] and plan["arena_bytes"] == built.plan.arena_size
    for command in (["verify", str(mixed.compiled), "--cases", "1"],
                    ["report", str(mixed.compiled), "-o", str(tmp_path / "r.html")]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert "ethos-u" in result.output


# ---- fault injection at the generated invoke (host harness, ASan + UBSan) ------------------------


@dataclass
class Outcome:
    status: int
    stderr: str


def run_harness(model: Path, tmp_path: Path, x: np.ndarray, *defines: str) -> Outcome:
    """Build `model`, compile its C with the host harness under ASan and UBSan (and -D
    `defines`), run one case."""
    built = compile_model(model, BuildOptions())
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    write_files(built, src)
    (src / "harness_main.c").write_text(render_harness(built.prefix, model.name, built.graph))
    sources = [name for name in sorted(built.code.files) if name.endswith(".c")] + ["harness_main.c"]
    subprocess.run([compiler(), *WARNING_FLAGS, *SANITIZE_FLAGS, *defines, "-I.", *sources, "-o", "prog", "-lm"],
                   cwd=src, check=True, capture_output=True, text=True, timeout=300)
    (src / "in.bin").write_bytes(x.tobytes())
    result = subprocess.run([str(src / "prog"), "in.bin", "out.bin"], check=False, cwd=src, capture_output=True, text=True,
                            timeout=300)
    return Outcome(result.returncode, result.stderr)


def assert_npu_error(outcome: Outcome, code: int) -> None:
    """invoke returned <PREFIX>_NPU_ERROR (-3) with the driver's code, the harness exited
    normally (3: invoke failed), and neither sanitizer reported anything."""
    assert "Sanitizer" not in outcome.stderr and "runtime error" not in outcome.stderr, outcome.stderr
    assert outcome.status == 3, outcome.stderr
    assert re.search(rf"status -3 on case 0: npu error {code}\b", outcome.stderr), outcome.stderr


def _payload(model: Vela) -> bytes:
    data = model.compiled.read_bytes()
    return data[slice(*_span_slice(data))]


X = random_input((1, 8, 8, 4), seed=9)


def test_fault_corrupted_command_stream(single: Vela, tmp_path: Path) -> None:
    at, _ = commands(_payload(single))[0]
    bad = patched(single.compiled, tmp_path / "m_vela.tflite", {at: 0x03FF})  # an undefined cmd0 opcode
    assert_npu_error(run_harness(bad, tmp_path, X), -8)


def test_fault_model_for_another_npu(single: Vela, tmp_path: Path) -> None:
    """The payload's CONFIG word says u55-128; the device (the firmware's NPU) is a u55-256."""
    assert_npu_error(run_harness(single.compiled, tmp_path, X, "-DMCUGEN_NPU_DEVICE_MACS=256u"), -5)


def test_fault_address_outside_its_region(single: Vela, tmp_path: Path) -> None:
    at = first_command(_payload(single), SET_IFM_BASE0)
    bad = patched(single.compiled, tmp_path / "m_vela.tflite", {at + 4: 0x00FFFFF0})
    assert_npu_error(run_harness(bad, tmp_path, X), -11)


def test_fault_weight_stream_cut_off_by_its_region(single: Vela, tmp_path: Path) -> None:
    """WEIGHT_LENGTH past the read-only area's end: the stream the NPU would read is truncated."""
    payload = _payload(single)
    at = first_command(payload, SET_WEIGHT_LENGTH)
    read_only = tensor_sizes(single.compiled.read_bytes())["read_only"]
    bad = patched(single.compiled, tmp_path / "m_vela.tflite", {at + 4: read_only + 16})
    assert_npu_error(run_harness(bad, tmp_path, X), -11)


def test_fault_truncated_weight_stream(single: Vela, tmp_path: Path) -> None:
    """WEIGHT_LENGTH shortened inside its region: the weight decoder reaches the end of the stream
    inside a slice, and the engine refuses the operation (-16)."""
    payload = _payload(single)
    at = first_command(payload, SET_WEIGHT_LENGTH)
    length = int.from_bytes(payload[at + 4:at + 8], "little")
    bad = patched(single.compiled, tmp_path / "m_vela.tflite", {at + 4: length // 4})
    outcome = run_harness(bad, tmp_path, X)
    if f"npu error {UNMODELLED}" in outcome.stderr:
        pytest.skip("the NPU engine does not decode CONV_2D weights yet")
    assert_npu_error(outcome, -16)


OPERATIONS = (0x002, 0x003, 0x004, 0x005)  # NPU_OP_CONV, DEPTHWISE, POOL, ELEMENTWISE
HARMLESS = 0x0001_010F  # NPU_SET_IFM_REGION 1: a parameter command


@pytest.fixture(scope="module")
def long_job(tmp_path_factory: pytest.TempPathFactory) -> Vela:
    """Three CONV_2D in one NPU part: a stream of over 64 commands (the driver's polling slice)."""
    rng = np.random.default_rng(8)
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8, 8, 4], "int8", scale=0.05, zero_point=-2)
    source = x
    for layer in range(3):
        w = b.add_tensor(f"w{layer}", [4, 3, 3, 4], "int8", scale=[0.02] * 4, data=rng.integers(-127, 128, (4, 3, 3, 4)))
        bias = b.add_tensor(f"b{layer}", [4], "int32", scale=[0.001] * 4, data=rng.integers(-99, 99, 4))
        y = b.add_tensor(f"y{layer}", [1, 8, 8, 4], "int8", scale=0.05, zero_point=1)
        b.add_op("CONV_2D", [source, w, bias], [y], {"padding": "SAME"})
        source = y
    b.set_io([x], [source])
    return vela(b.build(), "ethos-u55-128", tmp_path_factory.mktemp("long"))


def hanging(model: Vela, out: Path) -> Path:
    """The model with every operation command replaced by a parameter command: a job whose
    length does not depend on the engine, over the limits the tests set (3 cycles)."""
    found = commands(_payload(model))
    assert len(found) > 64
    return patched(model.compiled, out, {at: HARMLESS for at, w in found if w & 0xFFFF in OPERATIONS})


def test_fault_hang_hits_the_driver_timeout(long_job: Vela, tmp_path: Path) -> None:
    bad = hanging(long_job, tmp_path / "m_vela.tflite")
    assert_npu_error(run_harness(bad, tmp_path, X, "-DMCUGEN_NPU_DRIVER_TIMEOUT_CYCLES=3u"), -14)


def test_fault_hang_hits_the_watchdog(long_job: Vela, tmp_path: Path) -> None:
    bad = hanging(long_job, tmp_path / "m_vela.tflite")
    assert_npu_error(run_harness(bad, tmp_path, X, "-DMCUGEN_NPU_WATCHDOG_CYCLES=3u"), -13)


def test_fault_free_job_runs_to_the_end(long_job: Vela, tmp_path: Path) -> None:
    """The same job without the limits completes (the faults above come from the limits)."""
    outcome = run_harness(hanging(long_job, tmp_path / "m_vela.tflite"), tmp_path, X)
    assert outcome.status == 0 and outcome.stderr == "", outcome.stderr


def test_fault_code_stays_distinct_when_the_driver_returns_minus_one(single: Vela, tmp_path: Path) -> None:
    """Built as TFLM expects the driver (-1 for every failure), the application still gets -11."""
    at = first_command(_payload(single), SET_IFM_BASE0)
    bad = patched(single.compiled, tmp_path / "m_vela.tflite", {at + 4: 0x00FFFFF0})
    assert_npu_error(run_harness(bad, tmp_path, X, "-DMCUGEN_NPU_DRIVER_MINUS_ONE_ON_ERROR"), -11)


# ---- Arm's driver instead of ours -----------------------------------------------------------------

# invoke is ethosu_invoke_async then ethosu_wait (Arm's ethosu_invoke_v3 is the same pair), so --npu-async needs nothing more
ARM_DRIVER_API = {"ethosu_reserve_driver", "ethosu_invoke_async", "ethosu_wait", "ethosu_release_driver"}


@pytest.mark.parametrize("cc", ["host", "arm-none-eabi-gcc"])
def test_external_driver_build_needs_only_the_driver_api(mixed: Vela, tmp_path: Path, cc: str) -> None:
    """With MCUGEN_NPU_EXTERNAL_DRIVER the model's objects (its C, the glue, the CPU kernels)
    leave exactly Arm's driver API undefined, besides the C library: the simulated device, our
    driver and the engine are not needed, and `make MCUGEN_NPU_EXTERNAL_DRIVER=1` drops them."""
    from test_firmware import require_tools

    built = compile_model(mixed.compiled, BuildOptions(target="cortex-m55" if cc != "host" else "host"))
    src = tmp_path / "gen"
    write_set([built], src)
    mk = tmp_path / "Makefile"
    mk.write_text(f"include {src}/mcugen.mk\nshow:\n\t@echo $(MCUGEN_SRCS) '|' $(MCUGEN_CFLAGS)\n")
    shown = subprocess.run(["make", "-s", "-f", str(mk), "show", "MCUGEN_NPU_EXTERNAL_DRIVER=1"], check=True,
                           capture_output=True, text=True).stdout
    sources, flags = shown.split("|")
    names = sorted(Path(s).name for s in sources.split())
    assert "mcugen_npu_model.c" in names and not [n for n in names if n in built.code.files and
                                                  n.startswith(("mcugen_npu_device", "mcugen_npu_driver",
                                                                "mcugen_npu_engine", "mcugen_npu_weights"))]
    assert "-DMCUGEN_NPU_EXTERNAL_DRIVER" in flags
    if cc == "host":
        command, nm = [compiler(), *WARNING_FLAGS], "nm"
    else:
        require_tools("arm-none-eabi-gcc")
        command, nm = ["arm-none-eabi-gcc", *built.options.target.core_flags, *WARNING_FLAGS, "-O2"], "arm-none-eabi-nm"
    objects = []
    for name in names:
        obj = tmp_path / f"{name}.o"
        subprocess.run([*command, "-DMCUGEN_NPU_EXTERNAL_DRIVER", f"-I{src}", "-c", str(src / name), "-o", str(obj)],
                       check=True, capture_output=True, text=True)
        objects.append(str(obj))
    listing = subprocess.run([nm, "-u", *objects], check=True, capture_output=True, text=True).stdout
    undefined = {line.split()[-1] for line in listing.splitlines() if line.strip() and not line.endswith(":")}
    defined = subprocess.run([nm, "--defined-only", *objects], check=True, capture_output=True, text=True).stdout
    defined_names = {line.split()[-1] for line in defined.splitlines() if len(line.split()) == 3}
    missing = undefined - defined_names
    ours = {s for s in missing if s.startswith(("mcugen", "ethosu"))}
    assert ours == ARM_DRIVER_API, sorted(ours)


# ---- cycles and profile (a job with no operations: it completes whatever the engine computes) ----


def test_cycles_in_report_and_profile_come_from_the_device(long_job: Vela, tmp_path: Path) -> None:
    model = hanging(long_job, tmp_path / "free_vela.tflite")
    result = CliRunner().invoke(main, ["build", str(model), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    npu = json.loads((tmp_path / "out" / "report.json").read_text())["npu"]
    assert npu["cycles_source"].startswith("simulated"), npu["cycles_source"]
    assert npu["cycles"] >= len(commands(_payload(long_job)))  # every command costs at least a cycle
    result = CliRunner().invoke(main, ["profile", str(model), "--per-op", "--json"])
    assert result.exit_code == 0, result.output
    profile = json.loads(result.output[result.output.index("{"):])
    assert profile["npu_clock_mhz"] == 500.0
    assert profile["npu_cycles"] == npu["cycles"]  # the same simulation, data-independent
    (op,) = [o for o in profile["ops"] if o["kind"] == "ETHOS_U"]
    assert op["npu_ns"] == pytest.approx(npu["cycles"] * 1000.0 / 500.0) and op["cpu_ns"] == 0.0
    table = CliRunner().invoke(main, ["profile", str(model)]).output
    assert "NPU clock of 500 MHz" in table and "NPU 100.00%" in table


def test_qemu_profile_reads_the_same_npu_cycles() -> None:
    """`mcugen profile --qemu`: the firmware's PROFILE_NPU lines give the host build's cycles."""
    from test_firmware import require_tools

    from mcugen.analysis.profile import profile_model

    require_tools("arm-none-eabi-gcc", "qemu-system-arm")
    model = Path(__file__).resolve().parents[1] / "examples" / "npu" / "model_vela.tflite"
    options = BuildOptions(target="cortex-m55")
    try:
        on_qemu = profile_model(model, options, qemu=True)
    except BuildError as error:
        if f"npu error {UNMODELLED}" in str(error):
            pytest.skip(f"the NPU engine does not compute CONV_2D yet: {error}")
        raise
    on_host = profile_model(model, BuildOptions(), inputs=[np.zeros((1, 8, 8, 4), np.int8)])
    assert on_qemu.npu_cycles == on_host.npu_cycles > 0
    assert [op.npu_cycles > 0 for op in on_qemu.ops] == [op.kind == "ETHOS_U" for op in on_qemu.ops]


# ---- the firmware example: the simulated NPU inside Cortex-M55 firmware on QEMU ----------------


@pytest.mark.parametrize("target", ["host", "qemu-m55"])
def test_example_runs_on_the_simulated_npu(target: str, tmp_path: Path) -> None:
    from test_firmware import make, require_tools

    require_tools("make", "cc", *(("arm-none-eabi-gcc", "qemu-system-arm") if target != "host" else ()))
    result = make("npu", tmp_path / "build", target)
    if f"npu error {UNMODELLED}" in result.stdout:
        pytest.skip(f"examples/npu {target}: the NPU engine does not compute CONV_2D yet: "
                    f"{result.stdout.strip().splitlines()[-2:]}")
    assert result.returncode == 0, result.stdout[-2000:]
    assert re.search(r"^PASS model_vela 384 bytes$", result.stdout, re.MULTILINE), result.stdout[-2000:]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_external_arena_is_refused_for_vela_models(single: Vela, tmp_path: Path) -> None:
    """The NPU is set up by <prefix>_init(), which --arena external replaces: one line, exit 2."""
    result = CliRunner().invoke(main, ["build", str(single.compiled), "-o", str(tmp_path / "gen"),
                                       "--arena", "external"])
    assert result.exit_code == 2 and "--arena external is not supported for Vela-compiled models" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "gen").exists()


def test_weights_file_is_refused_for_vela_models(single: Vela, tmp_path: Path) -> None:
    """The payload holds the NPU's weights with its command stream: one line, exit 2."""
    result = CliRunner().invoke(main, ["build", str(single.compiled), "-o", str(tmp_path / "gen"), "--weights-file"])
    assert result.exit_code == 2 and "--weights-file is not supported for Vela-compiled models" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "gen").exists()
