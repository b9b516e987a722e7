"""The SQL read models of run history, the global registry and published files, and how each
event changes them; ``all_projections`` lists every read model (the ledger rows'
are in ``ledger_rows``).

Every event that changes a read model carries the decided result (the full ledger row, the
goal run record, the registry document), so applying it is a plain upsert and replay
reproduces history exactly even after the rules that decided it change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchledger.ledger.store import events as ev
from benchledger.projections.read_models.database_fold import (
    DatabasePlan,
    Fold,
    is_text,
    or_else,
    supported,
    text,
    text_or_null,
)
from benchledger.projections.read_models.ledger_rows import LedgerRowsProjection
from benchledger.projections.read_models.payload_text import canonical_text
from benchledger.projections.read_models.tables import (
    EXPORTS,
    GLOBAL_REGISTRY,
    GOAL_RUNS,
    ROLLOUT_EVENTS,
)
from benchledger.projections.read_models.upsert import upsert_rows as _upsert

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.events import StoredEvent


class GoalRunsProjection:
    """The per-goal run history (what loopx keeps as ``goals/<goal>/runs``)."""

    name = "goal_runs"
    light_replay = True  # apply reads position, event_id, event_type, payload, recorded_at
    handles = frozenset({ev.RUN_APPENDED})
    tables = (GOAL_RUNS,)

    def database_plan(self, conn: Connection) -> DatabasePlan | None:
        return DatabasePlan((_GOAL_RUNS_FOLD,)) if supported(conn, self.handles) else None

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        _upsert(
            conn,
            GOAL_RUNS,
            [
                {
                    "goal_id": e.payload["goal_id"],
                    "stem": e.payload["stem"],
                    "run_key": e.payload.get("run_key"),
                    "generated_at": e.payload.get("generated_at") or e.recorded_at,
                    "record": canonical_text(e.payload["record"]),
                    "position": e.position,
                }
                for e in events
            ],
        )


class RolloutProjection:
    """Rollout records decided when the run was appended (``rollout_event`` in the payload)."""

    name = "rollout_events"
    light_replay = True  # apply reads position, event_id, event_type, payload, recorded_at
    handles = frozenset({ev.RUN_APPENDED})
    tables = (ROLLOUT_EVENTS,)

    def database_plan(self, conn: Connection) -> DatabasePlan | None:
        return DatabasePlan((_ROLLOUT_FOLD,)) if supported(conn, self.handles) else None

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
                    "record": canonical_text(record),
                    "position": e.position,
                }
            )
        _upsert(conn, ROLLOUT_EVENTS, rows)


class GlobalRegistryProjection:
    """The global registry document as the last sync left it."""

    name = "global_registry"
    light_replay = True  # apply reads position, event_id, event_type, payload, recorded_at
    handles = frozenset({ev.GLOBAL_SYNCED})
    tables = (GLOBAL_REGISTRY,)

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        _upsert(
            conn,
            GLOBAL_REGISTRY,
            [
                {
                    "registry_id": e.payload.get("registry_id") or "global",
                    "document": canonical_text(e.payload["document"]),
                    "position": e.position,
                }
                for e in events
                if e.payload.get("document") is not None
            ],
        )


class ExportsProjection:
    """The sha256 of every file last published, so ``verify --files`` can check them."""

    name = "exports"
    light_replay = True  # apply reads position, event_id, event_type, payload, recorded_at
    handles = frozenset({ev.EXPORT_WRITTEN})
    tables = (EXPORTS,)

    def database_plan(self, conn: Connection) -> DatabasePlan | None:
        return DatabasePlan((_EXPORTS_FOLD,)) if supported(conn, self.handles) else None

    def apply(self, conn: Connection, events: list[StoredEvent]) -> None:
        _upsert(
            conn,
            EXPORTS,
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


# The database replay of the projections above (``projections/read_models/database_fold.py``): each
# fold
# writes what the ``apply`` it sits under writes, for the events its ``clean`` admits.
_GOAL_RUNS_FOLD = Fold(
    GOAL_RUNS,
    ev.RUN_APPENDED,
    {
        "goal_id": text("$.goal_id"),
        "stem": text("$.stem"),
        "run_key": text("$.run_key"),
        "generated_at": or_else("$.generated_at", "e.recorded_at"),
        "record": text("$.record"),
        "position": "e.position",
    },
    " AND ".join(
        [
            is_text("$.goal_id"),
            is_text("$.stem"),
            text_or_null("$.run_key"),
            text_or_null("$.generated_at"),
            "json_type(e.payload, '$.record') = 'object'",
        ]
    ),
)
_ROLLOUT = "$.rollout_event"
_ROLLOUT_FOLD = Fold(
    ROLLOUT_EVENTS,
    ev.RUN_APPENDED,
    {
        "goal_id": text("$.goal_id"),
        "event_id": or_else(f"{_ROLLOUT}.event_id", "e.event_id"),
        "event_kind": or_else(f"{_ROLLOUT}.event_kind", or_else(f"{_ROLLOUT}.kind", "''")),
        "status": or_else(f"{_ROLLOUT}.status", "''"),
        "record": text(_ROLLOUT),
        "position": "e.position",
    },
    # A rollout record that is absent, null or an object (a truthy one is kept, as ``apply``).
    " AND ".join(
        [
            f"coalesce(json_type(e.payload, '{_ROLLOUT}'), 'null') IN ('object', 'null')",
            f"(json_type(e.payload, '{_ROLLOUT}') IS NOT 'object' OR {is_text('$.goal_id')})",
            *(
                text_or_null(f"{_ROLLOUT}.{k}")
                for k in ("event_id", "event_kind", "kind", "status")
            ),
        ]
    ),
    where=f"json_type(e.payload, '{_ROLLOUT}') = 'object' AND {text(_ROLLOUT)} <> '{{}}'",
)
_FILE = "f.value"
_EXPORTS_FOLD = Fold(
    EXPORTS,
    ev.EXPORT_WRITTEN,
    {
        "path": text("$.path", _FILE),
        "kind": or_else("$.kind", "''", _FILE),
        "sha256": text("$.sha256", _FILE),
        "position": "e.position",
    },
    # ``files`` absent or a list, each file an object whose path and sha256 are strings.
    " AND ".join(
        [
            "coalesce(json_type(e.payload, '$.files'), 'array') = 'array'",
            f"(f.key IS NULL OR (f.type = 'object' AND {is_text('$.path', _FILE)}"
            f" AND {is_text('$.sha256', _FILE)} AND {text_or_null('$.kind', _FILE)}))",
        ]
    ),
    each="json_each(e.payload, '$.files')",
)


def all_projections() -> list:
    return [
        LedgerRowsProjection(),
        GoalRunsProjection(),
        RolloutProjection(),
        GlobalRegistryProjection(),
        ExportsProjection(),
    ]
