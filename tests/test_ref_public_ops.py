"""Every op of the public models, fed LiteRT's own intermediate inputs, gives LiteRT's output.

Per-op, not per-model: a mismatch names the first op whose arithmetic differs, instead of an
error that surfaced several layers later.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import PUBLIC_NAMES, public_model
from oracles import litert_all_tensors

from mcugen.frontend.tflite import parse_model
from mcugen.quantization import Rounding
from mcugen.reference import run_op


@pytest.mark.parametrize("case_index", range(3))
@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_each_op_matches_litert(name: str, case_index: int) -> None:
    path = public_model(name)
    model = path.read_bytes()
    case = np.load(path.with_name(f"{name}.case{case_index}.npz"))
    values = litert_all_tensors(model, [case["input0"]])
    graph = parse_model(model, path.name)
    for op in graph.ops:
        inputs = [None if t is None else values[t.index] for t in op.inputs]
        (actual,) = run_op(op, inputs, Rounding.LITERT)
        expected = values[op.outputs[0].index]
        mismatches = int(np.sum(actual.reshape(expected.shape) != expected))
        assert mismatches == 0, f"{op.where()}: {mismatches} of {expected.size} outputs differ"
    assert graph.ops, name
