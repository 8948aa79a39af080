"""Static memory planning: every activation tensor and kernel scratch buffer gets a pool and an
offset in it, fixed at build time.

Buffers and lifetimes
---------------------
1. Each non-constant tensor is a buffer. A RESHAPE, SQUEEZE or EXPAND_DIMS output shares its
   input's buffer (an alias: the same bytes under another shape, no copy). An op whose kernel
   can run in place (IN_PLACE_KINDS: it reads element k of an input before writing element k
   of the output, and never reads element k again) writes its output over an input of the same
   shape and dtype when that input dies at this op: the output joins the input's buffer. A
   CONCATENATION whose inputs are contiguous byte ranges of its output (every dimension before
   the axis is 1), of its dtype and quantization, each read only by it, is done by its
   producers: each input is a view at its byte offset in the output's buffer, and the op emits
   no code (`concat_slices`; the plan is made with and without this, and the smaller kept). Each
   op that needs scratch gets a scratch buffer of its own, a planned tensor like any other.
2. Lifetimes, in steps of the execution order: a buffer lives from the step that produces it
   (graph inputs: step 0) to the last step that reads it (graph outputs: one past the last
   step, so they survive `invoke`). Aliased and in-place tensors merge their lifetimes. A scratch
   buffer lives only during its op's step. Two buffers conflict when their lifetimes share a
   step: they must not share a byte.

3. Tiling (tiling.py, `tiling` argument): a chain of ops run in stripes is seen as one step,
   its last op's: its external inputs are read and its output written there, its intermediate
   tensors are no buffers at all, one "stripes of ops a..b" buffer holds their stripe slots and
   one scratch buffer (the largest its ops need) serves all its calls. Where the chain's input
   dies in it, its output may share the input's buffer, starting `lag` bytes before it (a view
   at offset lag); the plan is made with and without that sharing, and the smaller kept.

Placement (one pool)
--------------------
Several algorithms run and the plan keeps the smallest result (ties: the first in this list):

- greedy by size (TFLite Micro's GreedyMemoryPlanner): buffers in decreasing size, ties by
  earlier first use; each takes the lowest 16-byte-aligned offset at which it overlaps no
  already placed conflicting buffer (first fit);
- greedy by size, best fit: the same order, each buffer in the smallest free gap that holds it;
- greedy by conflicts: buffers by decreasing total size of the buffers they conflict with;
- greedy by breadth: steps by decreasing breadth (bytes live at the step), and within a step
  its buffers by decreasing size (Pisarchyk and Lee, "Efficient memory management for deep
  neural net inference", 2020);
- greedy by lifetime: longest-lived buffers first, so short ones fill the holes;
- exact (for at most EXACT_MAX_BUFFERS buffers): branch and bound over placements in
  increasing offset, every buffer at offset 0 or at the aligned end of a conflicting buffer
  below it. Every optimal plan can be pushed down into that form, so the search is complete;
  it starts from the best greedy result, prunes any branch that already reaches it, and stops
  at the lower bound. If it runs out of its node budget it is not exact and says so.

Pools
-----
With several pools (`--pool NAME:SIZE[:fast|normal|slow]`, see pools.py) buffers are ranked by
uses per byte (the most used small buffers first) and each goes to the first pool, fast ones
first, where it still fits (the pool placed by first fit in that ranking order); each pool is
then re-placed by all the algorithms above and keeps its best. A buffer that fits in no pool
is an error naming the pool, by how many bytes, and the buffers live at that pool's peak.

Bounds and checks
-----------------
`lower_bound` is the whole-tensor liveness bound of the order, without in-place: the largest
sum of buffer sizes live at any one step; no placement of whole tensors in that order can use
less (in-place execution and tiling can). `file_lower_bound` is the same for TFLite's own
order. Pool sizes are rounded up to 16 bytes. `verify_plan` re-checks the result (alignment, pool capacity, no two
simultaneously live buffers of one pool sharing a byte) after every run and raises PlanningError
on any violation; there is no silent fallback and no slack. With `guard` > 0 (tests), every
buffer is followed by `guard` canary bytes and each pool starts and ends with `guard` of them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .errors import PlanningError
from .ir import Activation, ConcatenationOptions, Graph, Op, OpKind, Tensor
from .pools import DEFAULT_POOLS, PoolSpec
from .tiling import Tiling, add_tiling_buffers

ALIGNMENT = 16
EXACT_MAX_BUFFERS = 10
EXACT_NODE_BUDGET = 200_000

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

ScratchBytes = Callable[[Op], int]


def align_up(value: int, alignment: int = ALIGNMENT) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass(eq=False)
class Buffer:
    """A range of pool bytes that one or more aliased tensors (or one op's scratch) occupy."""

    name: str
    size: int
    first: int
    last: int
    tensors: list[Tensor] = field(default_factory=list)
    scratch_of: Op | None = None
    offset: int = -1
    pool: str = DEFAULT_POOLS[0].name
    uses: int = 0  # ops that read or write it
    in_place_ops: list[int] = field(default_factory=list)  # op indices writing over it in place
    pad: int = 0  # guard bytes planned after the buffer
    view_offsets: dict[int, int] = field(default_factory=dict)  # id(tensor) -> bytes into the buffer
    concat_ops: list[int] = field(default_factory=list)  # concatenations whose inputs are views here

    @property
    def extent(self) -> int:
        return self.size + self.pad

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last

    def overlaps_in_space(self, other: Buffer) -> bool:
        return self.offset < other.offset + other.extent and other.offset < self.offset + self.extent


@dataclass
class PoolPlan:
    """One pool's result: the bytes it needs, how they were found, and its canary ranges."""

    spec: PoolSpec
    size: int = 0
    algorithm: str = "empty"
    exact: bool = True
    guards: list[tuple[int, int]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass
class Plan:
    buffers: list[Buffer]
    arena_size: int  # total bytes over every pool
    lower_bound: int  # whole-tensor liveness bound of the chosen order
    steps: int
    pools: list[PoolPlan] = field(default_factory=list)
    file_lower_bound: int = 0  # the same bound for TFLite's order
    guard: int = 0
    schedule_exact: bool = False  # set by the driver: no order has a smaller whole-tensor bound
    tiling: Tiling | None = None  # chains run in stripes (tiling.py), or None

    def __post_init__(self) -> None:
        if not self.pools:
            self.pools = [PoolPlan(DEFAULT_POOLS[0], self.arena_size)]

    @property
    def gap_percent(self) -> float:
        """How far the plan is above the whole-tensor bound of its order (negative: below)."""
        if self.lower_bound == 0:
            return 0.0
        return round(100.0 * (self.arena_size - self.lower_bound) / self.lower_bound, 2)

    def buffer_of(self, tensor: Tensor) -> Buffer:
        for buffer in self.buffers:
            if any(t is tensor for t in buffer.tensors):
                return buffer
        raise KeyError(tensor.name)

    def offset_of(self, tensor: Tensor) -> int:
        buffer = self.buffer_of(tensor)
        return buffer.offset + buffer.view_offsets.get(id(tensor), 0)

    def is_elided(self, op: Op) -> bool:
        """No code for the op: an alias of its input, or a concatenation whose inputs were
        written straight into their slices of its output."""
        out = op.outputs[0] if op.outputs else None
        if out is None or not op.inputs or any(t is None for t in op.inputs):
            return False
        if op.kind in ALIAS_KINDS:
            return self.buffer_of(op.inputs[0]) is self.buffer_of(out)  # type: ignore[arg-type]
        return op.index in self.buffer_of(out).concat_ops

    def pool_of(self, buffer: Buffer) -> PoolPlan:
        for pool in self.pools:
            if pool.name == buffer.pool:
                return pool
        raise KeyError(buffer.pool)

    def scratch_of(self, op: Op) -> Buffer | None:
        for buffer in self.buffers:
            if buffer.scratch_of is op:
                return buffer
        return None


# --- buffers and lifetimes ---------------------------------------------------------------


def _squeezed(shape: Sequence[int]) -> tuple[int, ...]:
    dims = list(shape)
    while dims and dims[0] == 1:
        dims.pop(0)
    return tuple(dims)


def in_place_candidate(op: Op, dead: Callable[[Tensor], bool]) -> Tensor | None:
    """The input `op` may overwrite with its output, if any: same shape and dtype, dying here."""
    if op.kind not in IN_PLACE_KINDS or len(op.outputs) != 1:
        return None
    out = op.outputs[0]
    for tensor in op.inputs:
        if tensor is None or tensor.is_constant:
            continue
        if tensor.dtype == out.dtype and _squeezed(tensor.shape) == _squeezed(out.shape) and dead(tensor):
            return tensor
    return None


def concat_slices(op: Op, can_view: Callable[[Tensor], bool]) -> list[tuple[Tensor, int]] | None:
    """(input, byte offset in the output) for a concatenation whose producers can write their
    outputs straight into the output: every dimension before the axis is 1 (so each input is
    one contiguous byte range of the output), no activation, and every input distinct, of the
    output's dtype and quantization (the copy would change no byte) and `can_view`."""
    options = op.options
    if op.kind is not OpKind.CONCATENATION or len(op.outputs) != 1 or not isinstance(options, ConcatenationOptions):
        return None
    out = op.outputs[0]
    rank = len(out.shape)
    axis = options.axis + rank if options.axis < 0 else options.axis
    if options.activation is not Activation.NONE or not 0 <= axis < rank or any(d != 1 for d in out.shape[:axis]):
        return None
    slices: list[tuple[Tensor, int]] = []
    start = 0
    for tensor in op.inputs:
        if (tensor is None or tensor.is_constant or any(t is tensor for t, _ in slices) or tensor.dtype != out.dtype
                or tensor.quant != out.quant or not can_view(tensor)):
            return None
        slices.append((tensor, start))
        start += tensor.nbytes
    return slices if start == out.nbytes else None


def collect_buffers(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes,
                    in_place: bool = True, concat_in_place: bool = False,
                    tiling: Tiling | None = None) -> list[Buffer]:
    """Buffers with lifetimes for the given execution order (a tiled chain: tiling.py)."""
    end = len(order)
    tiling = tiling or Tiling()
    last_use: dict[int, int] = {}
    readers: dict[int, int] = {}
    for step, op in enumerate(order):
        for used in tiling.reads(op):
            if used is not None and not used.is_constant:
                last_use[id(used)] = step
                readers[id(used)] = readers.get(id(used), 0) + 1
    for tensor in graph.outputs:
        last_use[id(tensor)] = end
    produced = {id(t) for op in order for t in op.outputs}

    parent: dict[int, Tensor] = {}
    members_last: dict[int, int] = {}  # id(root) -> last use over the tensors merged into it
    in_place_at: dict[int, list[int]] = {}
    view_delta: dict[int, int] = {}
    concat_at: dict[int, list[int]] = {}

    def read_only_at(tensor: Tensor, step: int) -> bool:
        return id(tensor) in produced and readers.get(id(tensor)) == 1 and last_use.get(id(tensor)) == step

    # Tensors a concatenation may take as views: their producers do not run in place, so that
    # they stay buffers of their own until the concatenation claims them.
    reserved: set[int] = set()
    for step, op in enumerate(order if concat_in_place else []):
        for tensor, _ in concat_slices(op, functools.partial(read_only_at, step=step)) or []:
            reserved.add(id(tensor))

    def root(tensor: Tensor) -> Tensor:
        while id(tensor) in parent:
            tensor = parent[id(tensor)]
        return tensor

    def offset_in_root(tensor: Tensor) -> int:
        """Bytes from the root's start: views of views (nested concatenations) add up."""
        start = 0
        while id(tensor) in parent:
            start += view_delta.get(id(tensor), 0)
            tensor = parent[id(tensor)]
        return start

    def join(tensor: Tensor, into: Tensor) -> None:
        base = root(into)
        parent[id(tensor)] = base
        members_last[id(base)] = max(members_last.get(id(base), last_use.get(id(base), -1)),
                                     last_use.get(id(tensor), -1))

    for step, op in enumerate(order):
        source = op.inputs[0] if op.inputs else None
        if tiling.chain_of(op) is not None:
            continue
        if op.kind in ALIAS_KINDS and source is not None and not source.is_constant:
            join(op.outputs[0], source)
            continue
        if not in_place:
            continue
        if concat_in_place:

            def only_here(tensor: Tensor, step: int = step) -> bool:
                return id(tensor) not in parent and read_only_at(tensor, step)

            slices = concat_slices(op, only_here)
            if slices is not None:
                for tensor, start in slices:
                    join(tensor, op.outputs[0])
                    view_delta[id(tensor)] = start
                concat_at.setdefault(id(op.outputs[0]), []).append(op.index)
                continue

        def dead(tensor: Tensor, step: int = step) -> bool:
            base = root(tensor)
            return members_last.get(id(base), last_use.get(id(base), -1)) == step and base.nbytes == tensor.nbytes

        overwritten = in_place_candidate(op, dead)
        if overwritten is not None and id(op.outputs[0]) not in reserved:
            join(op.outputs[0], overwritten)
            in_place_at.setdefault(id(root(overwritten)), []).append(op.index)

    by_root: dict[int, Buffer] = {}
    buffers: list[Buffer] = []
    touched: set[tuple[int, int]] = set()

    def touch(tensor: Tensor, step: int) -> None:
        base = root(tensor)
        buffer = by_root.get(id(base))
        if buffer is None:
            buffer = Buffer(name=base.name, size=base.nbytes, first=step, last=step,
                            in_place_ops=in_place_at.get(id(base), []))
            by_root[id(base)] = buffer
            buffers.append(buffer)
        buffer.first = min(buffer.first, step)
        buffer.last = max(buffer.last, step)
        if not any(t is tensor for t in buffer.tensors):
            buffer.tensors.append(tensor)
            buffer.concat_ops.extend(concat_at.get(id(tensor), []))  # nested ones too
            start = offset_in_root(tensor)
            if start:
                buffer.view_offsets[id(tensor)] = start
        if (id(buffer), step) not in touched and step < end:
            touched.add((id(buffer), step))
            buffer.uses += 1

    for tensor in graph.inputs:
        touch(tensor, 0)
    for step, op in enumerate(order):
        for used in [*tiling.reads(op), *tiling.writes(op)]:
            if used is not None and not used.is_constant:
                touch(used, step)
        at, size = tiling.scratch(op, step, scratch_bytes)
        if size > 0:
            buffers.append(Buffer(name=f"scratch of op {op.index}", size=size, first=at, last=at,
                                  scratch_of=op, uses=1))
    for tensor in graph.outputs:
        touch(tensor, end)
    return add_tiling_buffers(tiling, buffers)


def live_by_step(buffers: Sequence[Buffer]) -> list[int]:
    """Bytes live at each step, 0 .. the last step of any buffer."""
    if not buffers:
        return []
    totals = [0] * (max(b.last for b in buffers) + 1)
    for buffer in buffers:
        for step in range(buffer.first, buffer.last + 1):
            totals[step] += buffer.size
    return totals


def lower_bound(buffers: Sequence[Buffer]) -> int:
    """The largest total size of buffers live at one step."""
    return max(live_by_step(buffers), default=0)


def peak_step(buffers: Sequence[Buffer]) -> int:
    totals = live_by_step(buffers)
    return totals.index(max(totals)) if totals else 0


def aligned_bound(buffers: Sequence[Buffer]) -> int:
    """No aligned placement can be smaller: at each step, live buffers each take aligned room."""
    if not buffers:
        return 0
    totals = [0] * (max(b.last for b in buffers) + 1)
    for buffer in buffers:
        for step in range(buffer.first, buffer.last + 1):
            totals[step] += align_up(buffer.extent)
    return max(totals)


# --- placement in one pool ---------------------------------------------------------------

Offsets = list[int]


def _conflicts(buffers: Sequence[Buffer]) -> list[list[int]]:
    result: list[list[int]] = [[] for _ in buffers]
    for i, a in enumerate(buffers):
        for j in range(i + 1, len(buffers)):
            if a.overlaps_in_time(buffers[j]):
                result[i].append(j)
                result[j].append(i)
    return result


def _free_offset(extent: int, taken: list[tuple[int, int]], best_fit: bool) -> int:
    """Lowest (first fit) or tightest (best fit) aligned offset clear of the taken ranges."""
    offset, best, best_gap = 0, -1, -1
    for start, end in sorted(taken):
        if offset + extent <= start:
            gap = start - offset
            if not best_fit:
                return offset
            if best < 0 or gap < best_gap:
                best, best_gap = offset, gap
        offset = max(offset, align_up(end))
    return best if best >= 0 else offset


def _place_in_order(buffers: Sequence[Buffer], conflicts: list[list[int]], order: Sequence[int],
                    best_fit: bool = False) -> Offsets:
    offsets = [-1] * len(buffers)
    for i in order:
        taken = [(offsets[j], offsets[j] + buffers[j].extent) for j in conflicts[i] if offsets[j] >= 0]
        offsets[i] = _free_offset(buffers[i].extent, taken, best_fit)
    return offsets


def _by_size(buffers: Sequence[Buffer]) -> list[int]:
    return sorted(range(len(buffers)), key=lambda i: (-buffers[i].extent, buffers[i].first, i))


def _by_conflicts(buffers: Sequence[Buffer], conflicts: list[list[int]]) -> list[int]:
    weight = [sum(buffers[j].extent for j in conflicts[i]) for i in range(len(buffers))]
    return sorted(range(len(buffers)), key=lambda i: (-weight[i], -buffers[i].extent, i))


def _by_breadth(buffers: Sequence[Buffer]) -> list[int]:
    steps = max((b.last for b in buffers), default=-1) + 1
    breadth = [0] * steps
    live: list[list[int]] = [[] for _ in range(steps)]
    for i, b in enumerate(buffers):
        for step in range(b.first, b.last + 1):
            breadth[step] += b.extent
            live[step].append(i)
    order: list[int] = []
    seen: set[int] = set()
    for step in sorted(range(steps), key=lambda s: (-breadth[s], s)):
        for i in sorted(live[step], key=lambda i: (-buffers[i].extent, i)):
            if i not in seen:
                seen.add(i)
                order.append(i)
    return order


def _by_lifetime(buffers: Sequence[Buffer]) -> list[int]:
    return sorted(range(len(buffers)), key=lambda i: (-(buffers[i].last - buffers[i].first), -buffers[i].extent, i))


def _height(buffers: Sequence[Buffer], offsets: Offsets) -> int:
    return align_up(max((o + b.extent for o, b in zip(offsets, buffers)), default=0))


def place_exact(buffers: Sequence[Buffer], conflicts: list[list[int]], upper: int,
                budget: int = EXACT_NODE_BUDGET) -> tuple[Offsets | None, bool]:
    """Branch and bound: the least height below `upper`, or None; and whether the search ended."""
    n = len(buffers)
    floor = align_up(aligned_bound(buffers))
    offsets = [-1] * n
    best: list[Offsets | None] = [None]
    best_height = [upper]
    nodes = [0]

    def fits(i: int, offset: int) -> bool:
        end = offset + buffers[i].extent
        return all(offsets[j] < 0 or end <= offsets[j] or offsets[j] + buffers[j].extent <= offset
                   for j in conflicts[i])

    def search(placed: int, last_offset: int, last_index: int, height: int) -> bool:
        """Returns True to stop (bound reached or budget spent)."""
        if placed == n:
            if height < best_height[0]:
                best_height[0], best[0] = height, list(offsets)
            return best_height[0] <= floor
        nodes[0] += 1
        if nodes[0] > budget:
            return True
        moves = []
        for i in range(n):
            if offsets[i] >= 0:
                continue
            starts = {0} | {align_up(offsets[j] + buffers[j].extent) for j in conflicts[i] if offsets[j] >= 0}
            moves += [(offset, i) for offset in starts if (offset, i) > (last_offset, last_index)]
        unplaced = sorted((buffers[i].extent for i in range(n) if offsets[i] < 0), reverse=True)
        for offset, i in sorted(moves):
            new_height = max(height, align_up(offset + buffers[i].extent))
            # Every buffer still to place goes at this offset or above.
            rest = unplaced[1] if unplaced[0] == buffers[i].extent and len(unplaced) > 1 else unplaced[0]
            if len(unplaced) > 1:
                new_bound = max(new_height, align_up(offset + rest))
            else:
                new_bound = new_height
            if new_bound >= best_height[0] or not fits(i, offset):
                continue
            offsets[i] = offset
            stop = search(placed + 1, offset, i, new_height)
            offsets[i] = -1
            if stop:
                return True
        return False

    stopped = search(0, 0, -1, 0)
    finished = not stopped or best_height[0] <= floor
    return best[0], finished


def place_best(buffers: Sequence[Buffer], extra: Offsets | None = None,
               exact: bool = True) -> tuple[Offsets, str, bool]:
    """Run every algorithm; (offsets, name of the winner, whether it is proven optimal)."""
    if not buffers:
        return [], "empty", True
    conflicts = _conflicts(buffers)
    candidates: list[tuple[str, Offsets]] = [
        ("greedy by size", _place_in_order(buffers, conflicts, _by_size(buffers))),
        ("greedy by size, best fit", _place_in_order(buffers, conflicts, _by_size(buffers), best_fit=True)),
        ("greedy by conflicts", _place_in_order(buffers, conflicts, _by_conflicts(buffers, conflicts))),
        ("greedy by breadth", _place_in_order(buffers, conflicts, _by_breadth(buffers))),
        ("greedy by lifetime", _place_in_order(buffers, conflicts, _by_lifetime(buffers))),
    ]
    if extra is not None:
        candidates.append(("first fit by uses", extra))
    name, offsets = min(candidates, key=lambda item: _height(buffers, item[1]))
    height = _height(buffers, offsets)
    optimal = height <= align_up(aligned_bound(buffers))
    if exact and not optimal and len(buffers) <= EXACT_MAX_BUFFERS:
        exact_offsets, finished = place_exact(buffers, conflicts, height)
        if exact_offsets is not None:
            name, offsets = "exact (branch and bound)", exact_offsets
        optimal = finished
    return offsets, name, optimal


# --- pools ---------------------------------------------------------------------------------


def _short(name: str, limit: int = 48) -> str:
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _live_names(buffers: Sequence[Buffer], limit: int = 6) -> str:
    step = peak_step(buffers)
    live = sorted((b for b in buffers if b.first <= step <= b.last), key=lambda b: -b.size)
    names = ", ".join(f"'{_short(b.name)}' ({b.size})" for b in live[:limit])
    more = f" and {len(live) - limit} more" if len(live) > limit else ""
    return f"live at its peak (step {step}): {names}{more}"


def _does_not_fit(pool: PoolSpec, buffers: Sequence[Buffer], needed: int,
                  buffer: Buffer | None = None) -> PlanningError:
    assert pool.capacity is not None
    which = f" ('{_short(buffer.name)}', {buffer.size} bytes, fits in no pool)" if buffer is not None else ""
    return PlanningError(
        f"the model does not fit pool {pool.name}{which}: it needs {needed} bytes of its {pool.capacity} "
        f"({needed - pool.capacity} bytes over); {_live_names(buffers)}"
    )


def assign_pools(buffers: Sequence[Buffer], pools: Sequence[PoolSpec]) -> dict[str, Offsets]:
    """Each buffer to a pool, ranked by uses per byte; if that fails, ranked by size instead."""
    by_uses = sorted(range(len(buffers)), key=lambda i: (-buffers[i].uses / max(1, buffers[i].extent),
                                                         buffers[i].extent, i))
    try:
        return _assign_in_rank(buffers, pools, by_uses)
    except PlanningError:
        return _assign_in_rank(buffers, pools, _by_size(buffers))


def _admit(buffers: Sequence[Buffer], pool: PoolSpec, placed: dict[int, int], i: int) -> dict[int, int] | None:
    """The pool's offsets with buffer i added, if it fits: first fit, else every algorithm."""
    buffer = buffers[i]
    taken = [(o, o + buffers[j].extent) for j, o in placed.items() if buffers[j].overlaps_in_time(buffer)]
    offset = _free_offset(buffer.extent, taken, best_fit=False)
    if pool.capacity is None or align_up(offset + buffer.extent) <= pool.capacity:
        return {**placed, i: offset}
    members = sorted([*placed, i])
    best, _, _ = place_best([buffers[j] for j in members], exact=False)
    if _height([buffers[j] for j in members], best) <= pool.capacity:
        return dict(zip(members, best))
    return None


def _assign_in_rank(buffers: Sequence[Buffer], pools: Sequence[PoolSpec], ranked: Sequence[int]) -> dict[str, Offsets]:
    """Give each buffer, in rank order, the first pool (fast pools first) where it still fits.

    When it fits nowhere, one repair is tried: move one buffer that conflicts with it out of a
    pool into another pool where that one fits, and put the new buffer in the freed pool.
    """
    by_speed = sorted(pools, key=lambda p: p.rank)
    offsets: dict[str, dict[int, int]] = {p.name: {} for p in pools}
    for i in ranked:
        if _admit_anywhere(buffers, by_speed, offsets, i) or _admit_by_moving_one(buffers, by_speed, offsets, i):
            continue
        largest = max(pools, key=lambda p: p.capacity or 0)
        members = sorted([*offsets[largest.name], i])
        mine = [buffers[j] for j in members]
        needed = _height(mine, place_best(mine)[0])
        raise _does_not_fit(largest, mine, needed, buffers[i])
    for name, placed in offsets.items():
        for j in placed:
            buffers[j].pool = name
    return {name: [placed[j] for j in sorted(placed)] for name, placed in offsets.items()}


def _admit_anywhere(buffers: Sequence[Buffer], by_speed: Sequence[PoolSpec],
                    offsets: dict[str, dict[int, int]], i: int, skip: str = "") -> bool:
    for pool in by_speed:
        if pool.name == skip:
            continue
        admitted = _admit(buffers, pool, offsets[pool.name], i)
        if admitted is not None:
            offsets[pool.name] = admitted
            return True
    return False


def _admit_by_moving_one(buffers: Sequence[Buffer], by_speed: Sequence[PoolSpec],
                         offsets: dict[str, dict[int, int]], i: int) -> bool:
    for pool in by_speed:
        for j in sorted(offsets[pool.name]):
            if not buffers[j].overlaps_in_time(buffers[i]):
                continue
            without = {k: o for k, o in offsets[pool.name].items() if k != j}
            admitted = _admit(buffers, pool, without, i)
            if admitted is None:
                continue
            trial = {**offsets, pool.name: admitted}
            if _admit_anywhere(buffers, by_speed, trial, j, skip=pool.name):
                offsets.update(trial)
                return True
    return False


def _place_pools(buffers: list[Buffer], pools: Sequence[PoolSpec], guard: int) -> list[PoolPlan]:
    for buffer in buffers:
        buffer.pad = guard
        buffer.pool = pools[0].name
    # Pools hold their end canaries too: assign against what is left of each capacity.
    usable = [PoolSpec(p.name, None if p.capacity is None else p.capacity - 2 * guard, p.speed) for p in pools]
    admitted = assign_pools(buffers, usable) if len(pools) > 1 else {pools[0].name: None}
    pool_plans = []
    for spec in pools:
        mine = [b for b in buffers if b.pool == spec.name]
        extra = admitted.get(spec.name)
        offsets, algorithm, exact = place_best(mine, extra if extra is not None and len(extra) == len(mine) else None)
        for buffer, offset in zip(mine, offsets):
            buffer.offset = offset + guard
        size = _height(mine, offsets)
        pool = PoolPlan(spec, size, algorithm, exact)
        if guard and mine:
            pool.size = guard + size + guard
            pool.guards = [(0, guard), (pool.size - guard, pool.size)]
        if spec.capacity is not None and pool.size > spec.capacity:
            raise _does_not_fit(spec, mine, pool.size)
        pool_plans.append(pool)
    return pool_plans


def plan_memory(graph: Graph, order: list[Op], scratch_bytes: ScratchBytes,
                pools: Sequence[PoolSpec] = DEFAULT_POOLS, guard: int = 0, in_place: bool = True,
                tiling: Tiling | None = None) -> Plan:
    """Buffers, lifetimes, pools and offsets for `order`; checked by verify_plan before return.

    Concatenation in place makes a concatenation's output live from its first input's producer
    on, which can cost more than it saves: the plan is made with and without it, and the
    smaller one kept (ties: without).
    """
    if guard % ALIGNMENT:
        raise PlanningError(f"guard of {guard} bytes is not a multiple of {ALIGNMENT}")
    pools = list(pools) or list(DEFAULT_POOLS)
    tilings = tiling.variants() if tiling is not None else [None]
    variants = [collect_buffers(graph, order, scratch_bytes, in_place=in_place, tiling=t) for t in tilings]
    if in_place and any(op.kind is OpKind.CONCATENATION for op in order):
        views = collect_buffers(graph, order, scratch_bytes, in_place=True, concat_in_place=True,
                                tiling=tilings[0])
        if any(b.concat_ops for b in views):
            variants.append(views)
    placed: list[tuple[int, int, list[Buffer], list[PoolPlan]]] = []
    failure: PlanningError | None = None
    for number, candidate in enumerate(variants):
        try:
            result = _place_pools(candidate, pools, guard)
        except PlanningError as error:
            failure = failure or error
            continue
        placed.append((sum(p.size for p in result), number, candidate, result))
    if not placed:
        assert failure is not None
        raise failure
    _, _, buffers, pool_plans = min(placed, key=lambda item: (item[0], item[1]))
    whole = collect_buffers(graph, order, scratch_bytes, in_place=False)
    file_whole = whole if order == list(graph.ops) else collect_buffers(graph, list(graph.ops), scratch_bytes,
                                                                        in_place=False)
    plan = Plan(buffers=buffers, arena_size=sum(p.size for p in pool_plans), lower_bound=lower_bound(whole),
                steps=len(order), pools=pool_plans, file_lower_bound=lower_bound(file_whole), guard=guard,
                tiling=tiling if tiling is not None and tiling.chains else None)
    verify_plan(plan)
    return plan


def verify_plan(plan: Plan) -> None:
    """Alignment, pool capacity, and no two buffers of a pool live at one step sharing a byte."""
    sizes = {p.name: p.size for p in plan.pools}
    for pool in plan.pools:
        if pool.size % ALIGNMENT:
            raise PlanningError(f"pool {pool.name} of {pool.size} bytes is not a multiple of {ALIGNMENT}")
        if pool.spec.capacity is not None and pool.size > pool.spec.capacity:
            raise PlanningError(f"pool {pool.name} uses {pool.size} bytes, over its capacity {pool.spec.capacity}")
    for buffer in plan.buffers:
        if buffer.pool not in sizes:
            raise PlanningError(f"buffer '{buffer.name}' is in pool '{buffer.pool}', which the plan does not have")
        if buffer.offset < 0 or buffer.offset % ALIGNMENT:
            raise PlanningError(f"buffer '{buffer.name}' at offset {buffer.offset} is not {ALIGNMENT}-byte aligned")
        if plan.guard and buffer.offset + buffer.extent > sizes[buffer.pool] - plan.guard:
            raise PlanningError(f"buffer '{buffer.name}' reaches into the end canary of pool {buffer.pool}")
        if buffer.offset + buffer.size > sizes[buffer.pool]:
            raise PlanningError(
                f"buffer '{buffer.name}' ends at {buffer.offset + buffer.size}, past the {sizes[buffer.pool]} "
                f"bytes of pool {buffer.pool}"
            )
        for tensor in buffer.tensors:
            start = buffer.view_offsets.get(id(tensor), 0)
            if start < 0 or start + tensor.nbytes > buffer.size:
                raise PlanningError(f"tensor '{tensor.name}' at {start} in buffer '{buffer.name}' runs past its "
                                    f"{buffer.size} bytes")
        if plan.guard and buffer.offset < plan.guard:
            raise PlanningError(f"buffer '{buffer.name}' reaches into the start canary of pool {buffer.pool}")
    ordered = sorted(plan.buffers, key=lambda b: (b.pool, b.offset))
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if b.pool != a.pool or b.offset >= a.offset + a.extent:
                break
            if a.size and b.size and a.overlaps_in_time(b) and a.overlaps_in_space(b):
                raise PlanningError(
                    f"buffers '{a.name}' [{a.offset}, {a.offset + a.size}) and '{b.name}' "
                    f"[{b.offset}, {b.offset + b.size}) overlap while both are live"
                )


def plan_report(plan: Plan) -> dict[str, object]:
    """The plan's numbers for report.json and `mcugen plan --json`."""
    return {
        "arena_bytes": plan.arena_size,
        "lower_bound_bytes": plan.lower_bound,
        "lower_bound_tflite_order_bytes": plan.file_lower_bound,
        "gap_percent": plan.gap_percent,
        "schedule_exact": plan.schedule_exact,
        "pools": [
            {"name": p.name, "bytes": p.size, "capacity": p.spec.capacity, "speed": p.spec.speed,
             "algorithm": p.algorithm, "optimal": p.exact}
            for p in plan.pools
        ],
        "buffers": [
            {"name": b.name, "bytes": b.size, "first": b.first, "last": b.last, "pool": b.pool,
             "offset": b.offset, "scratch": b.scratch_of is not None,
             "tensors": [t.name for t in b.tensors], "in_place_ops": list(b.in_place_ops),
             "concat_ops": list(b.concat_ops)}
            for b in plan.buffers
        ],
    }
