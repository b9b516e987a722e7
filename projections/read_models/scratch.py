"""Disposable SQLite databases for replays that must never touch the live read models."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from benchledger.ledger.store.database import create_at_head
from benchledger.ledger.store.sqlite import SqliteDatabase
from benchledger.ledger.store.sqlite_overlay import open_overlay

if TYPE_CHECKING:
    from benchledger.ledger.store.sqlite import SqliteDatabase


@contextmanager
def scratch_database(purpose: str, *, seed: Path | None = None) -> Iterator[SqliteDatabase]:
    """A SQLite database in a temporary directory, removed with it: where ``rebuild
    --verify`` and ``--as-of`` replay, so the live read models are never touched. New at the
    schema head, or a copy of ``seed`` (a snapshot file). Disposable: nothing is synced."""

    with tempfile.TemporaryDirectory(prefix=f"benchledger-{purpose}-") as tmp:
        path = Path(tmp) / "scratch.db"
        if seed is not None:
            shutil.copyfile(seed, path)
        # A new file is made disposable (no WAL, no syncs); a copied snapshot stays in the WAL
        # mode it was written in (leaving it rewrote the 1 GB copy's header and cost more than
        # the few pages a short replay writes).
        scratch = SqliteDatabase(f"sqlite:///{path}", disposable=seed is None)
        try:
            if seed is None:
                create_at_head(scratch)
            yield scratch
        finally:
            scratch.dispose()


# The longest tail an overlay holds in memory (``ledger/store/sqlite_overlay.py``: nothing spills
# to the
# snapshot file): a longer replay goes into a copy of the snapshot instead.
OVERLAY_MAX_TAIL = 200_000


@contextmanager
def scratch_from_snapshot(
    seed: Path, *, tail: int, own_file: bool = False
) -> Iterator[SqliteDatabase]:
    """Where a replay of ``tail`` events onto the snapshot file ``seed`` goes: the snapshot
    itself, overlaid (its changes never written; copying a 1 GB snapshot cost more than a
    short tail's replay), or a copy of it when the tail is long, the overlay cannot be had,
    or the caller needs a file of its own (``own_file``: to publish it or write events)."""
    overlay = None if own_file or tail > OVERLAY_MAX_TAIL else open_overlay(seed)
    if overlay is None:
        with scratch_database("as-of", seed=seed) as scratch:
            yield scratch
        return
    try:
        yield overlay
    finally:
        overlay.dispose()
