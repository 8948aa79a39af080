"""Regenerate this example's model and test case (run from the repository root):

    PYTHONPATH=$PWD:tests python3 examples/npu/generate.py

1. model.tflite: an int8 CONV_2D 3x3 (4 -> 8 channels) on 1x8x8x4, a GATHER that reverses the
   channels (Vela leaves it on the CPU), and a CONV_2D 3x3 (8 -> 6), seeded weights, written
   with tests/modelbuilder.py;
2. model_vela.tflite: `vela --accelerator-config ethos-u55-128 --output-dir examples/npu
   examples/npu/model.tflite` (ethos-u-vela 5.2.0, its default system configuration): two
   ethos-u ops with the GATHER between them on the CPU;
3. case0.npz: input0 uniform over int8 (seed 0) and output0 from TFLite Micro running
   model.tflite (tests/oracles.py), the outputs the NPU build must reproduce.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
from modelbuilder import ModelBuilder
from oracles import run_tflm

HERE = Path(__file__).resolve().parent


def model() -> bytes:
    rng = np.random.default_rng(3)
    b = ModelBuilder("mcugen examples/npu")
    x = b.add_tensor("x", [1, 8, 8, 4], "int8", scale=0.05, zero_point=-2)

    def conv(source: int, cin: int, cout: int, name: str, in_scale: float) -> int:
        scales = [0.02 + 0.001 * i for i in range(cout)]
        w = b.add_tensor(f"{name}_w", [cout, 3, 3, cin], "int8", scale=scales,
                         data=rng.integers(-127, 128, (cout, 3, 3, cin)))
        bias = b.add_tensor(f"{name}_b", [cout], "int32", scale=[in_scale * s for s in scales],
                            data=rng.integers(-2000, 2000, cout))
        y = b.add_tensor(f"{name}_y", [1, 8, 8, cout], "int8", scale=0.12, zero_point=3)
        b.add_op("CONV_2D", [source, w, bias], [y], {"padding": "SAME"})
        return y

    y = conv(x, 4, 8, "c1", 0.05)
    idx = b.add_tensor("idx", [8], "int32", data=np.arange(8)[::-1].copy())
    g = b.add_tensor("g", [1, 8, 8, 8], "int8", scale=0.12, zero_point=3)
    b.add_op("GATHER", [y, idx], [g], {"axis": 3})
    z = conv(g, 8, 6, "c2", 0.12)
    b.set_io([x], [z])
    return b.build()


def main() -> None:
    data = model()
    (HERE / "model.tflite").write_bytes(data)
    subprocess.run(["vela", "--accelerator-config", "ethos-u55-128", "--output-dir", str(HERE),
                    str(HERE / "model.tflite")], check=True)
    for csv in HERE.glob("model_summary_*.csv"):
        csv.unlink()  # Vela's performance estimate: not part of the example
    x = np.random.default_rng(0).integers(-128, 128, size=(1, 8, 8, 4), dtype=np.int8)
    np.savez(HERE / "case0.npz", input0=x, output0=run_tflm(data, [x])[0])


if __name__ == "__main__":
    main()
