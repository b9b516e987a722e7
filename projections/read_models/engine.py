"""The projection engine: keeps read models current inside the append transaction, and
rebuilds them by replay.

A projection declares the event types it handles and the tables it owns. The engine is the
store's listener, so read models commit with the events that changed them (read-your-writes);
``rebuild`` truncates and replays in position order in fixed-size batches, so memory does not
grow with the store; ``verify_rebuild`` replays into a scratch SQLite database and compares
every row with the live read models.

How events are fed in Python is ``replay_feed``; what the database folds itself,
``replay_database``; the load settings, ``bulk_load``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.tables import PROJECTION_CHECKPOINTS
from benchledger.projections.read_models.bulk_load import (
    bulk_settings,
    empty_tables,
    indexes_built_after,
)
from benchledger.projections.read_models.diff import check_caches, compare_tables, compared_tables
from benchledger.projections.read_models.replay_database import (
    count_events,
    database_plans,
    replay_in_database,
)
from benchledger.projections.read_models.replay_feed import replay_events
from benchledger.projections.read_models.scratch import scratch_database

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.ledger.store.events import StoredEvent
    from benchledger.ledger.store.tables import TableSpec


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
        with store.transaction() as uow, bulk_settings(uow.conn):
            conn = uow.conn
            empty_tables(conn, [t.name for p in chosen for t in p.tables])
            with indexes_built_after(conn, [t.name for p in chosen for t in p.tables]):
                head = store.head_position(conn)
                plans = database_plans(chosen, conn) if in_database else {}
                python = [p for p in chosen if p.name not in plans]
                replayed = 0
                if python:
                    replayed = replay_events(
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
                    replayed = replay_events(
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
        with bulk_settings(conn, schema), indexes_built_after(conn, tables):
            replayed = replay_events(
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


def _set_checkpoints(conn: Connection, names: Sequence[str], position: int) -> None:
    conn.executemany(PROJECTION_CHECKPOINTS.upsert_sql, [(name, position) for name in names])


def checkpoints(conn: Connection) -> dict[str, int]:
    rows = conn.execute("SELECT name, position FROM projection_checkpoints")
    return {name: position for name, position in rows}
