"""Everything a command handler may read, over one connection (the composition root hands an
instance to the handler; ``ledger/`` never imports this module)."""

from __future__ import annotations

from typing import Any

import orjson

from ledger.connection import scalars
from ledger.rules.ordering import row_sort_key
from projections.ledger_queries import LedgerQueries
from projections.ledger_v0 import latest_decision

_RECORDS = 'SELECT stem, record FROM rm_goal_runs WHERE goal_id = ?'


class StoreReads(LedgerQueries):
    """Ledger rows, goal run history and the global registry document."""

    def goal_stems(self, goal_id: str) -> set[str]:
        query = "SELECT stem FROM rm_goal_runs WHERE goal_id = ?"
        return set(scalars(self.conn.execute(query, (goal_id,))))

    def goal_records(self, goal_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The goal's run records, newest first (what ``run-ledger-check`` compares)."""
        query, params = f"{_RECORDS} ORDER BY generated_at DESC, stem DESC", [goal_id]
        if limit is not None:
            query, params = f"{query} LIMIT ?", [goal_id, limit]
        rows = self.conn.execute(query, params)
        return [{**orjson.loads(text), "stem": stem} for stem, text in rows]

    def goal_records_since(self, goal_id: str) -> list[tuple[str, dict[str, Any]]]:
        rows = self.conn.execute(f"{_RECORDS} ORDER BY position, stem", (goal_id,))
        return [(stem, orjson.loads(text)) for stem, text in rows]

    def known_goal_ids(self) -> list[str]:
        query = "SELECT DISTINCT goal_id FROM rm_goal_runs ORDER BY goal_id"
        return scalars(self.conn.execute(query))

    def global_registry(self, registry_id: str = "global") -> dict[str, Any] | None:
        query = "SELECT document FROM rm_global_registry WHERE registry_id = ?"
        text = self.conn.execute(query, (registry_id,)).scalar()
        return orjson.loads(text) if text is not None else None

    @staticmethod
    def decide_case(case_rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The case's ``latest_decision``: active rows decide, archived ones are only counted."""
        active = [r for r in case_rows if r.get("archive_state") != "archived"]
        return latest_decision(
            sorted(active, key=row_sort_key), archived_run_count=len(case_rows) - len(active)
        )
