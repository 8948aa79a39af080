"""The numpy reference of my_relu.c, which `mcugen verify` compares the C with (docs/custom_ops.md):
int8 RELU between tensors of one scale, max(x - zin + zout, zout), clamped to int8."""

import numpy as np


def reference(inputs, custom_options, outputs_like, quantization):
    (x,) = inputs
    (_, (in_zero,)), = quantization["inputs"]
    (_, (out_zero,)), = quantization["outputs"]
    y = np.maximum(x.astype(np.int32) - in_zero + out_zero, out_zero)
    return [np.clip(y, -128, 127).astype(outputs_like[0].dtype)]
