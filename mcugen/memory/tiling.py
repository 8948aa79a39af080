"""Tiling below the whole-tensor bound: chains of spatial ops run in horizontal stripes.

The idea is Vela's cascading and MCUNetV2's patch-based inference. A chain is a run of ops,
consecutive in the execution order, each reading the previous one's output row by row:
CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D (any stride, dilation, SAME/VALID);
RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (output row r reads the input rows of its row
table, which never decrease); and row-wise ops, which read the rows they write: a residual ADD
or MUL whose other operand is a whole tensor made before the chain, or one row broadcast over
all rows (squeeze-excitation's scales, read whole by every stripe), an element-wise activation,
a concatenation along channels with whole tensors made before the chain (U-Net's skips); on the
NPU only the residual ADD and MUL (tiling_search.ROW_WISE_ENGINES). The chain's input and output
are whole tensors; its intermediate tensors never exist whole.

Stripes
-------
The last op's output rows are cut into N stripes [r0, r1). Walking the chain backwards, an op
whose output rows [o0, o1) are needed reads input rows [i0, i1) with
i0 = max(0, o0 * stride - pad_top) and i1 = min(H_in, (o1 - 1) * stride - pad_top +
(k - 1) * dilation + 1); an ADD reads the rows it writes. Each call of a kernel on a stripe
sees a sub-tensor: its input starts at row i0 (a pointer into a row-major NHWC buffer), has
i1 - i0 rows, its output o1 - o0 rows, and its top padding is pad_top - o0 * stride + i0 (>= 0);
a resize reads [table(o0), table(o1 - 1) + 1) and its call gets its table's rows [o0, o1), each
moved up by i0 (codegen/stripes.py), so it reads the same input pixels with the same weights.
Taps below the sub-tensor's last row are skipped by the kernel as they are below the whole
tensor's, because i1 is the last row any tap of the stripe reaches (or H_in): the set of taps
inside the input is the same for every output element as in the untiled call, so every sum,
count and maximum is the same and the result is bit-exact. Rows needed by two stripes (the
halos) are computed twice; `extra_macs` counts that cost.

Memory
------
In stripe k, op j writes its rows of intermediate j into a stripe slot of
max_k(rows) * row bytes. Slot j is dead once op j + 1 has run, so the slots ping-pong inside one
region per chain: even slots at its start, odd slots at its end, the region being the largest
sum of two neighbouring slots. The planner sees the whole chain at the step of its last op
(`Tiling` is a liveness.StepView): the region and the chain's kernel scratch live there, the
chain's external inputs are read there and its output is written there.

Output over input: if the chain's input dies in the chain, the output may share its bytes,
starting `lag` bytes before it. The rule: no write may reach a byte that a read still to come
needs. In a chain of several ops, stripe k's output rows [r0, r1) are written by its last op,
after every call of that stripe that reads the input has ended (the CPU runs the calls one after
the other; the NPU's stream is in order and each operation waits for the one before, BLOCKDEP 0).
The last op's own call may read the input too (a chain of one op, as npu/chain_room.py makes; a
residual ADD's operand; U-Net's skip, read by the CONCATENATION that ends its level): a call may
write and read in any order within itself, so its own reads count, with one exception: an op
that could run in place over the input (liveness.in_place_candidate: an ADD, MUL or activation
of the input's shape and dtype) reads element e before it writes element e, at the same or (lag
>= 0) a lower address, and never reads it again. A CONCATENATION is no such op: its output rows
are wider than the skip's and it copies input after input, so the first input's rows of a stripe
would land on skip rows it has still to copy (model_unet's 487 wrong outputs, issue 13). On
the NPU the exception holds only at lag 0: an operation's blocks need not run in address order,
so an element-wise op may write over its own input at that element's address, never below it;
where the other reads ask for a lag, the op's own reads count.
Later stripes read input rows from need(k) on, so
lag = max(0, max_k(r1 * out_row_bytes - need(k) * in_row_bytes)) keeps every write below every
byte still to be read (need(k) counting stripe k's own reads by the last op, but as above). A
chain whose stripes run bottom-up (`bottom_up`, the last rows first) writes above what is still
to be read: its output starts -lag bytes after its input (lag <= 0), and every own read counts.
A chain's input may itself be the output of an earlier chain that shared its input's buffer:
the buffer then grows by the new lag, and the tensors in it that earlier chains consumed are dead.
The planner makes plans with and without this sharing (`Tiling.variants`) and keeps the smaller.

Which chains to tile is chosen in tiling_search.py.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import field
from typing import Any, NamedTuple

from ..ir import Conv2DOptions, DepthwiseConv2DOptions, DType, Op, OpKind, Pool2DOptions, Tensor
from ..ops.common import conv_padding
from ..ops.registry import op_def, op_macs
from ..records import dataclass
from .liveness import Buffer, ScratchBytes, in_place_candidate

# The planner's alignment (placement.ALIGNMENT): stripe slots and the output lag are whole
# aligned units. Tiling imports liveness only, so it keeps its own copy; a test checks they agree.
ALIGNMENT = 16


def _align(value: int) -> int:
    return (value + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


class OpRows(NamedTuple):
    """One kernel call of one op in one stripe: rows of its output and of its (flow) input, in
    whole-tensor coordinates, and the zero rows above the sub-tensor's first row. (A tuple: the
    tiling search makes tens of thousands of them.)"""

    out_start: int
    out_stop: int
    in_start: int
    in_stop: int
    pad_top: int

    @property
    def out_rows(self) -> int:
        return self.out_stop - self.out_start

    @property
    def in_rows(self) -> int:
        return self.in_stop - self.in_start


@dataclass(frozen=True)
class Stripe:
    """One stripe: each op's call (None: it computes no new row), the rows of each
    intermediate its slot holds while the stripe runs, and, for a rolling chain, the rows kept
    from the stripe before: (first kept row's offset in the slot, rows kept), moved to the slot's
    start before the stripe's calls."""

    calls: tuple[OpRows | None, ...]
    held: tuple[tuple[int, int], ...]
    kept: tuple[tuple[int, int] | None, ...]


@dataclass
class Chain:
    """A tiled run of ops, run stripe after stripe."""

    ops: list[Op]
    first_step: int
    last_step: int
    stripes: list[Stripe]
    rolling: bool  # halo rows kept in the slots (no recompute) or recomputed per stripe
    slot_offsets: list[int]  # byte offset of intermediate j's slot in the region
    region_bytes: int
    extra_macs: int
    lag: int | None  # output may start this many bytes before the input (< 0: after); None: may not
    bottom_up: bool = False  # stripes run from the last rows up (npu/chain_room.py's chains of one op)

    @property
    def input(self) -> Tensor:
        x = self.ops[0].inputs[0]
        assert x is not None
        return x

    @property
    def output(self) -> Tensor:
        return self.ops[-1].outputs[0]

    @property
    def intermediates(self) -> list[Tensor]:
        return [op.outputs[0] for op in self.ops[:-1]]

    @property
    def region_name(self) -> str:
        return f"stripes of ops {self.ops[0].index}..{self.ops[-1].index}"

    def side_inputs(self) -> list[Tensor]:
        """Whole tensors the chain reads besides its input (the residual ADDs' other operands)."""
        return list(self._side_inputs)

    @functools.cached_property
    def _side_inputs(self) -> tuple[Tensor, ...]:  # asked for at every planner try: made once
        seen = {id(t) for t in self.intermediates}  # and the side inputs found so far
        found: list[Tensor] = []
        for j, op in enumerate(self.ops):  # a first op that is row-wise has side inputs too
            for t in op.inputs[1:] if j == 0 else op.inputs:
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    found.append(t)
        return tuple(found)

    def external_inputs(self) -> list[Tensor]:
        return [self.input, *[t for t in self._side_inputs if t is not self.input]]

    def flow_operand(self, j: int) -> int:
        """Which input of op j carries the chain (0 for window ops; the intermediate for ADD)."""
        if j == 0:
            return 0
        previous = self.ops[j - 1].outputs[0]
        return next(n for n, t in enumerate(self.ops[j].inputs) if t is previous)

    def describe(self) -> dict[str, Any]:
        return {
            "ops": [op.index for op in self.ops],
            "kinds": [op.kind.name for op in self.ops],
            "stripes": len(self.stripes),
            "halos": "kept" if self.rolling else "recomputed",
            "stripe_bytes": self.region_bytes,
            "extra_macs": self.extra_macs,
            "input": self.input.name,
            "output": self.output.name,
        }


@dataclass
class Tiling:
    """The chains of a build; an empty Tiling plans and generates as if there were none."""

    chains: list[Chain] = field(default_factory=list)
    share_output: bool = True  # the planner variant: output over a dying input (set by the planner)

    def __post_init__(self) -> None:
        self._by_op = {id(op): chain for chain in self.chains for op in chain.ops}

    def chain_of(self, op: Op) -> Chain | None:
        return self._by_op.get(id(op))

    def grouped(self, op: Op) -> bool:
        """`op` is in a chain: it runs in the chain's step, with no alias or in-place of its own."""
        return self.chain_of(op) is not None

    def reads(self, op: Op) -> list[Tensor | None]:
        """What the planner sees `op` read: a chain reads everything at its last op."""
        chain = self.chain_of(op)
        if chain is None:
            return list(op.inputs)
        return list(chain.external_inputs()) if op is chain.ops[-1] else []

    def writes(self, op: Op) -> list[Tensor]:
        chain = self.chain_of(op)
        if chain is None:
            return list(op.outputs)
        return [chain.output] if op is chain.ops[-1] else []

    def scratch(self, op: Op, step: int, scratch_bytes: ScratchBytes) -> tuple[int, int]:
        """(step, bytes) of op's scratch: a chain's ops take turns on one scratch buffer, the
        largest any of them needs, planned at the chain's last op."""
        chain = self.chain_of(op)
        if chain is None:
            return step, scratch_bytes(op)
        if op is not chain.ops[-1]:
            return step, 0
        return chain.last_step, max(scratch_bytes(o) for o in chain.ops)

    def variants(self) -> list[Tiling]:
        """The planner's two tries: outputs over dying inputs where they may, and never."""
        if not self.chains:
            return [self]
        return [dataclasses.replace(self, share_output=True), dataclasses.replace(self, share_output=False)]

    def shared_variant(self, buffers: list[Buffer]) -> list[Buffer]:
        """What collect_buffers gives for the share_output variant, made from what it gave for
        the other (whose buffers only add_buffers tells apart): `buffers` with each chain's
        output over its dying input where it may, the buffers that changes copied first (the
        planner tries both variants of every candidate: this halves its work)."""
        assert not self.share_output
        shared = list(buffers)
        consumed: set[int] = set()
        copied: set[int] = set()  # ids of the buffers copied here (a merged one is changed again)
        for chain in sorted(self.chains, key=lambda c: c.last_step):  # an output shared on is an input
            if chain.lag is None:
                continue
            holder = _holding(shared, chain.input)
            if holder is not None and id(holder) not in copied:  # _share changes the input's buffer
                holder_copy = dataclasses.replace(
                    holder, tensors=list(holder.tensors), in_place_ops=list(holder.in_place_ops),
                    view_offsets=dict(holder.view_offsets), concat_ops=list(holder.concat_ops))
                shared[shared.index(holder)] = holder_copy
                copied.add(id(holder_copy))
            _share(chain, shared, consumed)
        return shared

    def add_buffers(self, buffers: list[Buffer]) -> list[Buffer]:
        """The planner's buffers plus each chain's stripe region, with outputs over dying inputs
        where `share_output` (liveness.collect_buffers calls this last)."""
        consumed: set[int] = set()
        for chain in sorted(self.chains, key=lambda c: c.last_step):  # an output shared on is an input
            buffers.append(Buffer(name=chain.region_name, size=chain.region_bytes, first=chain.last_step,
                                  last=chain.last_step, uses=1))
            if self.share_output and chain.lag is not None:
                _share(chain, buffers, consumed)
        return buffers


# --- geometry --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _window(op: Op) -> tuple[int, int, int, int]:
    """(kernel rows, stride, dilation, top padding) of a window op."""
    x, y = op.inputs[0], op.outputs[0]
    assert x is not None
    o = op.options
    if isinstance(o, Pool2DOptions):
        kh, stride, dilation = o.filter_h, o.stride_h, 1
    else:
        assert isinstance(o, (Conv2DOptions, DepthwiseConv2DOptions))
        w = op.inputs[1]
        assert w is not None
        kh, stride, dilation = w.shape[1], o.stride_h, o.dilation_h
    pad = conv_padding(o.padding, x.shape[1], kh, stride, dilation, y.shape[1])
    return kh, stride, dilation, pad


class _Geometry(NamedTuple):
    """What op_rows needs of an op, looked up once per chain (the walks ask thousands of times)."""

    add: bool  # row-wise (a residual ADD, an activation, a channel concatenation): reads the rows it writes
    kernel: int
    stride: int
    dilation: int
    pad: int
    in_h: int
    out_h: int
    # A resize: the first and last input row each output row reads (both never decrease).
    lower: tuple[int, ...] | None = None
    upper: tuple[int, ...] | None = None


RESIZES = (OpKind.RESIZE_NEAREST_NEIGHBOR, OpKind.RESIZE_BILINEAR)


@functools.lru_cache(maxsize=256)
def resize_rows(op: Op) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(first, last) input row of each output row of a resize: the kernel's own row tables."""
    # the resize family, imported only by models with a resize
    from ..ops.resize.prepare import bilinear_tables, nearest_tables

    x = op.inputs[0]
    assert x is not None
    if op.kind is OpKind.RESIZE_NEAREST_NEIGHBOR:
        rows = tuple(int(r) for r in nearest_tables(op).rows)
        return rows, rows
    axis = bilinear_tables(op, integer=x.dtype is not DType.FLOAT32).rows
    return tuple(int(r) for r in axis.lower), tuple(int(r) for r in axis.upper)


def _geometry(op: Op) -> _Geometry:
    x = op.inputs[0]
    assert x is not None
    out_h = op.outputs[0].shape[1]
    if op.kind in RESIZES:
        lower, upper = resize_rows(op)
        return _Geometry(False, 1, 1, 1, 0, x.shape[1], out_h, lower, upper)
    if not op_def(op.kind).traits.window:
        return _Geometry(True, 1, 1, 1, 0, x.shape[1], out_h)
    return _Geometry(False, *_window(op), x.shape[1], out_h)


def _rows(g: _Geometry, out_start: int, out_stop: int) -> OpRows:
    if g.add:
        return OpRows(out_start, out_stop, out_start, out_stop, 0)
    if g.lower is not None and g.upper is not None:
        return OpRows(out_start, out_stop, g.lower[out_start], g.upper[out_stop - 1] + 1, 0)
    first = out_start * g.stride - g.pad
    last = (out_stop - 1) * g.stride - g.pad + (g.kernel - 1) * g.dilation
    in_start, in_stop = max(0, first), min(g.in_h, last + 1)
    return OpRows(out_start, out_stop, in_start, in_stop, g.pad - out_start * g.stride + in_start)


def _first_input_row(g: _Geometry, out_start: int) -> int:
    """_rows(g, out_start, ...).in_start, without the rest."""
    if g.lower is not None:
        return g.lower[out_start]
    return out_start if g.add else max(0, out_start * g.stride - g.pad)


def op_rows(op: Op, out_start: int, out_stop: int) -> OpRows:
    """The input rows and top padding of `op` computing output rows [out_start, out_stop)."""
    return _rows(_geometry(op), out_start, out_stop)


def row_bytes(tensor: Tensor) -> int:
    return tensor.shape[2] * tensor.shape[3] * tensor.dtype.itemsize


def _split(rows: int, count: int) -> list[tuple[int, int]]:
    bounds = [round(k * rows / count) for k in range(count + 1)]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _recomputed_stripes(ops: Sequence[Op], count: int) -> list[Stripe] | None:
    """Cut the last op's rows; walk each stripe backwards, every op computing every row the
    next one reads (halos recomputed). None if a call would see no input row."""
    links = len(ops) - 1
    backwards = [_geometry(op) for op in reversed(ops)]
    stripes: list[Stripe] = []
    none = (None,) * links
    for start, stop in _split(ops[-1].outputs[0].shape[1], count):
        calls: list[OpRows] = []
        for g in backwards:
            rows = _rows(g, start, stop)
            start, stop = rows.in_start, rows.in_stop
            if stop <= start:
                return None
            calls.append(rows)
        held = tuple((rows.in_start, rows.in_stop) for rows in calls[-2::-1])  # read by ops 1..n-1
        calls.reverse()
        stripes.append(Stripe(tuple(calls), held, none))
    return stripes


def pulled_stripes(ops: Sequence[Op], count: int) -> list[Stripe] | None:
    """Halo rows kept, each stripe pulled by the last op: it makes the next of `count` equal
    cuts of its rows, every op before it the rows the next one reads that it has not made yet
    (so the last op's calls are as tall as the cut, where the _walk's pace leaves it a short
    first and last call). A slot holds from the first row its reader's call reads (or, if the
    reader makes nothing, will read next) to the last row made. None if a call would see no
    input row. (The NPU's rolling stripes, mcugen/npu/stripes.py; rolling like _walk's.)"""
    geometry = [_geometry(op) for op in ops]
    links = len(ops) - 1
    done = [0] * len(ops)
    held_before: list[tuple[int, int]] = [(0, 0)] * links
    stripes: list[Stripe] = []
    for _, stop in _split(ops[-1].outputs[0].shape[1], count):
        targets = [*done[:-1], stop]
        for j in range(links, 0, -1):
            if targets[j] > done[j]:
                targets[j - 1] = max(done[j - 1], _rows(geometry[j], done[j], targets[j]).in_stop)
        calls: list[OpRows | None] = []
        for j, g in enumerate(geometry):
            rows = _rows(g, done[j], targets[j]) if targets[j] > done[j] else None
            if rows is not None and rows.in_rows < 1:
                return None
            calls.append(rows)
        held, kept = [], []
        for j in range(links):
            first = min(_first_input_row(geometry[j + 1], done[j + 1]), done[j])
            carried = done[j] - first
            kept.append((first - held_before[j][0], carried) if carried > 0 and stripes else None)
            held.append((first, targets[j]))
        stripes.append(Stripe(tuple(calls), tuple(held), tuple(kept)))
        held_before, done = held, targets
    return stripes


def _reach(g: _Geometry, done: int, available: int) -> int:
    """How far the op can compute past row `done` with `available` rows of its input made: the
    last output row whose op_rows in_stop is within them (in_stop grows with the row, so it is
    solved for, not searched)."""
    if g.add:
        reach = available  # it reads the rows it writes
    elif g.upper is not None:
        reach = bisect.bisect_left(g.upper, available)  # the rows whose last input row is made
    elif available >= g.in_h:
        reach = g.out_h
    else:  # the largest stop with (stop - 1) * stride - pad + (kernel - 1) * dilation + 1 <= available
        reach = (available - 1 + g.pad - (g.kernel - 1) * g.dilation) // g.stride + 1
    return max(done, min(g.out_h, reach))


# One stripe of a rolling walk: each op's call, each slot's held rows, each slot's kept rows,
# and how many rows of its output each op has made once the stripe has run.
_Step = tuple[tuple[OpRows | None, ...], tuple[tuple[int, int], ...], tuple[tuple[int, int] | None, ...],
              tuple[int, ...]]


def _walk(ops: Sequence[Op], count: int) -> Iterator[_Step | None]:
    """The rolling walk of `ops`, stripe by stripe, until every op is done; None (and no more)
    where a call would see no input row or a stripe would make no call. (The tiling search's
    inner loop: _first_input_row, _reach and _rows are written out here, without min/max calls.)"""
    n = len(ops)
    links = n - 1
    geometry = [_geometry(op) for op in ops]
    heights = [g.out_h for g in geometry]
    pace = [-(-h // count) for h in heights]
    done = [0] * n
    first = [0] * links
    while done != heights:
        calls: list[OpRows | None] = [None] * n
        kept: list[tuple[int, int] | None] = [None] * links
        for j in range(links):  # slot j keeps from the first row its reader still needs
            made = needed = done[j]
            later = done[j + 1]
            if later < heights[j + 1]:
                g = geometry[j + 1]
                if g.lower is not None:
                    row = g.lower[later]
                elif g.add:
                    row = later
                else:
                    row = later * g.stride - g.pad
                    row = row if row > 0 else 0  # noqa: FURB136 - no calls here (docstring)
                if row < needed:  # noqa: PLR1730 - no calls here
                    needed = row
            if needed > first[j]:
                if made > needed:
                    kept[j] = (needed - first[j], made - needed)
                first[j] = needed
        available = 0  # rows of the op's input made, this stripe's included
        for j, g in enumerate(geometry):
            start = done[j]
            if j == 0:
                target = heights[0]
            else:
                if g.add:
                    reach = available
                elif g.upper is not None:
                    reach = bisect.bisect_left(g.upper, available)
                elif available >= g.in_h:
                    reach = g.out_h
                else:
                    reach = (available - 1 + g.pad - (g.kernel - 1) * g.dilation) // g.stride + 1
                target = reach if reach < g.out_h else g.out_h  # noqa: FURB136 - no calls here
            if target > start + pace[j]:  # noqa: PLR1730 - no calls here
                target = start + pace[j]
            if target > start:
                if g.add:
                    rows = OpRows(start, target, start, target, 0)
                elif g.lower is not None and g.upper is not None:
                    rows = OpRows(start, target, g.lower[start], g.upper[target - 1] + 1, 0)
                else:
                    top = start * g.stride - g.pad
                    bottom = (target - 1) * g.stride - g.pad + (g.kernel - 1) * g.dilation + 1
                    in_start = top if top > 0 else 0  # noqa: FURB136 - no calls here
                    in_stop = bottom if bottom < g.in_h else g.in_h  # noqa: FURB136 - no calls here
                    rows = OpRows(start, target, in_start, in_stop, in_start - top)
                if rows.in_stop <= rows.in_start:
                    yield None
                    return
                calls[j] = rows
                done[j] = start = target
            available = start
        if calls.count(None) == n:
            yield None
            return
        yield tuple(calls), tuple(zip(first, done)), tuple(kept), tuple(done)


def _rolling_stripes(ops: Sequence[Op], count: int) -> list[Stripe] | None:
    """Each op advances by at most 1/count of its rows per stripe, computing only rows whose
    input rows are all made (no row is computed twice), until every op is done. A slot keeps
    from the first row its reader still needs: those rows move to the slot's start before the
    stripe's calls. None past 4 * count + len(ops) stripes, or if the walk stops (_walk)."""
    stripes: list[Stripe] = []
    for step in _walk(ops, count):
        if step is None or len(stripes) > 4 * count + len(ops):
            return None
        calls, held, kept, _ = step
        stripes.append(Stripe(calls, held, kept))
    return stripes


def rolling_prefixes(ops: Sequence[Op], count: int) -> list[list[Stripe] | None]:
    """[_rolling_stripes(ops[:m], count) for m in 2..len(ops)], from one walk of all of `ops`.

    An op's pace and progress depend only on the ops before it, and a slot's kept rows only on
    its reader, so the walk of a prefix is the walk of the whole restricted to it, up to the
    stripe that finishes the prefix. A prefix fails where its own walk would (too many stripes,
    or a stripe with no call of its ops); if the whole walk stops early, the prefixes it leaves
    unfinished are walked on their own.
    """
    lengths = range(2, len(ops) + 1)
    heights = tuple(op.outputs[0].shape[1] for op in ops)
    found: dict[int, list[Stripe] | None] = {}  # prefix length -> its walk
    open_lengths = list(lengths)  # the prefixes not found yet
    steps: list[_Step] = []
    for step in _walk(ops, count):
        over = len(steps) - 4 * count  # a prefix of m ops fails past 4 * count + m stripes
        for m in [m for m in open_lengths if m < over]:
            found[m] = None
        open_lengths = [m for m in open_lengths if m not in found]
        if step is None or not open_lengths:
            break
        steps.append(step)
        calls, _, _, done = step
        # a prefix of m ops makes no call this stripe if m <= idle; it is done if m <= finished
        idle = next((j for j, c in enumerate(calls) if c is not None), len(calls))
        finished = next((j for j, (d, h) in enumerate(zip(done, heights)) if d != h), len(done))
        for m in open_lengths:
            if m <= idle:
                found[m] = None
            elif m <= finished:
                found[m] = [Stripe(c[:m], h[:m - 1], k[:m - 1]) for c, h, k, _ in steps]
        open_lengths = [m for m in open_lengths if m not in found]
    return [found[m] if m in found else _rolling_stripes(ops[:m], count) for m in lengths]


def _keeps_rows(stripes: Sequence[Stripe], links: int) -> list[bool]:
    """Whether slot j holds rows from one stripe into the next."""
    slots = list(zip(*[s.held for s in stripes])) or [()] * links  # slot j's held rows, stripe by stripe
    return [any(later[0] < earlier[1] for earlier, later in itertools.pairwise(held)) for held in slots]


def _layout(sizes: Sequence[int], keeps: Sequence[bool]) -> tuple[list[int], int]:
    """(slot offsets, region bytes): slots that keep rows one after another; the others live
    only from their writer's call to their reader's, so two of them are live at once only if
    neighbours: even ones share the start of what is left, odd ones its end."""
    offsets = [0] * len(sizes)
    kept_bytes = 0
    for j, size in enumerate(sizes):
        if keeps[j]:
            offsets[j], kept_bytes = kept_bytes, kept_bytes + size
    passing = [j for j in range(len(sizes)) if not keeps[j]]
    area = max([sizes[j] for j in passing]
               + [sizes[j] + sizes[j + 1] for j in passing if j + 1 in passing], default=0)
    for j in passing:
        offsets[j] = kept_bytes + (0 if j % 2 == 0 else area - sizes[j])
    return offsets, kept_bytes + area


def make_chain(ops: Sequence[Op], first_step: int, count: int, rolling: bool = False,
               stripes: list[Stripe] | None = None, macs: Sequence[int] | None = None,
               bottom_up: bool = False) -> Chain | None:
    """The chain of `ops` in `count` stripes, or None if it cannot be cut so; `stripes`: its
    walk, if already made (rolling_prefixes); `macs`: op_macs of each op, if known; `bottom_up`:
    recomputed stripes run last first."""
    if stripes is None:
        stripes = _rolling_stripes(ops, count) if rolling else _recomputed_stripes(ops, count)
    if stripes is None or (bottom_up and rolling):
        return None
    stripes = list(reversed(stripes)) if bottom_up else list(stripes)
    # per slot / per op, stripe by stripe (the columns of the stripes' tuples: the search makes
    # hundreds of chains, so these loops are its inner ones)
    slot_sizes = [_align(max([stop - start for start, stop in held]) * row_bytes(op.outputs[0]))
                  for held, op in zip(zip(*[s.held for s in stripes]), ops[:-1])]
    offsets, region = _layout(slot_sizes, _keeps_rows(stripes, len(slot_sizes)))
    if macs is None:
        macs = [op_macs(op) for op in ops]
    rows_made = [sum([c[1] - c[0] for c in calls if c is not None])
                 for calls in zip(*[s.calls for s in stripes])] or [0] * len(ops)
    extra = sum(made * m // op.outputs[0].shape[1] - m for made, m, op in zip(rows_made, macs, ops))
    chain = Chain(list(ops), first_step, first_step + len(ops) - 1, stripes, rolling, offsets, region, extra, None,
                  bottom_up)
    chain.lag = _output_lag(chain)
    return chain


def _input_rows(chain: Chain, k: int, readers: Sequence[tuple[int, bool]]) -> tuple[int, int] | None:
    """(first, stop) of the input rows stripe k's calls in `readers` read, or None."""
    found = [(rows.in_start, rows.in_stop) if flow else (rows.out_start, rows.out_stop)
             for j, flow in readers if (rows := chain.stripes[k].calls[j]) is not None]
    return (min(a for a, _ in found), max(b for _, b in found)) if found else None


def _in_place_over(op: Op, x: Tensor) -> bool:
    """`op` could write its output over `x` in place (liveness.in_place_candidate): it reads
    element e of x before writing element e, at the same byte offset, and never reads it again.
    Not a CONCATENATION: its output rows are wider than x's, and it copies input by input."""
    return in_place_candidate(op, lambda t: t is x) is x


def _output_lag(chain: Chain) -> int | None:
    """Bytes the output must start before the input to share its buffer (module docstring):
    every write of stripe k below (bottom-up: above) every input byte read from then on."""
    x, last = chain.input, len(chain.ops) - 1
    readers = [(j, n == chain.flow_operand(j)) for j, op in enumerate(chain.ops)
               for n, t in enumerate(op.inputs) if t is x]
    own = [(j, flow) for j, flow in readers if j == last]
    if chain.bottom_up or not _in_place_over(chain.ops[last], x):
        return _lag(chain, readers, own)
    lag = _lag(chain, readers, [])
    # the NPU's blocks need not run in address order, so its op is safe over its input at the
    # input's own addresses (each element read by the block that writes it), not below them
    return _lag(chain, readers, own) if lag and chain.ops[last].backend == "npu" else lag


def _lag(chain: Chain, readers: list[tuple[int, bool]], own: list[tuple[int, bool]]) -> int:
    """_output_lag's bytes, with the last op's reads in `own` counted."""
    x, y = chain.input, chain.output
    stripes, x_row, y_row = chain.stripes, row_bytes(x), row_bytes(y)
    lag = 0  # top-down: the least lag every stripe allows; bottom-up: the largest (<= 0)
    pending: tuple[int, int] | None = None  # input rows read by the stripes after k
    for k in range(len(stripes) - 1, -1, -1):
        reads = [r for r in (pending, _input_rows(chain, k, own)) if r is not None]
        written = stripes[k].calls[-1]
        if reads and written is not None:
            if chain.bottom_up:  # input start - output start <= written row's start - last read's stop
                lag = min(lag, written.out_start * y_row - max(b for _, b in reads) * x_row)
            else:
                lag = max(lag, written.out_stop * y_row - min(a for a, _ in reads) * x_row)
        now = _input_rows(chain, k, readers)
        if now is not None:
            pending = now if pending is None else (min(pending[0], now[0]), max(pending[1], now[1]))
    return _align(lag) if not chain.bottom_up else lag // ALIGNMENT * ALIGNMENT


def row_broadcast(operand: Tensor, output: Tensor) -> bool:
    """`operand` is one row that an element-wise op broadcasts over all of `output`'s rows
    (a [1, 1, W or 1, C or 1] tensor): every stripe reads it whole, from its start."""
    shape = operand.shape
    return (len(shape) == 4 and shape[0] == 1 and shape[1] == 1 and output.shape[1] > 1
            and shape[2] in (1, output.shape[2]) and shape[3] in (1, output.shape[3]))


def stripe_view(tensor: Tensor, rows: int) -> Tensor:
    """A stand-in for `tensor` with `rows` rows: what one stripe's kernel call sees."""
    n, _, w, c = tensor.shape
    return dataclasses.replace(tensor, shape=(n, rows, w, c), consumers=[])


def call_view(op: Op, flow: int, rows: OpRows) -> Op:
    """`op` as one stripe's call sees it: input `flow` (the one carrying the chain) its input
    rows, a residual operand and the output the call's output rows; a broadcast row and the
    constants whole."""
    y = op.outputs[0]
    inputs = [t if t is None or t.is_constant or (n != flow and row_broadcast(t, y))
              else stripe_view(t, rows.in_rows if n == flow else rows.out_rows)
              for n, t in enumerate(op.inputs)]
    return dataclasses.replace(op, inputs=inputs, outputs=[stripe_view(y, rows.out_rows)])


# --- the planner's side: output over input ---------------------------------------------------


def _holding(buffers: list[Buffer], tensor: Tensor) -> Buffer | None:
    return next((b for b in buffers if any(t is tensor for t in b.tensors)), None)


def _share(chain: Chain, buffers: list[Buffer], consumed: set[int]) -> None:
    """Put the chain's output `lag` bytes before its input in one buffer: the output's a whole
    buffer of its own starting at the chain, the input's ending there, a whole buffer or one an
    earlier chain's output shared (its other tensors are in `consumed`, the ids of the inputs
    earlier chains wrote over: dead). Adds the chain's input to `consumed`."""
    x, y = _holding(buffers, chain.input), _holding(buffers, chain.output)
    if x is None or y is None or x is y or chain.lag is None:
        return
    if y.size != chain.output.nbytes or y.view_offsets or y.concat_ops or x.concat_ops:
        return
    if x.last != chain.last_step or y.first != chain.last_step:
        return
    at = x.view_offsets.get(id(chain.input), 0)
    if any(x.view_offsets.get(id(t), 0) != at and id(t) not in consumed for t in x.tensors):
        return
    if not x.view_offsets and x.size != chain.input.nbytes:
        return
    out = at - chain.lag  # the output's offset in x, before the shift below
    shift = max(0, -out)
    x.view_offsets = {id(t): x.view_offsets.get(id(t), 0) + shift for t in x.tensors}
    x.view_offsets.update({id(t): out + shift for t in y.tensors})
    x.view_offsets = {key: value for key, value in x.view_offsets.items() if value}
    x.tensors.extend(y.tensors)
    x.size = max(x.size + shift, out + shift + y.size)
    x.last = y.last
    x.uses += y.uses
    x.in_place_ops.extend(y.in_place_ops)
    buffers.remove(y)
    consumed.add(id(chain.input))
