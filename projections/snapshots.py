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
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger.errors import InputError

if TYPE_CHECKING:
    from ledger.connection import Connection
    from ledger.database import StoreLocation
    from ledger.store import EventStore
    from projections.engine import ProjectionEngine

CARD_SCHEMA = "benchledger_snapshot_v0"
ENV_DIR = "BENCHLEDGER_SNAPSHOT_DIR"
_PREFIX = "snapshot-"


@dataclass(frozen=True)
class Snapshot:
    """One snapshot on disk, as its card describes it."""

    card_path: Path
    position: int
    hash: str
    recorded_at: str
    schema_revision: str
    created_at: str

    @property
    def db_path(self) -> Path:
        return self.card_path.with_suffix(".db")

    def as_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "recorded_at": self.recorded_at,
            "hash": self.hash,
            "schema_revision": self.schema_revision,
            "created_at": self.created_at,
            "file": self.db_path.name,
        }


def default_snapshot_dir(location: StoreLocation) -> Path:
    """``BENCHLEDGER_SNAPSHOT_DIR``, else ``snapshots/`` beside a SQLite store file, else
    ``.benchledger/snapshots`` of the project (for PostgreSQL)."""
    from ledger.database import STORE_DIR, find_project_dir

    chosen = os.environ.get(ENV_DIR)
    if chosen:
        return Path(chosen).expanduser()
    path = location.url.removeprefix("sqlite:///")
    if location.is_sqlite and path and not path.startswith(":memory:"):
        return Path(path).parent / "snapshots"
    project = location.project_dir or find_project_dir() or Path.cwd()
    return project / STORE_DIR / "snapshots"


def list_snapshots(directory: Path) -> list[Snapshot]:
    """Every snapshot in ``directory`` whose card reads and whose file is there, by position."""
    if not directory.is_dir():
        return []
    found = []
    for card in sorted(directory.glob(f"{_PREFIX}*.json")):
        snapshot = _read_card(card)
        if snapshot is not None and snapshot.db_path.is_file():
            found.append(snapshot)
    return sorted(found, key=lambda s: s.position)


def _read_card(card: Path) -> Snapshot | None:
    try:
        data = json.loads(card.read_text(encoding="utf-8"))
        if data.get("schema_version") != CARD_SCHEMA:
            return None
        return Snapshot(
            card,
            int(data["position"]),
            str(data["hash"]),
            str(data["recorded_at"]),
            str(data["schema_revision"]),
            str(data["created_at"]),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # a damaged card: the snapshot is ignored, as a cache may be


def matches_store(conn: Connection, snapshot: Snapshot) -> bool:
    """The store's event at the snapshot's position has the hash it was made from, and the
    file has this version's read-model schema."""
    from ledger.database import SCHEMA_HEAD

    if snapshot.schema_revision != SCHEMA_HEAD:
        return False
    found = conn.execute(
        "SELECT hash FROM events WHERE position = ?", (snapshot.position,)
    ).scalar()
    return found == snapshot.hash


def nearest_snapshot(conn: Connection, directory: Path, position: int) -> Snapshot | None:
    """The latest snapshot at or before ``position`` that matches this store."""
    for snapshot in reversed(list_snapshots(directory)):
        if snapshot.position <= position and matches_store(conn, snapshot):
            return snapshot
    return None


def create_snapshot(
    store: EventStore, projections: ProjectionEngine, directory: Path, value: str | None
) -> tuple[Snapshot, dict[str, Any]]:
    """Snapshot the read models at ``value`` (default: the head), itself built from the
    nearest earlier snapshot; returns it with how it was built. An existing snapshot of the
    same event is kept as it is."""
    from ledger.database import SCHEMA_HEAD
    from projections.as_of import read_models_as_of

    at = value if value is not None else str(store.head_position() or "")
    if not at:
        raise InputError("the store has no events yet: nothing to snapshot")
    with read_models_as_of(store, projections, at, snapshot_dir=directory) as view:
        moment = view.moment
        card = directory / f"{_PREFIX}{moment.position:012d}-{moment.hash[:16]}.json"
        existing = _read_card(card)
        if existing is not None and existing.db_path.is_file():
            return existing, {**view.as_dict(), "created": False}
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


def _publish(source: Path, target: Path) -> None:
    import shutil

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    except OSError as exc:
        raise InputError(f"cannot write snapshot {target.name}: {exc.strerror}") from None


def _write_atomic(path: Path, data: bytes) -> None:
    from projections.files import atomic_write

    try:
        atomic_write(path, data)
    except OSError as exc:
        raise InputError(f"cannot write snapshot card {path.name}: {exc.strerror}") from None


def verify_snapshot(
    store: EventStore, projections: ProjectionEngine, snapshot: Snapshot, *, limit: int = 20
) -> dict[str, Any]:
    """Replay events 1..N into a scratch database and compare every read-model row with the
    snapshot's (what ``rebuild --verify`` does for the live read models)."""
    from projections.as_of import scratch_at
    from projections.engine import compare_read_models, scratch_database

    with store.database.connect() as conn:
        if not matches_store(conn, snapshot):
            return {**snapshot.as_dict(), "ok": False, "differences": [],
                    "problem": "does not match this store (other chain or schema)"}  # fmt: skip
    moment = _moment_of(snapshot)
    with scratch_at(store, projections, moment) as (fresh, _replayed), scratch_database(
        "snapshot-verify", seed=snapshot.db_path
    ) as copy:
        differences = compare_read_models(projections, checked=copy, reference=fresh, limit=limit)
    return {**snapshot.as_dict(), "ok": not differences, "differences": differences}


def _moment_of(snapshot: Snapshot) -> Any:
    from projections.as_of import Moment

    return Moment(snapshot.position, snapshot.hash, snapshot.recorded_at)
