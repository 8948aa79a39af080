"""One error root and one message format for everything a user can get wrong.

Every message says what failed, where (op type, name, index or file), the rule and the value,
on one line. The CLI prints ``error: <message>`` and exits with the error's ``exit_code``.
"""

from __future__ import annotations


class McugenError(Exception):
    """Root of every error mcugen reports to a user (never shown with a traceback)."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        # One line, always: a model's names may hold newlines, which must not split the message.
        super().__init__(" ".join(message.split()))


class ModelError(McugenError):
    """The file is missing, not a TFLite flatbuffer, truncated, or internally inconsistent."""


class UnsupportedError(McugenError):
    """The model is valid but uses an op, dtype or option that mcugen does not implement."""


class PlanningError(McugenError):
    """The memory plan failed its own checks or the model does not fit the memory given."""


class BuildError(McugenError):
    """The generated C failed to compile or run on the host."""


class VerifyMismatch(McugenError):
    """The compiled C and the reference disagree."""

    exit_code = 1


def where(op_kind: str, index: int, name: str) -> str:
    """The standard 'where' part of a message about one op."""
    return f"{op_kind} (op {index}, '{name}')"
