"""MEAN, CONCATENATION and SOFTMAX in whole `--npu` builds (mcugen/npu/lower_reduce.py,
lower_concat.py, lower_softmax.py): what the single-op streams of tests/test_npu_compile.py do
not show, against TFLM.

- A concatenation whose inputs the memory planner made views of its output (their producers
  write their slices directly) costs the NPU no operation, and the build equals TFLM.
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
from modelbuilder import ModelBuilder
from oracles import run_tflm

from mcugen.driver import BuildOptions, Compiled, compile_model
from mcugen.ir import OpKind
from mcugen.npu.config import npu_config
from mcugen.npu.registers import Cmd0
from mcugen.ops.npu.payload import read_payload
from mcugen.targets import HOST
from mcugen.toolchain.host import build_program, run_program

Q = (0.05, -3)


def _options(size: str = "u55-128") -> BuildOptions:
    return BuildOptions(target=dataclasses.replace(HOST, npu=npu_config(size)))


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
    rng = np.random.default_rng(5)
    cases = [[rng.integers(-128, 128, (1, 4, 4, 3)).astype(np.int8)] for _ in range(3)]
    program = build_program(model, _options(), "concat.tflite", sanitize=True)
    for case, (actual,) in zip(cases, run_program(program, cases), strict=True):
        (expected,) = run_tflm(model, case)
        assert np.array_equal(actual.reshape(expected.shape), expected)
