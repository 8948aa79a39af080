"""live_totals.LiveTotals: the tiling search's bytes live per step, the same lists as the
planner's own buffers give (liveness.collect_buffers through each tiling's step view, then
live_by_step), for every candidate tiling the search scores on the public models and the test
fixtures, both searches (least RAM, and --optimize balanced's within an instruction budget)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PUBLIC_MODELS, REPO

from mcugen.driver import load_graph
from mcugen.errors import McugenError
from mcugen.ir import Pin
from mcugen.memory.cost import cost_model, estimator
from mcugen.memory.live_totals import LiveTotals
from mcugen.memory.optimize import within_budget
from mcugen.memory.tiling import Tiling
from mcugen.memory.tiling_search import TilingSearch
from mcugen.ops.registry import scratch_bytes
from mcugen.schedule import schedule
from mcugen.targets import target

MODELS = sorted(PUBLIC_MODELS.glob("*.tflite")) + sorted((REPO / "tests" / "fixtures").glob("*.tflite"))


def _checked_search(model: Path, core: str) -> tuple[TilingSearch, list[Tiling]] | None:
    """Both searches of `model` on `core`, every candidate's totals compared; None if the
    model does not build there."""
    try:
        graph = load_graph(model, target=target(core))
    except McugenError:
        return None
    scratch = scratch_bytes(target(core))
    order = schedule(graph, scratch, optimise=True).order
    search = TilingSearch(graph, order, scratch)
    if not search.live.supported:  # a Vela-compiled model: never tiled
        return None
    scored: list[Tiling] = []

    def compared(tiling: Tiling) -> list[list[int]]:
        fast, collected = search.live.variants(tiling), search.collected_totals(tiling)
        assert fast == collected, [chain.describe() for chain in tiling.chains]
        scored.append(tiling)
        return fast

    search.variant_totals = compared  # type: ignore[method-assign]
    search.plan()
    instructions = estimator(order, cost_model(target(core)))
    budget = within_budget(instructions(None))
    search.plan(lambda tiling: instructions(tiling) <= budget)
    return search, scored


@pytest.mark.parametrize("core", ["host", "cortex-m4"])
def test_every_scored_tiling_has_the_planners_totals(core: str) -> None:
    if not MODELS:
        pytest.skip("no models")
    scored = 0
    chained = 0
    for model in MODELS:
        found = _checked_search(model, core)
        if found is not None:
            scored += len(found[1])
            chained += sum(1 for tiling in found[1] if len(tiling.chains) > 1)
    # the comparison ran on many candidates, some with two chains or more (sharing, merged lifetimes)
    assert scored > 200 and chained > 20, (scored, chained)


def test_an_order_with_pinned_tensors_is_not_supported() -> None:
    """Vela's offsets (Tensor.pin) are never tiled: the search falls back to collect_buffers."""
    graph = load_graph(MODELS[0])
    assert LiveTotals(graph, graph.ops, lambda op: 0).supported
    graph.ops[0].outputs[0].pin = Pin("scratch", 0)
    assert not LiveTotals(graph, graph.ops, lambda op: 0).supported
