"""`dataclass` as in the standard library, with the generated methods built without compiling.

`dataclasses.dataclass` writes the source of `__init__`, `__repr__`, `__eq__`, `__hash__` and,
for frozen classes, `__setattr__`/`__delattr__` for every class and `exec`s each: ~5 compiles a
class, ~1 ms, ~100 ms of every `mcugen build` over the ~120 classes it defines. Here the
standard library still reads the fields (defaults, `field()`, ClassVar, `__match_args__`,
`fields()`, `replace()`, `asdict()` all work as before), but makes none of those methods;
`__init__` is one compiled template per (field count, frozen), its code given the class's field
names (`code.replace`); the others are closures over `operator.attrgetter`. They behave as the
standard library's (Python 3.11's: the same repr text, tuple equality and tuple hash).

Classes that use what the fast path does not cover (dataclass bases, default factories,
`__post_init__`, InitVar, keyword-only fields, slots, order, unsafe_hash) get the standard
library's decorator unchanged. Nothing outside this module is patched.

Type checkers see the standard library's `dataclass` (the `TYPE_CHECKING` import below).
"""

from __future__ import annotations

import dataclasses
import inspect
import reprlib
import sys
import types
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass  # noqa: PLC0414 - re-exported for mypy's dataclass plugin
else:
    def dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False, unsafe_hash=False,
                  frozen=False, **options):
        """`dataclasses.dataclass`, with the methods it generates made without `exec`."""

        def wrap(cls):
            if options or order or unsafe_hash or not _fast_path_covers(cls) or not _plain_body(cls):
                return dataclasses.dataclass(cls, init=init, repr=repr, eq=eq, order=order,
                                             unsafe_hash=unsafe_hash, frozen=frozen, **options)
            return _process(cls, init, repr, eq, frozen)

        return wrap if cls is None else wrap(cls)


def _fast_path_covers(cls: type) -> bool:
    """Whether `cls`'s own class body is all the fast path needs to know (no dataclass bases,
    no __post_init__, no methods of its own that the decorator would refuse to replace)."""
    if any(hasattr(b, "__dataclass_fields__") for b in cls.__mro__[1:]):
        return False
    return not any(hasattr(cls, name) for name in ("__post_init__", "__slots__")) \
        and "__setattr__" not in cls.__dict__ and "__delattr__" not in cls.__dict__


def _plain_body(cls: type) -> bool:
    """Whether every field `cls` declares is one the fast path covers: no default factory, not
    keyword-only, not an InitVar or KW_ONLY marker, none named `self` (read before the standard
    library replaces the `field()` objects by their defaults)."""
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - what dataclasses itself reads
    for name, annotation in own.items():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        if name == "self" or "InitVar" in text or "KW_ONLY" in text:
            return False
        value = cls.__dict__.get(name)
        if isinstance(value, dataclasses.Field) and (
                value.default_factory is not dataclasses.MISSING or value.kw_only is True):
            return False
    return True


def _process(cls: type, init: bool, repr: bool, eq: bool, frozen: bool) -> type:
    had_doc = bool(cls.__dict__.get("__doc__"))
    explicit_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
    has_explicit_hash = not (explicit_hash is dataclasses.MISSING
                             or (explicit_hash is None and "__eq__" in cls.__dict__))
    own = {name for name in ("__init__", "__repr__", "__eq__") if name in cls.__dict__}
    if not had_doc:
        cls.__doc__ = "-"  # the standard library's signature doc is written below, once
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = list(dataclasses.fields(cls))  # the instance fields, not ClassVars
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init, params.repr, params.eq, params.frozen = init, repr, eq, frozen
    if init and "__init__" not in own:
        cls.__init__ = _init_fn(cls, [f for f in fields if f.init], frozen)  # type: ignore[misc]
    if repr and "__repr__" not in own:
        cls.__repr__ = _repr_fn(cls, [f.name for f in fields if f.repr])  # type: ignore[method-assign, assignment]
    compared = [f.name for f in fields if f.compare]
    if eq and "__eq__" not in own:
        cls.__eq__ = _eq_fn(cls, compared)  # type: ignore[method-assign, assignment]
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen_fns(cls, tuple(f.name for f in fields))  # type: ignore[method-assign, assignment]
    if eq and not has_explicit_hash:
        hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
        cls.__hash__ = _hash_fn(cls, hashed) if frozen else None  # type: ignore[assignment]
    if not had_doc:
        cls.__doc__ = _SignatureDoc(cls)  # type: ignore[assignment]
    return cls


class _SignatureDoc:
    """The standard library's `__doc__` of a dataclass without a docstring (its name and
    signature), made when first read: `inspect.signature` costs more than the rest of the
    class's processing, and nothing in a build reads these. The class's `__doc__` is this
    descriptor (`type.__doc__` and instance lookup both call `__get__`) until then."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def __get__(self, instance: Any, owner: type | None = None) -> str:
        cls = self.cls
        try:
            signature = str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            signature = ""
        doc = cls.__name__ + signature
        cls.__doc__ = doc
        return doc


_INIT_TEMPLATES: dict[tuple[int, bool], types.CodeType] = {}
PRECOMPILED_FIELDS = 20  # records_init.py holds the templates up to this many fields


def _template_source(count: int, frozen: bool, name: str = "_make") -> str:
    """The source of `name(_set)`, which returns the `__init__` template of this shape."""
    params = "".join(f", a{i}" for i in range(count))
    if frozen:
        body = [f" _set(self, 'f{i}', a{i})" for i in range(count)]
    else:
        body = [f" self.f{i} = a{i}" for i in range(count)]
    return f"def {name}(_set):\n def __init__(self{params}):\n" + "\n".join(
        " " + line for line in body or [" pass"]) + "\n return __init__\n"


def template_module() -> str:
    """The text of mcugen/records_init.py: every template up to PRECOMPILED_FIELDS fields, so
    that importing a module of dataclasses loads them from bytecode instead of compiling."""
    head = ('"""Generated by `python -m mcugen.records` (records._template_source): the `__init__`\n'
            'templates of mcugen.records.dataclass, one per field count and frozen-ness."""\n'
            "# ruff: noqa\n# mypy: ignore-errors\n")
    return head + "".join("\n\n" + _template_source(count, frozen, f"_make_{'frozen' if frozen else 'plain'}_{count}")
                          for count in range(PRECOMPILED_FIELDS + 1) for frozen in (False, True))


def _init_template(count: int, frozen: bool) -> types.CodeType:
    """The code of `__init__(self, a0, a1, ...)` storing each argument as attribute `f<i>`
    (through `object.__setattr__`, a closure cell, if frozen): from records_init.py, else
    compiled once per shape."""
    key = (count, frozen)
    if key not in _INIT_TEMPLATES:
        from . import records_init  # bytecode, cached by the import system like any module

        make = getattr(records_init, f"_make_{'frozen' if frozen else 'plain'}_{count}", None)
        if make is None:
            scope: dict[str, Any] = {}
            exec(compile(_template_source(count, frozen), "<mcugen.records>", "exec"), scope)  # noqa: S102 - our own fixed text
            make = scope["_make"]
        _INIT_TEMPLATES[key] = next(c for c in make.__code__.co_consts if isinstance(c, types.CodeType))
    return _INIT_TEMPLATES[key]


def _init_fn(cls: type, fields: list[dataclasses.Field[Any]], frozen: bool) -> Callable[..., None]:
    """The dataclass `__init__` of `cls`: a template's code renamed to its fields."""
    names = [f.name for f in fields]
    seen_default = False
    for f in fields:
        if f.default is not dataclasses.MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    template = _init_template(len(names), frozen)
    placeholder = {f"f{i}": name for i, name in enumerate(names)}
    code = template.replace(
        co_varnames=("self", *names),
        co_names=tuple(placeholder.get(n, n) for n in template.co_names),
        co_consts=tuple(placeholder.get(c, c) if isinstance(c, str) else c for c in template.co_consts))
    module = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
    closure = (types.CellType(object.__setattr__),) if template.co_freevars else None
    defaults = tuple(f.default for f in fields if f.default is not dataclasses.MISSING) or None
    fn = types.FunctionType(code, module, "__init__", defaults, closure)
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    fn.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return fn


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A function returning the tuple of these attributes (attrgetter gives a bare value for one)."""
    if len(names) >= 2:
        return attrgetter(*names)
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _repr_fn(cls: type, names: list[str]) -> Callable[[Any], str]:
    values = _getter(names)

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join(
            f"{name}={value!r}" for name, value in zip(names, values(self))) + ")"

    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    return __repr__


def _eq_fn(cls: type, names: list[str]) -> Callable[[Any, Any], Any]:
    values = _getter(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    __eq__.__qualname__ = f"{cls.__qualname__}.__eq__"
    return __eq__


def _hash_fn(cls: type, names: list[str]) -> Callable[[Any], int]:
    values = _getter(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
    return __hash__


def _frozen_fns(cls: type, names: tuple[str, ...]) -> tuple[Callable[..., None], Callable[..., None]]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    __setattr__.__qualname__ = f"{cls.__qualname__}.__setattr__"
    __delattr__.__qualname__ = f"{cls.__qualname__}.__delattr__"
    return __setattr__, __delattr__


if __name__ == "__main__":
    from pathlib import Path

    Path(__file__).with_name("records_init.py").write_text(template_module(), encoding="utf-8")
