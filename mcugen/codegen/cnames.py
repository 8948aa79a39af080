"""Turning model-supplied names into safe C: identifiers, comments and string-free literals.

Names in a model are data, never code: an identifier keeps only [A-Za-z0-9_], a comment keeps
only characters that cannot end the comment, start another one, form a trigraph or continue a
line.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ..errors import BuildError

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]+")
_COMMENT_UNSAFE = re.compile(r"[^A-Za-z0-9 _\-.:;,()\[\]+=<>@#%&!^~|']")
C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
C_KEYWORDS = frozenset(
    ["auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary"]
)


def identifier(name: str, max_length: int = 40) -> str:
    """A C identifier fragment made of the name's safe characters (may be empty)."""
    return _NOT_IDENTIFIER.sub("_", name).strip("_")[:max_length].strip("_")


def comment(text: str, max_length: int = 80) -> str:
    """Text that is safe inside a /* */ comment: no '*', '/', '\\', '?', newlines or controls."""
    safe = _COMMENT_UNSAFE.sub("_", text)
    return safe if len(safe) <= max_length else safe[: max_length - 3] + "..."


def is_valid_prefix(prefix: str) -> bool:
    return bool(C_IDENTIFIER.match(prefix)) and prefix not in C_KEYWORDS


def default_prefix(model_name: str) -> str:
    base = identifier(model_name.lower()) or "model"
    return base if base[0].isalpha() else f"m_{base}"


def c_float(value: float) -> str:
    """A float32 literal that reads back as exactly the same float32."""
    text = np.format_float_positional(np.float32(value), unique=True, trim="0")
    if "e" not in text and "." not in text:
        text += ".0"
    return f"{text}f"


INT64_MIN = -(1 << 63)


def _c_integer(value: int) -> str:
    """An integer literal C reads back as `value`. INT64_MIN is no literal: -9223372036854775808
    negates 9223372036854775808, which fits no signed type, so it is written as a difference."""
    return "(-9223372036854775807 - 1)" if value == INT64_MIN else str(value)


@functools.cache
def _byte_literals(signed: bool) -> np.ndarray:
    """The literal of every byte value, indexed by the byte as unsigned (an object array)."""
    return np.array([str(b - 256 if signed and b >= 128 else b) for b in range(256)], dtype=object)


def _integer_literals(array: np.ndarray) -> list[str]:
    """Each integer's literal, in order; bools as 0 and 1: the text of _c_integer, but made by
    numpy, not a Python call per element (weights run to hundreds of thousands): bytes by
    lookup in a table of their 256 literals, wider integers by str() of the ints tolist() gives."""
    if array.dtype.kind == "b":
        array = array.astype(np.uint8)
    if array.dtype.itemsize == 1:
        return _byte_literals(array.dtype.kind == "i")[array.view(np.uint8)].tolist()
    if array.dtype == np.int64 and array.size and int(array.min()) == INT64_MIN:
        return [_c_integer(v) for v in array.tolist()]
    return list(map(str, array.tolist()))


@functools.cache
def _byte_items(signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every byte's literal followed by ", " and by ",\n    " (the end of a line), indexed by
    the byte as unsigned (object arrays)."""
    literals = _byte_literals(signed)
    return (np.array([f"{text}, " for text in literals], dtype=object),
            np.array([f"{text},\n    " for text in literals], dtype=object))


def _byte_array_body(array: np.ndarray, per_line: int) -> str:
    """c_array_body of a non-empty array of bytes: each byte's literal with its separator by one
    table lookup (numpy), joined once: the weights of a model are most of a build's literals."""
    signed = array.dtype.kind == "i"
    codes = array.ravel().view(np.uint8)
    within, line_end = _byte_items(signed)
    items = within[codes]
    items[per_line - 1 :: per_line] = line_end[codes[per_line - 1 :: per_line]]
    items[-1] = _byte_literals(signed)[codes[-1]]
    return "    " + "".join(items.tolist())


def c_array_body(values: np.ndarray, per_line: int = 24) -> str:
    """Comma-separated literals, `per_line` a line, indented for an array initialiser: integers
    (bools as 0 and 1), float32 values as literals that read back to the same bits."""
    array = np.asarray(values)
    if array.dtype.kind == "b":
        array = array.astype(np.uint8)
    if array.dtype.kind in "iu" and array.dtype.itemsize == 1 and array.size:
        return _byte_array_body(array, per_line)
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)):
            raise BuildError("a float constant holds inf or NaN, which C99 has no literal for")
        flat = [c_float(v) for v in array.ravel()]
    else:
        flat = _integer_literals(array.ravel())
    lines = [", ".join(flat[i : i + per_line]) for i in range(0, len(flat), per_line)]
    return ",\n".join("    " + line for line in lines)
