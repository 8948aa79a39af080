"""Graph rewrites, one module per family. Each pass keeps every result bit-identical."""

from __future__ import annotations

from ..ir import Graph
from .fold import fold_constant_reshapes


def run_passes(graph: Graph) -> Graph:
    fold_constant_reshapes(graph)
    graph.link()
    return graph
