"""`mcugen verify --target cortex-m4|cortex-m55 --qemu`: the whole model on the emulated core
(its DSP or Helium kernels) for every case, in one firmware image and one QEMU run, against
mcugen's Python reference and TFLite Micro (the oracle of the bit-exactness contract).

One small model (two convolutions, pooling, a fully connected layer, softmax) and few cases
keep each QEMU run to seconds. Without the cross toolchain or QEMU the tests skip (fail under
CI=true), as the other QEMU tests do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_firmware import require_tools

import mcugen.analysis.verify as verify_module
from mcugen.analysis.verify import case_archive, verify_model
from mcugen.cli import main
from mcugen.driver import BuildOptions, load_graph
from mcugen.targets import target as find_target

MODEL = Path(__file__).resolve().parent / "fixtures_float" / "small_cnn_int8.tflite"
KERNELS = {"cortex-m4": "DSP kernels", "cortex-m55": "Helium (MVE) kernels"}


def _cases(count: int, seed: int) -> list[list[np.ndarray]]:
    graph = load_graph(MODEL)
    rng = np.random.default_rng(seed)
    return [[rng.integers(-128, 128, size=t.shape, dtype=np.int8) for t in graph.inputs] for _ in range(count)]


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_whole_model_on_the_emulated_core_is_bit_exact(target: str, tmp_path: Path) -> None:
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    cases = _cases(3, seed=11)
    np.savez(tmp_path / "case.npz", input0=cases[0][0])
    result = CliRunner().invoke(main, ["verify", str(MODEL), "--target", target, "--qemu", "--cases", "2",
                                       "--input", str(tmp_path / "case.npz")])
    assert result.exit_code == 0, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith(f"{MODEL.name}: 3 cases, all 3 outputs bit-exact with mcugen's Python reference "
                           "and TensorFlow Lite Micro (rounding tflm)"), line
    machine = find_target(target).qemu.machine  # type: ignore[union-attr]
    assert line.endswith(f"(rounding tflm), --target {target} on QEMU {machine} ({KERNELS[target]})"), line


def test_the_outputs_come_back_from_the_core_per_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """The outputs the firmware wrote back are per case (not one case's outputs three times)
    and equal TFLM's, which the test computes itself; here in two images (two cases, then one),
    as when the cases are too large for one."""
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    from oracles import run_tflm

    cases = _cases(3, seed=5)
    graph = load_graph(MODEL)
    per_case = sum(t.nbytes for t in graph.inputs) + sum(t.nbytes for t in graph.outputs)
    monkeypatch.setattr(verify_module, "CASE_BYTES_PER_IMAGE", 2 * per_case)
    runs: list[int] = []
    original_batch = verify_module._run_batch

    def count_batch(*args: object) -> list[list[np.ndarray]]:
        got = original_batch(*args)  # type: ignore[arg-type]
        runs.append(len(got))
        return got

    monkeypatch.setattr(verify_module, "_run_batch", count_batch)
    seen: list[list[list[np.ndarray]]] = []
    original = verify_module.run_cases_on_core

    def spy(*args: object) -> list[list[np.ndarray]]:
        got = original(*args)  # type: ignore[arg-type]
        seen.append(got)
        return got

    monkeypatch.setattr(verify_module, "run_cases_on_core", spy)
    options = BuildOptions(target=find_target("cortex-m4"))
    result = verify_model(MODEL, graph, options, cases, qemu=True, reference="python")
    assert result.failures == 0 and result.references == ["mcugen's Python reference"], result.summary()
    (got,) = seen
    assert runs == [2, 1]
    for case, outputs in zip(cases, got):
        want = run_tflm(MODEL.read_bytes(), case)
        assert [o.tolist() for o in outputs] == [w.tolist() for w in want]
    assert not np.array_equal(got[0][0], got[1][0])  # three different cases, three different answers


def test_verify_qemu_fails_when_the_core_differs_from_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference that disagrees (here: mcugen's Python reference with one output element moved
    by one) makes verify --qemu fail: exit 1, a line naming the case and output, and the verdict."""
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    from mcugen.reference import run_outputs

    def off_by_one(graph: object, inputs: list[np.ndarray], rounding: object) -> list[np.ndarray]:
        outputs = [o.copy() for o in run_outputs(graph, inputs, rounding)]  # type: ignore[arg-type]
        flat = outputs[0].reshape(-1)
        flat[0] = flat[0] + 1 if flat[0] < np.iinfo(flat.dtype).max else flat[0] - 1
        return outputs

    monkeypatch.setattr(verify_module, "run_outputs", off_by_one)
    result = CliRunner().invoke(main, ["verify", str(MODEL), "--target", "cortex-m55", "--qemu", "--cases", "2",
                                       "--reference", "python"])
    assert result.exit_code == 1, result.output
    assert "case 0 output0: 1 of 10 elements differ from mcugen's Python reference (max |diff| 1)" in result.output
    assert "case 1 output0: 1 of 10 elements differ" in result.output
    assert ("error: small_cnn_int8.tflite: 2 output(s) of 2 differ from mcugen's Python reference "
            "(rounding tflm), --target cortex-m55 on QEMU mps3-an547") in result.output, result.output


def test_many_cases_go_into_one_image() -> None:
    cases = _cases(4, seed=1)
    archive = case_archive(cases, [[np.zeros((1, 10), np.int8)] for _ in cases])
    assert int(archive["num_cases"]) == 4
    assert archive["input0"].shape == (4, *cases[0][0].shape) and archive["output0"].shape == (4, 1, 10)
    assert np.array_equal(archive["input0"][2], cases[2][0])


def test_large_cases_go_in_batches_that_fit_the_board(monkeypatch: pytest.MonkeyPatch) -> None:
    """More case bytes than one image holds: several images (a relink each), every case once, in order."""
    graph = load_graph(MODEL)
    per_case = sum(t.nbytes for t in graph.inputs) + sum(t.nbytes for t in graph.outputs)
    monkeypatch.setattr(verify_module, "CASE_BYTES_PER_IMAGE", 2 * per_case + 1)
    assert [list(b) for b in verify_module.batches(graph, 5)] == [[0, 1], [2, 3], [4]]
    monkeypatch.setattr(verify_module, "CASE_BYTES_PER_IMAGE", 1)
    assert [list(b) for b in verify_module.batches(graph, 2)] == [[0], [1]]
