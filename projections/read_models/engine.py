"""The projection engine: keeps read models current inside the append transaction, and
rebuilds them by replay.

A projection declares the event types it handles and the tables it owns. The engine is the
store's listener, so read models commit with the events that changed them (read-your-writes);
``rebuild`` truncates and replays in position order in fixed-size batches, so memory does not
grow with the store; ``verify_rebuild`` replays into a scratch SQLite database and compares
every row with the live read models.

Replay reads only the envelope columns read models use and decodes each payload once into a
``ReplayEvent`` (no ``StoredEvent``, no metadata), when every chosen projection says its
``apply`` reads nothing else (``light_replay = True``); otherwise it replays full events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.gc_pause import collector_paused
from benchledger.ledger.store.event_rows import REPLAY_COLUMNS
from benchledger.ledger.store.events import CURRENT_SCHEMA_VERSION, upcast
from benchledger.ledger.store.tables import PROJECTION_CHECKPOINTS
from benchledger.projections.read_models.database_fold import (
    DatabasePlan,
    replay_projection,
    rows_at,
)
from benchledger.projections.read_models.diff import check_caches, compare_tables, compared_tables
from benchledger.projections.read_models.prefetch import read_ahead
from benchledger.projections.read_models.scratch import scratch_database

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.ledger.store.events import StoredEvent
    from benchledger.ledger.store.tables import TableSpec
REPLAY_BATCH = 5000
# SQLite page cache for a rebuild (KiB): room for the read models of a large store while
# keeping the replay process well under its 500 MB budget.
REBUILD_CACHE_KIB = 64 * 1024


class Projection(Protocol):
    """A read model: the events it reads, the tables it owns, how an event changes them.

    A projection may also set ``light_replay = True`` (its ``apply`` and replayer read only
    ``ReplayEvent``'s fields) and offer ``replayer()`` (a buffered sink for replay).
    """

    name: str
    handles: frozenset[str]

    @property
    def tables(self) -> Sequence[TableSpec]: ...

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None: ...


class ReplayEvent:
    """What replay hands a light projection: the envelope fields read models are built from,
    the decoded payload, and its stored text (canonical JSON, what the chain hashed), so a
    sink may keep the text and decode it again later instead of holding the parsed dict.

    Attribute names match ``StoredEvent``, so a projection's ``apply`` takes either.
    """

    __slots__ = (*REPLAY_COLUMNS, "payload_text")

    def __init__(
        self,
        position: int,
        event_id: str,
        stream: str,
        event_type: str,
        schema_version: int,
        payload: dict[str, Any],
        recorded_at: str,
        payload_text: str,
    ) -> None:
        self.position = position
        self.event_id = event_id
        self.stream = stream
        self.event_type = event_type
        self.schema_version = schema_version
        self.payload = payload
        self.recorded_at = recorded_at
        self.payload_text = payload_text


def _light_events(rows: Sequence[Sequence[Any]]) -> list[ReplayEvent]:
    """``REPLAY_COLUMNS`` row tuples to ``ReplayEvent``s, one payload decode each."""
    loads = orjson.loads
    upcasted = CURRENT_SCHEMA_VERSION
    out: list[ReplayEvent] = []
    append = out.append
    for position, event_id, stream, event_type, schema_version, text, recorded_at in rows:
        body = loads(text)
        if event_type in upcasted:
            body = upcast(event_type, schema_version, body)
        append(
            ReplayEvent(
                position, event_id, stream, event_type, schema_version, body, recorded_at, text
            )
        )
    return out


@dataclass
class RebuildReport:
    projections: list[str]
    events_replayed: int
    head_position: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "projections": self.projections,
            "events_replayed": self.events_replayed,
            "head_position": self.head_position,
        }


@dataclass
class VerifyRebuildReport:
    ok: bool
    projections: list[str]
    events_replayed: int
    differences: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "projections": self.projections,
            "events_replayed": self.events_replayed,
            "differences": self.differences,
        }


class ProjectionEngine:
    """Dispatches events to projections and records each projection's checkpoint."""

    def __init__(self, projections: Iterable[Projection]) -> None:
        self.projections = {p.name: p for p in projections}

    def __call__(self, conn: Connection, events: list[StoredEvent]) -> None:
        self.apply(conn, events, self.projections.values())

    def select(self, names: Sequence[str] | None) -> list[Projection]:
        if not names:
            return list(self.projections.values())
        unknown = [n for n in names if n not in self.projections]
        if unknown:
            known = ", ".join(sorted(self.projections))
            raise InputError(f"unknown projection {unknown[0]!r} (known: {known})")
        return [self.projections[n] for n in names]

    def apply(
        self, conn: Connection, events: list[StoredEvent], projections: Iterable[Projection]
    ) -> None:
        if not events:
            return
        names = []
        for projection in projections:
            handled = [e for e in events if e.event_type in projection.handles]
            if handled:
                projection.apply(conn, handled)
            names.append(projection.name)
        _set_checkpoints(conn, names, events[-1].position)  # one statement per append

    def rebuild(
        self,
        store: EventStore,
        names: Sequence[str] | None = None,
        *,
        progress: Callable[[int], None] | None = None,
        in_database: bool = True,
    ) -> RebuildReport:
        """Truncate the chosen read models and replay every event, in one transaction.

        ``in_database``: let the database replay the projections that offer it
        (``database_fold``; ``progress`` then hears once, at the end); False replays every
        event in Python, in ``REPLAY_BATCH`` batches."""
        chosen = self.select(names)
        with store.transaction() as uow, _bulk_settings(uow.conn):
            conn = uow.conn
            empty_tables(conn, [t.name for p in chosen for t in p.tables])
            with indexes_built_after(conn, [t.name for p in chosen for t in p.tables]):
                head = store.head_position(conn)
                plans = database_plans(chosen, conn) if in_database else {}
                python = [p for p in chosen if p.name not in plans]
                replayed = 0
                if python:
                    replayed = self._replay(
                        store, python, conn, read_conn=conn, progress=progress, upto=head
                    )
                if plans:
                    replay_in_database(store, chosen, plans, conn, head)
                    replayed = count_events(conn, chosen, head)
                    if progress:
                        progress(replayed)
            _set_checkpoints(conn, [p.name for p in chosen], head)
        return RebuildReport([p.name for p in chosen], replayed, head)

    def verify_rebuild(
        self, store: EventStore, names: Sequence[str] | None = None, *, max_differences: int = 20
    ) -> VerifyRebuildReport:
        """Replay into a scratch SQLite database and compare it with the live read models."""
        chosen = self.select(names)
        tables = compared_tables(chosen)
        with scratch_database("verify") as scratch:
            with store.database.connect() as live, scratch.begin() as conn:
                with indexes_built_after(conn, [t.name for p in chosen for t in p.tables]):
                    replayed = self._replay(
                        store, chosen, conn, read_conn=live, self_contained=True
                    )
                differences = compare_tables(tables, live, conn, max_differences)
                differences += check_caches(chosen, live, max_differences - len(differences))
        return VerifyRebuildReport(not differences, [p.name for p in chosen], replayed, differences)

    def replay_range(
        self,
        store: EventStore,
        conn: Connection,
        *,
        read_conn: Connection,
        after: int,
        upto: int,
        progress: Callable[[int], None] | None = None,
        events: str | None = None,
        names: Sequence[str] | None = None,
    ) -> int:
        """Replay the events in ``(after, upto]`` into the read models of ``names`` (default:
        all) on ``conn`` and set their checkpoints to ``upto``: from position 0 into empty
        tables, or onto read models that already stand at ``after`` (a snapshot, or an earlier
        ``replay_range``). ``events``: the events table as ``conn`` can read it (the live store
        attached), so a replay from position 0 is done by the database (``database_fold``)."""
        chosen = self.select(names) if names is None or names else []
        if not chosen:
            return 0  # the reader reads no read model (``sql`` over the events alone)
        tables = [t.name for p in chosen for t in p.tables] if after == 0 else []
        plans = database_plans(chosen, conn) if after == 0 and events else {}
        python = [p for p in chosen if p.name not in plans]
        schema = events.rpartition(".")[0] if plans and events else None
        with _bulk_settings(conn, schema), indexes_built_after(conn, tables):
            replayed = self._replay(
                store,
                python,
                conn,
                read_conn=read_conn,
                progress=progress,
                after=after,
                upto=upto,
                self_contained=True,
            )
            if plans and events:
                replay_in_database(
                    store,
                    chosen,
                    plans,
                    conn,
                    upto,
                    read_conn=read_conn,
                    events=events,
                    self_contained=True,
                )
                replayed = count_events(read_conn, chosen, upto)
                if progress:
                    progress(replayed)
        _set_checkpoints(conn, [p.name for p in chosen], upto)
        return replayed

    def _replay(
        self,
        store: EventStore,
        chosen: list[Projection],
        conn: Connection,
        *,
        read_conn: Connection,
        progress: Callable[[int], None] | None = None,
        after: int = 0,
        upto: int | None = None,
        self_contained: bool = False,
    ) -> int:
        """Feed the events in ``(after, upto]`` (``upto``: the head) to the chosen projections;
        with ``after`` > 0 their tables already hold the state at ``after``.
        ``self_contained``: ``conn`` holds no events (an ``--as-of`` scratch or a snapshot),
        so read models keep nothing by reference to them."""
        if not chosen:
            return 0  # (an empty type list would read every event, for no sink)
        handled = frozenset().union(*(p.handles for p in chosen))
        sinks = [_replay_sink(p, resume=after > 0, self_contained=self_contained) for p in chosen]
        replayed = 0

        def feed(batches: Iterator[tuple[list[Any], int]], targets: list[Any]) -> None:
            nonlocal replayed
            for batch, skipped in batches:
                _apply_batch(conn, batch, targets)
                done = replayed + len(batch) + skipped
                if progress and done // REPLAY_BATCH > replayed // REPLAY_BATCH:
                    progress(done)  # once per REPLAY_BATCH events replayed
                replayed = done

        with collector_paused():
            if upto is None:
                upto = store.head_position(read_conn)  # also fixes read_conn's snapshot
            if not all(getattr(p, "light_replay", False) for p in chosen):
                feed(_full_batches(store, sorted(handled), read_conn, after, upto), sinks)
            else:
                _light_replay(store, sinks, read_conn, feed, after, upto)
            for sink in sinks:
                flush = getattr(sink, "flush", None)
                if flush is not None:
                    flush(conn)
        return replayed


def empty_tables(conn: Connection, names: Sequence[str]) -> None:
    """Remove every row of ``names``, inside the caller's transaction. PostgreSQL truncates:
    a ``DELETE`` there leaves each row behind as a dead tuple for the next vacuum, so a store
    rebuilt a few times grew to several times its size, and the rebuild paid for it."""
    if conn.dialect == "postgresql":
        conn.execute(f"TRUNCATE {', '.join(names)}")
        return
    for name in reversed(names):
        conn.execute(f"DELETE FROM {name}")


def database_plans(chosen: Sequence[Projection], conn: Connection) -> dict[str, DatabasePlan]:
    """The chosen projections the database can replay itself (``database_fold``), by name."""
    plans = {}
    for projection in chosen:
        offer = getattr(projection, "database_plan", None)
        plan = offer(conn) if offer is not None else None
        if plan is not None:
            plans[projection.name] = plan
    return plans


def replay_in_database(
    store: EventStore,
    chosen: Sequence[Projection],
    plans: dict[str, DatabasePlan],
    conn: Connection,
    upto: int,
    *,
    read_conn: Connection | None = None,
    events: str = "events",
    self_contained: bool = False,
) -> None:
    """Each planned projection into its empty tables (``database_fold.replay_projection``),
    the events it leaves to Python applied by the projection's own replay sink. A plan's
    ``only`` scan runs on a second connection and thread (waiting on SQLite releases the GIL)
    while the projections without one replay; those with one come last. ``read_conn`` and
    ``events``: where the events are, when not beside the tables (``replay_range``)."""
    source = read_conn or conn
    ordered = sorted(
        (p for p in chosen if p.name in plans), key=lambda p: plans[p.name].only is not None
    )
    with collector_paused(), _plan_connection(store, source) as plan_conn:
        scans = {
            p.name: _start(plans[p.name].only, plan_conn, upto, inline=plan_conn is source)
            for p in ordered
            if plans[p.name].only is not None
        }
        for projection in ordered:

            def apply_python(positions: Sequence[int], projection: Projection = projection) -> None:
                sink = _replay_sink(projection, self_contained=self_contained)
                rows = rows_at(source, positions)
                for start in range(0, len(rows), REPLAY_BATCH):
                    sink.apply(conn, _light_events(rows[start : start + REPLAY_BATCH]))
                flush = getattr(sink, "flush", None)
                if flush is not None:
                    flush(conn)

            scan = scans.get(projection.name)
            replay_projection(
                conn,
                plans[projection.name],
                upto,
                list(projection.tables),
                apply_python,
                scan.result() if scan is not None else None,
                read_conn=source,
                events=events,
                self_contained=self_contained,
            )


def _start(scan: Any, conn: Connection, upto: int, *, inline: bool) -> Any:
    """``scan(conn, upto)`` on a thread (a future), or now when ``conn`` is the writer's own."""
    if inline:
        return _Done(scan(conn, upto))
    # imported here: concurrent.futures pulls in logging, and only a rebuild needs it
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchledger-plan")
    future = pool.submit(scan, conn, upto)
    pool.shutdown(wait=False)
    return future


def count_events(conn: Connection, chosen: Sequence[Projection], upto: int) -> int:
    """How many events up to ``upto`` the chosen projections handle (what a replay reports)."""
    types = sorted(frozenset().union(*(p.handles for p in chosen)))
    if not types:
        return 0
    query = (
        f"SELECT count(*) FROM events WHERE event_type IN ({', '.join('?' * len(types))})"
        " AND position <= ?"
    )
    return int(conn.execute(query, [*types, upto]).scalar() or 0)


def _full_batches(
    store: EventStore, types: list[str], read_conn: Connection, after: int, upto: int
) -> Iterator[tuple[list[Any], int]]:
    for batch in store.read_batches(
        from_position=after + 1,
        to_position=upto,
        event_types=types,
        conn=read_conn,
        batch_size=REPLAY_BATCH,
    ):
        yield batch, 0


def _light_batches(
    store: EventStore,
    types: Iterable[str],
    read_conn: Connection,
    after: int,
    upto: int,
    sparse: tuple[str, Sequence[int]] | None = None,
) -> Iterator[tuple[list[Any], int]]:
    for rows, skipped in store.read_replay_rows(
        event_types=sorted(types),
        conn=read_conn,
        batch_size=REPLAY_BATCH,
        sparse=sparse,
        after=after,
        upto=upto,
    ):
        yield _light_events(rows), skipped


def _light_replay(
    store: EventStore,
    sinks: list[Any],
    read_conn: Connection,
    feed: Callable[[Iterator[tuple[list[Any], int]], list[Any]], None],
    after: int,
    upto: int,
) -> None:
    """Replay ``ReplayEvent``s; with a sparse sink, in two passes that share the work out.

    A replayer may offer ``sparse_event_type``, ``sparse_supported(conn)`` and
    ``sparse_replay(conn, upto)`` -> the sorted positions of the events of that type it
    needs (or None): it promises that replaying only those (and every event of its other
    types) leaves its tables exactly as a full replay does. The offer is taken when no
    other sink reads any of its types. Its key scan then runs in the database on a second
    connection and thread (waiting on it releases the GIL) while the other sinks replay their
    events, and the sparse sink replays last; every sink still sees its own events in
    position order. The scan reads only events up to ``upto``, so both connections agree on
    what there is. A replay onto existing read models (``after`` > 0, a short tail) reads
    every event: the offer's promise holds for a replay from position 0.
    """
    head = upto
    sparse = _sparse_sink(sinks, read_conn) if after == 0 else None
    if sparse is None:
        types = frozenset().union(*(s.handles for s in sinks)) if sinks else frozenset()
        feed(
            read_ahead(store, read_conn, lambda c: _light_batches(store, types, c, after, head)),
            sinks,
        )
        return
    others = [s for s in sinks if s is not sparse]
    offer = sparse.target
    with _plan_connection(store, read_conn) as plan_conn:
        future = _start(offer.sparse_replay, plan_conn, head, inline=plan_conn is read_conn)
        try:
            if others:
                types = frozenset().union(*(s.handles for s in others))
                feed(_light_batches(store, types, read_conn, 0, head), others)
        finally:
            kept = future.result()
    plan = None if kept is None else (offer.sparse_event_type, kept)
    feed(_light_batches(store, sparse.handles, read_conn, 0, head, plan), [sparse])


def _sparse_sink(sinks: list[Any], read_conn: Connection) -> Any:
    """The sink whose ``sparse_replay`` offer can be taken (see ``_light_replay``), or None."""
    for sink in sinks:
        target = getattr(sink, "target", None)
        supported = getattr(target, "sparse_supported", None)
        if supported is None or not supported(read_conn):
            continue
        if all(other is sink or other.handles.isdisjoint(sink.handles) for other in sinks):
            return sink
    return None


@contextmanager
def _plan_connection(store: EventStore, read_conn: Connection) -> Iterator[Connection]:
    """A second connection for the key scan (on PostgreSQL a failed scan must not abort the
    replay's transaction), except for a private in-memory SQLite database, which has none:
    ``read_conn`` itself then."""
    if read_conn.in_memory:
        yield read_conn
        return
    with store.database.connect() as other:
        yield other


@dataclass
class _Done:
    """A result computed in place, with the ``result()`` of a future."""

    value: Any

    def result(self) -> Any:
        return self.value


def _replay_sink(
    projection: Projection, *, resume: bool = False, self_contained: bool = False
) -> Any:
    """What receives replayed events: the projection, or the buffered sink it offers for
    replay (``replayer(resume=...)`` returning an object with ``apply`` and ``flush``;
    ``resume``: its tables already hold an earlier state, they do not start empty)."""
    replayer = getattr(projection, "replayer", None)
    if replayer is None:
        return projection
    return _Sink(projection.handles, replayer(resume=resume, self_contained=self_contained))


@dataclass
class _Sink:
    handles: frozenset[str]
    target: Any

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        self.target.apply(conn, events)

    def flush(self, conn: Connection) -> None:
        self.target.flush(conn)


def _apply_batch(conn: Connection, events: list[StoredEvent], sinks: list[Any]) -> None:
    """Each sink gets the batch's events of its types, in position order; sinks handling the
    same types share one filtered list."""
    present = {e.event_type for e in events}
    selected: dict[frozenset[str], list[StoredEvent]] = {}
    for sink in sinks:
        handles = sink.handles
        if present.isdisjoint(handles):
            continue
        if handles not in selected:
            selected[handles] = (
                events if present <= handles else [e for e in events if e.event_type in handles]
            )
        sink.apply(conn, selected[handles])


@contextmanager
def _bulk_settings(conn: Connection, attached: str | None = None) -> Iterator[None]:
    """A bigger SQLite page cache for the one long rebuild transaction, so flushes into a
    large read model find its pages in memory instead of re-reading them from the OS (the
    default is 2 MB); restored afterwards because the connection goes back to the pool."""
    if conn.dialect != "sqlite":
        yield
        return
    saved = int(conn.execute("PRAGMA cache_size").scalar())
    conn.execute(f"PRAGMA cache_size=-{REBUILD_CACHE_KIB}")
    if attached:  # the attached database the events are read from has a cache of its own
        conn.execute(f"PRAGMA {attached}.cache_size=-{REBUILD_CACHE_KIB}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size={saved}")


@contextmanager
def indexes_built_after(conn: Connection, tables: Sequence[str]) -> Iterator[None]:
    """Drop the secondary indexes of ``tables`` (empty, about to be loaded) and create them
    again after the load, in the same transaction: one sort per index instead of a B-tree
    insert per row. Primary keys and unique constraints stay (upserts need them)."""
    if not tables:
        yield
        return
    found = _secondary_indexes(conn, tables)
    for name, _sql in found:
        conn.execute(f"DROP INDEX {name}")
    yield
    for _name, sql in found:
        conn.execute(sql)


def _secondary_indexes(conn: Connection, tables: Sequence[str]) -> list[tuple[str, str]]:
    """``(name, CREATE INDEX statement)`` of each plain index on ``tables``."""
    marks = ", ".join("?" * len(tables))
    if conn.dialect == "sqlite":
        query = (
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            f" AND tbl_name IN ({marks}) ORDER BY name"
        )
    else:
        query = (
            "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x"
            " JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid"
            " JOIN pg_namespace n ON n.oid = t.relnamespace"
            " WHERE n.nspname = current_schema() AND NOT x.indisprimary AND NOT x.indisunique"
            f" AND t.relname IN ({marks}) ORDER BY i.relname"
        )
    return [(name, sql) for name, sql in conn.execute(query, list(tables))]


def _set_checkpoints(conn: Connection, names: Sequence[str], position: int) -> None:
    conn.executemany(PROJECTION_CHECKPOINTS.upsert_sql, [(name, position) for name in names])


def checkpoints(conn: Connection) -> dict[str, int]:
    rows = conn.execute("SELECT name, position FROM projection_checkpoints")
    return {name: position for name, position in rows}
