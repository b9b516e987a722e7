"""Replay by the database: the projections that offer a ``database_plan``
(``database_fold``) are folded by SQL into their empty tables, the few events a plan leaves
to Python applied through the projection's own replay sink."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchledger.projections.read_models.database_fold import (
    DatabasePlan,
    replay_projection,
    rows_at,
)
from benchledger.projections.read_models.replay_feed import (
    apply_in_batches,
    plan_connection,
    replay_sink,
    start_scan,
)

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.projections.read_models.engine import Projection


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
    with plan_connection(store, source) as plan_conn:
        scans = {
            p.name: start_scan(plans[p.name].only, plan_conn, upto, inline=plan_conn is source)
            for p in ordered
            if plans[p.name].only is not None
        }
        for projection in ordered:

            def apply_python(positions: Sequence[int], projection: Projection = projection) -> None:
                sink = replay_sink(projection, self_contained=self_contained)
                apply_in_batches(sink, conn, rows_at(source, positions))

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
