"""mcugen.records.dataclass behaves as the standard library's dataclass (the oracle), class by class."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from mcugen import records


def _classes(decorate: Callable[..., Any]) -> dict[str, type]:
    """The same class bodies, decorated by `decorate`: the shapes mcugen uses, and some it does not."""

    @decorate(frozen=True)
    class Point:
        """Documented."""

        x: int
        y: str = "a"
        z: tuple[int, ...] | None = field(default=None, repr=False)
        w: int = field(default=3, compare=False)
        kind: ClassVar[str] = "point"

        @property
        def twice(self) -> int:
            return 2 * self.x

    @decorate
    class Mutable:
        a: int
        b: float = 1.5
        c: int = field(default=7, init=False)

    @decorate(eq=False)
    class Identity:
        a: int

    @decorate(frozen=True)
    class Empty:
        pass

    @decorate(frozen=True, eq=False)
    class FrozenNoEq:
        a: int

    @decorate(frozen=True)
    class OwnHash:
        a: int

        def __hash__(self) -> int:
            return 5

    @decorate
    class OwnRepr:
        a: int

        def __repr__(self) -> str:
            return "mine"

    @decorate
    class Factory:  # falls back to dataclasses
        items: list[int] = field(default_factory=list)

    @decorate
    class PostInit:  # falls back to dataclasses
        a: int

        def __post_init__(self) -> None:
            self.a += 1

    @decorate(frozen=True)
    class Derived(Point):  # dataclass base: falls back to dataclasses
        extra: int = 0

    @decorate(frozen=True)
    class Many:
        f0: int
        f1: int
        f2: int
        f3: int
        f4: int
        f5: int
        f6: int
        f7: int
        f8: int
        f9: int = 9

    return {c.__name__: c for c in (Point, Mutable, Identity, Empty, FrozenNoEq, OwnHash, OwnRepr,
                                     Factory, PostInit, Derived, Many)}


def _outcome(call: Callable[[], Any]) -> Any:
    """What `call` returns, or the type and message of what it raises."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - the error itself is the observation
        return type(error).__name__, str(error)


def _observe(classes: dict[str, type]) -> list[Any]:
    """Everything a user of these classes can see, as plain values."""
    c = classes
    p, q = c["Point"](1, z=(1,)), c["Point"](1, z=(2,), w=9)
    m = c["Mutable"](2)
    many = c["Many"](*range(9))
    seen: list[Any] = [
        repr(p), p == q, p == c["Point"](2), hash(p) == hash(q), p.twice, p.w, c["Point"].kind,
        c["Point"].__doc__, str(inspect.signature(c["Point"])), c["Point"].__match_args__,
        _outcome(lambda: setattr(p, "x", 3)), _outcome(lambda: delattr(p, "y")),
        _outcome(lambda: c["Point"]()), _outcome(lambda: c["Point"](1, x=2)), _outcome(lambda: c["Point"](1, q=2)),
        repr(dataclasses.replace(p, y="b")), dataclasses.asdict(p), dataclasses.astuple(q),
        [(f.name, f.repr, f.compare, f.init) for f in dataclasses.fields(c["Point"])],
        repr(c["Point"].__dataclass_params__), dataclasses.is_dataclass(p),
        repr(m), m.c, c["Mutable"].__hash__, m == c["Mutable"](2), c["Mutable"].__doc__, _outcome(lambda: c["Mutable"](1, 2, 3)),
        c["Identity"](1) == c["Identity"](1), repr(c["Identity"](1)),
        repr(c["Empty"]()), c["Empty"]() == c["Empty"](), hash(c["Empty"]()) == hash(()),
        c["FrozenNoEq"](1) == c["FrozenNoEq"](1), _outcome(lambda: setattr(c["FrozenNoEq"](1), "a", 2)),
        hash(c["OwnHash"](1)), repr(c["OwnRepr"](1)),
        repr(c["Factory"]()), c["PostInit"](1).a, repr(c["Derived"](1, extra=2)), hash(c["Derived"](1)) == hash(c["Derived"](1)),
        repr(many), many == c["Many"](*range(9)), hash(many) == hash(c["Many"](*range(9))), many.f9,
        c["Many"](**{f"f{i}": i for i in range(10)}) == c["Many"](*range(10)),
    ]
    return [v.replace("records", "dataclasses") if isinstance(v, str) else v for v in seen]


def test_the_fast_dataclass_is_the_standard_one() -> None:
    assert _observe(_classes(records.dataclass)) == _observe(_classes(dataclasses.dataclass))


def test_the_fast_path_compiles_no_method_per_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the module: a plain frozen class costs no `exec` in dataclasses."""
    records._init_template(2, True)  # the template itself is compiled once per shape
    created: list[str] = []
    original = dataclasses._create_fn  # type: ignore[attr-defined]
    monkeypatch.setattr(dataclasses, "_create_fn", lambda name, *a, **k: created.append(name) or original(name, *a, **k))

    @records.dataclass(frozen=True)
    class Pair:
        a: int
        b: int = 2

    assert created == [] and Pair(1) == Pair(1, 2)


def test_records_init_templates_are_current() -> None:
    """After changing records._template_source: python -m mcugen.records."""
    assert Path(records.__file__).with_name("records_init.py").read_text(encoding="utf-8") == records.template_module()


@pytest.mark.parametrize("count, frozen", [(0, False), (3, True), (20, False), (21, True)])
def test_an_init_template_is_the_compiled_source(count: int, frozen: bool) -> None:
    """records_init.py's templates (up to PRECOMPILED_FIELDS) and the ones compiled past it."""
    scope: dict[str, Any] = {}
    exec(compile(records._template_source(count, frozen), "<test>", "exec"), scope)  # noqa: S102 - the module's own template text
    expected = next(c for c in scope["_make"].__code__.co_consts if isinstance(c, type(scope["_make"].__code__)))
    found = records._init_template(count, frozen)
    assert (found.co_code, found.co_varnames, found.co_names, found.co_consts, found.co_freevars) == (
        expected.co_code, expected.co_varnames, expected.co_names, expected.co_consts, expected.co_freevars)

