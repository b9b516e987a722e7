"""``snapshot create|list|verify``: read-model snapshots, kept in a directory beside the store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchledger.projections.history.snapshots import (
    create_snapshot,
    default_snapshot_dir,
    list_snapshots,
    matches_store,
    verify_snapshot,
)
from benchledger.services.store_session import OpenStore, open_store


@contextmanager
def _opened_with_dir(db: str | None, directory: str | None) -> Iterator[tuple[OpenStore, Path]]:
    """The store, and the snapshot directory: the one given, else the store's default."""
    with open_store(db) as opened:
        chosen = (
            Path(directory).expanduser() if directory else default_snapshot_dir(opened.location)
        )
        yield opened, chosen


def create(db: str | None, directory: str | None, at: str | None) -> dict[str, Any]:
    """Store the read models as they stand at a position (the head by default)."""
    with _opened_with_dir(db, directory) as (opened, chosen):
        snapshot, built = create_snapshot(opened.store, opened.projections, chosen, at)
    return {"ok": True, "created": built["created"], "snapshot": snapshot.as_dict(), "built": built}


def listing(db: str | None, directory: str | None) -> dict[str, Any]:
    """Snapshots in the directory, and whether each matches this store."""

    with _opened_with_dir(db, directory) as (opened, chosen):
        with opened.store.database.connect() as conn:
            items = [
                {**s.as_dict(), "matches_store": matches_store(conn, s)}
                for s in list_snapshots(chosen)
            ]
    return {"ok": True, "count": len(items), "snapshots": items}


def verify(db: str | None, directory: str | None) -> dict[str, Any]:
    """Replay to each snapshot's position and compare every read-model row with it."""

    with _opened_with_dir(db, directory) as (opened, chosen):
        reports = [
            verify_snapshot(opened.store, opened.projections, s) for s in list_snapshots(chosen)
        ]
    ok = all(r["ok"] for r in reports)
    return {"ok": ok, "count": len(reports), "snapshots": reports}
