"""Everything a command handler may read, over one connection (the composition root hands an
instance to the handler; ``ledger/`` never imports this module)."""

from __future__ import annotations

from typing import Any

import orjson

from benchledger.ledger.store.connection import scalars
from benchledger.projections.read_models.ledger_queries import LedgerQueries

_RECORDS = "SELECT stem, record FROM rm_goal_runs WHERE goal_id = ?"


class StoreReads(LedgerQueries):
    """Ledger rows, goal run history and the global registry document."""

    def goal_stems(self, goal_id: str) -> set[str]:
        query = "SELECT stem FROM rm_goal_runs WHERE goal_id = ?"
        return set(scalars(self.conn.execute(query, (goal_id,))))

    def goal_records(self, goal_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The goal's run records, newest first (what ``run-ledger-check`` compares)."""
        query = f"{_RECORDS} ORDER BY generated_at DESC, stem DESC"
        params: list[str | int] = [goal_id]
        if limit is not None:
            query, params = f"{query} LIMIT ?", [goal_id, limit]
        rows = self.conn.execute(query, params)
        return [{**orjson.loads(text), "stem": stem} for stem, text in rows]

    def goal_records_since(self, goal_id: str) -> list[tuple[str, dict[str, Any]]]:
        rows = self.conn.execute(f"{_RECORDS} ORDER BY position, stem", (goal_id,))
        return [(stem, orjson.loads(text)) for stem, text in rows]

    def run_ids(self, ledger_id: str) -> list[str]:
        """Every run id the ledger holds (the maintenance handlers' id checks)."""
        query = "SELECT run_id FROM rm_ledger_rows WHERE ledger_id = ?"
        return scalars(self.conn.execute(query, (ledger_id,)))

    def last_ledger_event(self, ledger_id: str) -> dict[str, Any] | None:
        """The ledger stream's newest event, so a repeated maintenance command can say so."""
        query = (
            "SELECT event_type, payload FROM events WHERE stream = ?"
            " ORDER BY stream_version DESC LIMIT 1"
        )
        found = self.conn.execute(query, (f"ledger/{ledger_id}",)).first()
        if found is None:
            return None
        return {"event_type": found[0], "payload": orjson.loads(found[1])}

    def known_goal_ids(self) -> list[str]:
        query = "SELECT DISTINCT goal_id FROM rm_goal_runs ORDER BY goal_id"
        return scalars(self.conn.execute(query))

    def global_registry(self, registry_id: str = "global") -> dict[str, Any] | None:
        query = "SELECT document FROM rm_global_registry WHERE registry_id = ?"
        text = self.conn.execute(query, (registry_id,)).scalar()
        return orjson.loads(text) if text is not None else None
