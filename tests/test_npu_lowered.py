"""MEAN, CONCATENATION and SOFTMAX in whole `--npu` builds (mcugen/npu/lower_reduce.py,
lower_concat.py, lower_softmax.py): what the single-op streams of tests/test_npu_compile.py do
not show, against TFLM.

- A SOFTMAX beside CPU ops with --npu-async: its scratch lives until the wait, and the build
  equals TFLM (tests/test_npu_async.py shows the plan without that overlapping).
- A concatenation whose inputs the memory planner made views of its output (their producers
  write their slices directly) costs the NPU no operation, and the build equals TFLM.
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
from modelbuilder import ModelBuilder
from npu_lowered_models import softmax_beside_gathers
from oracles import assert_sanitized_build_equals_tflm, run_tflm

from mcugen.driver import BuildOptions, Compiled, compile_model
from mcugen.ir import NpuSegmentOptions, OpKind
from mcugen.npu.config import npu_config
from mcugen.npu.registers import Cmd0
from mcugen.ops.npu.payload import read_payload
from mcugen.targets import HOST
from mcugen.toolchain.host import build_program, run_program

Q = (0.05, -3)


def _options(size: str = "u55-128", npu_async: bool = False) -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)), npu_async=npu_async)


def operations(compiled: Compiled) -> dict[str, int]:
    """NPU operation commands (CONV, DEPTHWISE, POOL, ELEMENTWISE) in all segments' streams."""
    names = {int(Cmd0.OP_CONV): "CONV", int(Cmd0.OP_DEPTHWISE): "DEPTHWISE", int(Cmd0.OP_POOL): "POOL",
             int(Cmd0.OP_ELEMENTWISE): "ELEMENTWISE"}
    counts: dict[str, int] = {}
    for op in compiled.order:
        if op.kind is not OpKind.ETHOS_U:
            continue
        payload_tensor = op.inputs[0]
        assert payload_tensor is not None and payload_tensor.data is not None
        data = payload_tensor.data.tobytes()
        parsed = read_payload(data)
        words = struct.unpack_from(f"<{parsed.stream_bytes // 4}I", data, parsed.stream_offset)
        n = 0
        while n < len(words):
            opcode = words[n] & 0x3FF
            if words[n] >> 14 & 1:  # cmd1: a data word follows
                n += 2
                continue
            if opcode in names:
                counts[names[opcode]] = counts.get(names[opcode], 0) + 1
            n += 1
    return counts


def _conv1x1(b: ModelBuilder, name: str, source: int, shape: list[int], seed: int) -> int:
    c = shape[-1]
    rng = np.random.default_rng(seed)
    w = b.add_tensor(f"{name}_w", [c, 1, 1, c], "int8", scale=[0.02] * c, zero_point=0,
                     data=rng.integers(-100, 100, (c, 1, 1, c)).astype(np.int8))
    bias = b.add_tensor(f"{name}_b", [c], "int32", data=rng.integers(-500, 500, c).astype(np.int32))
    y = b.add_tensor(name, shape, "int8", *Q)
    b.add_op("CONV_2D", [source, w, bias], [y], {"padding": "VALID"})
    return y


def _concat_of_convs() -> bytes:
    """x [1,4,4,3] -> conv a, conv c; CONCATENATION(a, c) along the height: as views, a and c
    need no bytes beside the output's."""
    b = ModelBuilder("npu concat in place")
    x = b.add_tensor("x", [1, 4, 4, 3], "int8", *Q)
    a = _conv1x1(b, "a", x, [1, 4, 4, 3], 1)
    c = _conv1x1(b, "c", x, [1, 4, 4, 3], 2)
    y = b.add_tensor("y", [1, 8, 4, 3], "int8", *Q)
    b.add_op("CONCATENATION", [a, c], [y], {"axis": 1})
    b.set_io([x], [y])
    return b.build()


def test_concatenation_planned_in_place_needs_no_npu_operation() -> None:
    model = _concat_of_convs()
    compiled = compile_model(model, _options(), "concat.tflite")
    assert [op.kind for op in compiled.order] == [OpKind.ETHOS_U]
    (segment,) = compiled.order
    concat = next(op for op in segment.options.ops if op.kind is OpKind.CONCATENATION)  # type: ignore[union-attr]
    y = concat.outputs[0]
    starts = [compiled.plan.offset_of(t) - compiled.plan.offset_of(y) for t in concat.inputs if t is not None]
    assert starts == [0, 4 * 4 * 3]  # the planner made both inputs views of their slices
    assert operations(compiled) == {"CONV": 2}
    assert_sanitized_build_equals_tflm(model, _options(), "concat.tflite", (1, 4, 4, 3), 5)


def test_softmax_beside_cpu_ops_with_npu_async_is_bit_exact() -> None:
    model = softmax_beside_gathers()
    options = _options("u55-32", npu_async=True)
    compiled = compile_model(model, options, "softmax_async.tflite")
    kinds = [op.kind.name for op in compiled.order]
    assert kinds == ["ETHOS_U", "GATHER", "GATHER"]
    segment = compiled.order[0]
    assert isinstance(segment.options, NpuSegmentOptions) and segment.options.concurrent == 1
    softmax = segment.options.ops[0]
    scratch = compiled.plan.scratch_of(softmax)
    assert scratch is not None and scratch.last >= 2  # lives past the GATHER beside it
    assert operations(compiled) == {"ELEMENTWISE": 25, "POOL": 2}
    rng = np.random.default_rng(9)
    cases = [[rng.integers(-60, 60, (1, 64)).astype(np.int8), rng.integers(-128, 128, (1, 4, 4, 4)).astype(np.int8)]
             for _ in range(3)]
    program = build_program(model, options, "softmax_async.tflite", sanitize=True)
    for case, actual in zip(cases, run_program(program, cases), strict=True):
        for got, want in zip(actual, run_tflm(model, case), strict=True):
            assert np.array_equal(got.reshape(want.shape), want)
