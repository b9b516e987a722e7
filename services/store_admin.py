"""The store's own commands: the audit log, chain verification, rebuild, SQL, migrations.

Each opens the store, asks the store (or the projection engine) one question and returns the
payload; the click layer only prints it.
"""

from __future__ import annotations

from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.gc_pause import collector_paused
from benchledger.ledger.store.database import SCHEMA_HEAD, current_revision, run_upgrade
from benchledger.ledger.store.events import EVENT_TYPES
from benchledger.ledger.store.head_witness import parse_expected_head, read_marker
from benchledger.ledger.store.sql_query import run_read_only_query
from benchledger.projections.history.as_of_sql import query_as_of
from benchledger.services.as_of_reads import Progress
from benchledger.services.store_session import open_store


def list_events(
    db: str | None,
    *,
    from_position: int,
    to_position: int | None,
    stream: str | None,
    event_types: tuple[str, ...],
    limit: int,
    payload: bool,
    as_of: str | None,
) -> dict[str, Any]:
    """Events in position order; with ``as_of`` only those up to that moment.

    An event type no benchmark command appends is refused with the list of names (a
    misspelling used to print ``count: 0``); a listing cut at ``limit`` says so and where the
    next page starts."""
    unknown = [t for t in event_types if t not in EVENT_TYPES]
    if unknown:
        raise InputError(
            f"unknown event type {unknown[0]} (event types: {', '.join(sorted(EVENT_TYPES))})"
        )
    moment = None
    with open_store(db) as opened:
        if as_of is not None:
            from benchledger.projections.history.as_of import resolve_moment

            with opened.store.database.connect() as conn:
                moment = resolve_moment(conn, as_of)
            to_position = min(to_position or moment.position, moment.position)
        events = list(
            opened.store.read(
                from_position=from_position,
                to_position=to_position,
                stream=stream,
                event_types=event_types or None,
                limit=limit + 1 if limit > 0 else limit,
            )
        )
    more = limit > 0 and len(events) > limit
    events = events[:limit] if more else events
    items = []
    for e in events:
        item = e.as_dict()
        if not payload:
            item.pop("payload")
            item.pop("metadata")
        items.append(item)
    result: dict[str, Any] = {"ok": True}
    if moment is not None and as_of is not None:
        result["as_of"] = {"requested": as_of.strip(), **moment.as_dict()}
    result.update(count=len(items), events=items)
    if more:
        result["truncated"] = True
        result["note"] = (
            f"the first {limit} matching events are shown and more follow; "
            f"next page: --from {events[-1].position + 1} (or a larger --limit)"
        )
    return result


def show_event(db: str | None, key: str) -> dict[str, Any]:
    """One event by position or event id."""
    with open_store(db) as opened:
        event = opened.store.get(key)
    if event is None:
        raise InputError(f"no event at {key}")
    return {"ok": True, "event": event.as_dict()}


def verify_store(
    db: str | None, *, files: bool, expect_head: str | None, schemas: bool = False
) -> dict[str, Any]:
    """The chain walk, plus the published files and the payload contracts when asked."""

    expected = parse_expected_head(expect_head) if expect_head else None
    with open_store(db) as opened:
        marker = read_marker(opened.store.head_marker)
        witnesses = [w for w in (marker, expected) if w is not None]
        report = opened.store.verify(witnesses=witnesses).as_dict()
        if files:
            from benchledger.projections.publishing.files import verify_exports

            checked = verify_exports(opened.store)
            report["files"] = checked.files
            report["exports"] = checked.summary
            report["ok"] = report["ok"] and checked.ok
        if schemas:
            from benchledger.ledger.contracts.conformance import check_store

            report["schemas"] = check_store(opened.store).as_dict()
            report["ok"] = report["ok"] and report["schemas"]["ok"]
    return {"ok": report["ok"], "verify": report}


def rebuild(db: str | None, projection_names: tuple[str, ...], *, verify_only: bool) -> dict:
    """Replay every event into the read models (or into a scratch copy, to compare).

    The cyclic collector is paused for the whole command: replay in Python (``--verify``, and
    every rebuild on PostgreSQL) keeps batches of acyclic rows alive that each collection
    walked and freed nothing (~420 ms of ~3.9 s of CPU for ``--verify`` at 100,000 events,
    bench/README.md)."""
    with collector_paused():
        return _rebuild(db, projection_names, verify_only=verify_only)


def _rebuild(db: str | None, projection_names: tuple[str, ...], *, verify_only: bool) -> dict:
    with open_store(db) as opened:
        if verify_only:
            checked = opened.projections.verify_rebuild(opened.store, projection_names)
            return {"ok": checked.ok, "rebuild_verify": checked.as_dict()}
        rebuilt = opened.projections.rebuild(opened.store, projection_names)
        return {"ok": True, "rebuild": rebuilt.as_dict()}


def run_sql(
    db: str | None,
    statement: str,
    *,
    limit: int,
    timeout: float,
    as_of: str | None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One read-only query, live or on scratch read models replayed to ``as_of``."""
    if as_of is None:
        return {"ok": True, **run_read_only_query(db, statement, limit=limit, timeout=timeout)}
    with open_store(db) as opened:
        result = query_as_of(
            opened, as_of, statement, limit=limit, timeout=timeout, progress=progress
        )
    return {"ok": True, **result}


def db_upgrade(db: str | None) -> dict[str, Any]:
    """Upgrade the schema to this version's head."""

    with open_store(db, check_schema=False) as opened:
        before = current_revision(opened.store.database)
        run_upgrade(opened.store.database)
        after = current_revision(opened.store.database)
    return {
        "ok": True,
        "from_revision": before,
        "to_revision": after,
        "head": SCHEMA_HEAD,
        "database": opened.location.display(),
    }


def db_current(db: str | None) -> dict[str, Any]:
    """The schema revision and whether it is current."""

    with open_store(db, check_schema=False) as opened:
        revision = current_revision(opened.store.database)
    return {
        "ok": True,
        "revision": revision,
        "head": SCHEMA_HEAD,
        "up_to_date": revision == SCHEMA_HEAD,
        "database": opened.location.display(),
    }
