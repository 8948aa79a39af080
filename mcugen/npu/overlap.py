"""NPU ops that write their OFM over their dying IFM, whole (no stripes), to make room for weights.

Where every step of a chain of NPU ops holds its input and its output whole (kws_dscnn: 8000 +
8000 bytes at each DEPTHWISE and 1x1 CONV), no weight buffer fits under the arena, and the 1x1
convolutions read their weights from flash again for every OFM block position (u55-256: 8,832
cycles each, 4,816 from SRAM). overlap_rule.py says when an op may overwrite its IFM: a
DEPTHWISE of stride 1 with its OFM some rows before the IFM (the OFM blocks at most that many
rows less the top padding high), a 1x1 CONV in place (its OFM block the whole depth). Striped
chains have their own output-over-input rule (memory/tiling.py); this is for untiled plans.

A run of such ops, each reading the one before's output, shares one buffer used as a ring
(`Ring`): the run's input at row 0, each output its lag rows before its input modulo the ring's
rows (the map's rows plus the largest lag), so the run never drifts out of its bytes; a map
whose rows run past the ring's end is a feature map of two tiles (HEIGHT0, BASE2), as the
stripes' rings. `OverlapSteps` is a step view (memory/liveness.StepView) that merges a ring's
maps into that buffer where each input dies at its op; plans made with it keep it
(Plan.step_view) when weight buffers and streams re-plan, and segments.py places the maps by
`ring_placement`. weight_plan.plan_npu_weights (the driver's call for --npu builds) tries plans
with rings for each cap of a depthwise's block rows (CAPS) and lets the weight buffers fill the
bytes they free, keeping the fewest estimated cycles in no more SRAM. The lowering checks each
overlap it meets (lower.overlap_limit) and takes its block within the limit.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Conv2DOptions, DepthwiseConv2DOptions, Graph, Op, OpKind, Padding, Tensor
from ..memory.liveness import OP_STEPS, Buffer, ScratchBytes
from ..memory.placement import ALIGNMENT
from ..memory.plan import Plan
from ..records import dataclass
from .config import NpuConfig
from .estimate import kernel_block, kernel_shape
from .featuremap import Placement
from .overlap_rule import BlockLimit, Shape, lag_rows, limit_for, overlap_kind

# Block rows a depthwise that overwrites its input may take, one plan per cap: a lower cap
# frees more bytes (the lag is the block's rows plus the top padding) at some cycles.
CAPS = (4, 6, 8, 12)


@dataclass(frozen=True)
class Share:
    """`op` (at `step`) writes its output `lag_rows` rows before its input's first row."""

    op: Op
    step: int
    lag_rows: int


def _pad_top(size: int, kernel: int, stride: int, dilation: int, padding: Padding) -> int:
    if padding is not Padding.SAME:
        return 0
    out = -(-size // stride)
    return max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size) // 2


def rule_shape(op: Op) -> Shape | None:
    """The op as overlap_rule sees it (None: not a CONV_2D or DEPTHWISE_CONV_2D on 4-D maps)."""
    x, w, y, o = op.inputs[0], op.inputs[1] if len(op.inputs) > 1 else None, op.outputs[0], op.options
    if (op.kind not in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D) or x is None or w is None or not w.is_constant
            or not isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions)) or len(x.shape) != 4):
        return None
    kind = "conv" if op.kind is OpKind.CONV_2D else "depthwise"
    same = x.shape == y.shape and x.dtype == y.dtype
    return Shape(kind, w.shape[1], w.shape[2], o.stride_h, o.stride_w,
                 _pad_top(x.shape[1], w.shape[1], o.stride_h, o.dilation_h, o.padding), same)


def row_bytes(tensor: Tensor) -> int:
    return tensor.nbytes // tensor.shape[1]


def share_of(op: Op, step: int, config: NpuConfig, cap: int | None) -> Share | None:
    """How `op` may overwrite its input (None: it may not): a 1x1 CONV in place, a DEPTHWISE
    (with `cap`) its output the rows of its fastest block of at most `cap` rows, plus its top
    padding, before the input."""
    shape = rule_shape(op) if op.backend == "npu" else None
    kind = overlap_kind(shape) if shape is not None else None
    if kind == "in_place":
        return Share(op, step, 0)
    if kind != "lag" or cap is None or shape is None:
        return None
    shapes = kernel_shape(op, config)
    block = kernel_block(op, config, shapes[1], limit=BlockLimit(max_height=cap)) if shapes is not None else None
    return Share(op, step, lag_rows(shape, block.height)) if block is not None else None


# Ops whose IFM may be a feature map of two tiles (a ring's rows that run past its end)
TILED_READERS = frozenset({OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D})


@dataclass(frozen=True)
class Ring:
    """A run of ops, each writing its output over its dying input, in one buffer of `rows` rows
    of `row_bytes` used as a ring: the run's input at row 0, each output `lag_rows` rows before
    its input (modulo `rows`), so the run never drifts out of its bytes. A map whose rows run
    past the ring's end is a feature map of two tiles (HEIGHT0, BASE2), as the stripes' rings."""

    name: str
    shares: tuple[Share, ...]
    rows: int
    row_bytes: int

    @property
    def tensors(self) -> list[Tensor]:
        first = self.shares[0].op.inputs[0]
        assert first is not None
        return [first, *(s.op.outputs[0] for s in self.shares)]

    def start_row(self, tensor: Tensor) -> int | None:
        """Tensor's first row in the ring (None: not in it)."""
        row = 0
        if tensor is self.tensors[0]:
            return 0
        for share in self.shares:
            row = (row - share.lag_rows) % self.rows
            if share.op.outputs[0] is tensor:
                return row
        return None


def _ring(shares: list[Share], outputs: frozenset[int]) -> Ring | None:
    """The ring of a run of shares (None: no run, or its last map would wrap where a reader or
    the application (`outputs`: ids of the graph's outputs) needs it whole)."""
    if not shares:
        return None
    x = shares[0].op.inputs[0]
    assert x is not None
    height = x.shape[1]
    ring = Ring(f"npu ring of ops {shares[0].op.index}..{shares[-1].op.index}", tuple(shares),
                height + max(s.lag_rows for s in shares), row_bytes(x))
    last = shares[-1].op.outputs[0]
    start = ring.start_row(last) or 0
    if start + height > ring.rows and (id(last) in outputs or any(
            c.backend != "npu" or c.kind not in TILED_READERS for c in last.consumers)):
        return None
    return ring


def rings_of(graph: Graph, order: list[Op], config: NpuConfig, cap: int | None) -> list[Ring]:
    """The runs of consecutive ops of `order` that may each overwrite their input (share_of),
    each op reading the output of the one before, as rings."""
    outputs = frozenset(id(t) for t in graph.outputs)
    rings: list[Ring] = []
    run: list[Share] = []
    for step, op in enumerate([*order, None]):
        share = share_of(op, step, config, cap) if op is not None else None
        if share is not None and run and share.op.inputs[0] is run[-1].op.outputs[0]:
            run.append(share)
            continue
        ring = _ring(run, outputs)
        rings.extend([ring] if ring is not None else [])
        run = [share] if share is not None else []
    return rings


def _holding(buffers: list[Buffer], tensor: Tensor) -> Buffer | None:
    return next((b for b in buffers if any(t is tensor for t in b.tensors)), None)


def _merge(ring: Ring, buffers: list[Buffer]) -> None:
    """The ring's maps into one buffer of its rows, where each is a whole buffer of its own and
    each op's input ends, and its output starts, at the op's step; else nothing."""
    held = [_holding(buffers, t) for t in ring.tensors]
    members: list[Buffer] = []
    for buffer, tensor in zip(held, ring.tensors, strict=True):
        if (buffer is None or buffer.size != tensor.nbytes or buffer.view_offsets or buffer.concat_ops
                or buffer.scratch_of is not None or buffer.weights_of is not None or buffer in members):
            return
        members.append(buffer)
    for share, x, y in zip(ring.shares, members, members[1:], strict=False):
        if x.last != share.step or y.first != share.step:
            return
    merged = Buffer(name=ring.name, size=-(-ring.rows * ring.row_bytes // ALIGNMENT) * ALIGNMENT,
                    first=members[0].first, last=members[-1].last,
                    tensors=[t for b in members for t in b.tensors], uses=sum(b.uses for b in members),
                    in_place_ops=[i for b in members for i in b.in_place_ops])
    for buffer in members:
        buffers.remove(buffer)
    buffers.append(merged)


class OverlapSteps:
    """Every op a step of its own (liveness.OP_STEPS), the `rings` merged last."""

    def __init__(self, rings: Sequence[Ring]) -> None:
        self.rings = tuple(rings)

    def reads(self, op: Op) -> list[Tensor | None]:
        return OP_STEPS.reads(op)

    def writes(self, op: Op) -> list[Tensor]:
        return OP_STEPS.writes(op)

    def grouped(self, op: Op) -> bool:
        return False

    def scratch(self, op: Op, step: int, scratch_bytes: ScratchBytes) -> tuple[int, int]:
        return OP_STEPS.scratch(op, step, scratch_bytes)

    def add_buffers(self, buffers: list[Buffer]) -> list[Buffer]:
        for ring in self.rings:
            _merge(ring, buffers)
        return buffers


def overlap_steps(graph: Graph, order: list[Op], config: NpuConfig, cap: int | None) -> OverlapSteps:
    """The view with every op of `order` that may overwrite its input doing so (`cap`: block
    rows of a depthwise; None: the depthwises do not)."""
    return OverlapSteps(rings_of(graph, order, config, cap))


def _rings_in(plan: Plan) -> list[Ring]:
    """The rings the plan's view asked for that its buffers hold."""
    if not isinstance(plan.step_view, OverlapSteps):
        return []
    names = {b.name for b in plan.buffers}
    return [ring for ring in plan.step_view.rings if ring.name in names]


def ring_placement(plan: Plan, tensor: Tensor, region: int) -> Placement | None:
    """Where `tensor` is if the plan holds it in a ring (None: it does not)."""
    for ring in _rings_in(plan):
        row = ring.start_row(tensor)
        if row is None:
            continue
        base = plan.buffer_of(tensor).offset
        wraps = row + tensor.shape[1] > ring.rows
        return Placement(region, base + row * ring.row_bytes, ring.rows - row if wraps else 0, base if wraps else 0)
    return None


def limits_of(order: Sequence[Op], plan: Plan) -> dict[int, BlockLimit]:
    """id(op) -> the blocks allowed to each op of `order` whose output the plan put over its
    input (none: the op is not there)."""
    ids = {id(op) for op in order}
    found: dict[int, BlockLimit] = {}
    for ring in _rings_in(plan):
        for share in ring.shares:
            shape = rule_shape(share.op)
            limit = limit_for(shape, share.lag_rows * ring.row_bytes, ring.row_bytes) if shape else None
            if limit is not None and id(share.op) in ids:
                found[id(share.op)] = limit
    return found


__all__ = ["CAPS", "OverlapSteps", "Ring", "Share", "limits_of", "overlap_steps", "ring_placement",
           "rule_shape"]
