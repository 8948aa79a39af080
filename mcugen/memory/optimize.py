"""`--optimize ram|balanced|speed`: which of a build's candidate plans to keep.

plan.plan_model places up to three candidates for one order: whole tensors (no tiling), the
tiling of least RAM (tiling_search as it always was), and, for balanced when that one costs too
many instructions, the tiling of least RAM among those whose estimated instructions
(cost.py) stay within BALANCED_PERCENT of the fastest candidate; beside the first two, on a
core with fast paths, their lean twins, some ops run portable without their fast path's
scratch (kernel_variants.py), when that lowers the arena. Then

- ram: the least arena (ties: the fewer instructions);
- speed: the fewest estimated instructions (ties: the least arena), so no tiling unless it
  costs nothing;
- balanced: the least arena among the candidates within BALANCED_PERCENT of the fastest.

Choosing among one set of candidates gives, by construction, arena(ram) <= arena(balanced) <=
arena(speed) and est(speed) <= est(balanced) <= est(ram). The ram and speed choices are
reported beside the chosen one (report.json "optimize").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import McugenError
from ..records import dataclass

OPTIMIZE_MODES = ("ram", "balanced", "speed")
DEFAULT_MODE = "balanced"
# balanced: at most this many percent more estimated instructions than the fastest candidate
BALANCED_PERCENT = 3.0


def check_mode(mode: str) -> str:
    if mode not in OPTIMIZE_MODES:
        raise McugenError(f"--optimize '{mode}' is not one of {', '.join(OPTIMIZE_MODES)}")
    return mode


@dataclass(frozen=True)
class Figures:
    """One candidate plan's arena and estimated instructions per invoke."""

    arena_bytes: int
    estimated_instructions: int
    chains: int  # tiled chains
    portable: int = 0  # ops run portable, their fast path's scratch left out (kernel_variants.py)

    def to_json(self) -> dict[str, int]:
        return {"arena_bytes": self.arena_bytes, "estimated_instructions": self.estimated_instructions,
                "tiled_chains": self.chains, "portable_ops": self.portable}


@dataclass(frozen=True)
class TradeOff:
    """The mode, the chosen plan's figures, and those of the plans ram and speed would choose."""

    mode: str
    chosen: Figures
    ram: Figures
    speed: Figures

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "balanced_percent": BALANCED_PERCENT, **self.chosen.to_json(),
                "ram": self.ram.to_json(), "speed": self.speed.to_json()}

    def line(self) -> str:
        """The one line `mcugen build` and `mcugen plan` print."""
        def show(f: Figures) -> str:
            return f"{f.arena_bytes} bytes, ~{f.estimated_instructions:,} CPU instructions"

        return (f"optimize {self.mode}: {show(self.chosen)} (ram: {show(self.ram)}; speed: {show(self.speed)}; "
                f"balanced: least RAM within {BALANCED_PERCENT:g}% of the fastest)")


def within_budget(fastest: int) -> int:
    """The most estimated instructions balanced accepts, the fastest candidate's being `fastest`."""
    return int(fastest * (1.0 + BALANCED_PERCENT / 100.0))


def _by_ram(f: Figures) -> tuple[int, int]:
    return f.arena_bytes, f.estimated_instructions


def _by_speed(f: Figures) -> tuple[int, int]:
    return f.estimated_instructions, f.arena_bytes


def choose(candidates: Sequence[Figures], mode: str) -> int:
    """The index of the candidate `mode` keeps (ties beyond the keys: the earlier one)."""
    indices = range(len(candidates))
    if mode == "ram":
        return min(indices, key=lambda i: _by_ram(candidates[i]))
    fastest = min(indices, key=lambda i: _by_speed(candidates[i]))
    if mode == "speed":
        return fastest
    budget = within_budget(candidates[fastest].estimated_instructions)
    return min((i for i in indices if candidates[i].estimated_instructions <= budget),
               key=lambda i: _by_ram(candidates[i]))


def trade_off(candidates: Sequence[Figures], mode: str) -> tuple[int, TradeOff]:
    """The chosen candidate's index and the figures to report."""
    chosen = choose(candidates, mode)
    return chosen, TradeOff(mode, candidates[chosen], candidates[choose(candidates, "ram")],
                            candidates[choose(candidates, "speed")])

