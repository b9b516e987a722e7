"""The SQL read models and how each event changes them.

Every event that changes a read model carries the decided result (the full ledger row, the
goal run record, the registry document), so applying it is a plain upsert and replay
reproduces history exactly even after the rules that decided it change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ledger import events as ev
from ledger.chain import canonical_json
from projections import schema

if TYPE_CHECKING:
    from sqlalchemy import Table
    from sqlalchemy.engine import Connection

    from ledger.events import StoredEvent


def _upsert(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert-or-replace by primary key, in bulk, on both backends."""
    if not rows:
        return
    keys = [c.name for c in table.primary_key.columns]
    deduped = {tuple(r[k] for k in keys): r for r in rows}
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    stmt = insert(table)
    stmt = stmt.on_conflict_do_update(
        index_elements=keys,
        set_={c.name: stmt.excluded[c.name] for c in table.columns if c.name not in keys},
    )
    conn.execute(stmt, list(deduped.values()))


class LedgerRowsProjection:
    """Ledger rows by (ledger, run_id), plus one row per ledger with its path and policy."""

    name = "ledger_rows"
    handles = frozenset(
        {
            ev.LEDGER_CREATED,
            ev.LEDGER_UPSERTED,
            ev.LEDGER_RUNS_ARCHIVED,
            ev.LEDGER_RUNS_RESTORED,
            ev.LEDGER_MERGED,
            ev.LEDGER_IMPORTED,
        }
    )
    tables = (schema.ledgers, schema.ledger_rows)

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        ledgers: dict[str, dict[str, Any]] = {}
        rows: list[dict[str, Any]] = []
        for event in events:
            payload = event.payload
            ledger_id = payload["ledger_id"]
            ledgers[ledger_id] = self._ledger_row(conn, ledgers.get(ledger_id), event)
            for row in _rows_of(payload):
                rows.append(
                    {
                        "ledger_id": ledger_id,
                        "run_id": row["run_id"],
                        "benchmark_id": row.get("benchmark_id") or "",
                        "case_id": row.get("case_id") or "",
                        "recorded_at": row.get("recorded_at") or "",
                        "archived": 1 if row.get("archive_state") == "archived" else 0,
                        "row": canonical_json(row),
                        "position": event.position,
                    }
                )
        _upsert(conn, schema.ledgers, list(ledgers.values()))
        _upsert(conn, schema.ledger_rows, rows)

    @staticmethod
    def _ledger_row(
        conn: Connection, known: dict[str, Any] | None, event: StoredEvent
    ) -> dict[str, Any]:
        from sqlalchemy import select

        payload = event.payload
        if known is None:
            found = conn.execute(
                select(schema.ledgers).where(schema.ledgers.c.ledger_id == payload["ledger_id"])
            ).first()
            known = dict(found._mapping) if found else None
        updated_at = payload.get("updated_at") or event.recorded_at
        if known is None:
            return {
                "ledger_id": payload["ledger_id"],
                "ledger_path": payload.get("ledger_path") or payload["ledger_id"],
                "update_policy": _maybe_json(payload.get("update_policy")),
                "created_at": updated_at,
                "updated_at": updated_at,
                "position": event.position,
            }
        known = dict(known)
        known["updated_at"] = updated_at
        known["position"] = event.position
        if payload.get("update_policy") and not known.get("update_policy"):
            known["update_policy"] = _maybe_json(payload["update_policy"])
        if payload.get("ledger_path"):
            known["ledger_path"] = payload["ledger_path"]
        return known


def _rows_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    if "row" in payload:
        return [payload["row"]]
    return list(payload.get("rows") or [])


def _maybe_json(value: Any) -> str | None:
    return canonical_json(value) if value else None


class GoalRunsProjection:
    """The per-goal run history (what loopx keeps as ``goals/<goal>/runs``)."""

    name = "goal_runs"
    handles = frozenset({ev.RUN_APPENDED})
    tables = (schema.goal_runs,)

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        _upsert(
            conn,
            schema.goal_runs,
            [
                {
                    "goal_id": e.payload["goal_id"],
                    "stem": e.payload["stem"],
                    "run_key": e.payload.get("run_key"),
                    "generated_at": e.payload.get("generated_at") or e.recorded_at,
                    "record": canonical_json(e.payload["record"]),
                    "position": e.position,
                }
                for e in events
            ],
        )


class RolloutProjection:
    """Rollout records decided when the run was appended (``rollout_event`` in the payload)."""

    name = "rollout_events"
    handles = frozenset({ev.RUN_APPENDED})
    tables = (schema.rollout_events,)

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        rows = []
        for e in events:
            record = e.payload.get("rollout_event")
            if not record:
                continue
            rows.append(
                {
                    "goal_id": e.payload["goal_id"],
                    "event_id": record.get("event_id") or e.event_id,
                    "event_kind": record.get("event_kind") or record.get("kind") or "",
                    "status": record.get("status") or "",
                    "record": canonical_json(record),
                    "position": e.position,
                }
            )
        _upsert(conn, schema.rollout_events, rows)


class GlobalRegistryProjection:
    """The global registry document as the last sync left it."""

    name = "global_registry"
    handles = frozenset({ev.GLOBAL_SYNCED})
    tables = (schema.global_registry,)

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        _upsert(
            conn,
            schema.global_registry,
            [
                {
                    "registry_id": e.payload.get("registry_id") or "global",
                    "document": canonical_json(e.payload["document"]),
                    "position": e.position,
                }
                for e in events
                if e.payload.get("document") is not None
            ],
        )


class ExportsProjection:
    """The sha256 of every file last published, so ``verify --files`` can check them."""

    name = "exports"
    handles = frozenset({ev.EXPORT_WRITTEN})
    tables = (schema.exports,)

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        _upsert(
            conn,
            schema.exports,
            [
                {
                    "path": f["path"],
                    "kind": f.get("kind") or "",
                    "sha256": f["sha256"],
                    "position": e.position,
                }
                for e in events
                for f in e.payload.get("files", [])
            ],
        )


def all_projections() -> list:
    return [
        LedgerRowsProjection(),
        GoalRunsProjection(),
        RolloutProjection(),
        GlobalRegistryProjection(),
        ExportsProjection(),
    ]
