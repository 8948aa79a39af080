"""What the passes did to each op of the file, for `mcugen inspect` and report.json."""

from __future__ import annotations

import enum
from dataclasses import field

from ..ir import Op
from ..records import dataclass


class Rewrite(enum.Enum):
    """What a pass did to an op of the file; the value is the phrase shown to users."""

    FOLDED = "folded: evaluated at build time, its output is a constant"
    IDENTITY = "removed: its output equals its input"
    ALIASED = "became an alias of its input (no code, no copy)"
    DEAD = "removed: no graph output depends on it"
    READ_IN_PLACE = "removed: its readers read the variable's state in place (no copy)"


@dataclass(frozen=True)
class Rewritten:
    op: Op  # the op as read from the file
    rewrite: Rewrite


@dataclass
class PassReport:
    rewrites: list[Rewritten] = field(default_factory=list)

    def record(self, op: Op, rewrite: Rewrite) -> None:
        self.rewrites.append(Rewritten(op, rewrite))

    def of(self, rewrite: Rewrite) -> list[Op]:
        return [r.op for r in self.rewrites if r.rewrite is rewrite]

    def by_index(self) -> dict[int, Rewrite]:
        """The last rewrite of each file op index (an op may be aliased, then folded)."""
        return {r.op.index: r.rewrite for r in self.rewrites}
