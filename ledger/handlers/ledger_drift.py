"""``run-ledger-check`` (docs/formats/ledger_v0.md §12): is every terminal history run also in the
ledger?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchledger.ledger.core.ledger_target import LedgerTarget
from benchledger.ledger.handlers.ledger_store import (
    MaintenanceReads,
)
from benchledger.ledger.rules.operations.drift import drift_check, history_rows


def drift_view(
    reads: MaintenanceReads,
    target: LedgerTarget,
    *,
    goal_id: str,
    history_limit: int,
    limit: int,
    now: str,
) -> dict[str, Any]:
    """Is every terminal run of the goal's history in the ledger?

    Only the cases the history touches are read in full (a signature can only match a row of
    the same benchmark and case); every other row is passed as its bare ``run_id``, which
    still matches by id and counts in ``ledger_run_count`` but can never match a signature
    (its benchmark id is empty, a history row's never is). The check then costs the history,
    not the ledger.
    """
    history_limit, limit = max(int(history_limit), 0), max(int(limit), 0)
    records = reads.goal_records(goal_id, history_limit) if history_limit else []
    records = [_with_history_path(goal_id, record) for record in records]
    rows = history_rows(records, history_limit=history_limit, now=now)
    ledger_rows = _drift_candidates(reads, target, rows)
    result = drift_check(
        records,
        ledger_rows,
        ledger_path=target.display_path,
        history_limit=history_limit,
        limit=limit,
        now=now,
        rows=rows,
    )
    return result


def _with_history_path(goal_id: str, record: dict[str, Any]) -> dict[str, Any]:
    stem = record.get("stem")
    if stem and not record.get("json_path"):
        return {**record, "json_path": f"goals/{goal_id}/runs/{stem}.json"}
    return record


def _drift_candidates(
    reads: MaintenanceReads, target: LedgerTarget, rows: Sequence[tuple[Any, dict | None]]
) -> list[dict]:
    """Full rows of the (benchmark, case) pairs the history lands on; bare ids for the rest."""
    keys = {
        (str(row.get("benchmark_id") or ""), str(row.get("case_id") or ""))
        for _, row in rows
        if row is not None
    }
    full: list[dict] = []
    for benchmark_id, case_id in sorted(keys):
        full += reads.case_rows(target.ledger_id, benchmark_id, case_id)
    full_ids = {str(row.get("run_id")) for row in full}
    stubs = [{"run_id": rid} for rid in reads.run_ids(target.ledger_id) if rid not in full_ids]
    return full + stubs
