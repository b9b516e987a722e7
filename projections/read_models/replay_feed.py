"""Replay in Python: the events in ``(after, upto]`` read in position order, in batches of
``REPLAY_BATCH``, and handed to each projection (or the buffered sink it offers for replay).

Replay reads only the envelope columns read models use and decodes each payload once into a
``ReplayEvent`` (no ``StoredEvent``, no metadata), when every chosen projection says its
``apply`` reads nothing else (``light_replay = True``); otherwise it replays full events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.store.event_rows import REPLAY_COLUMNS
from benchledger.ledger.store.events import CURRENT_SCHEMA_VERSION, upcast
from benchledger.projections.read_models.prefetch import read_ahead

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.ledger.store.events import StoredEvent
    from benchledger.projections.read_models.engine import Projection

REPLAY_BATCH = 5000


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


def light_events(rows: Sequence[Sequence[Any]]) -> list[ReplayEvent]:
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


def replay_events(
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
    sinks = [replay_sink(p, resume=after > 0, self_contained=self_contained) for p in chosen]
    replayed = 0

    def feed(batches: Iterator[tuple[list[Any], int]], targets: list[Any]) -> None:
        nonlocal replayed
        for batch, skipped in batches:
            apply_batch(conn, batch, targets)
            done = replayed + len(batch) + skipped
            if progress and done // REPLAY_BATCH > replayed // REPLAY_BATCH:
                progress(done)  # once per REPLAY_BATCH events replayed
            replayed = done

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


def apply_in_batches(sink: Any, conn: Connection, rows: Sequence[Sequence[Any]]) -> None:
    """``rows`` (``REPLAY_COLUMNS`` tuples) into ``sink``, ``REPLAY_BATCH`` at a time, then
    its buffer flushed: the events a database plan leaves to Python (``replay_database``)."""
    for start in range(0, len(rows), REPLAY_BATCH):
        sink.apply(conn, light_events(rows[start : start + REPLAY_BATCH]))
    flush = getattr(sink, "flush", None)
    if flush is not None:
        flush(conn)


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
        yield light_events(rows), skipped


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
    with plan_connection(store, read_conn) as plan_conn:
        future = start_scan(offer.sparse_replay, plan_conn, head, inline=plan_conn is read_conn)
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
def plan_connection(store: EventStore, read_conn: Connection) -> Iterator[Connection]:
    """A second connection for the key scan (on PostgreSQL a failed scan must not abort the
    replay's transaction), except for a private in-memory SQLite database, which has none:
    ``read_conn`` itself then."""
    if read_conn.in_memory:
        yield read_conn
        return
    with store.database.connect() as other:
        yield other


@dataclass
class Done:
    """A result computed in place, with the ``result()`` of a future."""

    value: Any

    def result(self) -> Any:
        return self.value


def start_scan(scan: Any, conn: Connection, upto: int, *, inline: bool) -> Any:
    """``scan(conn, upto)`` on a thread (a future), or now when ``conn`` is the writer's own."""
    if inline:
        return Done(scan(conn, upto))
    # imported here: concurrent.futures pulls in logging, and only a rebuild needs it
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchledger-plan")
    future = pool.submit(scan, conn, upto)
    pool.shutdown(wait=False)
    return future


def replay_sink(
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


def apply_batch(conn: Connection, events: list[StoredEvent], sinks: list[Any]) -> None:
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
