"""``run-ledger-aggregate``'s cache: each ledger row's ``RowFacts``
(``ledger.rules.operations.aggregate_facts``),
kept in ``rm_aggregate_facts`` beside the row and filled lazily, at the first aggregate that
reads it (or by ``snapshot create``, for the snapshot's own rows).

Why: the aggregate of a 29,722-case, 66,000-row benchmark of the 1M-event bench store took
4.6 s, nearly all of it parsing whole rows and judging them by the ledger rules; the verdict,
sort keys and summary fields it needs are a pure function of the row, so they are worked out
once and read back as they are (bench/README.md).

What makes it exact is compare's rule (``projections/read_models/compare_facts.py``): an entry
holds the
``position`` of the row it was computed from, and a row is rewritten only by an event at a
later position, so an entry is used only while its position equals its row's and its format
is this code's (``AGGREGATE_FACTS_VERSION``, which follows the ledger rules' version too).
Appends and replays leave the table alone (a ``rebuild`` empties it); ``rebuild --verify``
checks every valid entry against what its row gives now (``check_aggregate_cache``). Entries
are written after the rows were read, in a transaction of their own, only on the live store
(an ``--as-of`` scratch store is thrown away), and never waited for
(``benchledger.projections.read_models.cache_entries``).

The summary fields (half a row) are a column of their own and parsed only for the run each
case ends up with. A table of its own rather than more columns of ``rm_compare_facts``: the two
caches are filled by different commands and versioned apart, so neither command has to
compute the other's half and a change to one's format leaves the other's entries valid.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.rules.operations.aggregate_facts import RowFacts, decode, encode, row_facts
from benchledger.ledger.store.connection import placeholders
from benchledger.projections.read_models.cache_entries import entries_on_their_rows, keep_entries
from benchledger.projections.read_models.ledger_row_text import ROWS, row_text
from benchledger.projections.read_models.tables import AGGREGATE_FACTS

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
# An entry to keep, in ``AGGREGATE_FACTS.columns`` order: (ledger_id, benchmark_id, run_id,
# position, facts text, summary text).
Entry = tuple[str, str, str, int, str, str]
# Beyond this many rows to compute, one scan of the benchmark's rows is cheaper than looking
# them up by id.
_SCAN_FROM = 2000
_CHUNK = 500  # run ids per ``IN (...)``
_WHERE = "ledger_id = ? AND benchmark_id = ?"


class AggregateFactsReader:
    """The facts of one ledger's rows, for ``ledger.handlers.ledger_aggregate``; collects in
    ``entries`` the facts it had to compute, for ``keep_aggregate_facts``."""

    def __init__(self, conn: Connection, *, stored: bool = True) -> None:
        self.conn = conn
        self.stored = stored  # False: compute every row's facts (what a check compares with)
        self.entries: list[Entry] = []

    def facts(self, ledger_id: str, benchmark_id: str) -> list[RowFacts]:
        """The facts of every row of ``benchmark_id``, archived included, in the read model's
        order: stored ones where valid, the others computed from their rows.

        Two scans matched in Python (the rows' positions, then the benchmark's entries)
        rather than a join, as compare's cache does (its join was three times as slow)."""
        sql = f"SELECT run_id, position FROM rm_ledger_rows WHERE {_WHERE}"
        rows = self.conn.execute(sql, (ledger_id, benchmark_id))
        positions: dict[str, int] = {run_id: position for run_id, position in rows}
        return list(self.facts_of(ledger_id, benchmark_id, positions, scan=True).values())

    def facts_of(
        self, ledger_id: str, benchmark_id: str, positions: dict[str, int], *, scan: bool
    ) -> dict[str, RowFacts]:
        """The facts of the rows ``positions`` names (run id: the row's position), by run id in
        its order; stored ones looked up by id, or with ``scan`` (most of the benchmark's
        rows) in one scan of the benchmark's entries."""
        found = self._stored(ledger_id, benchmark_id, positions, scan=scan)
        missing = [run_id for run_id in positions if run_id not in found]
        if missing:
            wanted = None if len(missing) > _SCAN_FROM else missing
            for run_id, position, row in _rows(self.conn, ledger_id, benchmark_id, wanted):
                if run_id in positions and run_id not in found:
                    key = (ledger_id, benchmark_id, run_id, position)
                    found[run_id] = self._computed(key, row)
        return {run_id: found[run_id] for run_id in positions if run_id in found}

    def rows(self, ledger_id: str, benchmark_id: str) -> tuple[list[dict], list[RowFacts]]:
        """The whole rows of ``benchmark_id`` (to merge other ledgers' rows into) and, in the
        same order, their facts: stored ones where valid, the others computed."""
        rows: list[dict] = []
        positions: dict[str, int] = {}
        for run_id, position, row in _rows(self.conn, ledger_id, benchmark_id, None):
            rows.append(row)
            positions[run_id] = position
        found = self._stored(ledger_id, benchmark_id, positions, scan=True)
        facts = []
        for row, (run_id, position) in zip(rows, positions.items(), strict=True):
            known = found.get(run_id)
            if known is None:
                known = self._computed((ledger_id, benchmark_id, run_id, position), row)
            facts.append(known)
        return rows, facts

    def _stored(
        self, ledger_id: str, benchmark_id: str, positions: dict[str, int], *, scan: bool
    ) -> dict[str, RowFacts]:
        """Valid entries by run id: same position as the row's, this code's format."""
        found: dict[str, RowFacts] = {}
        if not self.stored:
            return found
        sql = f"SELECT run_id, position, facts, summary FROM rm_aggregate_facts WHERE {_WHERE}"
        params: tuple[Any, ...] = (ledger_id, benchmark_id)
        queries = [(sql, params)]
        if not scan:
            ids = list(positions)
            queries = [
                (f"{sql} AND run_id IN ({placeholders(len(chunk))})", (*params, *chunk))
                for chunk in (ids[i : i + _CHUNK] for i in range(0, len(ids), _CHUNK))
            ]
        get = positions.get
        for query, values in queries:
            for run_id, position, text, summary in self.conn.execute(query, values):
                if get(run_id) == position and (facts := decode(text, summary)) is not None:
                    found[run_id] = facts
        return found

    def _computed(self, key: tuple[str, str, str, int], row: dict) -> RowFacts:
        """The row's facts, as a later read will get them back from the entry kept for them:
        with ``summary_plain`` found, so rows changed since the cache was filled (an
        ``--as-of`` tail, a fresh upsert) do not make the whole printed aggregate walked."""
        facts = row_facts(row)
        stored = encode(facts)
        if stored is None:
            return facts
        self.entries.append((*key, *stored))
        return decode(*stored) or facts


def _rows(
    conn: Connection, ledger_id: str, benchmark_id: str, run_ids: Sequence[str] | None
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(run id, position, whole row) of every row of the benchmark, or of ``run_ids``."""
    loads = orjson.loads
    base = f"SELECT r.run_id, r.position, {row_text(conn)} FROM {ROWS} WHERE r.ledger_id = ?"
    chunks = [None] if run_ids is None else [
        run_ids[i : i + _CHUNK] for i in range(0, len(run_ids), _CHUNK)
    ]  # fmt: skip
    # By id, the benchmark test uses no index on SQLite (``+``): see compare_rows._where.
    by_id = " AND +r.benchmark_id = ?" if conn.dialect == "sqlite" else " AND r.benchmark_id = ?"
    for chunk in chunks:
        sql = f"{base} AND r.benchmark_id = ?"
        if chunk is not None:
            sql = f"{base}{by_id} AND r.run_id IN ({placeholders(len(chunk))})"
        for run_id, position, text in conn.execute(sql, (ledger_id, benchmark_id, *(chunk or ()))):
            yield run_id, position, loads(text)


def keep_aggregate_facts(conn: Connection, entries: Sequence[Entry]) -> None:
    """Store ``entries`` (``projections.read_models.cache_entries.keep_entries``: a transaction of
    their
    own; the aggregate is a read command, so it never waits for the write lock nor fails for
    it)."""
    keep_entries(conn, AGGREGATE_FACTS, entries)


def check_aggregate_cache(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """What ``rebuild --verify`` reports about this cache: every entry the aggregate would use
    must equal what its row gives now."""
    problems: list[dict[str, Any]] = []
    rows = entries_on_their_rows(conn, AGGREGATE_FACTS, ("facts", "summary"))
    for ledger_id, run_id, text, facts_text, summary in rows:
        kept = decode(facts_text, summary)
        if kept is None:
            continue  # never used: computed again at the next aggregate
        now = encode(row_facts(orjson.loads(text)))
        if now is None or kept != decode(*now):
            key = [ledger_id, run_id]
            problems.append({"table": AGGREGATE_FACTS.name, "key": key, "problem": "stale facts"})
            if len(problems) >= limit:
                break
    return problems
