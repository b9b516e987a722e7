"""Planned → completed: give Harbor ingest records the ``run_key`` of the run that was planned.

A planned record (docs/formats/cli.md §7.1) carries the exact ``harbor run`` argv, including
``--job-name``.
When that job is later ingested, the ledger should be able to answer "was this the run we
planned, with that timeout policy and preflight?" without a person matching names by hand. The
link is the job name (docs/formats/cli.md §7.5): every ingest record whose ``job_name`` equals a
planned
record's preview ``job_name`` gets ``planned_run_key``. Pure: the caller passes the goal's
earlier run records (``StoreReads.goal_records``) in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Records that describe a launch that has not happened; they are link targets, never linked.
NOT_RUN_STATUSES = frozenset({"planned", "fixture"})


@dataclass  # not frozen: cheaper to build and create; nothing hashes or mutates it
class PlannedRun:
    """What the link needs of one planned record."""

    job_name: str
    case_id: str | None
    run_key: str
    generated_at: str
    order: int


def _benchmark_run(item: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A goal run record wraps the run in ``benchmark_run``; a bare run record is itself."""
    nested = item.get("benchmark_run")
    if isinstance(nested, Mapping):
        return nested
    return item if item.get("schema_version") == "benchmark_run_v0" else None


def _planned_run(item: Mapping[str, Any], order: int) -> PlannedRun | None:
    """Only a planned record with a launch preview can be launched, so only it can be linked."""
    run = _benchmark_run(item)
    if run is None or run.get("run_status") != "planned":
        return None
    preview = run.get("launch_preview")
    job_name = preview.get("job_name") if isinstance(preview, Mapping) else None
    run_key = run.get("run_key")
    if not isinstance(job_name, str) or not job_name or not isinstance(run_key, str):
        return None
    case_id = run.get("case_id") if isinstance(run.get("case_id"), str) else None
    generated_at = item.get("generated_at")
    return PlannedRun(job_name, case_id, run_key, str(generated_at or ""), order)


def planned_runs_by_job(planned: Iterable[Mapping[str, Any]]) -> dict[str, list[PlannedRun]]:
    """Planned runs keyed by job name, newest first (``generated_at``, then input order).

    ``StoreReads.goal_records`` already returns newest first; input order breaks ties so bare
    records without ``generated_at`` keep the caller's order.
    """
    found: dict[str, list[PlannedRun]] = {}
    for order, item in enumerate(planned):
        if not isinstance(item, Mapping):
            continue
        run = _planned_run(item, order)
        if run is not None:
            found.setdefault(run.job_name, []).append(run)
    for runs in found.values():
        runs.sort(key=lambda run: run.order)
        runs.sort(key=lambda run: run.generated_at, reverse=True)
    return found


def _choose(candidates: Sequence[PlannedRun], case_id: Any) -> PlannedRun:
    """A multi-task plan shares one job name: prefer the plan of the same case, else the newest."""
    for run in candidates:
        if run.case_id is not None and run.case_id == case_id:
            return run
    return candidates[0]


def _linkable(record: Mapping[str, Any]) -> bool:
    """Ingested (completed, running, ...) records only; an explicit link is never overwritten."""
    return (
        record.get("run_status") not in NOT_RUN_STATUSES
        and not record.get("planned_run_key")
        and isinstance(record.get("job_name"), str)
    )


def link_planned(
    records: Sequence[Mapping[str, Any]], planned: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Copies of ``records`` with ``planned_run_key`` set where a planned job name matches.

    ``planned`` may hold goal run records (``{"benchmark_run": {...}, "generated_at": ...}``,
    as ``StoreReads.goal_records`` returns them) or bare ``benchmark_run_v0`` records; anything
    that is not a planned record with a launch preview is ignored. Records without a match are
    returned unchanged (as copies).
    """
    by_job = planned_runs_by_job(planned)
    linked: list[dict[str, Any]] = []
    for record in records:
        copy = dict(record)
        candidates = by_job.get(str(record.get("job_name"))) if _linkable(record) else None
        if candidates:
            copy["planned_run_key"] = _choose(candidates, record.get("case_id")).run_key
        linked.append(copy)
    return linked
