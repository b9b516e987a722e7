"""``run-ledger-aggregate``'s second cache: each case's result
(``ledger.rules.operations.aggregate.CaseResult``),
kept in ``rm_aggregate_cases`` and filled lazily, at the first aggregate that works it out (or
by ``snapshot create``, for the snapshot's own cases).

Why: with every row's facts kept (``projections/read_models/aggregate_facts.py``), the aggregate of
the
1M-event bench store's largest benchmark (29,722 cases, 66,000 rows) still decoded 66,000
rows' facts (145 MB of objects) and chose a run in each case at every read, 1.1-1.4 s, and an
``--as-of`` read from a snapshot paid that again after replaying a few thousand events. What a
case gives the aggregate depends on its rows alone, so it is kept per case and a read works
out again only the cases whose rows changed (bench/README.md).

What makes it exact: an entry records how many rows the case had and the latest position
among them. A row is written only by an event at a later position than any before it, so a
row joining the case or being rewritten raises that position, and a row leaving it (moved to
another case) lowers the count unless another row joined, which raises the position: an entry
is used only while both still match what the rows say now, and its format is this code's
(``CASE_RESULT_VERSION``, which follows the ledger rules). Both numbers come from the case
index (revision 0008), matched with the kept entries by the database in one query; the rows
of the cases to redo are read from the same index. Only the default selection (best-of-N, no
target lanes) is kept; the others are worked out from the facts as
before. Entries are written like the facts' (``projections.read_models.cache_entries``); ``rebuild``
empties the table and ``rebuild --verify`` checks every entry still in use
(``check_aggregate_cases``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.rules.operations.aggregate import (
    CASE_RESULT_VERSION,
    CaseResult,
    case_result,
)
from benchledger.ledger.rules.operations.aggregate_facts import RowFacts
from benchledger.ledger.store.connection import placeholders
from benchledger.projections.read_models.aggregate_facts import (
    AggregateFactsReader,
    keep_aggregate_facts,
)
from benchledger.projections.read_models.cache_entries import keep_entries
from benchledger.projections.read_models.tables import AGGREGATE_CASES

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
# A result as stored (``encode``): version, active, noncanonical, run_count, bucket, plain,
# summary text; an entry to keep is the case's key and rows (``AGGREGATE_CASES.columns``) first.
Stored = tuple[str, int, int, int, str, int, str]
Entry = tuple[str, str, str, int, int, str, int, int, int, str, int, str]
_WHERE = "ledger_id = ? AND benchmark_id = ?"
# Each case of the benchmark with its row count and latest position (from the case index
# alone, revision 0008) and its kept result where that is for the same rows and this code:
# NULL result columns for a case to work out again. One query: SQLite matches the 29,722
# cases of the bench store's largest benchmark faster than Python did from two scans.
_CASES = (
    "SELECT r.case_id, r.n, r.latest, k.active, k.noncanonical, k.run_count, k.bucket,"
    " k.summary, k.plain FROM (SELECT case_id, count(*) AS n, max(position) AS latest"
    f" FROM rm_ledger_rows WHERE {_WHERE} GROUP BY case_id) r"
    " LEFT JOIN rm_aggregate_cases k ON k.ledger_id = ? AND k.benchmark_id = ?"
    " AND k.case_id = r.case_id AND k.row_count = r.n AND k.position = r.latest"
    " AND k.version = ?"
)
_CASE_ROWS = f"SELECT case_id, run_id, position FROM rm_ledger_rows WHERE {_WHERE}"
_CHUNK = 500  # case ids per ``IN (...)``
_SCAN_FROM = 2000  # beyond this many cases to work out, one scan of the benchmark's rows


class AggregateCasesReader:
    """Each case's result for ``ledger.handlers.ledger_aggregate``: kept ones where valid,
    the others worked out from their rows' facts; collects in ``entries`` the results it had
    to work out (and ``facts_reader.entries`` the facts it had to compute), to keep."""

    def __init__(self, conn: Connection, *, keep: bool = True, stored_facts: bool = True) -> None:
        self.conn = conn
        self.keep = keep  # False: nothing will be kept (an ``--as-of`` scratch store)
        self.facts_reader = AggregateFactsReader(conn, stored=stored_facts)
        self.entries: list[Entry] = []

    def rows(self, ledger_id: str, benchmark_id: str) -> tuple[list[dict], list[RowFacts]]:
        """``AggregateFactsReader.rows``: for an aggregate that merges other ledgers in."""
        return self.facts_reader.rows(ledger_id, benchmark_id)

    def facts(self, ledger_id: str, benchmark_id: str) -> list[RowFacts]:
        """``AggregateFactsReader.facts``: for the selections no result is kept for."""
        return self.facts_reader.facts(ledger_id, benchmark_id)

    def case_results(
        self, ledger_id: str, benchmark_id: str
    ) -> tuple[dict[str, CaseResult], int] | None:
        """The best-of-N result of every case with a row of ``benchmark_id``, by case id, and
        how many rows the benchmark has; None when a row's own case or benchmark is not what
        the read model files it under (the aggregate then judges rows as they are)."""
        results, stale, row_count = kept_results(self.conn, ledger_id, benchmark_id)
        if not stale:
            return results, row_count
        worked_out = self.work_out(ledger_id, benchmark_id, stale)
        if worked_out is None:
            return None
        for case_id, (result, count, latest) in worked_out.items():
            results[case_id] = result
            stored = encode(result) if self.keep else None
            if stored is not None:
                self.entries.append((ledger_id, benchmark_id, case_id, count, latest, *stored))
        return results, row_count

    def work_out(
        self, ledger_id: str, benchmark_id: str, case_ids: Collection[str]
    ) -> dict[str, tuple[CaseResult, int, int]] | None:
        """Each case's result from its rows' facts, with the row count and latest position
        it is for, read with the rows themselves (None: see ``case_results``)."""
        filed: dict[str, str] = {}  # run id: the case the read model files the row under
        positions: dict[str, int] = {}
        keys: dict[str, tuple[int, int]] = dict.fromkeys(case_ids, (0, 0))
        for case_id, run_id, position in _case_rows(self.conn, ledger_id, benchmark_id, keys):
            filed[run_id] = case_id
            positions[run_id] = position
            count, latest = keys[case_id]
            keys[case_id] = (count + 1, max(latest, position))
        judged: dict[str, list[RowFacts]] = {case_id: [] for case_id in keys}
        scan = len(keys) > _SCAN_FROM
        found = self.facts_reader.facts_of(ledger_id, benchmark_id, positions, scan=scan)
        for run_id, facts in found.items():
            if facts.archived or facts.benchmark_id != benchmark_id:
                continue  # as ``benchledger.ledger.rules.operations.aggregate`` leaves them out
            if facts.case_id != filed[run_id]:
                return None
            judged[facts.case_id].append(facts)
        return {
            case_id: (case_result(case_facts), *keys[case_id])
            for case_id, case_facts in judged.items()
        }


def kept_results(
    conn: Connection, ledger_id: str, benchmark_id: str
) -> tuple[dict[str, CaseResult], list[str], int]:
    """The valid kept results by case id, the cases without one, and the benchmark's row
    count."""
    results: dict[str, CaseResult] = {}
    stale: list[str] = []
    row_count = 0
    params = (ledger_id, benchmark_id, ledger_id, benchmark_id, CASE_RESULT_VERSION)
    loads = orjson.loads
    for case_id, count, _, active, noncanonical, runs, bucket, summary, plain in conn.execute(
        _CASES, params
    ):
        row_count += count
        if active is None:
            stale.append(case_id)
        else:  # 0/1 for the two flags: the aggregate reads them as truth values. The summary
            # is parsed here, so its text (1.3 KB a case) is not held beside its dict.
            results[case_id] = CaseResult(active, noncanonical, runs, bucket, loads(summary), plain)
    return results, stale, row_count


def _case_rows(
    conn: Connection, ledger_id: str, benchmark_id: str, case_ids: Collection[str]
) -> Iterator[tuple[str, str, int]]:
    """(case id, run id, position) of every row of ``case_ids``: looked up by case, or for
    many cases one scan of the benchmark's rows through the case index."""
    params = (ledger_id, benchmark_id)
    if len(case_ids) > _SCAN_FROM:
        for case_id, run_id, position in conn.execute(_CASE_ROWS, params):
            if case_id in case_ids:
                yield case_id, run_id, position
        return
    ids = list(case_ids)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        sql = f"{_CASE_ROWS} AND case_id IN ({placeholders(len(chunk))})"
        for case_id, run_id, position in conn.execute(sql, (*params, *chunk)):
            yield case_id, run_id, position


def encode(result: CaseResult) -> Stored | None:
    """The stored form of a best-of-N ``result`` (``AGGREGATE_CASES`` columns from
    ``version``): this code's version, its fields, the summary as JSON text. None when JSON
    cannot carry the summary exactly (a score that is not finite): such a case is worked out
    again at each read."""
    summary = result.summary_dict()
    try:
        text = orjson.dumps(summary)
    except TypeError:
        return None
    if orjson.loads(text) != summary:
        return None
    return (
        CASE_RESULT_VERSION,
        result.active,
        int(result.noncanonical),
        result.run_count,
        result.bucket,
        int(result.plain),
        text.decode(),
    )


def decode(stored: Stored) -> CaseResult | None:
    """A stored result (``encode``) back, its summary still as text; None when it is of
    another version."""
    version, active, noncanonical, run_count, bucket, plain, summary = stored
    if version != CASE_RESULT_VERSION:
        return None
    return CaseResult(active, bool(noncanonical), run_count, bucket, summary, bool(plain))


def keep_aggregate_cases(conn: Connection, reader: AggregateCasesReader) -> None:
    """Store the facts and the case results ``reader`` had to work out, each in a transaction
    of its own (``projections.read_models.cache_entries.keep_entries``: never waited for)."""
    keep_aggregate_facts(conn, reader.facts_reader.entries)
    keep_entries(conn, AGGREGATE_CASES, reader.entries)


def check_aggregate_cases(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """What ``rebuild --verify`` reports about this cache: every entry a read would use must
    equal what its case's rows give now."""
    problems: list[dict[str, Any]] = []
    pairs = conn.execute("SELECT DISTINCT ledger_id, benchmark_id FROM rm_aggregate_cases").all()
    for ledger_id, benchmark_id in pairs:
        kept, _, _ = kept_results(conn, ledger_id, benchmark_id)
        reader = AggregateCasesReader(conn, stored_facts=False)  # from the rows themselves
        now = reader.work_out(ledger_id, benchmark_id, set(kept))
        for case_id, result in kept.items():
            fresh = now.get(case_id) if now is not None else None
            if fresh is None or _comparable(result) != _comparable(fresh[0]):
                key = [ledger_id, benchmark_id, case_id]
                problem = {"table": AGGREGATE_CASES.name, "key": key, "problem": "stale case"}
                problems.append(problem)
                if len(problems) >= limit:
                    return problems
    return problems


def _comparable(result: CaseResult) -> tuple[Any, ...]:
    return (*result[:4], result.summary_dict(), result.plain, result.lane_source)
