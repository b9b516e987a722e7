"""``run-ledger-aggregate``'s second cache: each case's result (``ledger.aggregate.CaseResult``),
kept in ``rm_aggregate_cases`` and filled lazily, at the first aggregate that works it out (or
by ``snapshot create``, for the snapshot's own cases).

Why: with every row's facts kept (``projections/aggregate_facts.py``), the aggregate of the
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
(``CASE_RESULT_VERSION``, which follows the ledger rules). Both numbers and the run ids of
the cases to redo come from one scan of the case index (revision 0008). Only the default
selection (best-of-N, no target lanes) is kept; the others are worked out from the facts as
before. Entries are written like the facts' (``projections.cache_entries``); ``rebuild``
empties the table and ``rebuild --verify`` checks every entry still in use
(``check_aggregate_cases``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ledger.aggregate import CASE_RESULT_VERSION, CaseResult, TargetLanes, case_result
from ledger.aggregate_facts import RowFacts
from projections.aggregate_facts import AggregateFactsReader, keep_aggregate_facts
from projections.cache_entries import keep_entries
from projections.tables import AGGREGATE_CASES

if TYPE_CHECKING:
    from ledger.connection import Connection

# A result as stored (``encode``): version, active, noncanonical, run_count, bucket, plain,
# summary text; an entry to keep is the case's key and rows (``AGGREGATE_CASES.columns``) first.
Stored = tuple[str, int, int, int, str, int, str]
Entry = tuple[str, str, str, int, int, str, int, int, int, str, int, str]
_WHERE = "ledger_id = ? AND benchmark_id = ?"
# Every row of the benchmark by case, from the case index alone (revision 0008).
_CASE_ROWS = f"SELECT case_id, position, run_id FROM rm_ledger_rows WHERE {_WHERE}"
_NO_LANES = TargetLanes()


class CaseRows:
    """The rows of one case as the read model holds them: the key its kept result is valid
    for (row count, latest position) and each row's run id and position."""

    __slots__ = ("latest", "positions")

    def __init__(self) -> None:
        self.latest = 0
        self.positions: dict[str, int] = {}

    def add(self, run_id: str, position: int) -> None:
        self.positions[run_id] = position
        if position > self.latest:
            self.latest = position


def case_rows(conn: Connection, ledger_id: str, benchmark_id: str) -> dict[str, CaseRows]:
    """Every row of the benchmark by case (one scan of the case index)."""
    cases: dict[str, CaseRows] = {}
    for case_id, position, run_id in conn.execute(_CASE_ROWS, (ledger_id, benchmark_id)):
        rows = cases.get(case_id)
        if rows is None:
            rows = cases[case_id] = CaseRows()
        rows.add(run_id, position)
    return cases


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
        cases = case_rows(self.conn, ledger_id, benchmark_id)
        row_count = sum(len(rows.positions) for rows in cases.values())
        results = self._kept(ledger_id, benchmark_id, cases)
        stale = {case_id: rows for case_id, rows in cases.items() if case_id not in results}
        if not stale:
            return results, row_count
        worked_out = self._work_out(ledger_id, benchmark_id, stale)
        if worked_out is None:
            return None
        results.update(worked_out)
        if not self.keep:
            return results, row_count
        for case_id, result in worked_out.items():
            rows = stale[case_id]
            stored = encode(result)
            if stored is not None:
                key = (ledger_id, benchmark_id, case_id, len(rows.positions), rows.latest)
                self.entries.append((*key, *stored))
        return results, row_count

    def _kept(
        self, ledger_id: str, benchmark_id: str, cases: dict[str, CaseRows]
    ) -> dict[str, CaseResult]:
        """Valid entries by case id: the same rows as when kept, this code's format."""
        found: dict[str, CaseResult] = {}
        sql = (
            "SELECT case_id, row_count, position, active, noncanonical, run_count, bucket,"
            f" summary, plain FROM rm_aggregate_cases WHERE {_WHERE} AND version = ?"
        )
        get = cases.get
        params = (ledger_id, benchmark_id, CASE_RESULT_VERSION)
        for case_id, count, position, *result in self.conn.execute(sql, params):
            rows = get(case_id)
            if rows is not None and rows.latest == position and len(rows.positions) == count:
                # 0/1 for the two flags: the aggregate reads them as truth values
                found[case_id] = CaseResult(*result)
        return found

    def _work_out(
        self, ledger_id: str, benchmark_id: str, stale: dict[str, CaseRows]
    ) -> dict[str, CaseResult] | None:
        """The results of the ``stale`` cases from their rows' facts (None: see ``results``)."""
        filed: dict[str, str] = {}  # run id: the case the read model files the row under
        positions: dict[str, int] = {}
        for case_id, rows in stale.items():
            filed.update(dict.fromkeys(rows.positions, case_id))
            positions.update(rows.positions)
        judged: dict[str, list[RowFacts]] = {case_id: [] for case_id in stale}
        for run_id, facts in self.facts_reader.facts_of(ledger_id, benchmark_id, positions).items():
            if facts.archived or facts.benchmark_id != benchmark_id:
                continue  # as ``ledger.aggregate`` leaves them out
            if facts.case_id != filed[run_id]:
                return None
            judged[facts.case_id].append(facts)
        return {
            case_id: case_result(case_facts, "best", _NO_LANES)
            for case_id, case_facts in judged.items()
        }


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
    of its own (``projections.cache_entries.keep_entries``: never waited for)."""
    keep_aggregate_facts(conn, reader.facts_reader.entries)
    keep_entries(conn, AGGREGATE_CASES, reader.entries)


def check_aggregate_cases(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """What ``rebuild --verify`` reports about this cache: every entry a read would use must
    equal what its case's rows give now."""
    problems: list[dict[str, Any]] = []
    pairs = conn.execute("SELECT DISTINCT ledger_id, benchmark_id FROM rm_aggregate_cases").all()
    for ledger_id, benchmark_id in pairs:
        reader = AggregateCasesReader(conn, stored_facts=False)  # from the rows themselves
        cases = case_rows(conn, ledger_id, benchmark_id)
        kept = reader._kept(ledger_id, benchmark_id, cases)
        now = reader._work_out(ledger_id, benchmark_id, {c: cases[c] for c in kept})
        for case_id, result in kept.items():
            fresh = now.get(case_id) if now is not None else None
            if fresh is None or _comparable(result) != _comparable(fresh):
                key = [ledger_id, benchmark_id, case_id]
                problem = {"table": AGGREGATE_CASES.name, "key": key, "problem": "stale case"}
                problems.append(problem)
                if len(problems) >= limit:
                    return problems
    return problems


def _comparable(result: CaseResult) -> tuple[Any, ...]:
    return (*result[:4], result.summary_dict(), result.plain, result.lane_source)
