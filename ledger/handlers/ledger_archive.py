"""Deciding ``run-ledger-archive`` and ``run-ledger-restore`` (docs/formats/ledger_v0.md §9).

Only rows that really change are put in events: re-running an archive appends nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import LedgerTarget
from benchledger.ledger.handlers.ledger_store import (
    MaintenancePlan,
    MaintenanceReads,
    _row_events,
)
from benchledger.ledger.rules.operations.archive import archive_rows, restore_rows
from benchledger.ledger.rules.row.ordering import row_sort_key
from benchledger.ledger.store.events import LEDGER_RUNS_ARCHIVED, LEDGER_RUNS_RESTORED


@dataclass(frozen=True)
class ArchiveRequest:
    """The filters of ``run-ledger-archive`` / ``run-ledger-restore``."""

    benchmark_id: str
    reason: str
    case_ids: tuple[str, ...] = ()
    arm_ids: tuple[str, ...] = ()
    run_group_contains: tuple[str, ...] = ()
    keep_run_group_contains: tuple[str, ...] = ()
    archive_all_matching_benchmark: bool = False
    archive_batch_id: str | None = None
    run_ids: tuple[str, ...] = ()

    def filters(self) -> dict[str, Any]:
        return {
            "benchmark_id": self.benchmark_id,
            "reason": self.reason,
            "case_ids": self.case_ids,
            "arm_ids": self.arm_ids,
            "run_group_contains": self.run_group_contains,
            "keep_run_group_contains": self.keep_run_group_contains,
            "archive_all_matching_benchmark": self.archive_all_matching_benchmark,
            "archive_batch_id": self.archive_batch_id,
            "run_ids": self.run_ids,
        }


def with_benchmark(
    reads: MaintenanceReads, target: LedgerTarget, request: ArchiveRequest
) -> ArchiveRequest:
    """``request`` with its benchmark named by its runs when only ``--run-id`` was given: a user
    archiving one run by id should not have to look up which benchmark it belongs to
    (docs/cli.md). Ids that are not in the ledger, or runs of several benchmarks, are refused
    with the ids or benchmarks named."""
    if str(request.benchmark_id or "").strip() or not request.run_ids:
        return request
    wanted = set(request.run_ids)
    found = {
        str(row.get("run_id")): str(row.get("benchmark_id"))
        for row in reads.all_rows(target.ledger_id)
        if str(row.get("run_id")) in wanted
    }
    missing = sorted(wanted - found.keys())
    if missing:
        raise InputError(f"run id {missing[0]} is not a run of {target.display_path}")
    benchmarks = sorted(set(found.values()))
    if len(benchmarks) > 1:
        raise InputError(
            f"the run ids are runs of {len(benchmarks)} benchmarks ({', '.join(benchmarks)}); "
            "pass --benchmark-id to pick one"
        )
    return replace(request, benchmark_id=benchmarks[0])


def _benchmark_rows(reads: MaintenanceReads, target: LedgerTarget, benchmark_id: str) -> list:
    """The benchmark's rows in document order (case, then §6.3), so samples read naturally."""
    rows = reads.rows_by_benchmark(target.ledger_id, str(benchmark_id or "").strip())
    return sorted(rows, key=lambda r: (str(r.get("case_id") or ""), *row_sort_key(r)))


def plan_archive(
    reads: MaintenanceReads, target: LedgerTarget, request: ArchiveRequest, *, now: str
) -> MaintenancePlan:
    """Archive the matching active runs; already archived ones are counted, never touched."""
    request = with_benchmark(reads, target, request)
    rows = _benchmark_rows(reads, target, request.benchmark_id)
    result = archive_rows(rows, now=now, **request.filters())
    changed = _changed(result.rows, result.changed_run_ids)
    meta = reads.ledger(target.ledger_id) or {}
    extra = {
        "benchmark_id": result.payload["benchmark_id"],
        "reason": result.payload["reason"],
        "archive_batch_id": result.payload["archive_batch_id"],
        "run_ids": result.changed_run_ids,
        "updated_at": now,
        "previous_updated_at": meta.get("updated_at"),
    }
    events = _row_events(LEDGER_RUNS_ARCHIVED, target, changed, extra) if changed else []
    return MaintenancePlan(events, result.payload)


def plan_restore(
    reads: MaintenanceReads, target: LedgerTarget, request: ArchiveRequest, *, now: str
) -> MaintenancePlan:
    """Give matching archived runs back to the active set (new; loopx had no way back).

    When the restore exactly undoes the ledger's last write (an archive of the same run ids,
    nothing written since), ``updated_at`` returns to its value before that archive too, so the
    rendered files are byte for byte what they were: the archive never happened for a reader.
    Any other restore is a write of its own and stamps ``now``.
    """
    request = with_benchmark(reads, target, request)
    rows = _benchmark_rows(reads, target, request.benchmark_id)
    result = restore_rows(rows, **request.filters())
    changed = _changed(result.rows, result.changed_run_ids)
    payload = dict(result.payload)
    updated_at, undone_batch = _restore_stamp(reads, target, result.changed_run_ids, now)
    payload["restored_previous_state"] = undone_batch is not None
    extra = {
        "benchmark_id": payload["benchmark_id"],
        "reason": payload["reason"],
        "archive_batch_id": request.archive_batch_id,
        "run_ids": result.changed_run_ids,
        "updated_at": updated_at,
        "undid_archive_batch_id": undone_batch,
    }
    events = _row_events(LEDGER_RUNS_RESTORED, target, changed, extra) if changed else []
    return MaintenancePlan(events, payload)


def _restore_stamp(
    reads: MaintenanceReads, target: LedgerTarget, run_ids: list[str], now: str
) -> tuple[str, str | None]:
    last = reads.last_ledger_event(target.ledger_id) if run_ids else None
    if not last or last.get("event_type") != LEDGER_RUNS_ARCHIVED:
        return now, None
    archived = last.get("payload") or {}
    meta = reads.ledger(target.ledger_id) or {}
    exact = (
        archived.get("chunks", 1) == 1
        and sorted(archived.get("run_ids") or []) == sorted(run_ids)
        and archived.get("updated_at") == meta.get("updated_at")
        and archived.get("previous_updated_at")
    )
    if not exact:
        return now, None
    return str(archived["previous_updated_at"]), archived.get("archive_batch_id")


def _changed(rows: Sequence[dict], run_ids: Sequence[str]) -> list[dict]:
    wanted = set(run_ids)
    return [row for row in rows if str(row.get("run_id")) in wanted]
