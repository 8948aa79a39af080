"""Progress bars for commands that take more than a second: on stderr, and only on a terminal,
so piped output and --json stay clean."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click


@contextmanager
def progress_steps(label: str, total: int) -> Iterator[Callable[[str], None]]:
    """Yield `advance(what)`: one call per finished step of `total`; a bar on a TTY, else nothing."""
    if not sys.stderr.isatty():
        yield lambda _what: None
        return

    def show(item: str | None) -> str | None:
        return item

    with click.progressbar(length=total, label=label, file=sys.stderr, show_eta=False,
                           item_show_func=show) as bar:
        yield lambda what: bar.update(1, what)
