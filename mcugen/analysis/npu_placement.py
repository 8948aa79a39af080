"""What `mcugen inspect --npu CONFIG` adds: each op's placement with every reason, and a summary
of the NPU segments (mcugen/npu/support.py decides, mcugen/npu/partition.py cuts)."""

from __future__ import annotations

from ..ir import Graph, Tensor
from ..npu.config import NpuConfig
from ..npu.partition import Segment, partition
from ..npu.support import Placement, placement

INDENT = "       "


class NpuInspection:
    """The placement of a prepared graph's ops on one NPU configuration."""

    def __init__(self, graph: Graph, config: NpuConfig) -> None:
        self.config = config
        self.decisions = placement(graph, config)
        self.by_index = {d.op.index: d for d in self.decisions}
        self.segments = partition(graph, self.decisions)

    def op_lines(self, index: int) -> list[str]:
        """The lines under op `index`: 'npu: OPERATION', or 'cpu: reason' once per reason."""
        decision: Placement | None = self.by_index.get(index)
        if decision is None:
            return []
        if decision.on_npu:
            return [f"{INDENT}npu: {decision.operation}"]
        return [f"{INDENT}cpu: {reason}" for reason in decision.reasons]

    def summary(self) -> list[str]:
        on_npu = sum(1 for d in self.decisions if d.on_npu)
        on_cpu = len(self.decisions) - on_npu
        lines = [f"  npu {self.config.name}: {on_npu} op(s) on the NPU, {on_cpu} on the CPU, "
                 + f"{len(self.segments)} segment(s)"]
        lines.extend(_segment_line(segment) for segment in self.segments)
        return lines


def _names(tensors: tuple[Tensor, ...]) -> str:
    return ", ".join(f"'{t.name}'" for t in tensors) or "-"


def _segment_line(segment: Segment) -> str:
    ops = ", ".join(str(op.index) for op in segment.ops)
    return (f"    segment {segment.index}: ops {ops}; inputs {_names(segment.inputs)}; "
            f"outputs {_names(segment.outputs)}")
