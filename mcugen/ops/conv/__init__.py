"""The conv family's op definitions (being moved here from the old per-stage modules)."""

from __future__ import annotations

from ..base import OpDef

OPS: list[OpDef] = []
