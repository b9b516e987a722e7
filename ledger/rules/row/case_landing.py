"""One case while a batch of upserts lands on it (docs/formats/ledger_v0.md §6.1, §6.3, §7).

Why a module of its own: ``benchmark run --update-run-ledger`` plans every record of an ingest
at once, and an ingest of many evals of one task lands a row on each case again and again.
Calling ``upsert_row`` and ``decide_case`` for each of them re-read, re-sorted and re-decided
the whole case every time, so a case's cost grew with the square of its rows: 100 Inspect logs
of the same 100 samples (10,000 rows in 100 cases) visited rows ~1.5 million times
(bench/inspect_ingest.py). Here the first landing on a case is ``upsert_row``'s own (it scans
the rows in the order the store gave them); from then on the case's rows are indexed by run id
and logical key, and the facts its decision reads (``CaseFacts``) are kept up to date, so each
further landing costs a few lookups and a bisection. The rules stay those of ``upsert_row`` and
``latest_decision``: ``tests/test_case_landing.py`` lands the same rows both ways.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass
from typing import Any

from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.ledger.rules.row.build import SKIP_REASON_NON_TERMINAL
from benchledger.ledger.rules.row.case_decision import (
    CaseFacts,
    arm_roles,
    count_routing,
    decision_from_facts,
    routing_marks,
)
from benchledger.ledger.rules.row.ordering import row_sort_key
from benchledger.ledger.rules.row.scoring import is_terminal
from benchledger.ledger.rules.row.upsert import (
    backfill_row,
    logical_key,
    replace_row,
    same_logical_run,
    upsert_row,
)

SortKey = tuple[float, str]


@dataclass
class Landing:
    """What one row did to its case: ``action``, ``row`` and ``touched_run_id`` as
    ``upsert_row`` reports them, ``before`` the stored row it landed on, and ``decision`` the
    case's ``latest_decision`` afterwards (``{}`` when the row was skipped)."""

    action: str
    row: dict
    touched_run_id: str | None
    before: dict | None
    decision: dict[str, Any]
    skip_reason: str | None = None

    @property
    def updated(self) -> bool:
        return self.action != "skipped"


class _Latest:
    """Rows kept in §6.3 order by their sort keys (unique: a case's run ids are), so the latest
    one is at hand after any insertion or removal."""

    def __init__(self) -> None:
        self.keys: list[SortKey] = []
        self.rows: dict[SortKey, dict] = {}

    def update(self, key: SortKey, row: dict, sign: int) -> None:
        """Add ``row`` under ``key`` (``sign`` 1) or take it away (-1)."""
        if sign > 0:
            insort(self.keys, key)
            self.rows[key] = row
        else:
            del self.keys[bisect_left(self.keys, key)]
            del self.rows[key]

    def latest(self) -> dict | None:
        return self.rows[self.keys[-1]] if self.keys else None


class CaseLanding:
    """The rows of one case as upserts land on them one by one (``land``)."""

    def __init__(self, stored_rows: list[dict]) -> None:
        self._stored: list[dict] | None = stored_rows  # the store's order, until a row lands
        self._keys: dict[str, SortKey] = {}  # by run id, for every row of the case
        self._rows: dict[str, dict] = {}
        self._logical: dict[tuple[Any, ...], list[dict]] = {}
        self._active = _Latest()
        self._baseline = _Latest()
        self._treatment = _Latest()
        self._facts = CaseFacts()

    def land(self, new_row: dict) -> Landing:
        """Upsert ``new_row`` into the case (§6.1) and decide the case afterwards (§7)."""
        if self._stored is not None:
            return self._first(self._stored, new_row)
        if not is_terminal(new_row):
            return Landing(
                "skipped", dict(new_row), None, None, {}, skip_reason=SKIP_REASON_NON_TERMINAL
            )
        run_id = new_row.get("run_id")
        stored = self._rows.get(run_id) if run_id else None
        if stored is not None:
            merged, action = replace_row(stored, new_row)
            return self._landed(action, merged, stored)
        key = logical_key(new_row)
        match = self._logical_match(key, new_row) if key is not None else None
        if match is not None:
            return self._landed("backfilled", backfill_row(match, new_row), match)
        return self._landed("appended", dict(new_row), None)

    def _first(self, stored_rows: list[dict], new_row: dict) -> Landing:
        result = upsert_row(stored_rows, new_row)
        if not result.updated:
            return Landing(
                result.action, result.row, None, None, {}, skip_reason=result.skip_reason
            )
        before = next((r for r in stored_rows if r.get("run_id") == result.touched_run_id), None)
        self._stored = None
        for row in result.rows:
            self._add(row)
        return Landing(result.action, result.row, result.touched_run_id, before, self._decide())

    def _landed(self, action: str, row: dict, before: dict | None) -> Landing:
        if before is not None:
            self._remove(before)
        self._add(row)
        touched = before.get("run_id") if before is not None else None
        return Landing(action, row, touched, before, self._decide())

    def _logical_match(self, key: tuple[Any, ...], new_row: dict) -> dict | None:
        """The first stored row (§6.3 order) that is the same logical run, as ``upsert_row``
        finds it."""
        matches = [r for r in self._logical.get(key, ()) if same_logical_run(r, new_row, key)]
        return min(matches, key=lambda r: self._keys[r["run_id"]], default=None)

    def _add(self, row: dict) -> None:
        run_id = row["run_id"]
        sort_key = row_sort_key(row)
        self._keys[run_id] = sort_key
        self._rows[run_id] = row
        key = logical_key(row)
        if key is not None:
            self._logical.setdefault(key, []).append(row)
        self._track(row, sort_key, 1)

    def _remove(self, row: dict) -> None:
        run_id = row["run_id"]
        sort_key = self._keys.pop(run_id)
        del self._rows[run_id]
        key = logical_key(row)
        if key is not None:
            bucket = self._logical[key]
            del bucket[next(i for i, r in enumerate(bucket) if r is row)]
        self._track(row, sort_key, -1)

    def _track(self, row: dict, sort_key: SortKey, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) what ``row`` contributes to the case's facts."""
        if is_archived(row):
            self._facts.archived += sign
            return
        roles = arm_roles(row)
        if "baseline" in roles:
            self._baseline.update(sort_key, row, sign)
        if "treatment" in roles:
            self._treatment.update(sort_key, row, sign)
        self._active.update(sort_key, row, sign)
        count_routing(self._facts, routing_marks(row), sign)

    def _decide(self) -> dict[str, Any]:
        facts = self._facts
        facts.latest = self._active.latest()
        facts.baseline = self._baseline.latest()
        facts.treatment = self._treatment.latest()
        return decision_from_facts(facts)
