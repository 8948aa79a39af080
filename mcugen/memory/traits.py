"""The op traits memory planning and tiling read, in one place.

They are facts about an op kind's kernel, not about memory: each belongs with its op's
definition, and will move there (into the op registry) as a whole. Until then they are named
here, and nowhere else in mcugen.memory, so that the move touches this module only.
"""

from __future__ import annotations

from ..analysis.macs import op_macs
from ..ir import Op, OpKind

# Ops whose output is the input's bytes under another shape: planned as one buffer, no code.
ALIAS_KINDS = frozenset({OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS})

# Ops whose C kernel may write its output over an input of the same shape and dtype. The kernel
# must guarantee it: each output element k is written after every read of the overwritten
# input's element k, and no later iteration reads element k of that input. Checked in the C:
# - mcugen_elementwise.c (ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU; s8, s16,
#   f32): broadcast_rows writes the output in order, and a row reads x1[i * step1] and
#   x2[i * step2] before writing y[i]; an input of the output's own shape has the output's
#   strides, so its element i is read only in iteration i. A broadcast input is read again
#   later, which is why only an input of the output's shape may be overwritten.
# - mcugen_activation.c (RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH, ABS, NEG, RSQRT)
#   and the requantizing QUANTIZE (mcugen_rescale_*): `output[i] = f(input[i])`, nothing else
#   read. (Dtype-changing QUANTIZE / DEQUANTIZE are excluded by the same-dtype condition.)
IN_PLACE_KINDS = frozenset({
    OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.SQUARED_DIFFERENCE, OpKind.MAXIMUM, OpKind.MINIMUM,
    OpKind.PRELU, OpKind.RELU, OpKind.RELU6, OpKind.LEAKY_RELU, OpKind.LOGISTIC, OpKind.TANH,
    OpKind.HARD_SWISH, OpKind.ABS, OpKind.NEG, OpKind.RSQRT, OpKind.QUANTIZE,
})

# Ops a tiled chain may start with (tiling.py): a sliding window over rows, any stride,
# dilation, SAME/VALID; an ADD (of two tensors of one shape) may follow one.
WINDOW_KINDS = frozenset({OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.AVERAGE_POOL_2D,
                          OpKind.MAX_POOL_2D})


def macs(op: Op) -> int:
    """Multiply-accumulates of one call of `op` on its whole output (tiling counts the cost of
    recomputed halo rows from it)."""
    return op_macs(op)
