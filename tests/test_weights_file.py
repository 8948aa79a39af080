"""`mcugen build --weights-file`: the weights in <prefix>_weights.bin, bound at run time.

One host program (ASan+UBSan) per test module, compiled from kws_dscnn built with
--weights-file, loads a blob from a file at run time: its outputs equal TFLM's and the normal
build's; damaged, truncated, misaligned and other models' blobs are refused with their status;
invoke before init_weights is refused; and a retrained kws_dscnn (the same structure, other
weight values) gets byte-identical C and a blob the same program accepts, with that model's
TFLM outputs.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import flatbuffers
import numpy as np
import pytest
import tflite
from conftest import public_model
from oracles import assert_exact, run_tflm

from mcugen.codegen.weights import HASH_OFFSET, HEADER_BYTES, HEADER_CRC_OFFSET
from mcugen.driver import BuildOptions
from mcugen.toolchain.host import SANITIZE_FLAGS, WARNING_FLAGS, compiler, run_model

REPO = Path(__file__).resolve().parents[1]
MODEL = "kws_dscnn"
OTHER = "ad_autoencoder"
OK, ARG_ERROR, WRONG_MODEL, CORRUPT = 0, -1, -4, -5

# argv: BLOB SHIFT TRUNCATE INPUT OUTPUT. Prints invoke's status before any blob, then
# init_weights' status for the blob (placed SHIFT bytes past a 16-byte boundary in a buffer of
# exactly its bytes minus TRUNCATE, so ASan sees any read past them), then, when it is bound,
# invoke's status, and writes the outputs; when it is refused, invoke's status after that.
HARNESS = r"""
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "PREFIX_model.h"

static unsigned char *read_all(const char *path, size_t *bytes)
{
    FILE *file = fopen(path, "rb");
    unsigned char *data = NULL;
    long size;
    if (file == NULL || fseek(file, 0, SEEK_END) != 0 || (size = ftell(file)) < 0 || fseek(file, 0, SEEK_SET) != 0) {
        exit(3);
    }
    data = malloc((size_t)size + 1u);
    if (data == NULL || fread(data, 1, (size_t)size, file) != (size_t)size) {
        exit(3);
    }
    fclose(file);
    *bytes = (size_t)size;
    return data;
}

int main(int argc, char **argv)
{
    size_t blob_bytes, input_bytes, shift, truncate, at = 0;
    unsigned char *file, *input, *buffer;
    void *memory = NULL;
    mcugen_status status;
    if (argc != 6) {
        return 2;
    }
    shift = (size_t)atoi(argv[2]);
    truncate = (size_t)atoi(argv[3]);
    printf("before %d\n", (int)PREFIX_invoke());
    file = read_all(argv[1], &blob_bytes);
    blob_bytes -= truncate;
    if (posix_memalign(&memory, 16, blob_bytes + shift) != 0) {
        return 3;
    }
    buffer = (unsigned char *)memory + shift;
    memcpy(buffer, file, blob_bytes);
    free(file);
#ifdef EXTERNAL_ARENA
    static uint8_t arena[UPPER_ARENA_SIZE] __attribute__((aligned(16)));
    status = PREFIX_init_arena(arena, sizeof(arena));
#else
    status = PREFIX_init();
#endif
    status = status != MCUGEN_OK ? status : PREFIX_init_weights(buffer, blob_bytes);
    printf("init %d\n", (int)status);
    if (status == MCUGEN_OK) {
        FILE *out = fopen(argv[5], "wb");
        input = read_all(argv[4], &input_bytes);
        for (int32_t i = 0; i < UPPER_NUM_INPUTS; ++i) {
            memcpy(PREFIX_input(i), input + at, (size_t)PREFIX_input_bytes(i));
            at += (size_t)PREFIX_input_bytes(i);
        }
        printf("invoke %d\n", (int)PREFIX_invoke());
        for (int32_t i = 0; i < UPPER_NUM_OUTPUTS; ++i) {
            fwrite(PREFIX_output(i), 1, (size_t)PREFIX_output_bytes(i), out);
        }
        fclose(out);
        free(input);
    } else {
        printf("after %d\n", (int)PREFIX_invoke());
    }
    free(memory);
    return 0;
}
"""


def _mcugen(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "mcugen", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600, check=False)


def _build(model: Path, out: Path, *extra: str) -> dict:
    result = _mcugen("build", model, "-o", out, "--no-size", "--weights-file", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads((out / "report.json").read_text())


def _inputs(name: str) -> list[np.ndarray]:
    with np.load(public_model(name).with_suffix(".case0.npz")) as data:
        return [data[f"input{i}"] for i in range(sum(k.startswith("input") for k in data.files))]


def retrained(model: bytes, seed: int = 7) -> bytes:
    """The model with every int8 constant tensor's values moved by -3..3 (kept in -127..127):
    what retraining with the same architecture and quantization gives."""
    data = bytearray(model)
    root = tflite.Model.GetRootAsModel(data, 0)
    graph = root.Subgraphs(0)
    rng = np.random.default_rng(seed)
    for t in range(graph.TensorsLength()):
        tensor = graph.Tensors(t)
        buffer = root.Buffers(tensor.Buffer())
        if tensor.Type() != tflite.TensorType.INT8 or buffer is None or buffer.DataLength() == 0:
            continue
        field = flatbuffers.number_types.UOffsetTFlags.py_type(buffer._tab.Offset(4))
        start, length = buffer._tab.Vector(field), buffer._tab.VectorLen(field)
        values = np.frombuffer(bytes(data[start:start + length]), dtype=np.int8).astype(np.int16)
        values = np.clip(values + rng.integers(-3, 4, size=length), -127, 127).astype(np.int8)
        data[start:start + length] = values.tobytes()
    return bytes(data)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """kws_dscnn built with --weights-file and its ASan+UBSan harness; ad_autoencoder's blob."""
    root = tmp_path_factory.mktemp("weights")
    report = _build(public_model(MODEL), root / "kws")
    _build(public_model(OTHER), root / "other", "--prefix", MODEL)  # even under the same prefix
    out = root / "kws"
    return {"root": root, "out": out, "report": report, "program": _harness(out, MODEL, root / "harness")}


def _harness(out: Path, prefix: str, program: Path, *flags: str) -> Path:
    """HARNESS for model `prefix` of directory `out`, compiled with ASan+UBSan."""
    source = program.with_suffix(".c")
    source.write_text(HARNESS.replace("PREFIX_", f"{prefix}_").replace("UPPER_", f"{prefix.upper()}_"))
    sources = sorted(str(p) for p in out.glob("*.c")) + [str(source)]
    result = subprocess.run([compiler(), *WARNING_FLAGS, *SANITIZE_FLAGS, *flags, "-I", str(out), *sources,
                             "-o", str(program), "-lm"], capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return program


def _run(built: dict, blob: Path | bytes, inputs: list[np.ndarray] | None = None, shift: int = 0,
         truncate: int = 0) -> tuple[dict[str, int], bytes]:
    root = built["root"]
    if isinstance(blob, bytes):
        (root / "blob.bin").write_bytes(blob)
        blob = root / "blob.bin"
    (root / "input.bin").write_bytes(b"".join(np.ascontiguousarray(x).tobytes() for x in inputs or []))
    (root / "output.bin").unlink(missing_ok=True)
    result = subprocess.run([str(built["program"]), str(blob), str(shift), str(truncate), str(root / "input.bin"),
                             str(root / "output.bin")], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    codes = {line.split()[0]: int(line.split()[1]) for line in result.stdout.splitlines()}
    output = (root / "output.bin").read_bytes() if (root / "output.bin").exists() else b""
    return codes, output


def _outputs(raw: bytes, like: list[np.ndarray]) -> list[np.ndarray]:
    outputs, at = [], 0
    for expected in like:
        outputs.append(np.frombuffer(raw[at:at + expected.nbytes], dtype=expected.dtype).reshape(expected.shape))
        at += expected.nbytes
    return outputs


def _blob(built: dict) -> bytes:
    return (built["out"] / f"{MODEL}_weights.bin").read_bytes()


def test_blob_from_a_file_is_bit_exact_with_tflm_and_the_normal_build(built: dict) -> None:
    inputs = _inputs(MODEL)
    codes, raw = _run(built, built["out"] / f"{MODEL}_weights.bin", inputs)
    assert codes == {"before": ARG_ERROR, "init": OK, "invoke": OK}
    expected = run_tflm(public_model(MODEL).read_bytes(), inputs)
    normal = run_model(public_model(MODEL), [inputs], BuildOptions(), sanitize=True)[0]
    for actual, tflm, plain in zip(_outputs(raw, expected), expected, normal):
        assert_exact(actual, tflm)
        assert_exact(actual, plain)


@pytest.mark.parametrize("name", ["ic_resnet8", "vww_mobilenet_v1_025", OTHER])
def test_other_public_models_from_their_blobs_are_bit_exact_with_tflm(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    _build(public_model(name), out)
    program = _harness(out, name, tmp_path / "harness")
    inputs = _inputs(name)
    codes, raw = _run({"root": tmp_path, "program": program}, out / f"{name}_weights.bin", inputs)
    assert codes == {"before": ARG_ERROR, "init": OK, "invoke": OK}
    expected = run_tflm(public_model(name).read_bytes(), inputs)
    for actual, tflm in zip(_outputs(raw, expected), expected):
        assert_exact(actual, tflm)


def test_the_c_holds_no_weights_and_the_report_describes_the_blob(built: dict) -> None:
    blob, report = _blob(built), built["report"]
    model_c = (built["out"] / f"{MODEL}_model.c").read_text()
    assert "static const int8_t" not in model_c and "_weights_blob + " in model_c
    entry = report["weights_file"]
    assert entry["file"] == f"{MODEL}_weights.bin" and entry["bytes"] == len(blob)
    assert blob[:4] == b"MCWB" and struct.unpack_from("<I", blob, 12)[0] == len(blob) - HEADER_BYTES
    assert struct.unpack_from("<I", blob, 16)[0] == zlib.crc32(blob[HEADER_BYTES:])
    assert blob[HASH_OFFSET:HASH_OFFSET + 32].hex() == entry["structure_sha256"]
    assert entry["structure_sha256"] in model_c
    assert f"{MODEL}_weights.bin" in report["files"]
    # every array starts 16-byte aligned: the offsets the C reads at
    offsets = [int(line.rsplit("+ ", 1)[1].removesuffix("))")) for line in model_c.splitlines()
               if line.startswith(f"#define {MODEL}_") and "_weights_blob + " in line]
    assert offsets and all(offset % 16 == 0 for offset in offsets)


@pytest.mark.parametrize("where", [0, HEADER_BYTES - 40, HEADER_BYTES + 5, -1])
def test_one_flipped_byte_is_corrupt(built: dict, where: int) -> None:
    """In the magic, the header's CRC, the payload, its last byte."""
    blob = bytearray(_blob(built))
    blob[where] ^= 0x10
    codes, _ = _run(built, bytes(blob), _inputs(MODEL))
    assert codes == {"before": ARG_ERROR, "init": CORRUPT, "after": ARG_ERROR}


def test_another_models_blob_is_the_wrong_model(built: dict) -> None:
    codes, _ = _run(built, built["root"] / "other" / f"{MODEL}_weights.bin", _inputs(MODEL))
    assert codes == {"before": ARG_ERROR, "init": WRONG_MODEL, "after": ARG_ERROR}


def test_a_blob_of_the_same_size_for_other_code_is_the_wrong_model(built: dict) -> None:
    """kws_dscnn under another prefix: the same arrays at the same offsets, so only the
    structure hash tells (the C names differ)."""
    out = built["root"] / "renamed"
    _build(public_model(MODEL), out, "--prefix", "kws_renamed")
    blob = (out / "kws_renamed_weights.bin").read_bytes()
    ours = _blob(built)
    assert blob[HEADER_BYTES:] == ours[HEADER_BYTES:] and blob[:HEADER_CRC_OFFSET] == ours[:HEADER_CRC_OFFSET]
    assert blob[HASH_OFFSET:HEADER_BYTES] != ours[HASH_OFFSET:HEADER_BYTES]
    codes, _ = _run(built, blob, _inputs(MODEL))
    assert codes == {"before": ARG_ERROR, "init": WRONG_MODEL, "after": ARG_ERROR}


def test_truncated_and_misaligned_blobs_are_refused(built: dict) -> None:
    blob = built["out"] / f"{MODEL}_weights.bin"
    assert _run(built, blob, truncate=1)[0]["init"] == CORRUPT
    assert _run(built, blob, truncate=len(_blob(built)) - 10)[0]["init"] == CORRUPT  # not even a header
    assert _run(built, blob, shift=4)[0]["init"] == ARG_ERROR
    assert _run(built, blob, _inputs(MODEL), shift=16)[0] == {"before": ARG_ERROR, "init": OK, "invoke": OK}


def test_retrained_model_same_code_its_blob_fits(built: dict) -> None:
    original = public_model(MODEL).read_bytes()
    model = retrained(original)
    inputs = _inputs(MODEL)
    expected = run_tflm(model, inputs)
    assert any(not np.array_equal(a, b) for a, b in zip(expected, run_tflm(original, inputs))), \
        "the retrained model must compute something else, or the test proves nothing"
    path = built["root"] / "retrained" / f"{MODEL}.tflite"  # the same file name: the same stamp
    path.parent.mkdir()
    path.write_bytes(model)
    out = built["root"] / "retrained_out"
    report = _build(path, out)
    for name in (f"{MODEL}_model.c", f"{MODEL}_model.h"):
        assert (out / name).read_text() == (built["out"] / name).read_text(), name
    blob = (out / f"{MODEL}_weights.bin").read_bytes()
    assert blob != _blob(built)
    assert report["weights_file"]["structure_sha256"] == built["report"]["weights_file"]["structure_sha256"]
    codes, raw = _run(built, blob, inputs)
    assert codes == {"before": ARG_ERROR, "init": OK, "invoke": OK}
    for actual, tflm in zip(_outputs(raw, expected), expected):
        assert_exact(actual, tflm)


def test_weights_file_with_external_arena_on_the_host(tmp_path: Path) -> None:
    out = tmp_path / "external"
    _build(public_model(MODEL), out, "--arena", "external")
    program = _harness(out, MODEL, tmp_path / "harness", "-DEXTERNAL_ARENA")
    inputs = _inputs(MODEL)
    codes, raw = _run({"root": tmp_path, "program": program}, out / f"{MODEL}_weights.bin", inputs)
    assert codes == {"before": ARG_ERROR, "init": OK, "invoke": OK}
    expected = run_tflm(public_model(MODEL).read_bytes(), inputs)
    for actual, tflm in zip(_outputs(raw, expected), expected):
        assert_exact(actual, tflm)


def test_weights_file_with_external_arena_compiles_for_cortex_m55(tmp_path: Path) -> None:
    out = tmp_path / "m55"
    _build(public_model(MODEL), out, "--arena", "external", "--target", "cortex-m55")
    model_c = out / f"{MODEL}_model.c"
    text = model_c.read_text()
    assert f"{MODEL}_init_arena" in text and f"{MODEL}_init_weights" in text
    result = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-O2", "-std=c99", "-Wall",
                             "-Wextra", "-Werror", "-I", str(out), "-c", str(model_c), "-o", str(tmp_path / "m.o")],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]


def test_two_models_each_their_own_blob(tmp_path: Path) -> None:
    out = tmp_path / "two"
    result = _mcugen("build", public_model(MODEL), public_model(OTHER), "-o", out, "--no-size", "--weights-file")
    assert result.returncode == 0, result.stderr
    report = json.loads((out / "report.json").read_text())
    for entry in report["models"]:
        blob = (out / f"{entry['prefix']}_weights.bin").read_bytes()
        assert entry["weights_file"]["bytes"] == len(blob)
    assert len({e["weights_file"]["structure_sha256"] for e in report["models"]}) == 2


def test_default_build_has_no_blob(tmp_path: Path) -> None:
    result = _mcugen("build", public_model(MODEL), "-o", tmp_path / "plain", "--no-size")
    assert result.returncode == 0, result.stderr
    assert not list((tmp_path / "plain").glob("*.bin"))
    assert "weights_file" not in json.loads((tmp_path / "plain" / "report.json").read_text())


def test_rebuild_without_weights_file_drops_the_blob(tmp_path: Path) -> None:
    out = tmp_path / "again"
    _build(public_model(MODEL), out)
    assert (out / f"{MODEL}_weights.bin").exists()
    result = _mcugen("build", public_model(MODEL), "-o", out, "--no-size")
    assert result.returncode == 0, result.stderr
    assert not (out / f"{MODEL}_weights.bin").exists()
    assert "static const int8_t" in (out / f"{MODEL}_model.c").read_text()
