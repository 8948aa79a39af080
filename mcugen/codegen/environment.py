"""The one set of templates of the generated C, made once per process.

The templates are Jinja's syntax (trim_blocks, lstrip_blocks, keep_trailing_newline, strict
undefined, no autoescape), rendered by codegen/templating.py, which compiles the part of Jinja
they use to Python: a build neither imports Jinja nor writes anything outside its output
directory. Each template's Python ships precompiled in mcugen/codegen/compiled (precompile.py
writes it; a test checks it is current), so a build only imports it; a template whose source
no longer matches its precompiled module (edited since) is compiled in memory instead.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..digest import sha1
from .templating import TemplateError, compile_template

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
COMPILED_PACKAGE = __package__ + ".compiled"

Render = Callable[[dict[str, Any], Callable[..., str]], str]


def module_name(template: str) -> str:
    """The precompiled module of a template: model.c.j2 -> t_model_c_j2."""
    return "t_" + "".join(c if c.isalnum() else "_" for c in template)


def source_digest(source: str) -> str:
    return sha1(source.encode()).hexdigest()


def precompiled(template: str, source: str) -> Render | None:
    """The precompiled render function of `template` if it was compiled from `source`."""
    try:
        module = importlib.import_module(f"{COMPILED_PACKAGE}.{module_name(template)}")
    except ImportError:
        return None
    if getattr(module, "SOURCE_SHA1", None) != source_digest(source):
        return None
    return module.render  # type: ignore[no-any-return]


class Template:
    """A compiled template of a Templates set (as Jinja's get_template(...).render(data))."""

    def __init__(self, owner: Templates, name: str, function: Render) -> None:
        self.owner, self.name, self.function = owner, name, function

    def render(self, data: dict[str, Any] | None = None, **more: Any) -> str:
        try:
            return self.function({**(data or {}), **more}, self.owner.include)
        except KeyError as missing:
            raise TemplateError(f"template {self.name} uses {missing}, which the data does not have") from None


class Templates:
    """The templates under one directory, each loaded when first asked for, once per process
    (`use_precompiled`: from mcugen/codegen/compiled when current, else compiled here)."""

    def __init__(self, directory: Path, use_precompiled: bool = True) -> None:
        self.directory, self.use_precompiled = directory, use_precompiled
        self.loaded: dict[str, Template] = {}

    def get_template(self, name: str) -> Template:
        if name not in self.loaded:
            source = (self.directory / name).read_text(encoding="utf-8")
            function = precompiled(name, source) if self.use_precompiled else None
            self.loaded[name] = Template(self, name, function or compile_template(source, name))
        return self.loaded[name]

    def include(self, name: str, context: dict[str, Any]) -> str:
        return self.get_template(name).render(context)


@functools.cache
def environment() -> Templates:
    """The process's templates."""
    return Templates(TEMPLATES)
