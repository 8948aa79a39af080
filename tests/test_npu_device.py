"""The NPU device model and driver (templates/runtime/npu/) against real Vela command streams.

Each public model is compiled by Vela 5.2 (the pinned `ethos-u-vela` test dependency) for
ethos-u55-64, -128 and -256 with --verbose-register-command-stream. The driver payload (the
first input of the `ethos-u` custom op) runs through our driver on our device in a host
harness (firmware_tests/npu/npu_harness.c, built with ASan and UBSan); the harness prints
every command the device decoded, with its values read back from the device's decoded state,
and the test requires exactly Vela's printed sequence: offsets, command names, parameters and
payload words, in order, then success, a clean status and the op counts of Vela's listing.

The fault cases corrupt that payload or its regions one way each and expect their own return
code (enum mcugen_npu_result) and STATUS bits, with the sanitizers watching.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tflite
from conftest import PUBLIC_NAMES, public_model

from mcugen.toolchain.host import SANITIZE_FLAGS, WARNING_FLAGS, compiler

REPO = Path(__file__).resolve().parents[1]
NPU = REPO / "templates" / "runtime" / "npu"
HARNESS = REPO / "firmware_tests" / "npu" / "npu_harness.c"
CONFIGS = (64, 128, 256)

# Vela's listing: "0x00000c: [payload] param code - NAME ..." (payload only for cmd1)
VELA_LINE = re.compile(r"^0x([0-9a-f]{6}):\s+(?:([0-9a-f]{8})\s+)?([0-9a-f]{4}) ([0-9a-f]{4}) - (\w+)")
VELA_KERNEL = re.compile(r"size=(\d+,\d+) stride=(\d+,\d+), dilation=(\d+,\d+) .*"
                         r"OFM Block=\[1, (\d+), (\d+), (\d+)\]")
OUR_LINE = re.compile(r"^cmd ([0-9a-f]{6}) (\w+) ([0-9a-f]{4})(?: ([0-9a-f]{8}))?$")
RESULT_LINE = re.compile(r"^result (-?\d+) status 0x([0-9a-f]{8}) fault (\d+) commands (\d+) ops (\d+) "
                         r"hooks (\d+)$", re.MULTILINE)

# STATUS bits (mcugen_npu_regs.h)
IRQ_RAISED, BUS_STATUS, CMD_PARSE_ERR, CMD_END, WD_FAULT = 1 << 1, 1 << 2, 1 << 4, 1 << 5, 1 << 7
FAULT_IFACE = 1 << 11
CHAN_SHIFT = 12
CHAN_IFM, CHAN_DMA_SRC = 1, 4

# return codes (ethosu_driver.h, enum mcugen_npu_result)
ERR_BAD_MAGIC, ERR_CONFIG, ERR_ARCH = -3, -5, -6
ERR_CMD_INVALID, ERR_CMD_TRUNCATED, ERR_NO_STOP = -8, -9, -10
ERR_BUS, ERR_DMA, ERR_WATCHDOG, ERR_TIMEOUT, ERR_ENGINE = -11, -12, -13, -14, -16


@dataclass(frozen=True)
class Compiled:
    """One Vela compilation: its listing and what the harness needs to run the payload."""

    listing: list[tuple[int, str, int, int | None]]
    kernels: list[str]  # Vela's description of each CONV/DEPTHWISE/POOL: size, stride, dilation, block
    payload: Path
    regions: list[str]  # harness region specs in TFLM's base-address order


@dataclass(frozen=True)
class Run:
    commands: list[tuple[int, str, int, int | None]]
    rc: int
    status: int
    fault: int
    executed: int
    ops: int
    hooks: int
    counts: dict[str, int]
    kernels: list[str]
    polled: int | None
    pmu: tuple[int, int]


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("npu") / "npu_harness"
    sources = [str(HARNESS), *(str(p) for p in sorted(NPU.glob("*.c")))]
    subprocess.run([compiler(), *WARNING_FLAGS, *SANITIZE_FLAGS, f"-I{NPU}", *sources, "-o", str(out)],
                   check=True, capture_output=True, text=True)
    return out


def tensor_bytes(model: tflite.Model, sg: tflite.SubGraph, index: int) -> tuple[bytes, int]:
    tensor = sg.Tensors(index)
    data = model.Buffers(tensor.Buffer()).DataAsNumpy()
    raw = data.tobytes() if isinstance(data, np.ndarray) else b""
    itemsize = {tflite.TensorType.INT8: 1, tflite.TensorType.UINT8: 1, tflite.TensorType.INT16: 2,
                tflite.TensorType.INT32: 4, tflite.TensorType.FLOAT32: 4}[tensor.Type()]
    return raw, int(np.prod(tensor.ShapeAsNumpy())) * itemsize


def vela_compile(name: str, macs: int, out: Path) -> Compiled:
    result = subprocess.run(
        [sys.executable, "-m", "ethosu.vela", str(public_model(name)), "--accelerator-config",
         f"ethos-u55-{macs}", "--output-dir", str(out), "--verbose-register-command-stream"],
        check=True, capture_output=True, text=True)
    listing, kernels, comment = [], [], ""
    for line in result.stdout.splitlines():
        if line.startswith("// "):
            comment = line
        m = VELA_LINE.match(line)
        if m:
            listing.append((int(m[1], 16), m[5], int(m[3], 16), None if m[2] is None else int(m[2], 16)))
            if m[5] in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL"):
                k = VELA_KERNEL.search(comment)
                assert k, comment
                kernels.append(f"size={k[1]} stride={k[2]} dilation={k[3]} block={k[4]},{k[5]},{k[6]}")
    buf = (out / f"{name}_vela.tflite").read_bytes()
    model = tflite.Model.GetRootAsModel(buf, 0)
    sg = model.Subgraphs(0)
    ops = [sg.Operators(i) for i in range(sg.OperatorsLength())]
    ethos = [op for op in ops if model.OperatorCodes(op.OpcodeIndex()).CustomCode() == b"ethos-u"]
    assert len(ethos) == 1, f"{name}: expected one ethos-u op, found {len(ethos)}"
    op = ethos[0]
    inputs, outputs = list(op.InputsAsNumpy()), list(op.OutputsAsNumpy())
    payload, _ = tensor_bytes(model, sg, inputs[0])
    (out / "payload.bin").write_bytes(payload)
    regions: list[str] = []
    seen: dict[int, int] = {}
    for index in [*inputs[1:], *outputs]:  # TFLM: the inputs after the payload, then the outputs
        if index in seen:
            regions.append(f"same:{seen[index]}")
            continue
        seen[index] = len(regions)
        data, size = tensor_bytes(model, sg, index)
        if data:
            path = out / f"region{len(regions)}.bin"
            path.write_bytes(data)
            regions.append(f"file:{path}")
        else:
            regions.append(f"zero:{size}")
    return Compiled(listing, kernels, out / "payload.bin", regions)


Compile = Callable[[str, int], Compiled]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Compile:
    """Vela's output for (model, MACs), compiled on first use and kept for the module."""
    cache: dict[tuple[str, int], Compiled] = {}

    def get(name: str, macs: int) -> Compiled:
        if (name, macs) not in cache:
            cache[name, macs] = vela_compile(name, macs, tmp_path_factory.mktemp(f"vela-{name}-{macs}"))
        return cache[name, macs]

    return get


def run(harness: Path, macs: int, payload: Path, regions: list[str], *extra: str) -> Run:
    result = subprocess.run([str(harness), str(macs), str(payload), *regions, *extra], check=False,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"harness failed ({result.returncode}): {result.stderr[-2000:]}"
    commands = []
    for line in result.stdout.splitlines():
        m = OUR_LINE.match(line)
        if m:
            commands.append((int(m[1], 16), m[2], int(m[3], 16), None if m[4] is None else int(m[4], 16)))
    r = RESULT_LINE.search(result.stdout)
    assert r, result.stdout[-2000:]
    counts = {m[1]: int(m[2]) for m in re.finditer(r"^count (\w+) (\d+)$", result.stdout, re.MULTILINE)}
    pmu = re.search(r"^pmu cycles (\d+) active (\d+)$", result.stdout, re.MULTILINE)
    poll = re.search(r"^poll (-?\d+)$", result.stdout, re.MULTILINE)
    return Run(commands, int(r[1]), int(r[2], 16), int(r[3]), int(r[4]), int(r[5]), int(r[6]), counts,
               re.findall(r"^op (.*)$", result.stdout, re.MULTILINE),
               None if poll is None else int(poll[1]), (int(pmu[1]), int(pmu[2])) if pmu else (-1, -1))


@pytest.mark.parametrize("macs", CONFIGS)
@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_device_decodes_vela_stream_exactly(harness: Path, compiled: Compile, name: str, macs: int) -> None:
    c = compiled(name, macs)
    assert c.listing and c.listing[-1][1] == "NPU_OP_STOP"
    r = run(harness, macs, c.payload, c.regions)
    assert r.rc == 0, f"driver returned {r.rc}, status {r.status:#x}, fault {r.fault}"
    assert r.status & (BUS_STATUS | CMD_PARSE_ERR | WD_FAULT) == 0 and r.status & CMD_END
    assert r.fault == 0
    for i, (ours, vela) in enumerate(zip(r.commands, c.listing)):
        assert ours == vela, f"{name} u55-{macs}: command {i} decoded as {ours}, Vela printed {vela}"
    assert len(r.commands) == len(c.listing) == r.executed
    vela_ops = Counter(n.removeprefix("NPU_OP_") for _, n, _, _ in c.listing if n.startswith("NPU_OP_"))
    assert {k: v for k, v in r.counts.items() if v} == dict(vela_ops)
    assert r.ops == sum(vela_ops.values()) - 1  # every op but STOP
    assert r.hooks == sum(vela_ops.values())
    # the kernel fields as the engine will decode them (KERNEL_STRIDE's split stride bits,
    # dilation, the dilated extent, the block config) against Vela's own description
    assert r.kernels == c.kernels
    # the PMU, enabled by the application's ethosu_inference_begin(): CYCLE and NPU_ACTIVE count
    # the cycle model's cycles (tests/test_npu_cycles.py checks their value against Vela)
    assert r.pmu[0] == r.pmu[1] > 0


def test_cross_compiles_for_cortex_m55(tmp_path: Path) -> None:
    if shutil.which("arm-none-eabi-gcc") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("arm-none-eabi-gcc is required in CI")
        pytest.skip("arm-none-eabi-gcc not installed")
    for source in sorted(NPU.glob("*.c")):
        subprocess.run(["arm-none-eabi-gcc", *WARNING_FLAGS, "-O2", "-mcpu=cortex-m55", "-mthumb",
                        "-mfloat-abi=hard", f"-I{NPU}", "-c", str(source), "-o", str(tmp_path / "o.o")],
                       check=True, capture_output=True, text=True)


# ---- fault injection, on kws_dscnn for u55-128 ------------------------------------------------------

def words(path: Path) -> list[int]:
    data = path.read_bytes()
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def write_words(path: Path, values: list[int]) -> Path:
    path.write_bytes(struct.pack(f"<{len(values)}I", *values))
    return path


def stream_start(values: list[int]) -> int:
    """Index of the first command-stream word in a COP1 payload (after the COMMAND_STREAM tag)."""
    i = 1
    while values[i] & 0xFF != 2:
        i += 3 if values[i] & 0xFF == 1 else 1
    return i + 1


@pytest.fixture
def kws(compiled: Compile) -> Compiled:
    return compiled("kws_dscnn", 128)


def patched(kws: Compiled, tmp_path: Path, at_offset: int | None, word: int) -> Path:
    """The payload with the stream word at byte offset `at_offset` (None: the final STOP) replaced."""
    values = words(kws.payload)
    start = stream_start(values)
    index = len(values) - 1 if at_offset is None else start + at_offset // 4
    if at_offset is None:
        assert values[index] & 0xFFFF == 0x0000, "the payload must end in NPU_OP_STOP"
    values[index] = word
    return write_words(tmp_path / "patched.bin", values)


def first(kws: Compiled, name: str) -> int:
    return next(offset for offset, n, _, _ in kws.listing if n == name)


def test_undefined_opcode_is_a_parse_error(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    at = first(kws, "NPU_OP_CONV")
    r = run(harness, 128, patched(kws, tmp_path, at, 0x0000_03F0), kws.regions)
    assert r.rc == ERR_CMD_INVALID
    assert r.status & (CMD_PARSE_ERR | IRQ_RAISED) == CMD_PARSE_ERR | IRQ_RAISED
    assert r.status & (BUS_STATUS | WD_FAULT | CMD_END) == 0
    assert r.commands[-1][0] < at and r.counts["CONV"] == 0  # stopped at the bad word


def test_truncated_cmd1_at_the_end(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    r = run(harness, 128, patched(kws, tmp_path, None, 0x0000_4000), kws.regions)  # IFM_BASE0, no data
    assert r.rc == ERR_CMD_TRUNCATED
    assert r.status & (CMD_PARSE_ERR | IRQ_RAISED | CMD_END) == CMD_PARSE_ERR | IRQ_RAISED
    assert r.fault == 3 and r.executed == len(kws.listing) - 1


def test_missing_stop(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    r = run(harness, 128, patched(kws, tmp_path, None, 0x0000_0100), kws.regions)  # IFM_PAD_TOP 0
    assert r.rc == ERR_NO_STOP
    assert r.status & (CMD_PARSE_ERR | IRQ_RAISED | CMD_END) == CMD_PARSE_ERR | IRQ_RAISED
    assert r.fault == 4 and r.executed == len(kws.listing)


def test_payload_for_another_configuration_is_refused(harness: Path, compiled: Compile) -> None:
    other = compiled("kws_dscnn", 256)
    r = run(harness, 128, other.payload, other.regions)
    assert r.rc == ERR_CONFIG and r.status == 0 and r.executed == 0


def test_wrong_config_word_is_refused(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    values = words(kws.payload)
    assert values[1] & 0xFF == 1  # CONFIG action, then the CONFIG and ID words
    values[2] ^= 0x1 << 8  # one KiB more or less SHRAM
    r = run(harness, 128, write_words(tmp_path / "cfg.bin", values), kws.regions)
    assert r.rc == ERR_CONFIG and r.executed == 0


def test_wrong_architecture_major_is_refused(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    values = words(kws.payload)
    values[3] = (values[3] & 0x0FFF_FFFF) | (2 << 28)
    r = run(harness, 128, write_words(tmp_path / "id.bin", values), kws.regions)
    assert r.rc == ERR_ARCH and r.executed == 0


def test_bad_magic_is_refused(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    values = words(kws.payload)
    values[0] = struct.unpack("<I", b"COP2")[0]
    r = run(harness, 128, write_words(tmp_path / "magic.bin", values), kws.regions)
    assert r.rc == ERR_BAD_MAGIC and r.executed == 0


def test_dma_beyond_its_region(harness: Path, kws: Compiled) -> None:
    assert kws.listing[0][1] == "NPU_SET_DMA0_SRC_REGION"  # kws starts with a DMA from region 0
    regions = [f"{kws.regions[0]}@1024", *kws.regions[1:]]  # the first DMA reads 1136 bytes
    r = run(harness, 128, kws.payload, regions)
    assert r.rc == ERR_DMA
    assert r.status >> CHAN_SHIFT & 0xF == CHAN_DMA_SRC
    assert r.status & (BUS_STATUS | IRQ_RAISED | FAULT_IFACE) == BUS_STATUS | IRQ_RAISED | FAULT_IFACE
    assert r.counts["DMA_START"] == 0


def test_feature_map_beyond_its_region(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    at = first(kws, "NPU_SET_IFM_BASE0")
    values = words(kws.payload)
    values[stream_start(values) + at // 4 + 1] = 0x0010_0000  # 1 MiB into a 22 KB scratch
    r = run(harness, 128, write_words(tmp_path / "ifm.bin", values), kws.regions)
    assert r.rc == ERR_BUS
    assert r.status >> CHAN_SHIFT & 0xF == CHAN_IFM
    assert r.status & (BUS_STATUS | IRQ_RAISED | FAULT_IFACE) == BUS_STATUS | IRQ_RAISED
    assert r.counts["CONV"] == 0


def test_engine_refusal_stops_the_device(harness: Path, kws: Compiled) -> None:
    r = run(harness, 128, kws.payload, kws.regions, "-e", "3")
    assert r.rc == ERR_ENGINE and r.hooks == 3
    assert r.status & (CMD_PARSE_ERR | IRQ_RAISED | CMD_END) == CMD_PARSE_ERR | IRQ_RAISED


def test_tflm_compatible_single_error_code(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    """TFLM's ethos-u kernel fails only on -1: the compatibility switch collapses every code."""
    out = tmp_path / "npu_harness_tflm"
    sources = [str(HARNESS), *(str(p) for p in sorted(NPU.glob("*.c")))]
    subprocess.run([compiler(), *WARNING_FLAGS, "-O1", "-DMCUGEN_NPU_DRIVER_MINUS_ONE_ON_ERROR", f"-I{NPU}",
                    *sources, "-o", str(out)], check=True, capture_output=True, text=True)
    assert run(out, 128, kws.payload, kws.regions, "-w", "100").rc == -1
    assert run(out, 128, kws.payload, kws.regions).rc == 0


def test_hang_is_caught_by_the_watchdog(harness: Path, kws: Compiled) -> None:
    r = run(harness, 128, kws.payload, kws.regions, "-w", "100")
    assert r.rc == ERR_WATCHDOG
    assert r.status & (WD_FAULT | IRQ_RAISED | CMD_END) == WD_FAULT | IRQ_RAISED
    assert r.executed == 100


def test_async_wait_times_out_and_resets(harness: Path, kws: Compiled) -> None:
    r = run(harness, 128, kws.payload, kws.regions, "-a", "-t", "50")
    assert r.rc == ERR_TIMEOUT
    assert r.status & WD_FAULT == 0


def test_async_invoke_then_wait_succeeds(harness: Path, kws: Compiled) -> None:
    r = run(harness, 128, kws.payload, kws.regions, "-a")
    assert r.polled == 1  # the first poll found the device still running
    assert r.rc == 0 and r.status & CMD_END and r.executed == len(kws.listing)


# ---- the command set: every command Vela's U55 definitions list, each decoded into its own field ----

def test_every_u55_command_decodes_into_its_own_field(harness: Path, kws: Compiled, tmp_path: Path) -> None:
    """A synthetic stream sets every parameter command Vela defines for U55 to a distinct value;
    the state read back afterwards must hold each one (no field shared, none dropped), and the
    device must know exactly Vela's command names."""
    from ethosu.vela.ethos_u55_regs.ethos_u55_regs import cmd0, cmd1

    no_param = {"NPU_SET_WEIGHT_LENGTH", "NPU_SET_SCALE_LENGTH", "NPU_SET_OPB_SCALE",
                "NPU_SET_WEIGHT1_LENGTH", "NPU_SET_SCALE1_LENGTH"}  # cmd1 whose parameter is reserved
    stream: list[int] = []
    expected: dict[str, tuple[int, int]] = {}
    for c in cmd0:
        if c.name.startswith("NPU_SET_"):
            param = (c.value * 7 + 1) & 0xFFFF
            stream.append(c.value | param << 16)
            expected[c.name] = (param, 0)
    for c in cmd1:
        param = 0 if c.name in no_param else 1 + (c.value & 0x7F)
        data = (0x1000 + c.value) << 16 | (0x5A + c.value)
        stream += [c.value | 0x4000 | param << 16, data]
        expected[c.name] = (param, data)
    stream += [0x001 | 1 << 16, 0x013 | 1 << 16]  # NPU_OP_IRQ (mid-run interrupt), NPU_OP_PMU_MASK
    stream.append(0xFFFF << 16)  # NPU_OP_STOP
    head = words(kws.payload)[:4]  # 'COP1' and Vela's CONFIG action for this device
    head += [5] * (4 - (len(head) + 1) % 4)  # NOPs: the stream starts 16-byte aligned
    head.append(2 | (len(stream) & 0xFFFF) << 16 | (len(stream) >> 16) << 8)
    r = subprocess.run([str(harness), "128", str(write_words(tmp_path / "all.bin", head + stream)),
                        *kws.regions, "-s"], check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert re.search(r"^result 0 ", r.stdout, re.MULTILINE), r.stdout[-500:]
    state = {m[1]: (int(m[2], 16), int(m[3], 16))
             for m in re.finditer(r"^state (\w+) ([0-9a-f]{4}) ([0-9a-f]{8})$", r.stdout, re.MULTILINE)}
    assert state == expected
    decoded = {m[1] for m in re.finditer(r"^cmd [0-9a-f]{6} (\w+) ", r.stdout, re.MULTILINE)}
    assert decoded == set(expected) | {"NPU_OP_IRQ", "NPU_OP_PMU_MASK", "NPU_OP_STOP"}
    assert re.search(r"^count IRQ 1$", r.stdout, re.MULTILINE) and re.search(r"^count PMU_MASK 1$", r.stdout,
                                                                              re.MULTILINE)
    # the other operations are decoded from Vela's own streams above; the set is Vela's
    assert {c.name for c in cmd0 if c.name.startswith("NPU_OP_")} == {
        "NPU_OP_STOP", "NPU_OP_IRQ", "NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE",
        "NPU_OP_DMA_START", "NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT", "NPU_OP_PMU_MASK"}
