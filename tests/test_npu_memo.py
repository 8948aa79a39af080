"""The NPU's build-time memo (mcugen/npu/memo.py): an --npu build's estimates and trial
lowerings answered from tables within one build scope.

The oracle is the same computation without the memo: a build whose scope is replaced by one
that memoises nothing writes the same files and the same report figures, and every op's and
every stripe call's estimate inside a scope equals the one computed outside it, where the memo
is off. Two ops of one shape whose weights differ must not share an entry.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest
from conftest import public_model

from mcugen.driver import BuildOptions, compile_model
from mcugen.ir import NpuSegmentOptions, Op, OpKind
from mcugen.npu import memo
from mcugen.npu.config import npu_config
from mcugen.npu.estimate import chain_cycles, op_cycles
from mcugen.npu.weight_stream import slice_op
from mcugen.targets import HOST


def _options(size: str) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)))


def _segment_ops(options: object) -> tuple:
    assert isinstance(options, NpuSegmentOptions)
    return options.ops


@contextlib.contextmanager
def _no_memo() -> Iterator[None]:
    yield


@pytest.mark.parametrize("name,size", [("kws_dscnn", "u55-128"), ("ic_resnet8", "u55-256")])
def test_build_with_memo_equals_build_without(name: str, size: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = public_model(name).read_bytes()
    memoised = compile_model(data, _options(size), f"{name}.tflite")
    monkeypatch.setattr(memo, "build_scope", _no_memo)
    plain = compile_model(data, _options(size), f"{name}.tflite")
    assert memoised.code.files == plain.code.files
    assert memoised.npu == plain.npu
    assert memoised.plan.arena_size == plain.plan.arena_size


def test_estimates_inside_a_scope_equal_those_outside() -> None:
    compiled = compile_model(public_model("vww_mobilenet_v1_025").read_bytes(), _options("u55-128"), "vww.tflite")
    config = npu_config("u55-128")
    ops = [op for segment in compiled.order if segment.kind is OpKind.ETHOS_U
           for op in _segment_ops(segment.options)]
    chains = compiled.plan.tiling.chains if compiled.plan.tiling is not None else []
    assert ops and chains
    outside = ([op_cycles(op, config, sram) for op in ops for sram in (False, True)],
               [chain_cycles(chain, config) for chain in chains])
    with memo.build_scope():
        for _ in range(2):  # the second round from the tables
            inside = ([op_cycles(op, config, sram) for op in ops for sram in (False, True)],
                      [chain_cycles(chain, config) for chain in chains])
            assert inside == outside


def _with_sparse_weights(op: Op) -> Op:
    """`op` with every weight but the first zero: a shorter weight stream."""
    w = op.inputs[1]
    assert w is not None and w.data is not None
    sparse = np.zeros_like(w.data)
    sparse.flat[0] = 1
    return dataclasses.replace(op, inputs=[op.inputs[0], dataclasses.replace(w, data=sparse), *op.inputs[2:]])


def test_ops_of_one_shape_with_other_weights_do_not_share_an_entry() -> None:
    compiled = compile_model(public_model("vww_mobilenet_v1_025").read_bytes(), _options("u55-128"), "vww.tflite")
    config = npu_config("u55-128")
    convs = [op for segment in compiled.order if segment.kind is OpKind.ETHOS_U
             for op in _segment_ops(segment.options) if op.kind is OpKind.CONV_2D]
    # the convolutions whose cycles depend on their weight stream's length (flash-bound)
    pairs = [(op, _with_sparse_weights(op)) for op in convs]
    pairs = [(op, other) for op, other in pairs if op_cycles(op, config) != op_cycles(other, config)]
    assert pairs
    expected = [[op_cycles(op, config), op_cycles(other, config),
                 op_cycles(slice_op(op, 0, 8), config, True), op_cycles(slice_op(other, 0, 8), config, True)]
                for op, other in pairs]
    with memo.build_scope():
        got = [[op_cycles(op, config), op_cycles(other, config),
                op_cycles(slice_op(op, 0, 8), config, True), op_cycles(slice_op(other, 0, 8), config, True)]
               for op, other in pairs]
    assert got == expected


def test_the_memo_is_off_outside_a_scope_and_forgets_when_it_ends() -> None:
    calls: list[int] = []

    @memo.memoised(lambda x: ((x,), None))
    def double(x: int) -> int:
        calls.append(x)
        return 2 * x

    assert [double(3), double(3)] == [6, 6] and calls == [3, 3]
    with memo.build_scope():
        with memo.build_scope():  # nested: the outer scope's tables
            assert double(4) == 8
        assert double(4) == 8
    assert calls == [3, 3, 4]
    with memo.build_scope():
        assert double(4) == 8
    assert calls == [3, 3, 4, 4]
