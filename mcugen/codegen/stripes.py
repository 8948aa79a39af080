"""The C of a tiled chain (mcugen.memory.tiling): every op's kernel called once per stripe, on
sub-tensors.

The whole chain runs at its last op's step, as one call of a static function
`<prefix>_tiled_ops_<first>_<last>`: for stripe k, for op j, one call of the op's usual
kernel on a stand-in op whose tensors have the stripe's rows. Stripes that make the same calls
with every pointer offset moving by the same bytes each time (all the middle ones; with a
stride-2 op, every other one) become one `for` loop over k with offsets `first + k * step`;
the others stay straight-line calls.

Pointers go to row `in_start` of the chain's whole input, into the stripe slots of the
intermediates (at the row's place in what the slot holds), and to row `out_start` of the
chain's whole output; a row-wise op's other operands (a residual ADD's, a concatenation's skip)
are read from their whole tensors at the stripe's rows, a broadcast row (SE's scales) whole. A
resize gets its row table sliced to the stripe and moved to the sub-tensor's first row
(ops/resize/emit.py `stripe_tables`); stripes whose tables are equal share one set of constants.
The stand-in op's index is op.index * 100 + a geometry number, so that each distinct stripe
geometry gets its own parameter structs in the function and equal geometries share them; flash
constants (multipliers, shifts) are shared through a content cache.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..ir import Op, Tensor
from ..memory.plan import Plan
from ..memory.tiling import RESIZES, Chain, OpRows, Stripe, call_view, row_broadcast, row_bytes
from ..ops import registry
from ..ops.base import setting_of
from ..ops.emitting import KernelCall

if TYPE_CHECKING:
    from ..ops.resize.emit import RowTables

GEOMETRIES_PER_OP = 100  # the stand-in index's factor; a chain has far fewer stripes


class _StripeContext:
    """The generator's context, with the stripe's pointers for the stand-in tensors."""

    def __init__(self, inner: Any, cache: dict[tuple[str, str, tuple[int, ...], bytes], str],
                 chain: Chain) -> None:
        self.inner = inner
        self.chain = chain
        self.rounding = inner.rounding
        self.pointers: dict[int, str] = {}
        self.renamed = ("", "")  # (stand-in's "opN ", the op's own) in constant names
        self.cache = cache

    def ptr(self, tensor: Tensor) -> str:
        return self.pointers.get(id(tensor)) or self.inner.ptr(tensor)

    def constant(self, hint: str, values: np.ndarray, ctype: str) -> str:
        values = np.ascontiguousarray(values)
        key = (ctype, values.dtype.str, tuple(values.shape), values.tobytes())
        if key not in self.cache:
            self.cache[key] = self.inner.constant(hint.replace(*self.renamed), values, ctype)
        return self.cache[key]

    def scratch(self, op: Op) -> tuple[str, int]:
        """The chain's one scratch buffer (planned for its last op), shared by its calls; of it,
        an op the plan runs portable is told only what its portable kernel needs."""
        pointer, size = self.inner.scratch(self.chain.ops[-1])
        size = self.inner.plan.kernel_scratch_bytes(op, size)
        return (pointer, size) if size else ("NULL", 0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


MARK = "\x01"  # around every byte offset that may change from stripe to stripe
MOVE, MOVED = "((void)", ", MCUGEN_OK)"  # a move as an expression of status type


def _mover(ctx: Any) -> tuple[str, set[str]]:
    """The function that moves kept rows, and its runtime: on a core with Helium,
    mcugen_move_rows (three instructions per 16 bytes where newlib's memmove takes eleven);
    elsewhere memmove, which adds no code (the 16 KB of kws's Cortex-M4 runtime)."""
    if ctx.target.mve:
        return "mcugen_move_rows", {"mcugen_stripe", "mcugen_stripe_fast", "mcugen_stripe_fast_mve"}
    return "memmove", set()


def _offset(value: int) -> str:
    return f"{MARK}{value}{MARK}"


def _pointer(tensor: Tensor, address: str, byte_offset: int) -> str:
    return f"(({tensor.dtype.ctype} *)({address} + {_offset(byte_offset)}))"


def _slot_pointer(chain: Chain, stripe: Stripe, j: int, row: int, region: str) -> str:
    """Where row `row` of intermediate j is in its slot during `stripe`."""
    tensor = chain.ops[j].outputs[0]
    offset = chain.slot_offsets[j] + (row - stripe.held[j][0]) * row_bytes(tensor)
    return _pointer(tensor, region, offset)


OUTPUT = -1  # the output's key among an op's operand pointers


def _operand_pointers(chain: Chain, j: int, stripe: Stripe, ctx: Any, slot: str) -> dict[int, str]:
    """Op j's pointers in one stripe: input position (or OUTPUT) -> pointer expression."""
    op = chain.ops[j]
    rows = stripe.calls[j]
    assert rows is not None
    flow = chain.flow_operand(j)
    pointers: dict[int, str] = {}
    for n, tensor in enumerate(op.inputs):
        if tensor is None or tensor.is_constant:
            continue
        if n == flow:
            if j == 0:
                pointers[n] = _pointer(tensor, ctx.address(tensor), rows.in_start * row_bytes(tensor))
            else:
                pointers[n] = _slot_pointer(chain, stripe, j - 1, rows.in_start, slot)
        elif row_broadcast(tensor, op.outputs[0]):  # one row for all: read whole by every stripe
            pointers[n] = _pointer(tensor, ctx.address(tensor), 0)
        else:  # a residual operand: the whole tensor's rows of this stripe
            pointers[n] = _pointer(tensor, ctx.address(tensor), rows.out_start * row_bytes(tensor))
    y = op.outputs[0]
    if j == len(chain.ops) - 1:
        pointers[OUTPUT] = _pointer(y, ctx.address(y), rows.out_start * row_bytes(y))
    else:
        pointers[OUTPUT] = _slot_pointer(chain, stripe, j, rows.out_start, slot)
    return pointers


def _stand_in(chain: Chain, j: int, rows: OpRows, ctx: _StripeContext, pointers: dict[int, str],
              number: int) -> Op:
    """Op j of the chain as the kernel sees it in one stripe; its pointers go into ctx."""
    op = chain.ops[j]
    call = call_view(op, chain.flow_operand(j), rows)
    inputs: list[Tensor | None] = list(call.inputs)
    for n, pointer in pointers.items():
        if n == OUTPUT:
            continue
        view = inputs[n]
        assert view is not None
        if view is op.inputs[n]:  # a broadcast row, read whole: a stand-in of its own for its pointer
            view = inputs[n] = dataclasses.replace(view, consumers=[])
        ctx.pointers[id(view)] = pointer
    out = call.outputs[0]
    ctx.pointers[id(out)] = pointers[OUTPUT]
    stand_in = dataclasses.replace(op, inputs=inputs, outputs=[out], index=op.index * GEOMETRIES_PER_OP + number)
    ctx.renamed = (f"op{stand_in.index} ", f"op{op.index} ")
    return stand_in


HOLE = "\x02"  # around an operand's number in a call emitted once for every stripe of its geometry


def _template(chain: Chain, j: int, rows: OpRows, ctx: _StripeContext, pointers: dict[int, str],
              number: int, tables: RowTables | None) -> KernelCall | None:
    """Op j's call for every stripe of this geometry, each operand pointer a hole to fill in
    (only the pointers differ between such stripes); None if a declaration took a pointer."""
    holes = {n: f"{HOLE}{n}{HOLE}" for n in pointers}
    call = _call(_stand_in(chain, j, rows, ctx, holes, number), ctx, rows, tables)
    return None if any(HOLE in d for d in call.declarations) else call


def _fill(text: str, pointers: dict[int, str]) -> str:
    parts = text.split(HOLE)
    parts[1::2] = [pointers[int(n)] for n in parts[1::2]]
    return "".join(parts)


def _moves(chain: Chain, stripe: Stripe, region: str, mover: str) -> list[str]:
    """Rows a rolling chain keeps from the stripe before, moved to the start of their slots (an
    expression of status type, as the template's calls are)."""
    moves = []
    for j, kept in enumerate(stripe.kept):
        if kept is None or kept[0] == 0:
            continue
        size = row_bytes(chain.ops[j].outputs[0])
        at = chain.slot_offsets[j]
        moves.append(f"{MOVE}{mover}({region} + {_offset(at)}, {region} + {_offset(at + kept[0] * size)}, "
                     f"{_offset(kept[1] * size)}){MOVED}")
    return moves


def _resize_tables(chain: Chain, j: int, rows: OpRows, ctx: Any) -> RowTables | None:
    """A resize's row tables for this stripe (None for other ops)."""
    op = chain.ops[j]
    if op.kind not in RESIZES:
        return None
    from ..ops.resize.emit import stripe_tables  # the resize family only for chains with a resize

    return stripe_tables(op, rows.out_start, rows.out_stop, rows.in_start, setting_of(ctx))


def _tables_key(tables: RowTables) -> bytes:
    from ..ops.resize.emit import tables_key

    return tables_key(tables)


def _call(op: Op, ctx: _StripeContext, rows: OpRows, tables: RowTables | None = None) -> KernelCall:
    if tables is not None:
        from ..ops.resize.emit import emit_resize_stripe

        return emit_resize_stripe(op, ctx, tables)
    definition = registry.op_def(op.kind)
    if definition.emit_rows is not None:
        return definition.emit_rows(op, ctx, rows.pad_top)
    return definition.emit(op, ctx)


def _stripe_calls(chain: Chain, ctx: Any, slot: str, result: KernelCall) -> list[list[str]]:
    """Each stripe's calls (byte offsets marked), its declarations and runtime into `result`.
    An op's call is emitted once per geometry (the stand-in's shape and padding) with holes
    for its pointers, then filled in for each stripe."""
    cache: dict[tuple[str, str, tuple[int, ...], bytes], str] = {}
    numbers: dict[tuple[int, int, int, int, bytes], int] = {}
    templates: dict[tuple[int, int, int, int, bytes], KernelCall | None] = {}
    declared = set(result.declarations)
    checked: set[int] = set()  # the ops whose first call (the checked kernel's) is made
    stripes = []
    mover, mover_runtime = _mover(ctx)
    for stripe in chain.stripes:
        calls = _moves(chain, stripe, slot, mover)
        if calls:
            result.runtime |= mover_runtime
        for j, rows in enumerate(stripe.calls):
            if rows is None:
                continue
            tables = _resize_tables(chain, j, rows, ctx)
            key = (j, rows.in_rows, rows.out_rows, rows.pad_top, b"" if tables is None else _tables_key(tables))
            number = numbers.setdefault(key, sum(1 for k in numbers if k[0] == j))
            assert number < GEOMETRIES_PER_OP, "stand-in names would collide"
            pointers = _operand_pointers(chain, j, stripe, ctx, slot)
            if key not in templates:
                templates[key] = _template(chain, j, rows, _StripeContext(ctx, cache, chain), pointers, number,
                                           tables)
            template = templates[key]
            if template is None:
                sctx = _StripeContext(ctx, cache, chain)
                call = _call(_stand_in(chain, j, rows, sctx, pointers, number), sctx, rows, tables)
            else:
                call = KernelCall(template.declarations, [_fill(c, pointers) for c in template.calls],
                                  template.runtime)
            for declaration in call.declarations:
                if declaration not in declared:
                    declared.add(declaration)
                    result.declarations.append(declaration)
            calls += call.calls if j not in checked else [_unchecked(c) for c in call.calls]
            checked.add(j)
            result.runtime |= call.runtime
        stripes.append(calls)
    return stripes


# Kernels with an entry point for a chain's later stripes that skips the argument checks
# (mcugen_conv.h): the build checked the op and made the stripes' dims, and the op's first
# call in the chain is the checked kernel's. The checks cost a few-pixel stripe about a pixel.
STRIPE_ENTRIES = {"mcugen_convolve_s8(": "mcugen_convolve_stripe_s8(",
                  "mcugen_depthwise_conv_s8(": "mcugen_depthwise_conv_stripe_s8("}


def _unchecked(call: str) -> str:
    for checked, entry in STRIPE_ENTRIES.items():
        if call.startswith(checked):
            return entry + call[len(checked):]
    return call


Shape = tuple[tuple[str, ...], ...]  # each call's text between its marked offsets


def _shape(calls: list[str]) -> tuple[Shape, tuple[int, ...]]:
    parts = [call.split(MARK) for call in calls]
    return tuple(tuple(p[0::2]) for p in parts), tuple(int(v) for p in parts for v in p[1::2])


Run = tuple[Shape, tuple[int, ...], tuple[int, ...], int]  # shape, first offsets, steps, repeats
MAX_PERIOD = 4  # a chain with a stride-2 op repeats every 2 stripes, two such ops every 4


class _Units(Sequence[tuple[Shape, tuple[int, ...]]]):
    """The units of `period` stripes from each start, each made when first read: _repeats
    reads only as far as the repeats go, and a loop search from every stripe made them all."""

    def __init__(self, unit: Callable[[int, int], tuple[Shape, tuple[int, ...]]], starts: range,
                 period: int) -> None:
        self.unit, self.starts, self.period = unit, starts, period

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, k: int) -> tuple[Shape, tuple[int, ...]]:  # type: ignore[override]  # no slices
        return self.unit(self.starts[k], self.period)


def _repeats(units: Sequence[tuple[Shape, tuple[int, ...]]]) -> int:
    """How many of `units`, from the first, have its shape, with offsets moving evenly."""
    shape, first = units[0]
    if len(units) < 2 or units[1][0] != shape:
        return 1
    step = tuple(b - a for a, b in zip(first, units[1][1]))
    count = 2
    while count < len(units) and units[count][0] == shape and all(
            o == f + count * s for o, f, s in zip(units[count][1], first, step)):
        count += 1
    return count


def _runs(stripes: list[list[str]]) -> list[Run]:
    """Stripes grouped into loops: at each point the period (1..MAX_PERIOD stripes) whose
    repeats cover the most stripes; a period repeats when its calls are the same and each
    offset moves by the same bytes every time."""
    shapes = [_shape(calls) for calls in stripes]  # split once; a unit of stripes joins theirs

    @functools.cache
    def unit(start: int, period: int) -> tuple[Shape, tuple[int, ...]]:
        parts = shapes[start:start + period]
        return tuple(t for shape, _ in parts for t in shape), tuple(v for _, offsets in parts for v in offsets)

    runs: list[Run] = []
    i = 0
    while i < len(stripes):
        best_period, best_count = 1, 1
        for period in range(1, MAX_PERIOD + 1):
            units = _Units(unit, range(i, len(stripes) - period + 1, period), period)
            count = _repeats(units) if len(units) else 1
            if count > 1 and count * period > best_count * best_period:
                best_period, best_count = period, count
        shape, first = unit(i, best_period)
        following = unit(i + best_period, best_period)[1]
        step = tuple(b - a for a, b in zip(first, following)) if best_count > 1 else (0,) * len(first)
        runs.append((shape, first, step, best_count))
        i += best_period * best_count
    return runs


def _render(shape: Shape, offsets: Sequence[int], step: Sequence[int]) -> list[str]:
    """The calls of a run, each offset `first + k * step` (k: the stripe within the run)."""
    values = iter(zip(offsets, step))
    calls = []
    for texts in shape:
        out = [texts[0]]
        for text in texts[1:]:
            first, by = next(values)
            out.append(str(first) if by == 0 else f"{first} + k * {by}" if by > 0 else f"{first} - k * {-by}")
            out.append(text)
        calls.append("".join(out))
    return calls


def _function(name: str, declarations: list[str], stripes: list[list[str]]) -> str:
    """A static function running the stripes: a loop over each run of alike stripes."""
    lines = [f"static mcugen_status {name}(void)", "{", "    mcugen_status status = MCUGEN_OK;"]
    lines += [f"    {d}" for d in declarations]
    for shape, first, step, count in _runs(stripes):
        indent = "    " if count == 1 else "        "
        if count > 1:
            lines.append(f"    for (int32_t k = 0; k < {count}; ++k) {{")
        for call in _render(shape, first, step):
            if call.startswith(MOVE) and call.endswith(MOVED):  # a statement here, no status
                lines.append(f"{indent}{call[1:-len(MOVED)]};")
                continue
            lines += [f"{indent}status = {call};", f"{indent}if (status != MCUGEN_OK) {{",
                      f"{indent}    return status;", f"{indent}}}"]
        if count > 1:
            lines.append("    }")
    lines += ["    return status;", "}"]
    return "\n".join(lines)


def emit_chain_step(op: Op, chain: Chain, ctx: Any, plan: Plan) -> tuple[str, KernelCall, str]:
    """(title note, C, a file-scope function or '') of `op`'s step: the whole chain runs at its
    last op, as one call of a static function that loops over the stripes; nothing at the
    chain's other ops."""
    first, last = chain.ops[0].index, chain.ops[-1].index
    if op is not chain.ops[-1]:
        return f" (in the tiled chain of ops {first}..{last}, run at op {last})", KernelCall(), ""
    region = next(b for b in plan.buffers if b.name == chain.region_name)
    slot = f"{ctx.base(region)} + {region.offset}"
    body = KernelCall()
    stripes = _stripe_calls(chain, ctx, slot, body)
    name = f"{ctx.prefix}_tiled_ops_{first}_{last}"
    function = _function(name, body.declarations, stripes)
    halos = "halo rows kept" if chain.rolling else "halo rows recomputed"
    note = (f" (tiled chain of ops {first}..{last}: {len(chain.stripes)} stripes, {halos}, "
            f"{chain.extra_macs} extra MACs)")
    return note, KernelCall(calls=[f"{name}()"], runtime=body.runtime), function
