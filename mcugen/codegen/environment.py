"""The one Jinja Environment of the generated C: made once per process, its compiled templates
kept on disk between processes.

Compiling the templates (Jinja lexes and parses model.c.j2 and friends and generates Python for
them) costs about 50 ms, as much as the rest of generating the C of a model, and a fresh
`mcugen build` process would pay it every time. So, like Python's __pycache__, the compiled
code is cached in a per-user directory (Jinja's FileSystemBytecodeCache): an entry is found by
the template's path and used only if the sha1 of the template's source is the one it was
compiled from. Its file name also carries what changes the compiled code without changing the
source: the Environment's settings and Jinja's version (Jinja itself adds Python's). The cache
only saves time: when it cannot be read or written, the templates are compiled as without it.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import jinja2

from ..cachedir import cache_directory

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
SETTINGS = {
    "undefined": jinja2.StrictUndefined,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "keep_trailing_newline": True,
    "autoescape": False,
}


class QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache, but a file that cannot be read or written is a miss, never an error."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        # A damaged entry (truncated, garbled): pickle.load alone can raise a dozen kinds.
        except Exception:  # noqa: BLE001
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:  # read-only or full disk: the next process compiles again
            pass


def _bytecode_cache(directory: Path | None) -> QuietBytecodeCache | None:
    if directory is None:
        return None
    try:
        (directory / "templates").mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    fingerprint = hashlib.sha1(repr((jinja2.__version__, sorted(
        (k, getattr(v, "__name__", v)) for k, v in SETTINGS.items()))).encode()).hexdigest()[:12]
    return QuietBytecodeCache(str(directory / "templates"), f"{fingerprint}-%s.cache")


def make_environment(cache: Path | None) -> jinja2.Environment:
    """An Environment over mcugen's templates whose compiled code is cached in `cache` (None:
    not cached)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                              bytecode_cache=_bytecode_cache(cache), **SETTINGS)  # type: ignore[arg-type]


@functools.cache
def environment() -> jinja2.Environment:
    """The process's Environment: it also keeps each template compiled in memory, reloading
    one whose file changed."""
    return make_environment(cache_directory())
