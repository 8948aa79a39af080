"""Our encoder of the Ethos-U compressed weight stream: the format that
templates/runtime/npu/mcugen_npu_weights.c decodes (README.md there, "Weights"), with a search
for the shortest stream the format allows.

The format. A stream is slices, then a 3-bit end marker (ZDIV 7), ones to the byte, and 0xFF to
16 bytes. A slice header: ZDIV (3; 6: no zero runs), SLICELEN (15, weights - 1), WDIV (3; 7:
uncompressed), WTRUNC (1), NEWPAL (1); with NEWPAL, DIROFS (5), PALSIZE (5, entries - 1; 0: no
palette), PALBITS (3, bits - 2) and the entries. A weight w is the 9-bit value v = |w| << 1 |
sign; its index is its palette position, or v - DIROFS + PALSIZE (so values below DIROFS must be
in the palette). With zero runs (chosen with the palette), zeros leave the weight sequence and
become run lengths: before the first weight (a NEWPAL slice only) and after every weight.

Indices and runs are Golomb-Rice coded with divisor 2^div: the quotient q in unary, the
remainder in div bits. Weights: q in 2-bit steps, each step one bit of UNARY0 (q left > 0) and,
when set, one of UNARY1 (q left > 1); q <= 31; truncated (q <= 2) a weight takes one step.
Uncompressed weights: the remainders only, as wide as a palette index (PALBITS without a
palette). Runs: one UNARY bit per unit of q (div 0..3). The bits come in chunks: UNARY0 always 12
steps (padded), the runs' UNARY 12 bits (8 for div 3), the remainders of the previous chunk's
values after them; zero runs and weights alternate chunks so that the weights run at most 8
values ahead of the runs.

So a slice costs 23 header bits, per weight q + 1 + div bits (truncated: 1 + (q > 0) + div;
uncompressed: its width), per run q + 1 + div, plus padding of each unary stream to its chunk
(`_unary_padding`). The search: zero runs on or off, a palette of the k most frequent values
for k in PALETTE_SIZES (each with the largest DIROFS it allows), the divisors per slice by a dynamic
program over blocks of weights; the plan's exact length decides. `encode` keeps Vela's codec's
stream (`ethosu.mlw_codec`) when ours is no shorter, so a stream never grows; and, to keep build
time, it does not search above SEARCH_MAX weights, nor when the codec made one slice, nor slice
when one slice is no shorter than the codec's stream (on the streams of the public models' builds
these gates cost 32 bytes in all, on one ic_resnet8 tensor).
"""

from __future__ import annotations

import functools

import numpy as np
from ethosu import mlw_codec

from ..records import dataclass

SLICE_MAX = 1 << 15
HEADER_BITS = 3 + 15 + 3 + 1 + 1
PALETTE_HEADER_BITS = 5 + 5 + 3
PALETTE_MAX = 32
# the palette sizes tried (1 is not a size the format has)
PALETTE_SIZES = (0, 2, 3, 4, 6, 8, 12, 16, 24, 32)
# zero runs are tried when at least 1 / ZERO_RUNS_MIN_SHARE of the weights are zeros
ZERO_RUNS_MIN_SHARE = 8
DIROFS_MAX = 31
INDEX_MAX = 511
ZDIV_DISABLE, ZDIV_EOS, WDIV_UNCOMPRESSED = 6, 7, 7
STREAM_ALIGN_BITS = 128
UNARY0_STEPS = 12
W_Q_MAX, W_TRUNC_Q_MAX = 31, 2
# the weight configurations: (div, truncated); the last, uncompressed, has its width per palette
W_CONFIGS = [(d, False) for d in range(6)] + [(d, True) for d in range(6)] + [(-1, False)]
UNCOMPRESSED = len(W_CONFIGS) - 1
Z_DIVS = (0, 1, 2, 3)
INFEASIBLE = 1 << 24  # the cost of a value a configuration cannot code
# slice starts the dynamic program may choose: every BLOCK_MIN weights or more (at most
# BLOCKS_MAX blocks), what a new slice costs it; the palettes it tries per zero-run mode
BLOCK_MIN = 8
BLOCKS_MAX = 64
# the weight configurations the program tries: the best few for the whole tensor
CONFIG_ROWS = 3
# `encode` slices only when one slice is within this factor of the stream to beat
SLICING_REACH = 1.0
# above this many weights `encode` keeps Vela's codec's stream (module docstring)
SEARCH_MAX = 6144
SLICE_GUESS_BITS = HEADER_BITS + 6 + 6  # header and about half a chunk of padding per stream


@dataclass(frozen=True)
class Palette:
    """NEWPAL's fields: the entries (9-bit values, most frequent first), DIROFS, PALBITS, and
    whether zeros are coded as runs."""

    entries: tuple[int, ...]
    direct_offset: int
    bits: int
    zero_runs: bool

    def uncompressed_bits(self) -> int:
        """The width of an uncompressed weight (the decoder's rule)."""
        return max(1, (len(self.entries) - 1).bit_length()) if self.entries else self.bits

    def header_bits(self) -> int:
        return PALETTE_HEADER_BITS + len(self.entries) * self.bits


@dataclass(frozen=True)
class Slice:
    """Weights [start, stop) of the sequence, their configuration and the runs' divisor."""

    start: int
    stop: int
    w_config: int
    z_div: int
    bits: int  # exact, with the palette in the first slice


@dataclass(frozen=True)
class Plan:
    palette: Palette
    indices: np.ndarray  # weight indices in order
    runs: np.ndarray | None  # zero runs (len(indices) + 1) with zero runs, else None
    slices: tuple[Slice, ...]

    def bits(self) -> int:
        """The stream's length in bits before the end marker."""
        return sum(s.bits for s in self.slices)

    def recount(self) -> int:
        """bits(), counted again slice by slice from the values (a check of the search)."""
        return sum(_slice_bits(self, s, i == 0) for i, s in enumerate(self.slices))

    def stream_bytes(self) -> int:
        return -(-(self.bits() + 3) // STREAM_ALIGN_BITS) * (STREAM_ALIGN_BITS // 8)


def encode(values: np.ndarray) -> bytes:
    """The shorter of our stream and Vela's codec's for 9-bit weights `values` (-255..255, in
    stream order); Vela's on a tie, when there is nothing to search (no weights), and above
    SEARCH_MAX weights, where the search costs build time and has not found shorter streams."""
    flat = np.asarray(values, np.int64).ravel()
    theirs = bytes(mlw_codec.encode(flat.tolist()))
    if flat.size == 0 or flat.size > SEARCH_MAX or _one_slice(theirs, flat):
        return theirs
    # to be shorter, ours must end (with the 3-bit end marker) 16 bytes earlier
    plan = best_plan(flat, (len(theirs) - STREAM_ALIGN_BITS // 8) * 8 - 3)
    if plan is None or plan.stream_bytes() >= len(theirs):
        return theirs
    return emit(plan)


def _one_slice(stream: bytes, weights: np.ndarray) -> bool:
    """Whether the stream's first slice holds every weight (every nonzero one, with zero
    runs): a stream of one slice, whose codec chose its palette and divisors for the whole
    tensor; our search has not been seen to beat those, and it would cost build time."""
    header = int.from_bytes(stream[:3], "little")
    zdiv, length = header & 7, ((header >> 3) & 0x7FFF) + 1
    coded = weights.size if zdiv == ZDIV_DISABLE else int(np.count_nonzero(weights))
    return length >= coded


def encode_ours(values: np.ndarray) -> bytes:
    """Our stream alone (tests compare it with Vela's)."""
    flat = np.asarray(values, np.int64).ravel()
    if flat.size == 0:
        raise ValueError("no weights to encode")
    plan = best_plan(flat)
    assert plan is not None
    return emit(plan)


# ---- what a weight and a run cost ---------------------------------------------------------

def _palette_value(weights: np.ndarray) -> np.ndarray:
    return (np.abs(weights) << 1) | (weights < 0)


@functools.cache
def _compressed_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per Golomb-Rice configuration and index 0..511: (bits without chunk padding, UNARY0
    steps); INFEASIBLE where the configuration cannot code the index."""
    index = np.arange(INDEX_MAX + 1, dtype=np.int64)
    bits = np.empty((UNCOMPRESSED, index.size), np.int64)
    steps = np.ones((UNCOMPRESSED, index.size), np.int64)
    for c, (div, trunc) in enumerate(W_CONFIGS[:UNCOMPRESSED]):
        q = index >> div
        if trunc:
            bits[c] = np.where(q <= W_TRUNC_Q_MAX, np.minimum(q + 1, 2) + div, INFEASIBLE)
        else:
            bits[c] = np.where(q <= W_Q_MAX, q + 1 + div, INFEASIBLE)
            steps[c] = q // 2 + 1
    return bits, steps


@functools.cache
def _float_bits() -> np.ndarray:
    return _compressed_tables()[0].astype(np.float64)


def _w_tables(palette: Palette) -> tuple[np.ndarray, np.ndarray]:
    """The tables of every configuration: uncompressed last, as wide as the palette says,
    without steps."""
    bits, steps = _compressed_tables()
    width = palette.uncompressed_bits()
    index = np.arange(INDEX_MAX + 1, dtype=np.int64)
    uncompressed = np.where(index < (1 << width), width, INFEASIBLE)
    return np.vstack((bits, uncompressed)), np.vstack((steps, np.zeros(index.size, np.int64)))


def _z_costs(runs: np.ndarray) -> np.ndarray:
    """Per run divisor and run: bits (= UNARY bits + div) without chunk padding."""
    return np.stack([(runs >> d) + 1 + d for d in Z_DIVS])


def _z_chunk(div: int) -> int:
    return 12 if div < 3 else 8


def _unary_padding(steps: int, chunk: int) -> int:
    return -steps % chunk


def _slice_bits(plan: Plan, s: Slice, first: bool) -> int:
    """A slice's exact bits: header, palette (first slice), weights and runs with padding."""
    indices = plan.indices[s.start:s.stop]
    w_bits, w_steps = _w_tables(plan.palette)
    total = HEADER_BITS + (plan.palette.header_bits() if first else 0) + int(w_bits[s.w_config, indices].sum())
    if s.w_config != UNCOMPRESSED:
        total += _unary_padding(int(w_steps[s.w_config, indices].sum()), UNARY0_STEPS)
    if plan.runs is not None:
        runs = plan.runs[_run_range(s, first)]
        steps = int(((runs >> s.z_div) + 1).sum())
        total += steps + s.z_div * runs.size + _unary_padding(steps, _z_chunk(s.z_div))
    return total


def _run_range(s: Slice, first: bool) -> slice:
    """The runs a slice carries: the one before its first weight only in the first slice."""
    return slice(s.start if first else s.start + 1, s.stop + 1)


# ---- palettes -----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Symbols:
    """The weight sequence of one zero-run mode: 9-bit values, runs, the values' histogram."""

    values: np.ndarray
    runs: np.ndarray | None
    counts: np.ndarray  # per 9-bit value


def _symbols(weights: np.ndarray, zero_runs: bool) -> _Symbols:
    values = _palette_value(weights)
    if not zero_runs:
        return _Symbols(values, None, np.bincount(values, minlength=512))
    nonzero = np.flatnonzero(weights)
    if nonzero.size == 0:
        # a slice holds at least one weight: code the first zero as a weight, the rest as a run
        return _Symbols(values[:1], np.array([0, weights.size - 1], np.int64),
                        np.bincount(values[:1], minlength=512))
    runs = np.diff(np.concatenate(([-1], nonzero, [weights.size]))) - 1
    kept = values[nonzero]
    return _Symbols(kept, runs.astype(np.int64), np.bincount(kept, minlength=512))


@dataclass(frozen=True)
class _PaletteTable:
    """Every palette tried for one weight sequence, as arrays: a palette of the k most
    frequent values for k in PALETTE_SIZES, with the largest DIROFS its other values allow
    (those whose indices would pass 511 are left out)."""

    order: np.ndarray  # the present 9-bit values, most frequent first
    counts: np.ndarray  # their counts
    sizes: np.ndarray  # k per palette
    offsets: np.ndarray  # DIROFS per palette
    bits: np.ndarray  # PALBITS per palette
    indices: np.ndarray  # (palettes, values): the index of each value of `order`

    def uncompressed_bits(self) -> np.ndarray:
        needed = np.ceil(np.log2(np.maximum(self.sizes, 2))).astype(np.int64)
        return np.where(self.sizes > 0, needed, self.bits)

    def header_bits(self) -> np.ndarray:
        return PALETTE_HEADER_BITS + self.sizes * self.bits

    def palette(self, row: int, zero_runs: bool) -> Palette:
        k = int(self.sizes[row])
        entries = [int(v) for v in self.order[:k]]
        entries += [0] * (k - len(entries))  # one value: pad to the smallest palette, 2
        return Palette(tuple(entries), int(self.offsets[row]), int(self.bits[row]), zero_runs)


def _palette_table(symbols: _Symbols) -> _PaletteTable:
    present = np.flatnonzero(symbols.counts)
    order = present[np.lexsort((present, -symbols.counts[present]))]
    count = order.size
    sizes = np.array([k for k in PALETTE_SIZES if k <= max(count, 2)], np.int64)
    # the smallest and largest value left out of each palette; the largest in it
    rest_min = np.append(np.minimum.accumulate(order[::-1])[::-1], INDEX_MAX + 1)[np.minimum(sizes, count)]
    rest_max = np.append(np.maximum.accumulate(order[::-1])[::-1], -1)[np.minimum(sizes, count)]
    kept_max = np.maximum.accumulate(np.append(0, order))[np.minimum(sizes, count)]
    has_rest = sizes < count
    offsets = np.where(has_rest, np.minimum(DIROFS_MAX, rest_min), 0)
    usable = ~has_rest | (rest_max - offsets + sizes <= INDEX_MAX)
    widest = np.where(sizes > 0, kept_max, np.maximum(rest_max - offsets, 0))
    bits = np.maximum(2, np.ceil(np.log2(widest + 1)).astype(np.int64))
    position = np.arange(count)
    indices = np.where(position < sizes[:, None], position, order - offsets[:, None] + sizes[:, None])
    return _PaletteTable(order, symbols.counts[order], sizes[usable], offsets[usable], bits[usable],
                         indices[usable])


def _indices(values: np.ndarray, palette: Palette) -> np.ndarray:
    lookup = np.arange(512, dtype=np.int64) - palette.direct_offset + len(palette.entries)
    for i, v in enumerate(palette.entries):
        if i == 0 or v not in palette.entries[:i]:
            lookup[v] = i
    return lookup[values]


def _estimates(table: _PaletteTable, run_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Every palette's one-slice stream from its indices' histogram: the bits per palette,
    and per configuration and palette the weights' bits (with padding)."""
    counts = table.counts.astype(np.float64)  # exact: the sums stay far below 2^53
    w_total = np.empty((len(W_CONFIGS), table.sizes.size), np.int64)
    # the padding of UNARY0 left at its mean: the slices' exact costs come later
    w_total[:UNCOMPRESSED] = (_float_bits()[:, table.indices] @ counts).astype(np.int64) + UNARY0_STEPS // 2
    widths = table.uncompressed_bits()
    fits = table.indices.max(axis=1) < (1 << widths)
    w_total[UNCOMPRESSED] = np.where(fits, widths * int(table.counts.sum()), INFEASIBLE)
    return HEADER_BITS + table.header_bits() + w_total.min(axis=0) + run_bits, w_total


def _single_slice_runs(runs: np.ndarray | None) -> int:
    """The runs' bits in one slice with the best divisor (0 without runs)."""
    if runs is None:
        return 0
    z_bits = _z_costs(runs).sum(axis=1)
    return int(min(b + _unary_padding(int(b - d * runs.size), _z_chunk(d))
                   for d, b in zip(Z_DIVS, z_bits.tolist(), strict=True)))


# ---- the plan -----------------------------------------------------------------------------

def best_plan(weights: np.ndarray, budget: int | None = None) -> Plan | None:
    """The shortest plan found for `weights` (int, -255..255, in stream order); None when a
    bound shows it would take more than `budget` bits (before the end marker)."""
    if weights.size and (weights.min() < -255 or weights.max() > 255):
        raise ValueError("weights outside the 9-bit range -255..255")
    candidates = []
    zeros = int(np.count_nonzero(weights == 0))
    for zero_runs in (False, True):
        if zero_runs and zeros * ZERO_RUNS_MIN_SHARE < weights.size:
            continue  # a run per weight costs a bit or more: too few zeros to pay for it
        symbols = _symbols(weights, zero_runs)
        table = _palette_table(symbols)
        totals, w_totals = _estimates(table, _single_slice_runs(symbols.runs))
        best = int(totals.argmin())
        candidates.append((int(totals[best]), symbols, table.palette(best, zero_runs), w_totals[:, best]))
    estimate, symbols, palette, w_totals = min(candidates, key=lambda c: c[0])
    if budget is not None and estimate > budget * SLICING_REACH:
        return None  # slicing has not been seen to save this much
    return _sliced_plan(symbols, palette, _near_best(w_totals), budget)


def _near_best(w_totals: np.ndarray) -> np.ndarray:
    """The weight configurations worth slicing with: the CONFIG_ROWS best for the tensor."""
    order = np.argsort(w_totals, kind="stable")[:CONFIG_ROWS]
    return np.sort(order[w_totals[order] < INFEASIBLE])


@dataclass(frozen=True)
class _Prefix:
    """Running sums over one palette's weights and runs, so that any slice's exact cost in
    every configuration is a few subtractions."""

    configs: np.ndarray  # the weight configurations of the rows
    w_bits: np.ndarray  # (rows, weights + 1)
    w_padded: np.ndarray  # (rows,): the rows whose UNARY0 is padded to its chunk
    w_steps: np.ndarray  # (rows, weights + 1): UNARY0 steps
    z_bits: np.ndarray | None  # (divisors, runs + 1)
    palette_bits: int

    def costs(self, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per slice [start, stop) (arrays; the one at 0 is the first): the fewest bits, and
        the weight configuration and run divisor that give them."""
        w = self.w_bits[:, stop] - self.w_bits[:, start]
        w += (-(self.w_steps[:, stop] - self.w_steps[:, start]) % UNARY0_STEPS) * self.w_padded[:, None]
        w_config = self.configs[w.argmin(axis=0)]
        total = HEADER_BITS + self.palette_bits * (start == 0) + w.min(axis=0)
        z_div = np.zeros(start.shape, np.int64)
        if self.z_bits is not None:
            first_run = start + (start > 0)
            z = self.z_bits[:, stop + 1] - self.z_bits[:, first_run]
            for d in Z_DIVS:
                z[d] += -(z[d] - d * (stop + 1 - first_run)) % _z_chunk(d)
            z_div = z.argmin(axis=0)
            total = total + z.min(axis=0)
        return total, w_config, z_div


def _running(costs: np.ndarray) -> np.ndarray:
    return np.concatenate((np.zeros((costs.shape[0], 1), np.int64), np.cumsum(costs, axis=1)), axis=1)


def _sliced_plan(symbols: _Symbols, palette: Palette, configs: np.ndarray, budget: int | None) -> Plan | None:
    indices = _indices(symbols.values, palette)
    bits, steps = _w_tables(palette)
    z_bits = _z_costs(symbols.runs) if symbols.runs is not None else None
    prefix = _Prefix(configs, _running(bits[configs][:, indices]), (configs != UNCOMPRESSED).astype(np.int64),
                     _running(steps[configs][:, indices]), None if z_bits is None else _running(z_bits),
                     palette.header_bits())
    block = _block(indices.size)
    found = _slice_starts(prefix, indices.size, block, budget)
    if found is None:
        return None
    starts = _refine(prefix, found, indices.size, block) if len(found) > 1 else found
    start = np.array(starts, np.int64)
    stop = np.append(start[1:], indices.size)
    bits, w_config, z_div = prefix.costs(start, stop)
    slices = tuple(Slice(*map(int, t)) for t in zip(start, stop, w_config, z_div, bits, strict=True))
    return Plan(palette, indices, symbols.runs, slices)


def _block(count: int) -> int:
    """The dynamic program's step: fine on small tensors, at most about BLOCKS_MAX steps."""
    return max(BLOCK_MIN, -(-count // BLOCKS_MAX))


def _slice_starts(prefix: _Prefix, count: int, block: int, budget: int | None) -> list[int] | None:
    """Where slices start: a dynamic program over blocks of weights whose state is the pair of
    (weight configuration, run divisor), a new slice costing SLICE_GUESS_BITS."""
    edges = np.unique(np.concatenate((np.arange(0, count, block), [count])))
    w_block = prefix.w_bits[:, edges[1:]] - prefix.w_bits[:, edges[:-1]]
    if prefix.z_bits is not None:
        # the run after each weight goes with its block; the one before the first, with block 0
        z_block = prefix.z_bits[:, edges[1:] + 1] - prefix.z_bits[:, edges[:-1] + 1]
        z_block[:, 0] += prefix.z_bits[:, 1]
    else:
        z_block = np.zeros((1, w_block.shape[1]), np.int64)
    blocks = (w_block[:, None, :] + z_block[None, :, :]).reshape(-1, w_block.shape[1])  # state: config, div
    # every block at its best, free of headers, bounds every plan; every further slice costs
    # a header, so none pays when all blocks at their best save less
    bound = prefix.palette_bits + HEADER_BITS + int(blocks.min(axis=0).sum())
    if budget is not None and bound > budget:
        return None
    whole = int(prefix.costs(np.array([0]), np.array([min(count, SLICE_MAX)]))[0][0])
    if count <= SLICE_MAX and whole - bound < HEADER_BITS:
        return [0]
    starts = [int(edges[b]) for b in _restarts(blocks.T.tolist())]
    return _cut_long([0, *starts], count)


def _restarts(blocks: list[list[int]]) -> list[int]:
    """The blocks that start a slice (after the first) in the cheapest path through the
    states, per block the states' costs; plain Python: the blocks are few, numpy's calls
    would cost more than the arithmetic."""
    cost = list(blocks[0])
    states = range(len(cost))
    restarted: list[list[bool]] = [[]]
    came_from = [0]
    for row in blocks[1:]:
        best = min(states, key=cost.__getitem__)
        switch = cost[best] + SLICE_GUESS_BITS
        restarted.append([switch < c for c in cost])
        came_from.append(best)
        cost = [min(c, switch) + r for c, r in zip(cost, row, strict=True)]
    state = min(states, key=cost.__getitem__)
    found = []
    for b in range(len(blocks) - 1, 0, -1):
        if restarted[b][state]:
            found.append(b)
            state = came_from[b]
    return found[::-1]


def _refine(prefix: _Prefix, starts: list[int], count: int, reach: int) -> list[int]:
    """Each slice start moved by up to `reach` to where the two slices around it cost least
    (exact costs), or dropped when one slice is cheaper; left to right, once."""
    out = list(starts)
    i = 1
    while i < len(out):
        left, right = out[i - 1], out[i + 1] if i + 1 < len(out) else count
        if right - left <= SLICE_MAX:
            merged = int(prefix.costs(np.array([left]), np.array([right]))[0][0])
        else:
            merged = INFEASIBLE
        here = out[i]
        middle = np.arange(max(left + 1, right - SLICE_MAX, here - reach), min(right, left + SLICE_MAX + 1, here + reach + 1))
        pair = prefix.costs(np.full(middle.shape, left), middle)[0] + prefix.costs(middle, np.full(middle.shape, right))[0]
        best = int(pair.argmin())
        if merged <= int(pair[best]):
            del out[i]
            continue
        out[i] = int(middle[best])
        i += 1
    return out


def _cut_long(starts: list[int], count: int) -> list[int]:
    out = []
    for start, stop in zip(starts, [*starts[1:], count], strict=True):
        out += list(range(start, stop, SLICE_MAX))
    return out


# ---- the bits -----------------------------------------------------------------------------

# the parts of one chunk step, in the order the decoder reads them
_UNARY0, _Z_UNARY, _UNARY1, _W_REMAINDERS, _Z_REMAINDERS = range(5)


@dataclass(frozen=True)
class _Fields:
    """Bit fields (value, width) of one part of the chunks, each with its chunk."""

    values: np.ndarray
    widths: np.ndarray
    chunks: np.ndarray  # the chunk each field belongs to
    part: int


def _fields(values: np.ndarray, width: int, chunks: np.ndarray, part: int) -> _Fields:
    return _Fields(values.astype(np.int64), np.full(values.shape, width, np.int64), chunks, part)


def emit(plan: Plan) -> bytes:
    """The stream of `plan`: its slices, the end marker, ones to 16 bytes."""
    values: list[np.ndarray] = []
    widths: list[np.ndarray] = []
    for i, s in enumerate(plan.slices):
        v, w = _slice_bits_fields(plan, s, i == 0)
        values.append(v)
        widths.append(w)
    values.append(np.array([ZDIV_EOS], np.int64))
    widths.append(np.array([3], np.int64))
    bits = _expand(np.concatenate(values), np.concatenate(widths))
    bits = np.concatenate((bits, np.ones(-bits.size % STREAM_ALIGN_BITS, np.uint8)))
    return np.packbits(bits, bitorder="little").tobytes()


def _expand(values: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """The fields' bits, least significant first."""
    field = np.repeat(np.arange(values.size), widths)
    offset = np.arange(field.size) - (np.cumsum(widths) - widths)[field]
    return ((values[field] >> offset) & 1).astype(np.uint8)


def _header(plan: Plan, s: Slice, first: bool) -> list[tuple[int, int]]:
    div, trunc = W_CONFIGS[s.w_config]
    palette = plan.palette
    head = [(s.z_div if plan.runs is not None else ZDIV_DISABLE, 3), (s.stop - s.start - 1, 15),
            (WDIV_UNCOMPRESSED if s.w_config == UNCOMPRESSED else div, 3), (int(trunc), 1), (int(first), 1)]
    if first:
        head += [(palette.direct_offset, 5), (max(0, len(palette.entries) - 1), 5), (palette.bits - 2, 3)]
        head += [(e, palette.bits) for e in palette.entries]
    return head


def _slice_bits_fields(plan: Plan, s: Slice, first: bool) -> tuple[np.ndarray, np.ndarray]:
    """A slice's fields in stream order: the header, then the chunk steps."""
    parts, w_done = _weight_fields(plan, s)
    if plan.runs is not None:
        z_parts, z_done = _run_fields(plan.runs[_run_range(s, first)], s.z_div)
        parts += z_parts
        w_step, z_step = _schedule(w_done, z_done)
    else:
        w_step, z_step = np.arange(w_done.size), np.zeros(0, np.int64)
    keys = []
    for f in parts:
        # a chunk's remainders are read in the step after it
        step = (z_step if f.part in (_Z_UNARY, _Z_REMAINDERS) else w_step)[f.chunks]
        late = int(f.part in (_W_REMAINDERS, _Z_REMAINDERS))
        keys.append((step + late) * 5 + f.part)
    order = np.argsort(np.concatenate(keys), kind="stable")
    head = np.array(_header(plan, s, first), np.int64).reshape(-1, 2)
    values = np.concatenate([f.values for f in parts])[order]
    widths = np.concatenate([f.widths for f in parts])[order]
    return np.concatenate((head[:, 0], values)), np.concatenate((head[:, 1], widths))


def _weight_fields(plan: Plan, s: Slice) -> tuple[list[_Fields], np.ndarray]:
    """The weights' fields, and per chunk the number of weights complete at its end."""
    indices = plan.indices[s.start:s.stop]
    count = indices.size
    if s.w_config == UNCOMPRESSED:
        width = plan.palette.uncompressed_bits()
        per_chunk = 8 if width > 5 else 12
        chunk = np.arange(count) // per_chunk
        chunks = -(-count // per_chunk)
        done = np.minimum((np.arange(chunks) + 1) * per_chunk, count)
        return [_fields(indices, width, chunk, _W_REMAINDERS)], done
    div, trunc = W_CONFIGS[s.w_config]
    q = indices >> div
    steps = np.ones(count, np.int64) if trunc else q // 2 + 1
    first = np.cumsum(steps) - steps
    total = int(steps.sum())
    chunks = -(-total // UNARY0_STEPS)
    symbol = np.repeat(np.arange(count), steps)
    k = np.arange(total) - first[symbol]
    qs = q[symbol]
    if trunc:
        unary0, unary1 = qs > 0, qs == 2
    else:
        half = qs // 2
        unary0 = (k < half) | ((k == half) & (qs & 1 == 1))
        unary1 = k < half
    padded = np.zeros(chunks * UNARY0_STEPS, np.int64)
    padded[:total] = unary0
    words = padded.reshape(chunks, UNARY0_STEPS) @ (1 << np.arange(UNARY0_STEPS, dtype=np.int64))
    set_steps = np.flatnonzero(unary0)
    done_chunk = (first + steps - 1) // UNARY0_STEPS
    done = np.searchsorted(done_chunk, np.arange(chunks), side="right")
    fields = [_fields(words, UNARY0_STEPS, np.arange(chunks), _UNARY0),
              _fields(unary1[set_steps].astype(np.int64), 1, set_steps // UNARY0_STEPS, _UNARY1)]
    if div:
        fields.append(_fields(indices & ((1 << div) - 1), div, done_chunk, _W_REMAINDERS))
    return fields, done


def _run_fields(runs: np.ndarray, div: int) -> tuple[list[_Fields], np.ndarray]:
    """The runs' fields, and per chunk the number of runs complete at its end."""
    chunk_bits = _z_chunk(div)
    q = runs >> div
    steps = q + 1
    first = np.cumsum(steps) - steps
    total = int(steps.sum())
    chunks = -(-total // chunk_bits)
    ones = np.zeros(chunks * chunk_bits, np.int64)
    # a run's unary: q ones, then a zero
    ones[:total] = np.arange(total) - np.repeat(first, steps) < np.repeat(q, steps)
    words = ones.reshape(chunks, chunk_bits) @ (1 << np.arange(chunk_bits, dtype=np.int64))
    done_chunk = (first + steps - 1) // chunk_bits
    done = np.searchsorted(done_chunk, np.arange(chunks), side="right")
    fields = [_fields(words, chunk_bits, np.arange(chunks), _Z_UNARY)]
    if div:
        fields.append(_fields(runs & ((1 << div) - 1), div, done_chunk, _Z_REMAINDERS))
    return fields, done


def _schedule(w_done: np.ndarray, z_done: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The step of every weight chunk and run chunk: a step codes a weight chunk while the
    weights are fewer than 8 ahead of the runs, a run chunk while they are not behind."""
    w_step = np.zeros(w_done.size, np.int64)
    z_step = np.zeros(z_done.size, np.int64)
    w_total = int(w_done[-1]) if w_done.size else 0
    z_total = int(z_done[-1]) if z_done.size else 0
    w_list, z_list = w_done.tolist(), z_done.tolist()
    step = cw = cz = w_pos = z_pos = 0
    while True:
        balance = w_pos - z_pos
        w_on = balance < 8 and w_pos < w_total
        z_on = balance >= 0 and z_pos < z_total
        if not (w_on or z_on):
            return w_step, z_step
        if w_on:
            w_step[cw] = step
            w_pos = w_list[cw]
            cw += 1
        if z_on:
            z_step[cz] = step
            z_pos = z_list[cz]
            cz += 1
        step += 1
