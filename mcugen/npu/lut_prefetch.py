"""Table DMAs started early: a LUT's copy into SHRAM running beside the kernels before its op.

A SOFTMAX's exponentials (1 KiB) and a LUT op's table (256 bytes) reach LUT slot 0 by a DMA
from flash (about a cycle per byte) that the op's kernel waits for; started right before it, the
copy adds its whole length to the stream. `table_prefetches` moves it back to before the kernel
of an earlier op, as far as the ops in between take (by the build-time estimate) at least as
long as the copy: those ops are lowered with the LUT's banks left out of their blocks
(`CommandStream.lut_reserved`), and `emit_table_prefetch` waits for every kernel issued before
(NPU_OP_KERNEL_WAIT 0, whose blocks may hold those banks) before it starts the copy. It never
moves past another op with a table, a striped chain or the start of the stream.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..ir import Op, OpKind
from ..records import dataclass
from .config import NpuConfig
from .estimate import flash_copy_cycles, op_cycles
from .featuremap import LoweringError
from .lower import Flash
from .lower_lut import LUT_KINDS, lut_table, start_table_dma
from .lower_softmax import exp_table
from .registers import Cmd0
from .stream import CommandStream


@dataclass(frozen=True)
class TablePrefetch:
    """The DMA of `table` starts before the kernel of op `at` (an id); the ops lowered from there
    up to the table's own op (`reserved`, ids) leave the LUT's banks alone."""

    at: int
    table: bytes
    reserved: frozenset[int]


def op_table(op: Op, fused: Op | None) -> bytes | None:
    """The table `op` loads into LUT slot 0 (that of `fused`, the LUT op in its output stage), or None."""
    if op.kind is OpKind.SOFTMAX:
        try:
            return exp_table(op)
        except LoweringError:
            return None
    lut_op = fused if fused is not None else op
    try:
        return lut_table(lut_op) if lut_op.kind in LUT_KINDS else None
    except LoweringError:
        return None  # it does not lower through a table (its lowering says why)


def table_prefetches(ops: list[Op], fused: Mapping[int, Op], inner: set[int], striped: Mapping[int, object],
                     config: NpuConfig) -> dict[int, TablePrefetch]:
    """id of the op before whose kernel a table's DMA starts -> the prefetch (module docstring)."""
    found: dict[int, TablePrefetch] = {}
    for n, op in enumerate(ops):
        if id(op) in inner or id(op) in striped:
            continue
        table = op_table(op, fused.get(id(op)))
        if table is None:
            continue
        need, covered, start = flash_copy_cycles(len(table)), 0, None
        for k in range(n - 1, -1, -1):
            earlier = ops[k]
            if (id(earlier) in striped or id(earlier) in inner or id(earlier) in found
                    or op_table(earlier, fused.get(id(earlier))) is not None):
                break
            covered += op_cycles(earlier, config)
            start = k
            if covered >= need:
                break
        if start is not None and covered > 0:
            reserved = frozenset(id(o) for o in ops[start:n + 1])
            found[id(ops[start])] = TablePrefetch(id(ops[start]), table, reserved)
    return found


def emit_table_prefetch(prefetch: TablePrefetch, flash: Flash, config: NpuConfig, stream: CommandStream) -> None:
    """Wait for the kernels issued so far (their blocks may hold the LUT's banks), then start the copy."""
    stream.cmd0(Cmd0.OP_KERNEL_WAIT, 0)
    start_table_dma(prefetch.table, flash, config, stream)
    stream.table_started = prefetch.table


__all__ = ["TablePrefetch", "emit_table_prefetch", "op_table", "table_prefetches"]
