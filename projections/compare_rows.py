"""The read side of ``compare``: the ledger rows of one benchmark, as the read model holds them.

Kept apart from the statistics so that any holder of rows — the live store, or a scratch store
replayed to an earlier position for ``--as-of`` — can hand them to ``build_compare``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ledger.connection import placeholders, scalars
from projections.compare import matches_benchmark
from projections.ledger_row_text import ROWS, row_text

if TYPE_CHECKING:
    from ledger.connection import Connection


def read_compare_rows(conn: Connection, ledger_id: str, benchmark_id: str) -> list[dict[str, Any]]:
    """Rows of ``benchmark_id`` (every version of it when the id has none), archived included:
    compare reports archived runs as exclusions rather than forgetting them."""
    if "@" in benchmark_id:
        benchmarks = [benchmark_id]
    else:
        query = "SELECT DISTINCT benchmark_id FROM rm_ledger_rows WHERE ledger_id = ?"
        found = scalars(conn.execute(query, (ledger_id,)))
        benchmarks = [b for b in found if matches_benchmark(b, benchmark_id)]
    if not benchmarks:
        return []
    rows = conn.execute(
        f"SELECT {row_text(conn)} FROM {ROWS} WHERE r.ledger_id = ? "
        f"AND r.benchmark_id IN ({placeholders(len(benchmarks))})",
        (ledger_id, *benchmarks),
    )
    return [orjson.loads(text) for (text,) in rows]
