"""`--npu`: runs of consecutive NPU ops become one ETHOS_U op each, with mcugen's own stream.

After scheduling and memory planning (the stream addresses feature maps where the planner put
them, so it is written last): in the execution order, every maximal run of ops that the NPU
takes (`npu_takes`) becomes one segment, an ETHOS_U op whose inputs are its payload (the
command stream of all its ops, mcugen.npu.compile.lower_ops), its read-only image (region 0:
encoded weights and scales, constant operands) and its IFMs (the segment's inputs produced
outside it), and whose outputs are the tensors read after it or by the application. Region
1 + n is the n-th memory pool holding one of the segment's feature maps; a tensor's address
is its planned offset in its pool. Tensors inside a segment stay planned (the NPU writes and
reads them there) but no CPU op sees them. A tiled chain of NPU ops (the planner's, see
mcugen/npu/stripes.py) runs in stripes: its intermediates are never whole, its stripe region
is a buffer of the plan.
"""

from __future__ import annotations

import numpy as np

from ..errors import BuildError
from ..ir import DType, Graph, NpuPoolRegion, NpuSegmentOptions, Op, OpKind, Tensor
from ..memory.liveness import ScratchBytes
from ..memory.plan import Plan
from ..memory.tiling import Chain
from .compile import NO_COMMANDS, Striped, lower_ops
from .config import NpuConfig
from .featuremap import LoweringError, Placement
from .lower_softmax import softmax_scratch_bytes
from .overlap import ring_placement
from .partition import Segment, partition
from .support import Placement as Decision
from .support import npu_reasons
from .weight_dma import WeightBuffer
from .weight_stream import stream_buffer_of, weight_streams


def npu_takes(op: Op, config: NpuConfig) -> bool:
    """Whether the NPU runs `op`: mcugen/npu/support.py's rules hold and it lowers (the same
    decision `inspect --npu` shows)."""
    return not npu_reasons(op, config)


def with_npu_scratch(cpu: ScratchBytes) -> ScratchBytes:
    """Scratch bytes per op for planning: an NPU op's program (a SOFTMAX's int32
    intermediates), a CPU op's kernel."""

    def scratch(op: Op) -> int:
        return softmax_scratch_bytes(op) if op.backend == "npu" else cpu(op)

    return scratch


def mark_npu_ops(graph: Graph, config: NpuConfig) -> None:
    """Before planning: the ops the NPU takes get backend "npu", so that the tiling search
    chains them only with each other (mcugen/npu/stripes.py runs their stripes)."""
    for op in graph.ops:
        if op.kind not in NO_COMMANDS and npu_takes(op, config):
            op.backend = "npu"


def _in_segment(op: Op, config: NpuConfig, plan: Plan) -> bool:
    """The NPU takes the op; a reshape only where its input and output share their bytes."""
    if op.kind in NO_COMMANDS:
        x, y = op.inputs[0], op.outputs[0]
        return (x is not None and not x.is_constant and plan.buffer_of(x) is plan.buffer_of(y)
                and plan.offset_of(x) == plan.offset_of(y))
    return npu_takes(op, config)


def segments(graph: Graph, order: list[Op], config: NpuConfig, plan: Plan,
             starts: frozenset[int] = frozenset()) -> list[Segment]:
    """Maximal runs of consecutive ops the NPU takes (mcugen/npu/partition.py), each with at
    least one NPU operation (a run of reshapes alone stays on the CPU); an op in `starts`
    begins a new one."""
    decisions = [Decision(op, () if _in_segment(op, config, plan) else ("not on the NPU",)) for op in graph.ops]
    return partition(graph, decisions, order, starts)


def _whole_tensors(ops: list[Op], plan: Plan) -> list[Tensor]:
    """The feature maps of `ops` that exist whole (a tiled chain's intermediates do not)."""
    inner = {id(t) for op in ops if plan.tiling is not None and (chain := plan.tiling.chain_of(op))
             for t in chain.intermediates}
    return [t for op in ops for t in [*op.inputs, *op.outputs]
            if t is not None and not t.is_constant and id(t) not in inner]


def _pool_regions(ops: list[Op], plan: Plan) -> list[NpuPoolRegion]:
    """One region per pool that holds a feature map of `ops`, in the plan's pool order."""
    anchors: dict[str, Tensor] = {}
    for tensor in _whole_tensors(ops, plan):
        anchors.setdefault(plan.buffer_of(tensor).pool, tensor)
    sizes = {p.name: p.size for p in plan.pools}
    return [NpuPoolRegion(name, anchors[name], plan.offset_of(anchors[name]), sizes[name])
            for name in (p.name for p in plan.pools) if name in anchors]


def _striped(ops: list[Op], plan: Plan, region: dict[str, int], number: int) -> Striped:
    """Each op of a tiled chain in `ops` -> its chain and where its stripe region is."""
    found: dict[int, tuple[Chain, Placement]] = {}
    for op in ops:
        chain = plan.tiling.chain_of(op) if plan.tiling is not None else None
        if chain is None:
            continue
        if not all(any(o is c for c in ops) for o in chain.ops):
            raise BuildError(f"NPU segment {number}: the tiled chain of ops {chain.ops[0].index}.."
                             f"{chain.ops[-1].index} is not all in it")
        buffer = next(b for b in plan.buffers if b.name == chain.region_name)
        if buffer.pool not in region:
            raise BuildError(f"NPU segment {number}: the stripes of ops {chain.ops[0].index}.."
                             f"{chain.ops[-1].index} are in pool '{buffer.pool}', which holds none of its tensors")
        found[id(op)] = (chain, Placement(region[buffer.pool], buffer.offset))
    return found


def _weight_buffers(ops: list[Op], plan: Plan, region: dict[str, int], number: int) -> dict[int, WeightBuffer]:
    """Each op of `ops` with a weight buffer in the plan (--npu-weights) -> where it is; prefetch
    where the buffer is live from the step before the op's (weight_buffers.py plans that only
    when the previous op of the order is an NPU op, which then is in this segment)."""
    found: dict[int, WeightBuffer] = {}
    for op in ops:
        buffer = plan.weights_buffer_of(op)
        if buffer is None or buffer.stream_depth:  # a weight stream's slots: weight_streams
            continue
        if buffer.pool not in region:
            raise BuildError(f"NPU segment {number}: the weight buffer of op {op.index} is in pool "
                             f"'{buffer.pool}', which holds none of its tensors")
        found[id(op)] = WeightBuffer(region[buffer.pool], buffer.offset, buffer.first < buffer.last)
    return found


def _constant(graph: Graph, name: str, blob: bytes) -> Tensor:
    data = np.frombuffer(blob, dtype=np.uint8).copy()
    tensor = Tensor(index=len(graph.tensors), name=name, shape=(len(blob),), dtype=DType.UINT8, data=data)
    graph.tensors.append(tensor)
    return tensor


def segment_op(graph: Graph, segment: Segment, plan: Plan, config: NpuConfig) -> Op:
    """The ETHOS_U op of one segment, its stream written for the plan's offsets."""
    ops, number = list(segment.ops), segment.index
    pools = _pool_regions(ops, plan)
    region = {r.pool: 1 + n for n, r in enumerate(pools)}

    def place(tensor: Tensor) -> Placement:
        if tensor.is_constant:
            raise LoweringError(f"'{tensor.name}' is a constant where the NPU reads a feature map")
        pool = region[plan.buffer_of(tensor).pool]
        return ring_placement(plan, tensor, pool) or Placement(pool, plan.offset_of(tensor))

    def scratch(op: Op) -> Placement | None:
        buffer = plan.scratch_of(op)
        if buffer is None or buffer.pool not in region:  # a pool of no feature map of the segment
            return None
        return Placement(region[buffer.pool], buffer.offset)

    ifms, ofms = list(segment.inputs), list(segment.outputs)
    try:
        program = lower_ops(ops, place, config, frozenset(id(t) for t in ofms),
                            _striped(ops, plan, region, number), scratch,
                            _weight_buffers(ops, plan, region, number), weight_streams(ops, plan, region, number))
    except LoweringError as e:
        raise BuildError(f"NPU segment {number}: {e}") from None
    payload = _constant(graph, f"npu_segment{number}_payload", program.payload)
    flash = _constant(graph, f"npu_segment{number}_weights", program.flash)
    sram_weights = tuple(op for op in ops if plan.weights_buffer_of(op) is not None
                         and stream_buffer_of(plan, op) is None)
    return Op(kind=OpKind.ETHOS_U, inputs=[payload, flash, *ifms], outputs=ofms,
              options=NpuSegmentOptions(tuple(ops), tuple(pools), sram_weights=sram_weights), index=ops[0].index, backend="npu")


def lower_segments(graph: Graph, order: list[Op], plan: Plan, config: NpuConfig,
                   starts: frozenset[int] = frozenset()) -> list[Op]:
    """The order with each segment replaced by its ETHOS_U op (graph.ops likewise, links redone)."""
    replaced: dict[int, Op] = {}
    dropped: set[int] = set()
    for segment in segments(graph, order, config, plan, starts):
        replaced[id(segment.ops[0])] = segment_op(graph, segment, plan, config)
        dropped |= {id(op) for op in segment.ops[1:]}
    if not replaced:
        return order

    def rewrite(ops: list[Op]) -> list[Op]:
        return [replaced.get(id(op), op) for op in ops if id(op) not in dropped]

    graph.ops = rewrite(graph.ops)
    graph.link()
    return rewrite(order)
