"""A command's run without the cyclic garbage collector rescanning what was there before it.

By the time a command runs, its process holds a few hundred thousand objects from imports
(numpy, click, mcugen), and the collector walks all of them at every full collection a build
triggers: ~45 M instructions of a `mcugen build` (5 %). `frozen_imports()` moves them to the
collector's permanent generation for the command (gc.freeze) and back after it (gc.unfreeze):
what the command allocates is collected as before, and a process that calls the CLI in-process
(tests) gets its collector back as it was. Nothing happens at import.

`collector_paused()` goes further for one model's compilation (analysis/measure.build_models):
no automatic collection at all while it runs (gc.disable), the collector's state restored after.
A compilation is bounded work whose objects mostly live until it ends (the graph, its tensors
and ops refer to each other); its young-generation collections found little to free and cost
~28 M instructions of vww_mobilenet_v1_025's build (the tiling search makes tens of thousands
of short-lived tuples). Reference counting frees the rest as before; cycles wait for the next
collection after it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def frozen_imports() -> Iterator[None]:
    if gc.get_freeze_count():  # someone froze objects already: leave their choice alone
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    if not gc.isenabled():  # paused already (or by the caller's choice): leave it so
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
