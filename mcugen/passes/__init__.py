"""Graph rewrites, one module per family. Each pass keeps every result bit-identical.

Order (run_passes):

0. float16 (float16.py): FLOAT16 constants become FLOAT32 (exact): the converter's DEQUANTIZE
   of a float16 weight folds away, a float16 constant read by a float32 op is widened.
1. identity (identity.py): ops whose output equals their input (a QUANTIZE to the same dtype,
   scale and zero point, a PAD by zero, ...) are removed and their consumers read the input;
   a chain of RESHAPE/SQUEEZE/EXPAND_DIMS becomes one RESHAPE of the chain's source
   (alias.py). An op that does nothing but produces a graph output becomes an alias of its
   input instead (RESHAPE: the planner gives it the input's bytes), so the output keeps its
   name, its place and its value.
2. fold (fold.py): an op whose inputs are all constant, and SHAPE of a tensor with a static
   shape, becomes a constant at build time, evaluated with the numpy reference kernels in the
   build's rounding mode. A folded graph output is still produced: invoke copies it out.
3. states read in place (state.py): a READ_VARIABLE whose readers all run before the next
   assignment of its variable is removed, and they read the variable's state directly.
4. dead code (dead.py): ops none of whose outputs is read or is a graph output, and that
   assign no variable, are removed.

Every rewrite is recorded in a PassReport (report.py) (what happened to which op of the file) for
`mcugen inspect` and report.json.
"""

from __future__ import annotations

from ..ir import Graph
from ..quantization import Rounding
from .dead import remove_dead_ops
from .float16 import widen_float16
from .fold import fold_constants
from .identity import remove_identities
from .report import PassReport, Rewrite, Rewritten
from .state import read_states_in_place

__all__ = ["PassReport", "Rewrite", "Rewritten", "run_passes"]


def run_passes(graph: Graph, rounding: Rounding = Rounding.TFLM) -> PassReport:
    """Rewrite `graph` in place; `rounding` selects the reference arithmetic that folds."""
    report = PassReport()
    widen_float16(graph, report)
    remove_identities(graph, report)
    fold_constants(graph, rounding, report)
    read_states_in_place(graph, report)
    remove_dead_ops(graph, report)
    graph.link()
    return report
