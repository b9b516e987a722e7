"""The workers a parallel read (``--jobs N``) forks, counted (``ledger/sources/parallel.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from benchledger.ledger.sources import parallel as sources_parallel


def count_forks(
    monkeypatch: pytest.MonkeyPatch, note: Callable[[], None] | None = None
) -> list[int]:
    """The size of each run a worker is forked for, as workers start; ``note()`` as each does."""
    forked: list[int] = []
    start = sources_parallel._start

    def counted(read: Callable[[list[Any]], object], run: list[Any]) -> tuple[int, int] | None:
        forked.append(len(run))
        if note is not None:
            note()
        return start(read, run)

    monkeypatch.setattr(sources_parallel, "_start", counted)
    return forked
