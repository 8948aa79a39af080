"""Our Ethos-U weight stream encoder (mcugen/npu/weight_codec.py) against Vela's.

Oracles: Vela's decoder (`ethosu.mlw_codec.decode`) must give back exactly the encoded weights,
and so must the device's decoder (templates/runtime/npu/mcugen_npu_weights.c, in the sanitized
host harness of tests/test_npu_weights.py); the streams to be no longer than those of Vela's codec
(`ethosu.mlw_codec.encode`) and of Vela 5.2's compiler for the same weights.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, REPO, public_model
from test_npu_weights import OK, Harness, build_harness, compile_public_models

from mcugen.frontend.tflite import read_model
from mcugen.ir import OpKind
from mcugen.npu import weight_codec
from mcugen.npu.weights import WeightOrder, reorder

mlw_codec = pytest.importorskip("ethosu.mlw_codec")


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Harness:
    return build_harness(tmp_path_factory.mktemp("npu_weight_codec"))


def vela_decode(stream: bytes) -> list[int]:
    return list(mlw_codec.decode(bytearray(stream)))


def vela_encode_length(weights: np.ndarray) -> int:
    return len(mlw_codec.encode([int(v) for v in weights]))


# ---- random weights -----------------------------------------------------------------------

def _random_sets() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(20261202)
    sets: list[tuple[str, np.ndarray]] = []
    for n in (1, 2, 3, 7, 12, 13, 25, 96, 100, 768, 999, 4096, 6144, 33000, 70001):
        sets.append((f"zeros{n}", np.zeros(n, np.int64)))
        sets.append((f"int8_{n}", rng.integers(-128, 128, n)))
        sets.append((f"int8_extremes{n}", rng.choice([-128, 127, -127, 0], n)))
        sets.append((f"nine_bit{n}", rng.integers(-255, 256, n)))
        sets.append((f"nine_bit_extremes{n}", rng.choice([-255, 255], n)))
        sparse = rng.integers(-128, 128, n)
        sparse[rng.random(n) < 0.8] = 0
        sets.append((f"zero_heavy{n}", sparse))
        sets.append((f"palette{n}", rng.choice([-90, -3, 0, 5, 17, 120], n, p=[.1, .3, .2, .25, .1, .05])))
        sets.append((f"normal{n}", rng.normal(0, 9, n).round().clip(-127, 127).astype(np.int64)))
        sets.append((f"constant{n}", np.full(n, -77, np.int64)))
        # a tensor whose halves want different parameters (slices), with channel padding zeros
        mixed = np.concatenate((rng.integers(-4, 5, n // 2), rng.integers(-128, 128, n - n // 2)))
        mixed[rng.random(n) < 0.3] = 0
        sets.append((f"mixed{n}", mixed))
    sets.append(("ends", np.concatenate([[-255], np.zeros(5000, np.int64), [255]])))
    sets.append(("run_over_slices", np.concatenate([np.zeros(70000, np.int64), [5], np.zeros(40000, np.int64)])))
    return sets


RANDOM_SETS = _random_sets()


def test_random_weights_round_trip(harness: Harness) -> None:
    """Our stream alone (no fallback) decodes to the weights with Vela's decoder and with the
    device's, in one call and in pieces; its length is the plan's, counted twice."""
    cases, expected = [], []
    for name, weights in RANDOM_SETS:
        plan = weight_codec.best_plan(weights)
        assert plan is not None
        stream = weight_codec.emit(plan)
        assert plan.recount() == plan.bits(), name
        assert len(stream) == plan.stream_bytes() and len(stream) % 16 == 0, name
        assert vela_decode(stream) == weights.tolist(), name
        for chunk in (0, 7):
            cases.append((stream, len(weights), chunk))
            expected.append((name, weights))
    for (name, want), (status, got) in zip(expected, harness.decode(cases), strict=True):
        assert status == OK and np.array_equal(got, want), name


def test_random_weights_never_longer_than_vela_codec() -> None:
    """encode() is never longer than Vela's codec, and is shorter on some sets (the search
    finds what the format allows), and always decodes to the weights."""
    shorter = 0
    for name, weights in RANDOM_SETS:
        stream = weight_codec.encode(weights)
        theirs = vela_encode_length(weights)
        assert len(stream) <= theirs, name
        assert vela_decode(stream) == weights.tolist(), name
        shorter += len(stream) < theirs
    assert shorter >= 5, shorter


def test_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="9-bit"):
        weight_codec.best_plan(np.array([0, 256]))


# ---- the public models' and fixtures' weights -----------------------------------------------

def _model_kernels(path: Path) -> list[tuple[np.ndarray, bool]]:
    """OHWI int weights of every CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, and whether
    depthwise."""
    found = []
    for op in read_model(path).ops:
        if op.kind not in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED):
            continue
        tensor = op.inputs[1]
        if tensor is None or tensor.data is None or tensor.data.dtype != np.int8:
            continue
        w = tensor.data.astype(np.int16)
        zero_point = tensor.quant.zero_point if tensor.quant is not None else None
        if zero_point is not None and np.any(np.asarray(zero_point) != 0):
            continue
        if op.kind is OpKind.DEPTHWISE_CONV_2D:
            found.append((w.transpose(3, 1, 2, 0), True))
        elif op.kind is OpKind.FULLY_CONNECTED:
            found.append((w.reshape(w.shape[0], 1, 1, w.shape[1]), False))
        else:
            found.append((w, False))
    return found


def _model_streams() -> list[tuple[str, np.ndarray]]:
    """Each model weight tensor in the U55 order, with the block depths and traversals mcugen's
    lowering picks among (16 and 32 deep blocks; part-kernel and depth-first)."""
    paths = [public_model(name) for name in PUBLIC_NAMES] + sorted((REPO / "tests" / "fixtures").glob("*.tflite"))
    streams = []
    for path in paths:
        for i, (ohwi, depthwise) in enumerate(_model_kernels(path)):
            for block, part_kernel in ((16, True), (32, False)):
                order = WeightOrder(block, depthwise, part_kernel and not depthwise, 8, 8)
                streams.append((f"{path.stem}[{i}]/{block}", reorder(ohwi, order).astype(np.int64)))
    return streams


def test_model_weights_never_longer_and_decode(harness: Harness) -> None:
    """Every public model's and fixture's weight tensor: encode() no longer than Vela's codec,
    Vela's decoder and the device's give back the weights; shorter on a good share."""
    streams = _model_streams()
    assert len(streams) >= 100, len(streams)
    encoded, shorter, saved = [], 0, 0
    for name, weights in streams:
        stream = weight_codec.encode(weights)
        theirs = vela_encode_length(weights)
        assert len(stream) <= theirs, name
        assert vela_decode(stream) == weights.tolist(), name
        shorter += len(stream) < theirs
        saved += theirs - len(stream)
        encoded.append((stream, len(weights), 0))
    for (name, weights), (status, got) in zip(streams, harness.decode(encoded), strict=True):
        assert status == OK and np.array_equal(got, weights), name
    assert shorter >= 10 and saved > 0, (shorter, saved)


def test_no_longer_than_vela_compiler_streams(tmp_path: Path) -> None:
    """Vela 5.2's own streams for the public models (u55-128): our encoding of the same
    weights is never longer, and shorter in total; on ad_autoencoder's 4096-weight layer,
    where Vela's codec makes 1,648 bytes and Vela's compiler 1,488, ours is shorter than both."""
    ours_total = vela_total = 0
    for model in compile_public_models(tmp_path, "ethos-u55-128"):
        for i, op in enumerate(model.ops):
            weights = np.asarray(vela_decode(op.weights), np.int64)
            stream = weight_codec.encode(weights)
            assert len(stream) <= len(op.weights), (model.name, i, len(stream), len(op.weights))
            assert vela_decode(stream) == weights.tolist()
            ours_total += len(stream)
            vela_total += len(op.weights)
            if model.name == "ad_autoencoder" and weights.size == 4096 and (weights == 0).sum() > 3000:
                assert len(stream) < len(op.weights) < vela_encode_length(weights), (len(stream), len(op.weights))
    assert ours_total < vela_total, (ours_total, vela_total)
