"""Which ops mcugen's own Ethos-U55 compiler puts on the NPU, and why the others stay on the CPU.

`npu_reasons(op, config)` lists every rule of mcugen/npu/rules.py that the op breaks (empty: the
NPU runs it); `placement(graph, config)` decides every op of a graph. An op goes on the NPU only
when its kind is one that mcugen lowers onto an operation the simulated engine executes (CONV,
DEPTHWISE, POOL, ELEMENTWISE, the output stage's LUT; a reshape or concatenation moves no data of
its own) and every rule of that kind holds. The kinds Vela 5.2 also runs on the NPU but mcugen
does not lower carry their reason in CPU_ONLY, so a difference from Vela's placement is always
written down.

`python -m mcugen.npu.support [docs/npu.md]` prints the rules as markdown, or rewrites the
generated section of docs/npu.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UnsupportedError
from ..ir import Graph, Op, OpKind
from ..records import dataclass
from . import rules as r
from . import rules_ops as ro
from .compile import lowering_error
from .config import NpuConfig

GENERIC = (r.feature_map_dtypes, r.feature_map_shapes, r.static_shapes, r.batch_one, r.quantized_feature_maps,
           r.clamp_fused_activation)
NO_BATCH = (r.feature_map_dtypes, r.feature_map_shapes, r.static_shapes, r.quantized_feature_maps, r.clamp_fused_activation)
WEIGHTED = (r.constant_int8_weights, r.npu_bias, r.weight_sum_limit, r.representable_scales)
WINDOW = (r.window_strides, r.dilation_at_most_2, r.dilated_kernel_size, r.padding_fits)
RESCALING = (r.same_input_output_dtype, r.representable_scales)
BINARY = (r.same_operand_dtypes, r.elementwise_broadcast)


@dataclass(frozen=True)
class NpuKind:
    """An op kind mcugen's NPU compiler lowers: the engine operation it becomes, and its rules."""

    operation: str
    rules: tuple[r.NpuRule, ...]


NPU_KINDS: dict[OpKind, NpuKind] = {
    OpKind.CONV_2D: NpuKind("CONV", (*GENERIC, *WEIGHTED, r.conv_weights_shape, *WINDOW)),
    OpKind.DEPTHWISE_CONV_2D: NpuKind("DEPTHWISE", (*GENERIC, *WEIGHTED, r.depth_multiplier, *WINDOW)),
    # Vela, too, lets FULLY_CONNECTED have a batch: its rows become the IFM's height.
    OpKind.FULLY_CONNECTED: NpuKind("CONV (1x1)", (*NO_BATCH, *WEIGHTED, r.fully_connected_weights)),
    OpKind.MAX_POOL_2D: NpuKind("POOL (MAX)", (*GENERIC, *RESCALING, r.window_strides, r.pool_kernel_size,
                                               r.padding_fits)),
    OpKind.AVERAGE_POOL_2D: NpuKind("POOL (AVERAGE)", (*GENERIC, *RESCALING, r.window_strides, r.pool_kernel_size,
                                                       r.padded_average_kernel, r.padding_fits)),
    OpKind.ADD: NpuKind("ELEMENTWISE (ADD)", (*GENERIC, *BINARY, r.representable_scales)),
    OpKind.SUB: NpuKind("ELEMENTWISE (SUB)", (*GENERIC, *BINARY, r.representable_scales)),
    OpKind.MUL: NpuKind("ELEMENTWISE (MUL)", (*GENERIC, *BINARY, r.representable_scales)),
    OpKind.MAXIMUM: NpuKind("ELEMENTWISE (MAX)", (*GENERIC, *BINARY, r.inputs_quantized_as_output)),
    OpKind.MINIMUM: NpuKind("ELEMENTWISE (MIN)", (*GENERIC, *BINARY, r.inputs_quantized_as_output)),
    OpKind.ABS: NpuKind("ELEMENTWISE (ABS)", (*GENERIC, *RESCALING)),
    OpKind.RELU: NpuKind("POOL 1x1 with a clamp", (*GENERIC, *RESCALING)),
    OpKind.RELU6: NpuKind("POOL 1x1 with a clamp", (*GENERIC, *RESCALING)),
    OpKind.QUANTIZE: NpuKind("POOL 1x1 (a requantization)", (*GENERIC, r.representable_scales)),
    OpKind.LEAKY_RELU: NpuKind("LUT (int8), ELEMENTWISE LRELU (int16)", (*GENERIC, *RESCALING)),
    OpKind.LOGISTIC: NpuKind("LUT", (*GENERIC, r.same_input_output_dtype, r.int8_lut)),
    OpKind.TANH: NpuKind("LUT", (*GENERIC, r.same_input_output_dtype, r.int8_lut)),
    OpKind.HARD_SWISH: NpuKind("LUT", (*GENERIC, r.same_input_output_dtype, r.int8_lut)),
    # Memory ops: no NPU command; Vela, too, exempts them from the batch rule.
    OpKind.RESHAPE: NpuKind("none (a view)", (*NO_BATCH, r.inputs_quantized_as_output)),
    OpKind.SQUEEZE: NpuKind("none (a view)", (*NO_BATCH, r.inputs_quantized_as_output)),
    OpKind.EXPAND_DIMS: NpuKind("none (a view)", (*NO_BATCH, r.inputs_quantized_as_output)),
    OpKind.MEAN: NpuKind("DEPTHWISE (all-one weights, TFLite's MEAN rescale)",
                         (*GENERIC, r.same_input_output_dtype, ro.mean_input_rank, ro.mean_axes,
                          ro.mean_kernel_size, ro.mean_rescale)),
    # Vela, too, exempts SOFTMAX from the batch rule: every row is independent.
    OpKind.SOFTMAX: NpuKind("27 operations: MAX and REDUCE_SUM pools, an exp LUT, 32-bit ELEMENTWISE",
                            (*NO_BATCH, ro.softmax_int8, ro.softmax_rows_fit, ro.softmax_output_quantization)),
    OpKind.CONCATENATION: NpuKind("POOL 1x1 copies into the output's slices (none where the planner "
                                  "made an input a view of its slice)",
                                  (*GENERIC, r.concatenation_axis, r.inputs_quantized_as_output)),
}

MEMORY_KINDS = frozenset({OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.EXPAND_DIMS})

_NOT_LOWERED = "mcugen's NPU compiler has no lowering for it (Vela 5.2 places it on the NPU{how})"
NOT_LOWERED_YET = "mcugen's NPU compiler does not lower it yet"
_NO_NPU_OP = "the Ethos-U55 has no such operation (Vela, too, leaves it to the CPU)"


def _not_lowered(how: str = "") -> str:
    return _NOT_LOWERED.format(how=f", as {how}" if how else "")


CPU_ONLY: dict[OpKind, str] = {
    OpKind.TRANSPOSE_CONV: _not_lowered("a CONV over the IFM upscaled 2x"),
    OpKind.BATCH_MATMUL: _not_lowered("a transpose and a matrix product, int8 only"),
    OpKind.SUM: _not_lowered(),
    OpKind.REDUCE_MAX: _not_lowered(),
    OpKind.ARG_MAX: _not_lowered(),
    OpKind.SQUARED_DIFFERENCE: _not_lowered("a SUB and a MUL"),
    OpKind.PRELU: _not_lowered(),
    OpKind.RSQRT: _not_lowered("a LUT"),
    OpKind.RESIZE_NEAREST_NEIGHBOR: _not_lowered("upscaling POOL operations or copies"),
    OpKind.RESIZE_BILINEAR: _not_lowered("upscaling POOL operations or copies"),
    OpKind.PAD: _not_lowered(),
    OpKind.PADV2: _not_lowered(),
    OpKind.SLICE: _not_lowered("a copy"),
    OpKind.STRIDED_SLICE: _not_lowered("a copy"),
    OpKind.SPLIT: _not_lowered("copies"),
    OpKind.SPLIT_V: _not_lowered("copies"),
    OpKind.PACK: _not_lowered("copies"),
    OpKind.UNPACK: _not_lowered("copies"),
    OpKind.TRANSPOSE: _not_lowered(),
    OpKind.DEPTH_TO_SPACE: "mcugen's NPU compiler has no lowering for it (a copy the CPU makes)",
    OpKind.SPACE_TO_DEPTH: "mcugen's NPU compiler has no lowering for it (a copy the CPU makes)",
    OpKind.DENSIFY: "nothing to compute at run time (the sparse weights are densified at build time)",
    OpKind.GATHER: _NO_NPU_OP,
    OpKind.NEG: _NO_NPU_OP,
    OpKind.DEQUANTIZE: _NO_NPU_OP + ": its output is float",
    OpKind.SHAPE: "nothing to compute at run time (folded at build time or left to the CPU)",
    OpKind.READ_VARIABLE: "a copy of a model's state, made by the CPU",
    OpKind.ASSIGN_VARIABLE: "a copy of a model's state, made by the CPU",
    OpKind.CUSTOM: "a user's C kernel (--custom-op) runs on the CPU",
    OpKind.ETHOS_U: "an op Vela already compiled for the NPU: it runs through the driver as it is",
}


def rule_reasons(op: Op) -> list[str]:
    """Every rule of mcugen/npu/rules.py that the op breaks, each 'rule Got: value' (the rules
    do not depend on the U55's size)."""
    kind = NPU_KINDS.get(op.kind)
    if kind is None:
        return [CPU_ONLY.get(op.kind, "mcugen's NPU compiler has no lowering for it")]
    reasons = []
    for rule in kind.rules:
        try:
            value = rule(op)
        except UnsupportedError as error:  # a required input missing: the CPU rules report it too
            value = str(error)
        if value is not None:
            reasons.append(f"{_text(rule)} Got: {value}")
    return reasons


def npu_reasons(op: Op, config: NpuConfig) -> list[str]:
    """Every reason the op cannot run on the NPU `config` (empty: it can): the rules it breaks,
    or, when it keeps them all, why mcugen's lowering (mcugen/npu/compile.py) does not take it
    yet (an int16 lookup table, a concatenation, ...)."""
    reasons = rule_reasons(op)
    if not reasons:
        missing = lowering_error(op, config)
        if missing is not None:
            reasons.append(f"{NOT_LOWERED_YET}: {missing}")
    return reasons


@dataclass(frozen=True)
class Placement:
    """Where one op runs: on the NPU (reasons empty) or on the CPU, with every reason."""

    op: Op
    reasons: tuple[str, ...]

    @property
    def on_npu(self) -> bool:
        return not self.reasons

    @property
    def operation(self) -> str:
        """The engine operation an NPU op becomes ('' for a CPU op)."""
        return NPU_KINDS[self.op.kind].operation if self.on_npu else ""


def placement(graph: Graph, config: NpuConfig) -> list[Placement]:
    """The decision for every op of `graph`, in its order."""
    return [Placement(op, tuple(npu_reasons(op, config))) for op in graph.ops]


# --- the rules as a document ------------------------------------------------------------------

BEGIN = "<!-- generated by `python -m mcugen.npu.support docs/npu.md`: begin -->"
END = "<!-- generated: end -->"


def _text(rule: r.NpuRule) -> str:
    return " ".join((rule.__doc__ or rule.__name__).split())


def rules_markdown() -> str:
    """The section of docs/npu.md that says what mcugen's own compiler puts on the NPU."""
    lines = [BEGIN, "", "Generated from the rules' docstrings (`mcugen/npu/rules.py`, `mcugen/npu/support.py`);",
             "do not edit. The rules are the same for u55-32, -64, -128 and -256. An op runs on the NPU",
             "when its kind is listed here and every rule of its kind holds.", "",
             "#### Every op on the NPU", ""]
    lines.extend(f"- {_text(rule)}" for rule in GENERIC)
    lines.append("")
    for kind, npu_kind in NPU_KINDS.items():
        lines.append(f"#### {kind.name} -> {npu_kind.operation}")
        lines.append("")
        if r.batch_one not in npu_kind.rules:
            lines.append("- Any batch: the batch rule above does not apply.")
        lines.extend(f"- {_text(rule)}" for rule in npu_kind.rules if rule not in GENERIC)
        lines.append("")
    lines.append("#### On the CPU, always")
    lines.append("")
    lines.extend(f"- {kind.name}: {reason}." for kind, reason in CPU_ONLY.items())
    lines.extend(["", END])
    return "\n".join(lines)


def rewrite_section(text: str) -> str:
    """`text` (docs/npu.md) with its generated section replaced by the current rules."""
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + rules_markdown() + text[stop:]


if __name__ == "__main__":
    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
        path.write_text(rewrite_section(path.read_text()))
    else:
        print(rules_markdown())
