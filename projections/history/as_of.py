"""The read models as they stood after a past position: ``--as-of POSITION|ISO-TIME``.

The event table is the truth, so any past state is a replay of its first N events. The replay
goes into a scratch SQLite database (``engine.scratch_database``), never into the live read
models; it starts from the nearest snapshot at or before N whose chain hash still matches the
store (``projections/history/snapshots.py``) and replays only the tail, else from position 0.
Readers
then query the scratch database exactly as they query the live one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.sqlite import SqliteDatabase as Sqlite
from benchledger.projections.history.snapshot_cards import nearest_snapshot
from benchledger.projections.read_models.scratch import scratch_database, scratch_from_snapshot

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.ledger.store.sqlite import SqliteDatabase
    from benchledger.projections.read_models.engine import ProjectionEngine
_POSITION = re.compile(r"^[0-9]+$")
# The stored ``recorded_at`` format (``ledger.store.event_store.utc_now``): fixed width, so text
# order is
# time order on both databases.
_STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"
_MOMENT = "SELECT position, hash, recorded_at FROM events"
# What a reader of one ledger reads (``rm_ledgers``, ``rm_ledger_rows`` and their caches, all
# of one projection): a past moment replays only this projection for ``compare``,
# ``run-ledger-aggregate`` and ``diff``.
LEDGER_READ_MODELS = ("ledger_rows",)


@dataclass(frozen=True)
class Moment:
    """One point of the chain: a position, the hash of its event and when it was recorded."""

    position: int
    hash: str
    recorded_at: str

    def as_dict(self) -> dict[str, Any]:
        return {"position": self.position, "recorded_at": self.recorded_at, "hash": self.hash}


def parse_as_of(value: str, option: str = "--as-of") -> int | str:
    """A position (digits) or an ISO 8601 time as the stored ``recorded_at`` text (UTC; a time
    without an offset is read as UTC, a date alone as its midnight)."""
    text = str(value).strip()
    if _POSITION.match(text):
        return int(text)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"{option}: expected an event position or an ISO 8601 time, got {text!r}"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime(_STAMP)


def resolve_moment(conn: Connection, value: str, option: str = "--as-of") -> Moment:
    """The event ``value`` names: that position, or the last event recorded at or before that
    time. Positions past the head and times before the first event are refused."""
    wanted = parse_as_of(value, option)
    head = conn.execute("SELECT max(position) FROM events").scalar() or 0
    if head == 0:
        raise InputError(f"{option}: the store has no events yet")
    if isinstance(wanted, int):
        if wanted < 1:
            raise InputError(f"{option}: positions start at 1 (the head is {head})")
        if wanted > head:
            raise InputError(f"{option} {wanted}: beyond the last event (position {head})")
        query = f"{_MOMENT} WHERE position = ?"
    else:
        query = f"{_MOMENT} WHERE recorded_at <= ? ORDER BY position DESC LIMIT 1"
    params = [wanted]
    found = conn.execute(query, params).first()
    if found is None:
        first = conn.execute("SELECT recorded_at FROM events WHERE position = 1").scalar()
        # Users reach for the day their runs ran; a moment is when this store recorded them.
        raise InputError(
            f"{option} {value.strip()}: before the first event (recorded {first}); times are "
            f"when events were recorded in this store, not when the runs ran (or pass a "
            f"position: 1 is the first event)"
        )
    return Moment(int(found[0]), str(found[1]), str(found[2]))


@dataclass
class AsOfView:
    """The scratch read models at ``moment`` and how they were built."""

    moment: Moment
    requested: str
    database: SqliteDatabase  # a scratch store (``engine.scratch_database``)
    snapshot_position: int | None
    events_replayed: int
    # The projections replayed to ``moment`` (the reader reads no others); None: all of them.
    read_models: Sequence[str] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            **self.moment.as_dict(),
            "built_from": (
                f"snapshot at position {self.snapshot_position}"
                if self.snapshot_position
                else "replay from position 1"
            ),
            "events_replayed": self.events_replayed,
            "read_models": list(self.read_models) if self.read_models is not None else "all",
        }


@contextmanager
def read_models_as_of(
    store: EventStore,
    projections: ProjectionEngine,
    value: str,
    *,
    snapshot_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    names: Sequence[str] | None = None,
    own_file: bool = False,
) -> Iterator[AsOfView]:
    """Scratch read models as they stood after the event ``value`` names (see module doc);
    ``snapshot_dir`` None: replay from position 1. Removed when the block ends.
    ``progress(done, total)``: events replayed so far, of how many. ``names``: only these
    projections (the ones the reader reads: a replay of one read model costs a fraction of
    all of them); the others are left empty, or as the snapshot had them. ``own_file``: see
    ``scratch_at``."""
    with store.database.connect() as live:
        moment = resolve_moment(live, value)
        base = nearest_snapshot(live, snapshot_dir, moment.position) if snapshot_dir else None
    with scratch_at(store, projections, moment, base, progress, names, own_file=own_file) as (
        scratch,
        replayed,
    ):
        yield AsOfView(
            moment, str(value).strip(), scratch, base.position if base else None, replayed, names
        )


@contextmanager
def scratch_at(
    store: EventStore,
    projections: ProjectionEngine,
    moment: Moment,
    base: Any = None,
    progress: Callable[[int, int], None] | None = None,
    names: Sequence[str] | None = None,
    *,
    own_file: bool = False,
) -> Iterator[tuple[SqliteDatabase, int]]:
    """A scratch database holding the read models (of ``names``; default all) at ``moment``,
    replayed from ``base`` (a ``Snapshot``) or from position 1; yields it with the number of
    events replayed. ``own_file``: the database must be a file of its own (to be published
    as a snapshot, or given events), never the snapshot overlaid (``scratch_from_snapshot``)."""

    after = base.position if base is not None else 0
    scratch_cm = (
        scratch_from_snapshot(base.db_path, tail=moment.position - after, own_file=own_file)
        if base is not None
        else scratch_database("as-of")
    )
    with scratch_cm as scratch:
        replayed = advance(store, projections, scratch, after, moment.position, progress, names)
        yield scratch, replayed


def advance(
    store: EventStore,
    projections: ProjectionEngine,
    scratch: SqliteDatabase,
    after: int,
    upto: int,
    progress: Callable[[int, int], None] | None = None,
    names: Sequence[str] | None = None,
) -> int:
    """Replay ``(after, upto]`` onto scratch read models (of ``names``; default all) that
    stand at ``after``."""
    total = upto - after
    report = (lambda done: progress(min(done, total), total)) if progress else None
    # A replay from position 1 out of a SQLite file is done by the database (``database_fold``):
    # the live file is attached, read-only in effect, to the scratch connection.
    live_db = store.database
    attach = None
    if after == 0 and isinstance(live_db, Sqlite) and not live_db.in_memory:
        attach = {"live": live_db.path}
    with store.database.connect() as live, scratch.begin(attach=attach) as conn:
        return projections.replay_range(
            store,
            conn,
            read_conn=live,
            after=after,
            upto=upto,
            progress=report,
            events="live.events" if attach else None,
            names=names,
        )
