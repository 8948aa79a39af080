"""mcugen's templates rendered without Jinja: the subset of Jinja they use, compiled to Python.

Importing Jinja and compiling the templates cost a build ~100 M instructions (a tenth of it),
and keeping the compiled templates between processes meant a cache outside the output
directory. The templates use a small part of Jinja, so this module compiles that part to one
Python function per template, in memory, when a template is first rendered (a few ms). The
output is Jinja's, byte for byte, with the settings mcugen always used: `trim_blocks`,
`lstrip_blocks`, `keep_trailing_newline`, no autoescape, and strict undefined values (a name
the data lacks is an error; `is defined` and `default` may test for one).
tests/test_templating.py renders every template both ways, Jinja the oracle.

Supported: `{{ expr }}`, `{# #}`, `{%- -%}` whitespace control; `if/elif/else`, `for` (tuple
targets, an `if` filter), `set` (a name or a namespace attribute), `macro` (positional
parameters), `include "name"`; expressions of names, literals (strings, numbers, `true`,
`false`, `none`, lists, dicts), `.attr`, `[item]`, calls, `+ - * / // % ~`, comparisons, `in`,
`and/or/not`, `a if b else c`, filters `join length max default`, tests `defined none`.
Anything else is a TemplateError naming the template and line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import McugenError


class TemplateError(McugenError):
    """A template outside the supported subset, or one that names something the data lacks."""


# --- values at render time ---------------------------------------------------------------------


class Missing:
    """An attribute the data lacks (Jinja's StrictUndefined): `default` and `is defined` may
    test it; using it any other way is an error."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _fail(self, *_: object) -> Any:
        raise TemplateError(f"template uses `{self.name}`, which the data does not have")

    __str__ = __bool__ = __iter__ = __len__ = __getattr__ = __getitem__ = _fail  # type: ignore[assignment]


class Namespace:
    """Jinja's namespace(): attributes a loop body may set."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


def attribute(value: Any, name: str) -> Any:
    """Jinja's `value.name`: the attribute, else the item, else Missing."""
    try:
        return getattr(value, name)
    except AttributeError:
        pass
    try:
        return value[name]
    except (TypeError, LookupError, AttributeError):
        return Missing(name)


def item(value: Any, key: Any) -> Any:
    """Jinja's `value[key]`: the item, else (a string key) the attribute, else Missing."""
    try:
        return value[key]
    except (AttributeError, TypeError, LookupError):
        if isinstance(key, str):
            try:
                return getattr(value, key)
            except AttributeError:
                pass
        return Missing(repr(key))


def _join(value: Any, separator: str = "") -> str:
    return str(separator).join(map(str, value))


def _default(value: Any, fallback: Any = "") -> Any:
    return fallback if isinstance(value, Missing) else value


def _max(value: Any) -> Any:
    return max(value)


FILTERS: dict[str, Callable[..., Any]] = {"join": _join, "length": len, "max": _max, "default": _default}
GLOBALS = {"namespace": Namespace}
# What the compiled code refers to, by these names (compiled modules import them so).
RUNTIME = {"_attr": attribute, "_item": item, "_Missing": Missing, "_filters": FILTERS, "_g": GLOBALS}


# --- lexing the template's text and tags -------------------------------------------------------

_TAG = re.compile(r"\{([{%#])([-+]?)")
_END = {"{": "}}", "%": "%}", "#": "#}"}


def _tokens(source: str, name: str) -> Iterator[tuple[str, str, int]]:
    """(kind, text, line): kind "data", "{" (an expression) or "%" (a statement); comments
    dropped; whitespace control, trim_blocks and lstrip_blocks applied as Jinja's lexer does."""
    pos, line, line_starting = 0, 1, True
    while pos <= len(source):
        found = _TAG.search(source, pos)
        text = source[pos:found.start()] if found else source[pos:]
        if found is None:
            if text:
                yield "data", text, line
            return
        kind, sign = found.group(1), found.group(2)
        if sign == "-":
            text = text.rstrip()
        elif sign != "+" and kind != "{":
            start = text.rfind("\n") + 1
            if (start > 0 or line_starting) and text[start:] and text[start:].isspace():
                text = text[:start]
        if text:
            yield "data", text, line
        line += source.count("\n", pos, found.start())
        end = source.find(_END[kind], found.end())
        if end < 0:
            raise TemplateError(f"{name}:{line}: tag not closed")
        body = source[found.end():end]
        strip_after, keep_newline = body.endswith("-"), body.endswith("+")
        if strip_after or keep_newline:
            body = body[:-1]
        if kind != "#":
            yield kind, body.strip(), line
        line += body.count("\n")
        pos = end + 2
        line_starting = False
        if strip_after:  # Jinja's "-%}\s*": the whitespace after the tag goes too
            rest = len(source) - len(source[pos:].lstrip())
            line_starting = rest > pos and source[rest - 1] == "\n"
            line += source.count("\n", pos, rest)
            pos = rest
        elif kind != "{" and not keep_newline and source.startswith("\n", pos):  # trim_blocks
            pos, line, line_starting = pos + 1, line + 1, True


# --- expressions -------------------------------------------------------------------------------

_EXPR_TOKEN = re.compile(r"""\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<number>\d+(?:\.\d+)?)
    |(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<op>//|\*\*|==|!=|<=|>=|[-+*/%~<>()\[\]{}.,:|=]))""",
                         re.VERBOSE)
_CONSTANTS = {"true": "True", "false": "False", "none": "None", "True": "True", "False": "False", "None": "None"}
_COMPARISONS = ("==", "!=", "<", ">", "<=", ">=")


class Scope:
    """The names a point of a template sees: template-local ones (loop targets, macro parameters,
    sets inside a loop or macro) as Python locals, the rest from the render's context `_c`."""

    def __init__(self, parent: Scope | None = None) -> None:
        self.parent = parent
        self.names: dict[str, str] = {}

    def find(self, name: str) -> str | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def visible(self) -> dict[str, str]:
        """Every local name seen here -> its Python variable (inner scopes win)."""
        chain = []
        scope: Scope | None = self
        while scope is not None:
            chain.append(scope.names)
            scope = scope.parent
        return {k: v for names in reversed(chain) for k, v in names.items()}


class Expression:
    """One Jinja expression -> Python source, by recursive descent in Jinja's precedence."""

    def __init__(self, text: str, scope: Scope, where: str) -> None:
        self.where, self.scope = where, scope
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            found = _EXPR_TOKEN.match(text, pos)
            if found is None or found.end() == pos:
                raise TemplateError(f"{where}: cannot read `{text[pos:]}`")
            kind = found.lastgroup
            assert kind is not None
            self.tokens.append((kind, found.group(kind)))
            pos = found.end()
        self.pos = 0

    # token helpers
    def peek(self, offset: int = 0) -> tuple[str, str]:
        at = self.pos + offset
        return self.tokens[at] if at < len(self.tokens) else ("end", "")

    def accept(self, value: str) -> bool:
        if self.peek()[1] == value and self.peek()[0] in ("op", "name"):
            self.pos += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            raise TemplateError(f"{self.where}: expected `{value}`, found `{self.peek()[1] or 'the end'}`")

    def name(self) -> str:
        kind, value = self.peek()
        if kind != "name":
            raise TemplateError(f"{self.where}: expected a name, found `{value or 'the end'}`")
        self.pos += 1
        return value

    def done(self) -> None:
        if self.pos != len(self.tokens):
            raise TemplateError(f"{self.where}: unexpected `{self.peek()[1]}`")

    # grammar
    def expression(self) -> str:
        value = self.or_()
        if self.accept("if"):
            condition = self.or_()
            otherwise = self.expression() if self.accept("else") else "''"
            return f"({value} if {condition} else {otherwise})"
        return value

    def or_(self) -> str:
        value = self.and_()
        while self.accept("or"):
            value = f"({value} or {self.and_()})"
        return value

    def and_(self) -> str:
        value = self.not_()
        while self.accept("and"):
            value = f"({value} and {self.not_()})"
        return value

    def not_(self) -> str:
        if self.accept("not"):
            return f"(not {self.not_()})"
        return self.compare()

    def compare(self) -> str:
        value = self.sum()
        while True:
            kind, token = self.peek()
            if kind == "op" and token in _COMPARISONS:
                self.pos += 1
                value = f"({value} {token} {self.sum()})"
            elif self.accept("in"):
                value = f"({value} in {self.sum()})"
            elif token == "not" and self.peek(1)[1] == "in":
                self.pos += 2
                value = f"({value} not in {self.sum()})"
            else:
                return value

    def sum(self) -> str:
        value = self.concat()
        while self.peek() in (("op", "+"), ("op", "-")):
            operator = self.peek()[1]
            self.pos += 1
            value = f"({value} {operator} {self.concat()})"
        return value

    def concat(self) -> str:
        value = self.product()
        while self.accept("~"):
            value = f"(str({value}) + str({self.product()}))"
        return value

    def product(self) -> str:
        value = self.power()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "//", "%"):
            operator = self.peek()[1]
            self.pos += 1
            value = f"({value} {operator} {self.power()})"
        return value

    def power(self) -> str:
        value = self.unary()
        while self.accept("**"):
            value = f"({value} ** {self.unary()})"
        return value

    def unary(self) -> str:
        if self.peek() in (("op", "-"), ("op", "+")):
            operator = self.peek()[1]
            self.pos += 1
            return self.filters(f"({operator}{self.unary_operand()})")
        return self.filters(self.postfix(self.primary()))

    def unary_operand(self) -> str:
        if self.peek() in (("op", "-"), ("op", "+")):
            operator = self.peek()[1]
            self.pos += 1
            return f"({operator}{self.unary_operand()})"
        return self.postfix(self.primary())

    def primary(self) -> str:
        kind, token = self.peek()
        self.pos += 1
        if kind == "name":
            if token in _CONSTANTS:
                return _CONSTANTS[token]
            local = self.scope.find(token)
            if local is not None:
                return local
            return f"_c[{token!r}]" if token not in GLOBALS else f"_g[{token!r}]"
        if kind == "number":
            return token
        if kind == "string":
            value = ast.literal_eval(token)
            while self.peek()[0] == "string":  # adjacent literals join, as in Python
                value += ast.literal_eval(self.peek()[1])
                self.pos += 1
            return repr(value)
        if token == "(":
            value = self.expression()
            if self.accept(","):
                items = [value, *self.sequence(")")]
                return f"({', '.join(items)},)"
            self.expect(")")
            return value
        if token == "[":
            return f"[{', '.join(self.sequence(']'))}]"
        if token == "{":
            pairs = []
            while not self.accept("}"):
                key = self.expression()
                self.expect(":")
                pairs.append(f"{key}: {self.expression()}")
                if not self.accept(","):
                    self.expect("}")
                    break
            return f"{{{', '.join(pairs)}}}"
        raise TemplateError(f"{self.where}: unexpected `{token or 'end'}`")

    def sequence(self, close: str) -> list[str]:
        items = []
        while not self.accept(close):
            items.append(self.expression())
            if not self.accept(","):
                self.expect(close)
                break
        return items

    def postfix(self, value: str) -> str:
        while True:
            if self.accept("."):
                value = f"_attr({value}, {self.name()!r})"
            elif self.accept("["):
                key = self.expression()
                self.expect("]")
                value = f"_item({value}, {key})"
            elif self.accept("("):
                value = f"{value}({', '.join(self.arguments())})"
            else:
                return value

    def arguments(self) -> list[str]:
        found = []
        while not self.accept(")"):
            if self.peek()[0] == "name" and self.peek(1) == ("op", "="):
                keyword = self.name()
                self.pos += 1
                found.append(f"{keyword}={self.expression()}")
            else:
                found.append(self.expression())
            if not self.accept(","):
                self.expect(")")
                break
        return found

    def filters(self, value: str) -> str:
        while True:
            if self.accept("|"):
                name = self.name()
                if name not in FILTERS:
                    raise TemplateError(f"{self.where}: filter `{name}` is not supported")
                arguments = self.arguments() if self.accept("(") else []
                value = f"_filters[{name!r}]({', '.join([value, *arguments])})"
            elif self.accept("is"):
                negate = self.accept("not")
                test = self.name()
                if test == "defined":
                    found = self._defined(value)
                elif test == "none":
                    found = f"({value} is None)"
                else:
                    raise TemplateError(f"{self.where}: test `{test}` is not supported")
                value = f"(not {found})" if negate else found
            else:
                return value

    @staticmethod
    def _defined(value: str) -> str:
        whole = re.fullmatch(r"_c\[('[A-Za-z_0-9]+')\]", value)
        if whole:
            return f"({whole.group(1)} in _c)"
        return f"(not isinstance({value}, _Missing))"


def expression(text: str, scope: Scope, where: str) -> str:
    parser = Expression(text, scope, where)
    value = parser.expression()
    parser.done()
    return value


# --- statements --------------------------------------------------------------------------------

_FOR = re.compile(r"for\s+(?P<targets>[A-Za-z_][\w\s,]*?)\s+in\s+(?P<rest>.+)", re.DOTALL)
_MACRO = re.compile(r"macro\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<parameters>[\w\s,]*)\)", re.DOTALL)
_SET = re.compile(r"set\s+(?P<target>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\s*=\s*(?P<value>.+)", re.DOTALL)
_INCLUDE = re.compile(r"include\s+(?P<name>\"[^\"]+\"|'[^']+')")


class Compiler:
    """A template's tokens -> the Python source of `def render(_c, _include)`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0
        self.scope = Scope()
        self.top = self.scope
        self.blocks: list[str] = []  # the open statements: "if", "for", "for-else", "macro"
        self.loops: list[str] = []  # each open loop's flag: no item went through its body

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def local(self, name: str) -> str:
        self.counter += 1
        python = f"l_{name}_{self.counter}"
        self.scope.names[name] = python
        return python

    def where(self, line: int) -> str:
        return f"{self.name}:{line}"

    def compile(self, source: str) -> str:
        self.lines = ["def render(_c: dict[str, Any], _include: Callable[..., str]) -> str:",
                      "    _o: list[str] = []", "    _w = _o.append"]
        for kind, text, line in _tokens(source, self.name):
            if kind == "data":
                self.emit(f"_w({text!r})")
            elif kind == "{":
                self.emit(f"_w(str({expression(text, self.scope, self.where(line))}))")
            else:
                self.statement(text, line)
        if self.blocks:
            raise TemplateError(f"{self.name}: `{self.blocks[-1]}` not closed")
        self.emit("return ''.join(_o)")
        return "\n".join(self.lines) + "\n"

    def statement(self, text: str, line: int) -> None:
        where = self.where(line)
        keyword = text.split(None, 1)[0] if text else ""
        handler = getattr(self, f"s_{keyword}", None)
        if handler is None:
            raise TemplateError(f"{where}: `{{% {keyword} %}}` is not supported")
        handler(text, where)

    def open(self, block: str, line: str) -> None:
        self.emit(line)
        self.depth += 1
        self.emit("pass")
        self.blocks.append(block)

    def close(self, block: str, where: str) -> None:
        if not self.blocks or self.blocks[-1] != block:
            raise TemplateError(f"{where}: `end{block}` without its `{block}`")
        self.blocks.pop()
        self.depth -= 1

    def s_if(self, text: str, where: str) -> None:
        self.open("if", f"if {expression(text[2:], self.scope, where)}:")

    def s_elif(self, text: str, where: str) -> None:
        self.close("if", where)
        self.open("if", f"elif {expression(text[4:], self.scope, where)}:")

    def s_else(self, text: str, where: str) -> None:
        if self.blocks and self.blocks[-1] == "for":  # a loop's else: when it ran no item
            self.close("for", where)
            self.open("for-else", f"if {self.loops[-1]}:")
            return
        self.close("if", where)
        self.open("if", "else:")

    def s_endif(self, text: str, where: str) -> None:
        self.close("if", where)

    def s_for(self, text: str, where: str) -> None:
        found = _FOR.fullmatch(text)
        if found is None:
            raise TemplateError(f"{where}: cannot read `{text}`")
        parser = Expression(found.group("rest"), self.scope, where)
        sequence = parser.or_()  # Jinja: the sequence, then an optional `if` filter on the targets
        self.scope = parser.scope = Scope(self.scope)
        targets = [self.local(t.strip()) for t in found.group("targets").split(",")]
        condition = parser.expression() if parser.accept("if") else None
        parser.done()
        empty = f"_empty_{self.counter}"  # for `{% else %}`: no item went through the body
        self.emit(f"{empty} = True")
        self.open("for", f"for {', '.join(targets)} in {sequence}:")
        self.loops.append(empty)
        if condition is not None:
            self.emit(f"if not {condition}:")
            self.emit("    continue")
        self.emit(f"{empty} = False")

    def s_endfor(self, text: str, where: str) -> None:
        self.close("for-else" if self.blocks and self.blocks[-1] == "for-else" else "for", where)
        self.loops.pop()
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    def s_set(self, text: str, where: str) -> None:
        found = _SET.fullmatch(text)
        if found is None:
            raise TemplateError(f"{where}: cannot read `{text}`")
        value = expression(found.group("value"), self.scope, where)
        target = found.group("target")
        if "." in target:
            owner, attr = target.split(".")
            self.emit(f"setattr({expression(owner, self.scope, where)}, {attr!r}, {value})")
        elif self.scope is self.top:
            self.emit(f"_c[{target!r}] = {value}")
        else:
            self.emit(f"{self.scope.find(target) if target in self.scope.names else self.local(target)} = {value}")

    def s_macro(self, text: str, where: str) -> None:
        found = _MACRO.fullmatch(text)
        if found is None:
            raise TemplateError(f"{where}: cannot read `{text}`")
        function = self.local(found.group("name"))
        self.scope = Scope(self.scope)
        parameters = [self.local(p.strip()) for p in found.group("parameters").split(",") if p.strip()]
        self.open("macro", f"def {function}({', '.join(p + ': Any' for p in parameters)}) -> str:")
        self.emit("_o: list[str] = []")
        self.emit("_w = _o.append")

    def s_endmacro(self, text: str, where: str) -> None:
        self.emit("return ''.join(_o)")
        self.close("macro", where)
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    def s_include(self, text: str, where: str) -> None:
        found = _INCLUDE.fullmatch(text)
        if found is None:
            raise TemplateError(f"{where}: cannot read `{text}`")
        names = ", ".join(f"{k!r}: {v}" for k, v in self.scope.visible().items())
        self.emit(f"_w(_include({ast.literal_eval(found.group('name'))!r}, {{**_c, {names}}}))")


def compile_template(source: str, name: str) -> Callable[[dict[str, Any], Callable[..., str]], str]:
    """The render function of a template's source: render(context, include) -> text."""
    code = Compiler(name).compile(source)
    namespace: dict[str, Any] = {**RUNTIME, "Any": Any, "Callable": Callable}
    exec(compile(code, f"<template {name}>", "exec"), namespace)  # noqa: S102 - our own templates
    return namespace["render"]  # type: ignore[no-any-return]

