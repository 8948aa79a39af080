"""The NPU weight decoding (templates/runtime/npu/mcugen_npu_weights.c) against Arm's Vela 5.2.

The C runs in a host harness (firmware_tests/npu_weights_harness.c) built with the project's
warning flags and AddressSanitizer + UndefinedBehaviorSanitizer, so any read or write outside a
buffer fails the test. The oracles are Vela's own: its weight codec (`ethosu.mlw_codec`: encode,
decode, reorder_encode), its bias/scale packing (`weight_compressor.encode_bias`), and the
command streams and read-only areas it writes for the public models (`vela --output-format raw`),
whose weights and biases are compared with the original TFLite tensors.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, public_model

from mcugen.frontend.tflite import read_model
from mcugen.ir import OpKind
from mcugen.toolchain.host import SANITIZE_FLAGS, WARNING_FLAGS, compiler
from tests.test_firmware import require_tools

mlw_codec = pytest.importorskip("ethosu.mlw_codec")
weight_compressor = pytest.importorskip("ethosu.vela.weight_compressor")

REPO = Path(__file__).resolve().parents[1]
NPU = REPO / "templates" / "runtime" / "npu"
HARNESS = REPO / "firmware_tests" / "npu_weights_harness.c"

OK, ARGUMENT, TRUNCATED, CORRUPT, CAPACITY = 0, -1, -2, -3, -4
DEPTH_FIRST, PART_KERNEL, DEPTHWISE = 0, 1, 2


# ---- the harness ------------------------------------------------------------------------

@dataclass(frozen=True)
class Harness:
    binary: Path
    work: Path

    def run(self, mode: str, payload: bytes) -> bytes:
        src, dst = self.work / f"{mode}.in", self.work / f"{mode}.out"
        src.write_bytes(payload)
        result = subprocess.run([str(self.binary), mode, str(src), str(dst)], capture_output=True,
                                text=True, timeout=120, check=False)
        assert result.returncode == 0 and not result.stderr, result.stderr[-3000:]
        return dst.read_bytes()

    def decode(self, cases: list[tuple[bytes, int, int]]) -> list[tuple[int, np.ndarray]]:
        """(stream, capacity, chunk) -> (status, weights); chunk 0: one call, else pieces."""
        payload = b"".join(struct.pack("<III", len(s), cap, chunk) + s for s, cap, chunk in cases)
        out = self.run("decode", payload)
        results, pos = [], 0
        for _ in cases:
            status, count = struct.unpack_from("<iI", out, pos)
            pos += 8
            results.append((status, np.frombuffer(out, np.int16, count, pos).astype(np.int64)))
            pos += 2 * count
        assert pos == len(out)
        return results

    def count(self, streams: list[bytes]) -> list[tuple[int, int]]:
        out = self.run("count", b"".join(struct.pack("<I", len(s)) + s for s in streams))
        return [struct.unpack_from("<iI", out, 8 * i) for i in range(len(streams))]

    def scales(self, stream: bytes) -> list[tuple[int, int, int, int]]:
        out = self.run("scale", struct.pack("<I", len(stream)) + stream)
        return [struct.unpack_from("<iqII", out, 20 * i) for i in range(len(out) // 20)]

    def order(self, params: tuple[int, ...]) -> tuple[int, np.ndarray]:
        """The order's length and, per index (and one past the end), found, ofm, ky, kx, ifm."""
        *head, ofm_ub, ifm_ub = params
        out = self.run("order", struct.pack("<10i", *head, ofm_ub | (ifm_ub << 16)))
        (length,) = struct.unpack_from("<I", out)
        return length, np.frombuffer(out, np.int32, offset=4).reshape(-1, 5)


def build_harness(work: Path) -> Harness:
    """The decoder's host harness, built in `work` under ASan/UBSan (also tests/test_npu_weight_codec.py)."""
    binary = work / "npu_weights_harness"
    command = [compiler(), *WARNING_FLAGS, *SANITIZE_FLAGS, f"-I{NPU}", str(NPU / "mcugen_npu_weights.c"),
               str(HARNESS), "-o", str(binary)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return Harness(binary, work)


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Harness:
    return build_harness(tmp_path_factory.mktemp("npu_weights"))


def test_cortex_m55_build_is_clean(tmp_path: Path) -> None:
    """The decoder compiles without a warning for the Cortex-M55 (the device model runs inside
    the firmware under QEMU)."""
    require_tools("arm-none-eabi-gcc")
    command = ["arm-none-eabi-gcc", *WARNING_FLAGS, "-O2", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard",
               f"-I{NPU}", "-c", str(NPU / "mcugen_npu_weights.c"), "-o", str(tmp_path / "w.o")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0 and not result.stderr, result.stderr


def encode(weights: np.ndarray) -> bytes:
    return bytes(mlw_codec.encode([int(v) for v in weights]))


# ---- round trip against the codec --------------------------------------------------------

def _weight_sets() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(20261201)
    sets: list[tuple[str, np.ndarray]] = []
    for n in (1, 2, 3, 5, 8, 12, 13, 24, 100, 999, 4096, 33000, 70001):
        sets.append((f"zeros{n}", np.zeros(n, np.int64)))
        sets.append((f"int8_{n}", rng.integers(-128, 128, n)))
        sets.append((f"nine_bit{n}", rng.integers(-255, 256, n)))
        sparse = rng.integers(-128, 128, n)
        sparse[rng.random(n) < 0.85] = 0
        sets.append((f"sparse{n}", sparse))
        sets.append((f"small{n}", rng.integers(-3, 4, n)))
        sets.append((f"normal{n}", rng.normal(0, 12, n).round().clip(-127, 127).astype(np.int64)))
        runs = np.zeros(n, np.int64)
        runs[:: 97] = rng.integers(1, 60, len(runs[:: 97]))
        sets.append((f"long_zero_runs{n}", runs))
        sets.append((f"constant{n}", np.full(n, -77, np.int64)))
    # zero runs longer than a slice, a lone nonzero value at either end, alternating blocks
    sets.append(("run_over_slices", np.concatenate([np.zeros(70000, np.int64), [5], np.zeros(40000, np.int64)])))
    sets.append(("ends", np.concatenate([[-255], np.zeros(5000, np.int64), [255]])))
    blocks = np.concatenate([rng.integers(-128, 128, 3000) if i % 2 else np.zeros(3000, np.int64) for i in range(8)])
    sets.append(("blocks", blocks))
    return sets


WEIGHT_SETS = _weight_sets()


def test_round_trip_against_vela_codec(harness: Harness) -> None:
    """Every weight set encoded by Vela's codec decodes to itself, in one call and in pieces of
    7 and 1000 weights (the streaming reader resumes mid zero run and mid slice); the count-only
    mode gives the same count."""
    cases, expected = [], []
    for _, weights in WEIGHT_SETS:
        stream = encode(weights)
        assert list(mlw_codec.decode(bytearray(stream))) == list(weights)  # the oracle agrees
        for chunk in (0, 7, 1000):
            cases.append((stream, len(weights), chunk))
            expected.append(weights)
    results = harness.decode(cases)
    for (stream, _, chunk), want, (status, got) in zip(cases, expected, results, strict=True):
        assert status == OK and np.array_equal(got, want), (len(want), chunk, status, len(got))
    counts = harness.count([encode(w) for _, w in WEIGHT_SETS])
    assert counts == [(OK, len(w)) for _, w in WEIGHT_SETS]


def test_capacity(harness: Harness) -> None:
    """One weight too few is CAPACITY with the first `capacity` weights written; room to spare
    is OK; a zero run that overflows the buffer stops at its end."""
    weights = next(w for name, w in WEIGHT_SETS if name == "long_zero_runs4096")
    stream = encode(weights)
    cases = [(stream, len(weights) - 1, 0), (stream, len(weights) + 100, 0), (stream, 0, 0), (stream, 1, 0)]
    (short, fits, none, one) = harness.decode(cases)
    assert short[0] == CAPACITY and np.array_equal(short[1], weights[:-1])
    assert fits[0] == OK and np.array_equal(fits[1], weights)
    assert none[0] == CAPACITY and len(none[1]) == 0
    assert one[0] == CAPACITY and np.array_equal(one[1], weights[:1])


# ---- the public models through Vela ------------------------------------------------------

# accelerator -> (OFM, IFM) micro-block depths (Vela's architecture_features)
UBLOCKS = {"ethos-u55-32": (4, 8), "ethos-u55-64": (8, 8), "ethos-u55-128": (8, 8), "ethos-u55-256": (8, 8)}


@dataclass(frozen=True)
class KernelOp:
    depthwise: bool
    weights: bytes
    scales: bytes
    ofm_depth: int
    ifm_depth: int
    block_depth: int
    kernel_h: int
    kernel_w: int
    dilation: tuple[int, int]
    part_kernel: bool
    ifm_bits: int


def _command_stream(payload: bytes) -> list[int]:
    """The words of the COMMAND_STREAM action of a 'COP1' driver payload."""
    words = np.frombuffer(payload, np.uint32)
    assert payload[:4] == b"COP1"
    for i in range(2, len(words)):
        word = int(words[i])
        if word & 0xFF == 2 and i + 1 + (word >> 16) == len(words):
            return [int(w) for w in words[i + 1:]]
    raise AssertionError("no command stream in the payload")


def kernel_ops(payload: bytes, area: bytes, area_region: int) -> list[KernelOp]:
    """Every NPU_OP_CONV and NPU_OP_DEPTHWISE of the stream, with its weight and scale streams
    found in the read-only area: directly, or through the DMA that copied them to scratch."""
    reg0: dict[int, int] = {}
    reg1: dict[int, int] = {}
    dmas: list[tuple[int, int, int, int, int]] = []
    ops: list[KernelOp] = []
    words = _command_stream(payload)

    def locate(region: int, base: int, length: int) -> bytes:
        if region != area_region:
            src_region, src, _, dst, _ = next(d for d in reversed(dmas) if d[2] == region
                                              and d[3] <= base and base + length <= d[3] + d[4])
            assert src_region == area_region
            base = src + base - dst
        return area[base:base + length]

    i = 0
    while i < len(words):
        word = words[i]
        code = word & 0x3FF
        if (word >> 14) & 3:  # cmd1: a 32-bit payload word follows
            reg1[code] = words[i + 1]
            i += 2
            continue
        reg0[code] = word >> 16
        i += 1
        if code == 0x010:  # NPU_OP_DMA_START
            dmas.append((reg0.get(0x130, 0) & 7, reg1[0x030], reg0.get(0x131, 0) & 7, reg1[0x031], reg1[0x032]))
        elif code in (0x002, 0x003):  # NPU_OP_CONV, NPU_OP_DEPTHWISE
            stride = reg0[0x122]
            dil_x, dil_y = ((stride >> 3) & 1) + 1, ((stride >> 4) & 1) + 1
            ops.append(KernelOp(
                depthwise=code == 0x003,
                weights=locate(reg0[0x128] & 7, reg1[0x020], reg1[0x021]),
                scales=locate(reg0[0x129] & 7, reg1[0x022], reg1[0x023]),
                ofm_depth=reg0[0x113] + 1, ifm_depth=reg0[0x104] + 1, block_depth=reg0[0x117] + 1,
                kernel_h=reg0[0x121] // dil_y + 1, kernel_w=reg0[0x120] // dil_x + 1,
                dilation=(dil_x, dil_y), part_kernel=bool(stride & 4),
                ifm_bits=16 if (reg0[0x105] >> 2) & 3 == 1 else 8))
    return ops


@dataclass(frozen=True)
class VelaModel:
    name: str
    ops: list[KernelOp]
    kernels: list[tuple[np.ndarray, np.ndarray | None]]  # OHWI weights, int32 bias


def _tflite_kernels(path: Path) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """The weights of every CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED as OHWI, with bias."""
    kernels = []
    for op in read_model(path).ops:
        if op.kind not in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED):
            continue
        weights_tensor = op.inputs[1]
        assert weights_tensor is not None and weights_tensor.data is not None
        data = weights_tensor.data
        w = data.astype(np.int64)
        if op.kind is OpKind.DEPTHWISE_CONV_2D:
            w = w.transpose(3, 1, 2, 0)
        elif op.kind is OpKind.FULLY_CONNECTED:
            w = w.reshape(w.shape[0], 1, 1, w.shape[1])
        bias_tensor = op.inputs[2] if len(op.inputs) > 2 else None
        bias = None if bias_tensor is None else bias_tensor.data
        kernels.append((w, None if bias is None else bias.astype(np.int64)))
    return kernels


def compile_public_models(out: Path, accelerator: str) -> list[VelaModel]:
    models = []
    for name in PUBLIC_NAMES:
        path = public_model(name)
        command = [sys.executable, "-m", "ethosu.vela", str(path), "--accelerator-config", accelerator,
                   "--output-format", "raw", "--output-dir", str(out / name)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        # our own file, just written by Vela: its quantization fields are pickled dicts
        raw = np.load(out / name / f"{name}_vela.npz", allow_pickle=True)
        ops = kernel_ops(raw["cmd_data"].tobytes(), raw["weight_data"].tobytes(), int(raw["weight_region"]))
        models.append(VelaModel(name, ops, _tflite_kernels(path)))
    return models


@pytest.fixture(scope="module")
def vela_models(tmp_path_factory: pytest.TempPathFactory) -> list[VelaModel]:
    """The public models compiled for u55-128."""
    return compile_public_models(tmp_path_factory.mktemp("vela"), "ethos-u55-128")


def _order_params(op: KernelOp, accelerator: str) -> tuple[int, ...]:
    traversal = DEPTHWISE if op.depthwise else PART_KERNEL if op.part_kernel else DEPTH_FIRST
    return (op.ofm_depth, op.kernel_h, op.kernel_w, 1 if op.depthwise else op.ifm_depth, op.block_depth,
            traversal, op.ifm_bits, op.dilation[0], op.dilation[1], *UBLOCKS[accelerator])


def _scatter(decoded: np.ndarray, positions: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Place the decoded stream into an OHWI kernel through the documented order; every real
    position exactly once, every padding position zero."""
    assert len(decoded) == len(positions)
    real = positions[:, 0] == 1
    assert positions[:, 0].min() >= 0
    assert not decoded[~real].any(), "a padding position holds a nonzero weight"
    ohwi = np.full(shape, np.iinfo(np.int64).min, np.int64)
    idx = positions[real, 1:].T
    ohwi[tuple(idx)] = decoded[real]
    assert len(np.unique(np.ravel_multi_index(tuple(idx), shape))) == int(real.sum()) == ohwi.size
    return ohwi


def _find_slice(kernels: list[tuple[np.ndarray, np.ndarray | None]], ohwi: np.ndarray) -> tuple[int, int] | None:
    """(kernel index, first ofm channel) of the TFLite kernel slice equal to `ohwi`; None for
    the all-ones depthwise kernel Vela makes when it lowers MEAN or AVERAGE_POOL to DEPTHWISE."""
    depth = ohwi.shape[0]
    for k, (w, _) in enumerate(kernels):
        if w.shape[1:] != ohwi.shape[1:]:
            continue
        for o0 in range(w.shape[0] - depth + 1):
            if np.array_equal(w[o0:o0 + depth], ohwi):
                return k, o0
    assert ohwi.shape[3] == 1 and (ohwi == 1).all(), f"no TFLite kernel slice equals the stream {ohwi.shape}"
    return None


@pytest.mark.parametrize("accelerator", list(UBLOCKS))
def test_public_models_weight_streams(harness: Harness, vela_models: list[VelaModel], accelerator: str,
                                      tmp_path: Path) -> None:
    """Every weight stream of the four public models' read-only areas (Vela 5.2, each U55
    configuration) decodes to what Vela's decoder gives, and through the documented order, with
    the op's block depth, traversal and kernel from the command stream, to a slice of the op's
    TFLite weights; the bias/scale entries hold that slice's int32 bias."""
    models = vela_models if accelerator == "ethos-u55-128" else compile_public_models(tmp_path, accelerator)
    matched = generated = 0
    for model in models:
        assert model.ops, model.name
        results = harness.decode([(op.weights, 1 << 20, 0) for op in model.ops])
        for op, (status, decoded) in zip(model.ops, results, strict=True):
            assert status == OK, (model.name, op)
            assert np.array_equal(decoded, np.asarray(mlw_codec.decode(bytearray(op.weights)))), model.name
            length, positions = harness.order(_order_params(op, accelerator))
            assert length == len(decoded) and positions[length, 0] == ARGUMENT
            shape = (op.ofm_depth, op.kernel_h, op.kernel_w, 1 if op.depthwise else op.ifm_depth)
            found = _find_slice(model.kernels, _scatter(decoded, positions[:length], shape))
            entries = harness.scales(op.scales)[:op.ofm_depth]
            assert len(entries) == op.ofm_depth and all(e[0] == OK and e[3] < 64 for e in entries), model.name
            if found is None:
                generated += 1
                continue
            k, o0 = found
            bias = model.kernels[k][1]
            want = np.zeros(op.ofm_depth, np.int64) if bias is None else bias[o0:o0 + op.ofm_depth]
            assert [e[1] for e in entries] == list(want), model.name
            matched += 1
    assert matched >= 55 and generated <= 1, (matched, generated)


# ---- the order against Vela's reorder ------------------------------------------------------

def _order_cases() -> list[tuple[int, ...]]:
    rng = np.random.default_rng(7)
    cases: list[tuple[int, ...]] = [
        # (ofm, kh, kw, ifm, block, traversal, bits, dil_x, dil_y, ofm_ublock, ifm_ublock)
        (16, 10, 4, 1, 16, PART_KERNEL, 8, 1, 1, 8, 8),     # kws's first conv
        (64, 3, 3, 1, 16, DEPTHWISE, 8, 1, 1, 8, 8),        # kws's depthwise
        (128, 3, 3, 1, 80, DEPTHWISE, 8, 1, 1, 8, 8),       # vww's depthwise, block 80
        (12, 1, 1, 64, 16, DEPTH_FIRST, 8, 1, 1, 8, 8),     # a partial last block
        (20, 9, 11, 5, 8, PART_KERNEL, 8, 2, 1, 4, 8),      # sub-kernels, dilation, u55-32
        (9, 3, 3, 40, 24, DEPTH_FIRST, 16, 1, 2, 8, 8),     # 16-bit ifm blocks of 16
        (5, 17, 3, 1, 8, DEPTHWISE, 8, 1, 1, 4, 8),
    ]
    for _ in range(20):
        traversal = int(rng.integers(0, 3))
        cases.append((int(rng.integers(1, 40)), int(rng.integers(1, 11)), int(rng.integers(1, 11)),
                      1 if traversal == DEPTHWISE else int(rng.integers(1, 70)),
                      int(rng.choice([8, 16, 24, 32, 48, 64])), traversal, int(rng.choice([8, 16])),
                      int(rng.integers(1, 3)), int(rng.integers(1, 3)),
                      int(rng.choice([4, 8])), 8))
    return cases


@pytest.mark.parametrize("params", _order_cases(), ids=lambda p: "x".join(map(str, p)))
def test_order_matches_vela_reorder(harness: Harness, params: tuple[int, ...]) -> None:
    """Index i of the decoded stream holds weight (ofm, ky, kx, ifm) as our order says: four
    probe kernels whose weights are their own ofm, ky, kx, ifm coordinate + 1 go through Vela's
    reorder_encode and Vela's decoder; padding is zero in all four."""
    ofm, kh, kw, ifm, block, traversal, bits, dil_x, dil_y, ofm_ub, ifm_ub = params
    grid = np.indices((ofm, kh, kw, ifm))
    probes = []
    for axis in range(4):
        weights = (grid[axis] + 1).astype(np.int16)
        stream, _ = mlw_codec.reorder_encode(ifm_ub, ofm_ub, weights, block, traversal == DEPTHWISE,
                                             traversal == PART_KERNEL, bits, 8 // dil_y, 8 // dil_x)
        probes.append(np.asarray(mlw_codec.decode(stream)))
    length, positions = harness.order(params)
    assert all(len(p) == length for p in probes), (length, [len(p) for p in probes])
    found = positions[:length, 0]
    assert positions[length, 0] == ARGUMENT
    coords = np.stack(probes, axis=1) - 1
    assert np.array_equal(found == 1, coords[:, 0] >= 0)
    assert (coords[found == 0] == -1).all()
    assert np.array_equal(positions[:length][found == 1, 1:], coords[found == 1])
    # one OFM block of c channels is as long as the same order with ofm depth c (README)
    blocks = [min(block, ofm - b) for b in range(0, ofm, block)]
    lengths = {c: harness.order((c, *params[1:]))[0] for c in set(blocks)}
    assert sum(lengths[c] for c in blocks) == length


def test_order_rejects_bad_parameters(harness: Harness) -> None:
    """Out-of-range parameters give length 0 and ARGUMENT, not a walk over garbage."""
    for params in [(0, 1, 1, 1, 8, 0, 8, 1, 1, 8, 8), (8, 1, 1, 4, 8, DEPTHWISE, 8, 1, 1, 8, 8),
                   (8, 1, 1, 1, 8, 3, 8, 1, 1, 8, 8), (8, 1, 1, 1, 8, 0, 12, 1, 1, 8, 8),
                   (8, 1, 1, 1, 8, 0, 8, 3, 1, 8, 8), (8, 1, 1, 1, 0, 0, 8, 1, 1, 8, 8)]:
        length, positions = harness.order(params)
        assert length == 0 and positions.tolist() == [[ARGUMENT, 0, 0, 0, 0]], params


# ---- bias/scale entries ------------------------------------------------------------------

def test_bias_scale_entries_from_vela_packing(harness: Harness) -> None:
    """Entries packed by Vela's encode_bias decode to their bias, scale and shift, including
    the extremes; one entry past the end is TRUNCATED; bits 7:6 of byte 9 set are CORRUPT."""
    rng = np.random.default_rng(3)
    values = [(-(1 << 39), 0, 0), ((1 << 39) - 1, (1 << 32) - 1, 63), (-1, 1 << 31, 31), (0, 1, 1)]
    values += [(int(rng.integers(-(1 << 39), 1 << 39)), int(rng.integers(0, 1 << 32)), int(rng.integers(0, 64)))
               for _ in range(300)]
    stream = b"".join(bytes(weight_compressor.encode_bias(np.int64(b), s, h)) for b, s, h in values)
    entries = harness.scales(stream + b"\x00" * 9)  # a partial entry is not an entry
    assert [(e[1], e[2], e[3]) for e in entries[:-1]] == values
    assert all(e[0] == OK for e in entries[:-1]) and entries[-1][0] == TRUNCATED
    for top in (0x40, 0x80):
        bad = bytearray(stream[:10])
        bad[9] |= top
        assert harness.scales(bytes(bad))[0][0] == CORRUPT


# ---- corruption ---------------------------------------------------------------------------

def test_truncated_and_corrupted_streams(harness: Harness, vela_models: list[VelaModel]) -> None:
    """Every truncation of a few real streams is TRUNCATED (or, cut inside the final padding,
    the whole stream); a few hundred random byte flips and random byte strings decode to an
    error or to some weights, never outside the buffers (ASan/UBSan abort the harness)."""
    real = sorted({op.weights for model in vela_models for op in model.ops}, key=len)
    # the shortest, and two of about 1 and 3 KB (every prefix of each is decoded)
    picked = [real[0], next(s for s in real if len(s) >= 1000), next(s for s in real if len(s) >= 3000)]
    cases: list[tuple[bytes, int, int]] = []
    fulls = []
    for stream in picked:
        full = np.asarray(mlw_codec.decode(bytearray(stream)))
        for cut in range(len(stream)):
            cases.append((stream[:cut], len(full), 0))
            fulls.append((full, len(stream)))
    results = harness.decode(cases)
    for (prefix, _, _), (full, whole), (status, got) in zip(cases, fulls, results, strict=True):
        assert status in (TRUNCATED, OK), (len(prefix), status)
        if status == OK:  # cut after the end marker, in the padding to 16 bytes
            assert np.array_equal(got, full) and len(prefix) > whole - 16
        else:
            assert np.array_equal(got, full[:len(got)])  # what came out before the cut is right
    assert sum(status == TRUNCATED for status, _ in results) >= len(cases) - 3 * 16

    rng = np.random.default_rng(12345)
    fuzz: list[tuple[bytes, int, int]] = []
    for i in range(400):
        flipped = bytearray(picked[i % len(picked)])
        for _ in range(1 + i % 4):
            flipped[int(rng.integers(0, len(flipped)))] ^= int(rng.integers(1, 256))
        fuzz.append((bytes(flipped), int(rng.integers(0, 4000)), int(rng.choice([0, 0, 5, 64]))))
    for i in range(100):
        fuzz.append((rng.integers(0, 256, int(rng.integers(0, 300)), dtype=np.uint8).tobytes(), 3000, 0))
    fuzz.append((b"", 10, 0))
    fuzz.append((b"\xff" * 32, 10, 0))
    results = harness.decode(fuzz)
    statuses = {status for status, _ in results}
    assert statuses <= {OK, TRUNCATED, CORRUPT, CAPACITY}, statuses
    assert {TRUNCATED, CORRUPT} <= statuses
    assert all(len(got) <= cap for (_, cap, _), (_, got) in zip(fuzz, results, strict=True))
    assert results[-2][0] == TRUNCATED and results[-1] == (OK, results[-1][1]) and len(results[-1][1]) == 0
