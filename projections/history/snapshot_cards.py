"""Snapshot cards: the snapshots on disk, and which of them fit this store.

What ``--as-of`` needs to pick a snapshot to replay from; building and verifying one takes an
as-of replay, so that lives in ``projections/history/snapshots.py`` (which imports this module, and
``projections/history/as_of.py`` too, never the other way round). What a snapshot is: see there.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchledger.ledger.store.database import SCHEMA_HEAD, STORE_DIR, find_project_dir

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.database import StoreLocation
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
