"""Everything a command handler may read, over one connection (the composition root hands an
instance to the handler; ``ledger/`` never imports this module)."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import select

from projections.ledger_queries import LedgerQueries
from projections.ledger_v0 import latest_decision, run_sort_key
from projections.schema import global_registry, goal_runs


class StoreReads(LedgerQueries):
    """Ledger rows, goal run history and the global registry document."""

    def goal_stems(self, goal_id: str) -> set[str]:
        return set(
            self.conn.execute(
                select(goal_runs.c.stem).where(goal_runs.c.goal_id == goal_id)
            ).scalars()
        )

    def goal_records(self, goal_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The goal's run records, newest first (what ``run-ledger-check`` compares)."""
        query = (
            select(goal_runs.c.stem, goal_runs.c.record)
            .where(goal_runs.c.goal_id == goal_id)
            .order_by(goal_runs.c.generated_at.desc(), goal_runs.c.stem.desc())
        )
        if limit is not None:
            query = query.limit(limit)
        return [{**orjson.loads(text), "stem": stem} for stem, text in self.conn.execute(query)]

    def goal_records_since(self, goal_id: str) -> list[tuple[str, dict[str, Any]]]:
        query = (
            select(goal_runs.c.stem, goal_runs.c.record)
            .where(goal_runs.c.goal_id == goal_id)
            .order_by(goal_runs.c.position, goal_runs.c.stem)
        )
        return [(stem, orjson.loads(text)) for stem, text in self.conn.execute(query)]

    def known_goal_ids(self) -> list[str]:
        return list(
            self.conn.execute(
                select(goal_runs.c.goal_id).distinct().order_by(goal_runs.c.goal_id)
            ).scalars()
        )

    def global_registry(self, registry_id: str = "global") -> dict[str, Any] | None:
        text = self.conn.execute(
            select(global_registry.c.document).where(global_registry.c.registry_id == registry_id)
        ).scalar()
        return orjson.loads(text) if text is not None else None

    @staticmethod
    def decide_case(case_rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The case's ``latest_decision``: active rows decide, archived ones are only counted."""
        active = [r for r in case_rows if r.get("archive_state") != "archived"]
        return latest_decision(
            sorted(active, key=run_sort_key), archived_run_count=len(case_rows) - len(active)
        )
