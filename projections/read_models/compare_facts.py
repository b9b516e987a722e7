"""compare's cache: each ledger row's ``RunFacts`` (``projections.reports.compare.document``), kept
in
``rm_compare_facts`` beside the row and filled lazily, at the first ``compare`` that reads it.

Why: a compare of a 30,000-row ledger spent a third of its time having the database pull a
dozen keys out of the rows' JSON, and another third reducing them in Python (bench/README.md);
the reduced values (a hundred bytes a run) are a pure function of the row, so they are worked
out once and read back as they are.

What makes it exact: an entry holds the ``position`` of the row it was computed from, and a
row is rewritten only by an event at a later position, so an entry is used only while its
position equals its row's and its format is this code's (``FACTS_VERSION``, which
follows the ledger rules' version too). Nothing on the write path knows about this table:
appends and replays leave it alone (a ``rebuild`` empties it, like the read models), and
entries left behind by rewritten rows are replaced at the next compare that reads those rows.
``rebuild --verify`` checks every valid entry against what its row gives now
(``check_compare_cache``).

Entries are written after the document's rows were read, in a transaction of their own, and
only on the live store (``--as-of`` reads a scratch store that is thrown away); a store that
cannot take the write at once (read-only, or another process holds the write lock) is simply
not filled this time (``keep_facts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.rules.row.build import RULES_VERSION
from benchledger.ledger.store.connection import placeholders
from benchledger.projections.read_models.cache_entries import entries_on_their_rows, keep_entries
from benchledger.projections.read_models.tables import COMPARE_FACTS
from benchledger.projections.reports.compare.document import RunFacts, run_facts
from benchledger.projections.reports.compare.guard import Facts
from benchledger.projections.reports.compare.rows import benchmarks_of, rows_by_id

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
# The layout of ``facts`` (``RunFacts`` without its guard, as a JSON array ending with this
# version) and the rules behind its verdicts: an entry of any other version is computed again.
FACTS_VERSION = f"3/{RULES_VERSION}"  # 3: the runner and the setting before the guard
# Beyond this many rows to compute, one scan of the benchmark's rows is cheaper than looking
# them up by id.
_SCAN_FROM = 2000

# An entry to keep, in ``COMPARE_FACTS.columns`` order: (ledger_id, benchmark_id, run_id,
# position, facts text, guard text).
Entry = tuple[str, str, str, int, str, str]


def read_facts(
    conn: Connection, ledger_id: str, benchmark_id: str
) -> tuple[list[RunFacts], list[Entry]]:
    """The facts of every row of ``benchmark_id`` (every version of a bare name), archived
    included, and the entries to keep for the rows whose facts were not stored yet.

    Two scans matched in Python (the rows' positions, then the benchmark's entries) rather
    than a join: the join's 30,000 index look-ups took three times as long as both scans.
    """
    benchmarks = benchmarks_of(conn, ledger_id, benchmark_id)
    if not benchmarks:
        return [], []
    where = f"WHERE ledger_id = ? AND benchmark_id IN ({placeholders(len(benchmarks))})"
    params = (ledger_id, *benchmarks)
    # run id -> (benchmark id, position) of each row; left holding the rows without facts
    missing: dict[str, tuple[str, int]] = {
        run_id: (benchmark, position)
        for run_id, benchmark, position in conn.execute(
            f"SELECT run_id, benchmark_id, position FROM rm_ledger_rows {where}", params
        )
    }
    if not missing:
        return [], []
    loads, make, unknown = orjson.loads, RunFacts._make, ("", -1)
    guards: dict[str, Facts] = {}
    found: list[RunFacts] = []
    stored_sql = f"SELECT run_id, position, facts, guard FROM rm_compare_facts {where}"
    for run_id, position, text, guard_text in conn.execute(stored_sql, params):
        known = missing.pop(run_id, unknown)
        stored = loads(text) if known[1] == position else None  # else outlived by its row
        if stored is None or stored[-1] != FACTS_VERSION:
            if known is not unknown:
                missing[run_id] = known
            continue
        guard = guards.get(guard_text)
        if guard is None:
            guard = guards[guard_text] = _guard(loads(guard_text))
        stored[-1] = guard  # the version's place is the guard's in ``RunFacts``
        found.append(make(stored))
    entries: list[Entry] = []
    if missing:
        wanted = None if len(missing) > _SCAN_FROM else list(missing)
        for run_id, row in rows_by_id(conn, ledger_id, benchmarks, wanted).items():
            if run_id not in missing:
                continue
            benchmark, position = missing[run_id]
            facts = run_facts(row)
            found.append(facts)
            entry = _entry((ledger_id, benchmark, run_id, position), facts)
            if entry is not None:
                entries.append(entry)
    return found, entries


def keep_facts(conn: Connection, entries: Sequence[Entry]) -> None:
    """Store ``entries`` (``projections.read_models.cache_entries.keep_entries``: a transaction of
    their
    own; compare is a read command, so it never waits for the write lock nor fails for it)."""
    keep_entries(conn, COMPARE_FACTS, entries)


def check_compare_cache(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """What ``rebuild --verify`` reports about this cache: every entry compare would use must
    equal what its row gives now."""
    problems: list[dict[str, Any]] = []
    rows = entries_on_their_rows(conn, COMPARE_FACTS, ("facts", "guard"))
    for ledger_id, run_id, text, facts_text, guard_text in rows:
        stored = orjson.loads(facts_text)
        if stored[-1] != FACTS_VERSION:
            continue  # never used: computed again at the next compare
        kept = _facts(stored, _guard(orjson.loads(guard_text)))
        if kept != run_facts(orjson.loads(text)):
            key = [ledger_id, run_id]
            problems.append({"table": COMPARE_FACTS.name, "key": key, "problem": "stale facts"})
            if len(problems) >= limit:
                break
    return problems


def _entry(key: tuple[str, str, str, int], facts: RunFacts) -> Entry | None:
    """The stored form of ``facts``, or None when JSON cannot carry them exactly (an integer
    beyond 64 bits, or a token sum that overflowed to infinity): those are not kept."""
    try:
        text = orjson.dumps([*facts[:-1], FACTS_VERSION]).decode()
        guard = orjson.dumps(facts.guard).decode()
    except TypeError:
        return None
    back = orjson.loads(text)
    if _facts(back, _guard(orjson.loads(guard))) != facts:
        return None
    return (*key, text, guard)


def _facts(stored: list[Any], guard: Facts) -> RunFacts:
    """``RunFacts`` from a stored ``facts`` array (its version last) and its guard."""
    return RunFacts._make((*stored[:-1], guard))


def _guard(stored: list[list[str]]) -> Facts:
    return tuple(tuple(values) for values in stored)  # type: ignore[return-value]
