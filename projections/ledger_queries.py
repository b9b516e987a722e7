"""Reads of the ledger read model that command handlers need to decide an upsert.

Handlers receive this object from the composition root (``ledger/`` never imports
``projections/``). Every query touches one case or one logical-run key, never the whole
ledger, so an upsert costs the same at 30,000 rows as at 100.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import select

from projections.schema import ledger_rows, ledgers

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


class LedgerQueries:
    """Row lookups by ledger, case and run id over ``rm_ledger_rows``."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def ledger(self, ledger_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(select(ledgers).where(ledgers.c.ledger_id == ledger_id)).first()
        if row is None:
            return None
        found = dict(row._mapping)
        if found.get("update_policy"):
            found["update_policy"] = orjson.loads(found["update_policy"])
        return found

    def case_rows(self, ledger_id: str, benchmark_id: str, case_id: str) -> list[dict[str, Any]]:
        query = select(ledger_rows.c.row).where(
            ledger_rows.c.ledger_id == ledger_id,
            ledger_rows.c.benchmark_id == benchmark_id,
            ledger_rows.c.case_id == case_id,
        )
        return [orjson.loads(text) for (text,) in self.conn.execute(query)]

    def row(self, ledger_id: str, run_id: str) -> dict[str, Any] | None:
        text = self.conn.execute(
            select(ledger_rows.c.row).where(
                ledger_rows.c.ledger_id == ledger_id, ledger_rows.c.run_id == run_id
            )
        ).scalar()
        return orjson.loads(text) if text is not None else None

    def rows_by_benchmark(self, ledger_id: str, benchmark_id: str) -> list[dict[str, Any]]:
        query = select(ledger_rows.c.row).where(
            ledger_rows.c.ledger_id == ledger_id, ledger_rows.c.benchmark_id == benchmark_id
        )
        return [orjson.loads(text) for (text,) in self.conn.execute(query)]

    def backfill_candidates(self, ledger_id: str, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of the same benchmark that could be the same logical run (ledger_v0 §6.1)."""
        return [
            r
            for r in self.rows_by_benchmark(ledger_id, row.get("benchmark_id") or "")
            if all(r.get(k) == row.get(k) for k in ("run_group_id", "arm_id", "job_name", "mode"))
        ]

    def all_rows(self, ledger_id: str) -> Iterator[dict[str, Any]]:
        query = (
            select(ledger_rows.c.row)
            .where(ledger_rows.c.ledger_id == ledger_id)
            .order_by(ledger_rows.c.position, ledger_rows.c.run_id)
        )
        for (text,) in self.conn.execute(query):
            yield orjson.loads(text)

    def row_count(self, ledger_id: str) -> int:
        from sqlalchemy import func

        return (
            self.conn.execute(
                select(func.count())
                .select_from(ledger_rows)
                .where(ledger_rows.c.ledger_id == ledger_id)
            ).scalar()
            or 0
        )

    def ledger_ids(self) -> list[str]:
        return list(
            self.conn.execute(select(ledgers.c.ledger_id).order_by(ledgers.c.ledger_id)).scalars()
        )
