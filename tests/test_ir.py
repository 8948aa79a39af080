"""IR invariants that other stages rely on."""

from __future__ import annotations

from mcugen.ir import OpKind


def test_op_kinds_are_distinct_members() -> None:
    """Equal enum values would make one kind an alias of another (MAX_POOL_2D of AVERAGE_POOL_2D)."""
    names = [kind.name for kind in OpKind]
    assert len(names) == len(set(names)) == len(OpKind.__members__)
    assert OpKind.MAX_POOL_2D is not OpKind.AVERAGE_POOL_2D
