"""Every converter-made fixture (tests/fixtures) built with --npu on each U55 size, against TFLM.

The ops the NPU takes run as ETHOS_U segments with mcugen's own command streams, the rest on
mcugen's CPU kernels between them (mixed models: the float islands, the whole-model fixtures).
Each build runs under ASan/UBSan on the fixture's stored cases and must equal the stored TFLM
outputs bit for bit, which the CPU-only build equals too (tests/test_fixtures.py), so the NPU
build is also bit-exact with the CPU build. A fixture whose ops the NPU refuses on every size
must generate the CPU build's C exactly. The runtime objects are compiled once for the module
(tests/npu_sweep.py); per size only the model's files are compiled.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from npu_sweep import ObjectCache

from mcugen.driver import BuildOptions, Compiled, compile_model
from mcugen.ir import OpKind
from mcugen.npu.config import CONFIGS, npu_config
from mcugen.targets import HOST
from mcugen.toolchain.host import run_program

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MANIFEST: dict[str, dict[str, Any]] = json.loads((FIXTURES / "manifest.json").read_text())
# TFLM cannot run these (the manifest's tflm_error): nothing to be exact with, CPU builds refuse them.
NAMES = [name for name, entry in MANIFEST.items() if entry["tflm"]]
SIZES = sorted(CONFIGS, key=lambda size: CONFIGS[size].macs)


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> ObjectCache:
    return ObjectCache(tmp_path_factory.mktemp("npu-sweep-objects"))


def _npu_build(name: str, size: str) -> Compiled:
    options = BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)))
    return compile_model((FIXTURES / f"{name}.tflite").read_bytes(), options, f"{name}.tflite")


def _stored(name: str) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    entry = MANIFEST[name]
    with np.load(FIXTURES / f"{name}.npz") as data:
        cases = [[data[f"input{i}_{k}"] for i in range(len(entry["inputs"]))] for k in range(entry["cases"])]
        expected = [[data[f"tflm_output{o}_{k}"] for o in range(len(entry["outputs"]))]
                    for k in range(entry["cases"])]
    return cases, expected


def _segments(compiled: Compiled) -> int:
    return sum(op.kind is OpKind.ETHOS_U for op in compiled.order)


@pytest.mark.parametrize("name", NAMES)
def test_fixture_with_npu_is_bit_exact_with_tflm_on_every_size(name: str, objects: ObjectCache,
                                                               tmp_path: Path) -> None:
    builds = {size: _npu_build(name, size) for size in SIZES}
    if not any(_segments(compiled) for compiled in builds.values()):
        cpu = compile_model((FIXTURES / f"{name}.tflite").read_bytes(), BuildOptions(), f"{name}.tflite")
        for compiled in builds.values():
            assert compiled.code.files == cpu.code.files, "an all-CPU --npu build differs from the CPU build"
        return
    cases, expected = _stored(name)
    for size, compiled in builds.items():
        build = tmp_path / size
        build.mkdir()
        outputs = run_program(objects.program(compiled, f"{name}.tflite", build), cases)
        for k, (actual, wanted) in enumerate(zip(outputs, expected, strict=True)):
            for o, (got, want) in enumerate(zip(actual, wanted, strict=True)):
                differ = int(np.sum(got.reshape(want.shape) != want))
                assert differ == 0, f"{name} {size} case{k} output{o}: {differ} of {want.size} elements differ"
