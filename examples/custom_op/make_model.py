"""Write my_relu.tflite, the example's model: int8 CONV_2D -> CUSTOM 'my_relu' -> AVERAGE_POOL_2D,
and case0.npz, its test case.

    python3 examples/custom_op/make_model.py [OUT.tflite] [--builtin]

--builtin writes the same model with TFLite's RELU in place of the custom op: TFLite runs that
one, and the tests hold the custom kernel's results to it (tests/test_custom_ops.py). Without
it the script also writes case0.npz: a random input0 and, as output0, what TensorFlow Lite
Micro computes for it on the builtin model (the firmware's expected output). The model is
made with the test suite's model builder (tests/modelbuilder.py); the committed files are the
script's output, byte for byte.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from modelbuilder import ModelBuilder

HERE = Path(__file__).resolve().parent
# RELU keeps the scale: the custom kernel takes equal input and output scales (my_relu.c)
HIDDEN = {"scale": 0.08, "zero_point": -5}


def build(builtin_relu: bool = False) -> bytes:
    rng = np.random.default_rng(14)
    b = ModelBuilder("mcugen example: a custom op (examples/custom_op)")
    x = b.add_tensor("input", [1, 8, 8, 3], "int8", scale=0.05, zero_point=2)
    scales = [float(s) for s in rng.uniform(0.005, 0.02, 8)]
    w = b.add_tensor("conv_weights", [8, 3, 3, 3], "int8", scale=scales,
                     data=rng.integers(-127, 128, size=(8, 3, 3, 3), dtype=np.int8))
    bias = b.add_tensor("conv_bias", [8], "int32", scale=[0.05 * s for s in scales],
                        data=rng.integers(-300, 300, size=8, dtype=np.int32))
    h = b.add_tensor("conv", [1, 8, 8, 8], "int8", **HIDDEN)
    r = b.add_tensor("my_relu", [1, 8, 8, 8], "int8", **HIDDEN)
    y = b.add_tensor("pooled", [1, 1, 1, 8], "int8", **HIDDEN)
    b.add_op("CONV_2D", [x, w, bias], [h], {"padding": "SAME"})
    if builtin_relu:
        b.add_op("RELU", [h], [r])
    else:
        b.add_custom_op("my_relu", [h], [r])
    b.add_op("AVERAGE_POOL_2D", [r], [y], {"filter_width": 8, "filter_height": 8})
    b.set_io([x], [y])
    return b.build()


def write_case(path: Path) -> None:
    from oracles import run_tflm

    x = np.random.default_rng(5).integers(-128, 128, size=(1, 8, 8, 3), dtype=np.int8)
    (expected,) = run_tflm(build(builtin_relu=True), [x])
    np.savez(path, input0=x, output0=expected)


def main(argv: list[str]) -> None:
    builtin = "--builtin" in argv
    paths = [a for a in argv if not a.startswith("--")]
    out = Path(paths[0]) if paths else HERE / ("my_relu_builtin.tflite" if builtin else "my_relu.tflite")
    out.write_bytes(build(builtin))
    print(f"{out}: {out.stat().st_size} bytes")
    if not builtin:
        write_case(out.parent / "case0.npz")
        print(f"{out.parent / 'case0.npz'}: input0 and TFLM's output0 for it")


if __name__ == "__main__":
    main(sys.argv[1:])
