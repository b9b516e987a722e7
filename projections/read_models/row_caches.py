"""Filling the caches of read commands (compare's and the aggregate's facts, the aggregate's
case results) for every ledger of a store at once: what ``snapshot create`` does to the file
it publishes.

Why: an ``--as-of`` read from a snapshot reads the snapshot's rows (and the replayed tail) in
a scratch store that is thrown away, so it can never fill those caches itself; without them a
``run-ledger-aggregate --as-of`` judged all 66,000 rows of a benchmark again every time. Filled
in the snapshot, the entries of every row the tail did not rewrite are valid (same position)
and read as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchledger.projections.read_models.aggregate_cases import (
    AggregateCasesReader,
    keep_aggregate_cases,
)

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection


def fill_row_caches(conn: Connection) -> int:
    """Compute and store the compare and aggregate facts of every row of every ledger that has
    none valid yet, and the aggregate's result of every case, one (ledger, benchmark) at a
    time; how many entries were stored."""
    from benchledger.projections.read_models.compare_facts import (  # numpy: compare's alone
        keep_facts,
        read_facts,
    )

    sql = "SELECT DISTINCT ledger_id, benchmark_id FROM rm_ledger_rows ORDER BY 1, 2"
    pairs = conn.execute(sql).all()
    stored = 0
    for ledger_id, benchmark_id in pairs:
        _, entries = read_facts(conn, ledger_id, benchmark_id)
        keep_facts(conn, entries)
        reader = AggregateCasesReader(conn)
        if reader.case_results(ledger_id, benchmark_id) is None:
            # rows filed under another case than their own: the facts alone, each row once
            reader.facts_reader.entries.clear()
            reader.facts(ledger_id, benchmark_id)
        keep_aggregate_cases(conn, reader)
        stored += len(entries) + len(reader.facts_reader.entries) + len(reader.entries)
    return stored
