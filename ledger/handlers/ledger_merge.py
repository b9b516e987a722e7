"""Deciding ``run-ledger-merge`` (docs/formats/ledger_v0.md §10): source ledger rows into the store
ledger.

Events carry the full resulting rows, so replay never re-runs the merge rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchledger.ledger.core.ledger_target import LedgerTarget
from benchledger.ledger.handlers.ledger_source_files import (
    LedgerSources,
)
from benchledger.ledger.handlers.ledger_store import (
    MaintenancePlan,
    MaintenanceReads,
    _row_events,
)
from benchledger.ledger.rules.operations.merge import merge_ledgers
from benchledger.ledger.store.events import LEDGER_MERGED


def plan_merge(
    reads: MaintenanceReads,
    target: LedgerTarget,
    sources: LedgerSources,
    *,
    benchmark_ids: Sequence[str] = (),
    run_group_contains: Sequence[str] = (),
    now: str,
) -> MaintenancePlan:
    """Upsert every source run into the store ledger; only rows that change become events.

    Untouched target rows are left exactly as the store holds them (the store's rows are
    already decided; re-normalising them here would rewrite history the merge did not touch).
    """
    before = list(reads.all_rows(target.ledger_id))
    by_id = {str(row.get("run_id")): row for row in before}
    result = merge_ledgers(
        before,
        sources.documents,
        benchmark_ids=benchmark_ids,
        run_group_contains=run_group_contains,
        missing_source_count=sources.missing,
        self_source_skipped=sources.self_skipped,
    )
    changed = [row for row in result.rows if by_id.get(str(row.get("run_id"))) != row]
    payload = dict(result.payload)
    payload["changed_run_count"] = len(changed)
    extra = {"updated_at": now, "merge": _merge_stats(payload)}
    is_new = reads.ledger(target.ledger_id) is None
    events = (
        _row_events(LEDGER_MERGED, target, changed, extra, is_new_ledger=is_new) if changed else []
    )
    return MaintenancePlan(events, payload)


def _merge_stats(payload: Mapping[str, Any]) -> dict[str, Any]:
    keys = (
        "source_ledger_count",
        "missing_source_count",
        "self_source_skipped",
        "source_run_count",
        "considered_run_count",
        "merged_run_count",
        "new_run_id_count",
        "changed_run_count",
        "benchmark_ids",
        "run_group_contains",
    )
    return {key: payload[key] for key in keys if key in payload}
