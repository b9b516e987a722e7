"""Snapshots: the read models at one position, kept in a file so ``--as-of`` replays a tail.

A snapshot is a disposable cache, never a source of truth: a SQLite file holding every read
model as a replay of events 1..N left it, and beside it a small JSON card naming N, the chain
hash of event N and the schema revision. It is used only while the store's event N still has
that hash (so a snapshot of another store, or of a history since rebuilt, is ignored), and
``verify_snapshot`` proves it equal to a replay from position 1. Deleting one loses nothing.

The card is written last (temp file, rename): a snapshot without its card does not exist.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.database import SCHEMA_HEAD
from benchledger.projections.history.as_of import Moment, read_models_as_of, scratch_at
from benchledger.projections.history.snapshot_cards import (
    _PREFIX,
    CARD_SCHEMA,
    Snapshot,
    _read_card,
    default_snapshot_dir,
    list_snapshots,
    matches_store,
    nearest_snapshot,
)
from benchledger.projections.publishing.files import atomic_copy, atomic_write
from benchledger.projections.read_models.diff import compare_read_models
from benchledger.projections.read_models.row_caches import fill_row_caches
from benchledger.projections.read_models.scratch import scratch_database

if TYPE_CHECKING:
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.projections.read_models.engine import ProjectionEngine
# The card reading lives in projections/history/snapshot_cards.py; these names stay importable here.
__all__ = [
    "CARD_SCHEMA",
    "Snapshot",
    "create_snapshot",
    "default_snapshot_dir",
    "list_snapshots",
    "matches_store",
    "nearest_snapshot",
    "verify_snapshot",
]


def create_snapshot(
    store: EventStore, projections: ProjectionEngine, directory: Path, value: str | None
) -> tuple[Snapshot, dict[str, Any]]:
    """Snapshot the read models at ``value`` (default: the head), itself built from the
    nearest earlier snapshot; returns it with how it was built. An existing snapshot of the
    same event is kept as it is."""
    at = value if value is not None else str(store.head_position() or "")
    if not at:
        raise InputError("the store has no events yet: nothing to snapshot")
    with read_models_as_of(store, projections, at, snapshot_dir=directory, own_file=True) as view:
        moment = view.moment
        card = directory / f"{_PREFIX}{moment.position:012d}-{moment.hash[:16]}.json"
        existing = _read_card(card)
        if existing is not None and existing.db_path.is_file():
            return existing, {**view.as_dict(), "created": False}
        _fill_caches(view.database)
        view.database.dispose()  # closes the connections: the file is complete on its own
        _publish(Path(view.database.path), card.with_suffix(".db"))
    body = {
        "schema_version": CARD_SCHEMA,
        **moment.as_dict(),
        "schema_revision": SCHEMA_HEAD,
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    _write_atomic(card, (json.dumps(body, indent=2, sort_keys=True) + "\n").encode())
    made = _read_card(card)
    assert made is not None  # just written
    return made, {**view.as_dict(), "created": True}


def _fill_caches(database: Any) -> None:
    """Fill the snapshot's compare and aggregate facts before it is published: an ``--as-of``
    read from it cannot fill them (its scratch store is thrown away), so it finds them here
    (``projections/read_models/row_caches.py``)."""
    with database.connect() as conn:
        fill_row_caches(conn)


def _publish(source: Path, target: Path) -> None:

    try:
        atomic_copy(source, target)
    except OSError as exc:
        raise InputError(f"cannot write snapshot {target.name}: {exc.strerror}") from None


def _write_atomic(path: Path, data: bytes) -> None:
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise InputError(f"cannot write snapshot card {path.name}: {exc.strerror}") from None


def verify_snapshot(
    store: EventStore, projections: ProjectionEngine, snapshot: Snapshot, *, limit: int = 20
) -> dict[str, Any]:
    """Replay events 1..N into a scratch database and compare every read-model row with the
    snapshot's (what ``rebuild --verify`` does for the live read models)."""
    with store.database.connect() as conn:
        if not matches_store(conn, snapshot):
            return {**snapshot.as_dict(), "ok": False, "differences": [],
                    "problem": "does not match this store (other chain or schema)"}  # fmt: skip
    moment = _moment_of(snapshot)
    with (
        scratch_at(store, projections, moment) as (fresh, _replayed),
        scratch_database("snapshot-verify", seed=snapshot.db_path) as copy,
    ):
        differences = compare_read_models(projections, checked=copy, reference=fresh, limit=limit)
    return {**snapshot.as_dict(), "ok": not differences, "differences": differences}


def _moment_of(snapshot: Snapshot) -> Any:
    return Moment(snapshot.position, snapshot.hash, snapshot.recorded_at)
