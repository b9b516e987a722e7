"""Reads of the ledger read model that command handlers need to decide an upsert.

Handlers receive this object from the composition root (``ledger/`` never imports
``projections/``). Every query touches one case or one logical-run key, never the whole
ledger, so an upsert costs the same at 30,000 rows as at 100.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.store.connection import scalars
from benchledger.projections.read_models.ledger_row_text import ROWS, row_text
from benchledger.projections.read_models.tables import LEDGERS

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection


class LedgerQueries:
    """Row lookups by ledger, case and run id over ``rm_ledger_rows``."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        # The row's text, wherever it is kept (``ledger_row_text``).
        self._rows = f"SELECT {row_text(conn)} FROM {ROWS} WHERE r.ledger_id = ?"

    def ledger(self, ledger_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(f"{LEDGERS.select_sql} WHERE ledger_id = ?", (ledger_id,)).first()
        if row is None:
            return None
        found = dict(zip(LEDGERS.columns, row, strict=True))
        if found.get("update_policy"):
            found["update_policy"] = orjson.loads(found["update_policy"])
        return found

    def case_rows(self, ledger_id: str, benchmark_id: str, case_id: str) -> list[dict[str, Any]]:
        query = f"{self._rows} AND r.benchmark_id = ? AND r.case_id = ?"
        return self._parsed(query, (ledger_id, benchmark_id, case_id))

    def row(self, ledger_id: str, run_id: str) -> dict[str, Any] | None:
        text = self.conn.execute(f"{self._rows} AND r.run_id = ?", (ledger_id, run_id)).scalar()
        return orjson.loads(text) if text is not None else None

    def rows_by_benchmark(self, ledger_id: str, benchmark_id: str) -> list[dict[str, Any]]:
        return self._parsed(f"{self._rows} AND r.benchmark_id = ?", (ledger_id, benchmark_id))

    def backfill_candidates(self, ledger_id: str, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows of the same benchmark that could be the same logical run (docs/formats/ledger_v0.md
        §6.1)."""
        return [
            r
            for r in self.rows_by_benchmark(ledger_id, row.get("benchmark_id") or "")
            if all(r.get(k) == row.get(k) for k in ("run_group_id", "arm_id", "job_name", "mode"))
        ]

    def all_rows(self, ledger_id: str) -> Iterator[dict[str, Any]]:
        query = f"{self._rows} ORDER BY r.position, r.run_id"
        for (text,) in self.conn.execute(query, (ledger_id,)):
            yield orjson.loads(text)

    def row_count(self, ledger_id: str) -> int:
        query = "SELECT count(*) FROM rm_ledger_rows WHERE ledger_id = ?"
        return self.conn.execute(query, (ledger_id,)).scalar() or 0

    def benchmark_ids(self, ledger_id: str) -> list[str]:
        """The benchmarks a ledger holds rows of: what an error names when one is not there."""
        query = "SELECT DISTINCT benchmark_id FROM rm_ledger_rows WHERE ledger_id = ? ORDER BY 1"
        return [str(b) for b in scalars(self.conn.execute(query, (ledger_id,))) if b is not None]

    def ledger_ids(self) -> list[str]:
        return scalars(self.conn.execute("SELECT ledger_id FROM rm_ledgers ORDER BY ledger_id"))

    def _parsed(self, query: str, params: tuple[str, ...]) -> list[dict[str, Any]]:
        return [orjson.loads(text) for (text,) in self.conn.execute(query, params)]
