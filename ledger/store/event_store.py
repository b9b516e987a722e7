"""The append-only event store, in plain SQL over ``benchledger.ledger.store.connection``.

Writers are serialised (``BEGIN IMMEDIATE`` on SQLite, a transaction-scoped advisory lock on
PostgreSQL) so positions follow commit order and the hash chain stays linear. Everything a
command appends goes through one ``UnitOfWork``: its events and the projections the listener
updates commit together or not at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.command_context import current_command
from benchledger.ledger.core.errors import ConcurrencyError, InputError
from benchledger.ledger.core.json_input import too_deep
from benchledger.ledger.store.chain import GENESIS_HASH, canonical_json, event_hash
from benchledger.ledger.store.connection import PG_SCHEMA_KEY, placeholders
from benchledger.ledger.store.event_rows import (
    COUNT_SQL,
    EVENT_COLUMNS,
    REPLAY_COLUMNS,
    events_query,
    sparse_query,
    stored_decoder,
    stored_event,
)
from benchledger.ledger.store.events import (
    EXPORT_WRITTEN,
    AppendResult,
    NewEvent,
    StoredEvent,
)
from benchledger.ledger.store.head_witness import HeadWitness, marker_path, write_marker
from benchledger.ledger.store.tables import EVENTS

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection, Database

# The advisory lock every benchledger writer of one store takes on PostgreSQL: this constant
# and the store's schema (``ledger.store.connection.PG_SCHEMA_KEY``), so stores in other schemas of
# the same database never queue behind it.
PG_APPEND_LOCK_KEY = 0x62656E63  # "benc"
READ_BATCH = 2000
PAYLOAD_MAX_DEPTH = 254  # nested containers orjson writes (the payload itself counts as one)
# Everything but the hash itself goes into the hash (see ``ledger.store.chain.event_hash``).
HASHED_COLUMNS = tuple(c for c in EVENT_COLUMNS if c != "hash")

Listener = Callable[["Connection", list[StoredEvent]], None]


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class VerifyReport:
    """Outcome of re-walking the chain; ``first_bad_position`` is None when it verifies."""

    ok: bool
    checked: int
    head_position: int
    first_bad_position: int | None = None
    reason: str | None = None
    head_hash: str | None = None
    witnesses: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checked": self.checked,
            "head_position": self.head_position,
            "head_hash": self.head_hash,
            "first_bad_position": self.first_bad_position,
            "reason": self.reason,
            "witnesses": self.witnesses,
        }


class UnitOfWork:
    """One command invocation's transaction: reads see its own writes; one correlation id."""

    def __init__(self, store: EventStore, conn: Connection, metadata: dict[str, Any]) -> None:
        self.store = store
        self.conn = conn
        # The running command's id (``ledger.core.command_context``) when there is one: all its
        # transactions share it; otherwise one per transaction.
        self.correlation_id = metadata.get("correlation_id") or str(uuid.uuid4())
        self.metadata = {**metadata, "correlation_id": self.correlation_id}
        self.appended: list[StoredEvent] = []

    def append(
        self,
        events: Sequence[NewEvent],
        *,
        expected_versions: dict[str, int] | None = None,
        idempotency_key: str | None = None,
    ) -> AppendResult:
        """Append events after checking expected stream versions and the idempotency key.

        ``expected_versions`` maps a stream to the version the caller last saw (0 = new
        stream). An idempotency key that is already stored returns the events recorded
        under it and writes nothing.
        """
        if idempotency_key == "":
            # the hash writes a NULL key as "" (``ledger.store.chain.event_hash``), so an empty
            # key would be indistinguishable from none: never written, refused by ``verify``
            raise ValueError("an idempotency key must not be empty")
        if idempotency_key is not None:
            existing = self.store._events_for_key(self.conn, idempotency_key)
            if existing:
                return AppendResult(events=existing, already_recorded=True)
        if not events:
            return AppendResult()
        versions = self.store._stream_versions(self.conn, {e.stream for e in events})
        for stream, expected in (expected_versions or {}).items():
            if versions.get(stream, 0) != expected:
                raise ConcurrencyError(
                    f"stream {stream} is at version {versions.get(stream, 0)}, expected "
                    f"{expected}: another command wrote it first; run the command again"
                )
        position, prev_hash = self.store._head(self.conn)
        metadata_text = canonical_json(self.metadata)
        # Inserted a batch at a time as the chain grows, so only one batch of payload texts
        # (~20 KB each for a run record) is held at once, not every event's.
        rows: list[dict[str, Any]] = []
        stored: list[StoredEvent] = []
        for index, new in enumerate(events):
            position += 1
            versions[new.stream] = versions.get(new.stream, 0) + 1
            row: dict[str, Any] = {  # one column per key, as ``event_hash`` takes them
                "position": position,
                "event_id": str(uuid.uuid4()),
                "stream": new.stream,
                "stream_version": versions[new.stream],
                "event_type": new.event_type,
                "schema_version": new.schema_version,
                "payload": _payload_text(new),
                "metadata": metadata_text,
                "correlation_id": self.correlation_id,
                "recorded_at": utc_now(),
                "idempotency_key": idempotency_key if index == 0 else None,
                "prev_hash": prev_hash,
            }
            row["hash"] = event_hash(**row)
            prev_hash = row["hash"]
            rows.append(row)
            stored.append(stored_event(row, payload=new.payload, metadata=self.metadata))
            if len(rows) == EVENTS_PER_INSERT:
                _insert_events(self.conn, rows)
                rows = []
        _insert_events(self.conn, rows)
        if self.store.listener is not None:
            self.store.listener(self.conn, stored)
        self.appended.extend(stored)
        return AppendResult(events=stored)


# Events go in as multi-row INSERTs of up to this many rows (13 columns each: 832 parameters,
# under every SQLite's limit). On SQLite each INSERT statement keeps a statement journal of the
# pages it changes, because the append-only trigger may abort it: one statement per event
# wrote the same 16 KiB leaf and index pages again for every event (34 MB for the 268 events
# of a 3,000-trial ingest, 4,200 writes to a temporary file); one per chunk writes them once.
EVENTS_PER_INSERT = 64
_INSERT_EVENTS = f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) VALUES "
_EVENT_VALUES = f"({placeholders(len(EVENT_COLUMNS))})"


def _insert_events(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """All of ``rows`` in as few statements as the parameter limit allows; each statement is
    atomic, and the caller's transaction makes the whole append so."""
    for start in range(0, len(rows), EVENTS_PER_INSERT):
        chunk = rows[start : start + EVENTS_PER_INSERT]
        values = ", ".join([_EVENT_VALUES] * len(chunk))
        conn.execute(_INSERT_EVENTS + values, tuple(r[c] for r in chunk for c in EVENT_COLUMNS))


def _payload_text(new: NewEvent) -> str:
    try:
        return canonical_json(new.payload)
    except TypeError as exc:  # NaN, Infinity or a non-JSON type slipped through a handler
        if "ecursion" in str(exc):  # valid JSON nested deeper than orjson writes: say where
            where = too_deep(new.payload, PAYLOAD_MAX_DEPTH)
            raise InputError(
                f"event {new.event_type} payload: field {where} is nested more than "
                f"{PAYLOAD_MAX_DEPTH} levels deep, deeper than benchledger can store; "
                "flatten it (nothing was recorded)"
            ) from None
        raise InputError(f"event {new.event_type} payload is not valid JSON: {exc}") from None


class EventStore:
    """Append and read events; ``listener`` (the projection engine) runs inside each append."""

    def __init__(self, database: Database, *, listener: Listener | None = None) -> None:
        self.database = database
        self.listener = listener
        self.is_postgres = database.dialect == "postgresql"
        self.head_marker = marker_path(database)

    @contextmanager
    def transaction(
        self, metadata: dict[str, Any] | None = None, *, temp_in_memory: bool = False
    ) -> Iterator[UnitOfWork]:
        """Open the write transaction and take the append lock before the handler reads; after
        the commit, move the head marker (``ledger.store.head_witness``) to the new head.

        ``temp_in_memory``: the database keeps the transaction's temporary files in memory
        (``SqliteDatabase.begin``), for a caller whose statements each append a bounded batch."""
        with self.database.begin(temp_in_memory=temp_in_memory) as conn:
            if self.is_postgres:
                conn.execute(
                    f"SELECT pg_advisory_xact_lock(?, {PG_SCHEMA_KEY})", (PG_APPEND_LOCK_KEY,)
                )
            # The running command's metadata and correlation id under the caller's, so the
            # export_written of a render after the commit carries them too.
            uow = UnitOfWork(self, conn, {**current_command(), **(metadata or {})})
            yield uow
        if uow.appended:
            write_marker(self.head_marker, uow.appended[-1].position, uow.appended[-1].hash)

    def append(
        self,
        events: Sequence[NewEvent],
        *,
        metadata: dict[str, Any] | None = None,
        expected_versions: dict[str, int] | None = None,
        idempotency_key: str | None = None,
    ) -> AppendResult:
        """Append in a transaction of its own (for callers with nothing else to read)."""
        with self.transaction(metadata) as uow:
            return uow.append(
                events, expected_versions=expected_versions, idempotency_key=idempotency_key
            )

    # -- reads ---------------------------------------------------------------------------

    def read(
        self,
        *,
        from_position: int = 1,
        to_position: int | None = None,
        stream: str | None = None,
        event_types: Iterable[str] | None = None,
        limit: int | None = None,
        batch_size: int = READ_BATCH,
        conn: Connection | None = None,
    ) -> Iterator[StoredEvent]:
        """Events in position order, fetched in keyset batches so memory stays bounded."""
        for events in self.read_batches(
            from_position=from_position,
            to_position=to_position,
            stream=stream,
            event_types=event_types,
            limit=limit,
            batch_size=batch_size,
            conn=conn,
        ):
            yield from events

    def read_batches(
        self,
        *,
        from_position: int = 1,
        to_position: int | None = None,
        stream: str | None = None,
        event_types: Iterable[str] | None = None,
        limit: int | None = None,
        batch_size: int = READ_BATCH,
        conn: Connection | None = None,
    ) -> Iterator[list[StoredEvent]]:
        """``read`` one keyset batch at a time: replay hands whole batches to projections."""
        decode = stored_decoder()
        for rows in self._row_batches(
            from_position, to_position, stream, event_types, limit, batch_size, conn
        ):
            yield [decode(row) for row in rows]

    def read_rows(
        self,
        *,
        from_position: int = 1,
        to_position: int | None = None,
        stream: str | None = None,
        event_types: Iterable[str] | None = None,
        limit: int | None = None,
        batch_size: int = READ_BATCH,
        conn: Connection | None = None,
    ) -> Iterator[list[dict[str, Any]]]:
        """Raw row batches (payload still text) as dicts keyed by column name."""
        for rows in self._row_batches(
            from_position, to_position, stream, event_types, limit, batch_size, conn
        ):
            yield [dict(zip(EVENT_COLUMNS, row, strict=True)) for row in rows]

    def read_replay_rows(
        self,
        *,
        event_types: Iterable[str] | None = None,
        batch_size: int = READ_BATCH,
        conn: Connection | None = None,
        sparse: tuple[str, Sequence[int]] | None = None,
        after: int = 0,
        upto: int | None = None,
    ) -> Iterator[tuple[Sequence[Any], int]]:
        """Raw row tuples in ``REPLAY_COLUMNS`` order (payload still text), in position order,
        each batch with the number of events it left out (see ``sparse``).

        The replay read path: a rebuild decodes each payload once and never builds a
        ``StoredEvent``, so it fetches only the columns read models use. ``sparse`` is
        ``(event_type, positions)``: of that type only the events at those (sorted)
        positions are read, because its projection showed the others cannot change its
        result; they are never fetched nor parsed. ``after``/``upto``: the positions read are
        ``(after, upto]`` (``upto``: the head by default); ``sparse`` reads from position 1.
        """
        if sparse is None:
            for rows in self._row_batches(
                after + 1, upto, None, event_types, None, batch_size, conn, columns=REPLAY_COLUMNS
            ):
                yield rows, 0
            return
        sparse_type, wanted = sparse
        dense = sorted(set(event_types or ()) - {sparse_type})
        with _connection(self.database, conn) as c:
            head = self._head(c)[0] if upto is None else upto
            last, index = 0, 0
            while last < head:
                upper = min(last + batch_size, head)
                start = index
                while index < len(wanted) and wanted[index] <= upper:
                    index += 1
                kept = list(wanted[start:index])
                query = sparse_query(last, upper, dense, kept)
                rows = c.execute(*query).all() if query is not None else []
                total = c.execute(COUNT_SQL, (sparse_type, last, upper)).scalar() or 0
                last = upper
                if rows or total:
                    yield rows, total - len(kept)

    def _row_batches(
        self,
        from_position: int,
        to_position: int | None,
        stream: str | None,
        event_types: Iterable[str] | None,
        limit: int | None,
        batch_size: int,
        conn: Connection | None,
        *,
        columns: Sequence[str] = EVENT_COLUMNS,
    ) -> Iterator[Sequence[Any]]:
        """Row tuples in ``columns`` order (``EVENT_COLUMNS`` unless told), one keyset batch
        per query; ``position`` must come first.

        Filtering by several types walks fixed windows of positions instead: with an open
        ``position > last``, SQLite (and PostgreSQL before its statistics caught up)
        answered each batch by collecting every later event of those types through the type
        index and sorting them, which made replay quadratic. A window bounds each query
        whatever plan is chosen.
        """
        types = list(event_types) if event_types else None
        with _connection(self.database, conn) as c:
            if types is not None and len(types) > 1:
                head = self._head(c)[0] if to_position is None else to_position
                yield from self._windows(
                    c, from_position, head, stream, types, limit, batch_size, columns
                )
                return
            last = from_position - 1
            remaining = limit
            while remaining is None or remaining > 0:
                size = batch_size if remaining is None else min(batch_size, remaining)
                query = events_query(last, to_position, stream, types, size, columns)
                rows = c.execute(*query).all()
                if not rows:
                    return
                yield rows
                last = rows[-1][0]
                if remaining is not None:
                    remaining -= len(rows)
                if len(rows) < size:
                    return

    @staticmethod
    def _windows(
        conn: Connection,
        from_position: int,
        head: int,
        stream: str | None,
        types: list[str],
        limit: int | None,
        batch_size: int,
        columns: Sequence[str] = EVENT_COLUMNS,
    ) -> Iterator[Sequence[Any]]:
        last = from_position - 1
        remaining = limit
        while last < head and (remaining is None or remaining > 0):
            size = batch_size if remaining is None else min(batch_size, remaining)
            upper = min(last + size, head)
            query = events_query(last, upper, stream, types, size, columns)
            rows = conn.execute(*query).all()
            last = upper
            if rows:
                yield rows
                if remaining is not None:
                    remaining -= len(rows)

    def get(self, key: str | int) -> StoredEvent | None:
        """One event by position or event id."""
        query: tuple[str, tuple[int | str]]
        if isinstance(key, int) or str(key).isdigit():
            query = (f"{EVENTS.select_sql} WHERE position = ?", (int(key),))
        else:
            query = (f"{EVENTS.select_sql} WHERE event_id = ?", (str(key),))
        with self.database.connect() as conn:
            row = conn.execute(*query).first()
        return stored_event(dict(zip(EVENT_COLUMNS, row, strict=True))) if row else None

    def head_position(self, conn: Connection | None = None) -> int:
        with _connection(self.database, conn) as c:
            return self._head(c)[0]

    def stream_version(self, stream: str, conn: Connection | None = None) -> int:
        with _connection(self.database, conn) as c:
            return self._stream_versions(c, {stream}).get(stream, 0)

    def verify(
        self,
        *,
        progress: Callable[[int], None] | None = None,
        witnesses: Sequence[HeadWitness] = (),
    ) -> VerifyReport:
        """Re-walk the chain from position 1: positions contiguous, each hash recomputed; then
        hold the head against every witness kept outside the table (``ledger.store.head_witness``),
        which is what catches events cut off the end."""
        prev_hash, expected_position, checked = GENESIS_HASH, 1, 0
        for rows in self.read_rows(batch_size=5000):
            for row in rows:
                problem = _check_row(row, expected_position, prev_hash)
                if problem:
                    return VerifyReport(False, checked, self.head_position(), *problem)
                prev_hash, expected_position, checked = (
                    row["hash"],
                    row["position"] + 1,
                    checked + 1,
                )
            if progress:
                progress(checked)
        head = expected_position - 1
        report = VerifyReport(True, checked, head, head_hash=prev_hash if head else None)
        for witness in witnesses:
            self._hold_against(report, witness)
        return report

    def _hold_against(self, report: VerifyReport, witness: HeadWitness) -> None:
        head = report.head_position
        if witness.position > head:
            status = "beyond_head"
            problem = (
                head + 1,
                f"the chain ends at position {head} but the {witness.source} records position "
                f"{witness.position}: events after {head} were deleted",
            )
        else:
            found = self.get(witness.position) if witness.position else None
            actual = found.hash if found is not None else GENESIS_HASH
            status = "match" if actual == witness.hash else "hash_differs"
            problem = (
                witness.position,
                f"position {witness.position} does not have the hash the {witness.source} "
                "records: the chain was rewritten",
            )
        report.witnesses.append({**witness.as_dict(), "status": status})
        if status != "match" and report.ok:
            report.ok = False
            report.first_bad_position, report.reason = problem

    # -- internals used by UnitOfWork ------------------------------------------------------

    def _head(self, conn: Connection) -> tuple[int, str]:
        query = "SELECT position, hash FROM events ORDER BY position DESC LIMIT 1"
        row = conn.execute(query).first()
        return (row[0], row[1]) if row else (0, GENESIS_HASH)

    def _stream_versions(self, conn: Connection, streams: set[str]) -> dict[str, int]:
        wanted = sorted(streams)
        query = (
            "SELECT stream, max(stream_version) FROM events"
            f" WHERE stream IN ({placeholders(len(wanted))}) GROUP BY stream"
        )
        return {stream: version for stream, version in conn.execute(query, wanted)}

    def events_for_key(self, conn: Connection, key: str) -> list[StoredEvent]:
        """The events one command recorded under an idempotency key (empty when none)."""
        return self._events_for_key(conn, key)

    def _events_for_key(self, conn: Connection, key: str) -> list[StoredEvent]:
        correlation = conn.execute(
            "SELECT correlation_id FROM events WHERE idempotency_key = ?", (key,)
        ).scalar()
        if correlation is None:
            return []
        rows = conn.execute(
            f"{EVENTS.select_sql} WHERE correlation_id = ? AND event_type <> ? ORDER BY position",
            (correlation, EXPORT_WRITTEN),  # the command's render shares its correlation id
        )
        return [stored_event(dict(zip(EVENT_COLUMNS, r, strict=True))) for r in rows]


def _check_row(
    row: dict[str, Any], expected_position: int, prev_hash: str
) -> tuple[int, str] | None:
    """The first bad position and why, or None when this row continues the chain."""
    if row["position"] != expected_position:
        return expected_position, (
            f"position gap: expected {expected_position}, found {row['position']} "
            "(an event was deleted or positions were rewritten)"
        )
    if row["prev_hash"] != prev_hash:
        return row["position"], (
            f"position {row['position']}: prev_hash does not match the "
            "previous event's hash (events reordered or removed)"
        )
    if row["idempotency_key"] == "":
        # The hash covers a NULL key as "" (kept so: every existing chain stays valid), and
        # append never writes "" (it refuses it), so an empty key is an edit of a NULL one.
        return row["position"], (
            f"position {row['position']}: idempotency_key is '' where benchledger writes "
            "NULL or a non-empty key (edited)"
        )
    fields = {k: row[k] for k in HASHED_COLUMNS}
    if event_hash(**fields) != row["hash"]:
        return row["position"], (
            f"position {row['position']}: content does not match its hash (edited)"
        )
    return None


@contextmanager
def _connection(database: Database, conn: Connection | None) -> Iterator[Connection]:
    if conn is not None:
        yield conn
        return
    with database.connect() as c:
        yield c
