"""One way to pause Python's cyclic garbage collector for a whole command.

Ingest, replay and compare each build hundreds of thousands of acyclic containers (parsed
JSON, rows) that reference counting frees on its own; the cyclic collector, triggered by the
allocations, kept re-walking every live one and freed nothing. It is used only at the entry
of the commands where that was measured to pay (bench/README.md, issue 30): ``benchmark run``,
``compare`` and ``rebuild``; never nested, never inside a library function, so what runs with
the collector off is decided in one place per command. The caller's setting is restored
afterwards.

What outlived the block (modules it imported, caches, results) is moved to the oldest
generation as the collector is turned back on: left in the youngest, the first allocation
after the block set off a collection that walked all of it (~7 ms after a 3,000-trial
``benchmark run``), where the collections the pause skipped would have promoted it anyway.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block; the previous setting comes back after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()  # every tracked object into the permanent generation...
            gc.unfreeze()  # ...and back into the oldest one: nothing stays young
            gc.enable()
