"""Deciding the ledger maintenance commands: archive, restore, merge, aggregate, drift check.

Each ``plan_*`` / ``*_view`` function reads the store ledger through ``reads`` (handed over by
the command layer, see ``MaintenanceReads``), calls the pure operations (``ledger/archive.py``,
``ledger/merge.py``, ``ledger/aggregate.py``, ``ledger/drift.py``) and returns the events to
append plus the block the command prints.
Events carry the full resulting rows, so the projection upserts them and replay never re-runs
these rules. Only rows that really change are put in events: re-running an archive, or a merge
of rows the ledger already holds, appends nothing and says so.

Source ledgers, canonical id files and case roots are files the user names; reading them is
input handling (like the source adapters) and lives here too. The store is never touched
directly.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ledger.aggregate import TargetLanes, aggregate, aggregate_merge_preview
from ledger.archive import archive_rows, restore_rows
from ledger.drift import drift_check, history_rows
from ledger.errors import InputError
from ledger.events import LEDGER_MERGED, LEDGER_RUNS_ARCHIVED, LEDGER_RUNS_RESTORED, NewEvent
from ledger.input_files import LEDGER_JSON_LIMIT, TEXT_LIST_LIMIT, read_regular_file
from ledger.ledger_rows import READ_BOUNDARY
from ledger.ledger_target import LedgerTarget
from ledger.merge import MergeResult, merge_ledgers
from ledger.rules.ordering import row_sort_key

LEDGER_SCHEMA = "benchmark_run_ledger_v0"
EVENT_CHUNK_ROWS = 500
DEFAULT_UPDATE_POLICY = {
    "source_of_truth": "benchmark_run_v0 compact run events",
    "raw_logs_recorded": False,
    "raw_task_text_recorded": False,
    "absolute_paths_recorded": False,
    "update_rule": "upsert one run entry when a benchmark case is ingested or closed",
}


class MaintenanceReads(Protocol):
    """What these handlers read. ``StoreReads`` provides the first five; the command layer adds
    ``run_ids`` (a cheap id-only scan) and ``last_ledger_event`` (the newest event on the
    ledger's stream, as ``{"event_type", "payload"}``)."""

    def ledger(self, ledger_id: str) -> dict[str, Any] | None: ...
    def rows_by_benchmark(self, ledger_id: str, benchmark_id: str) -> list[dict]: ...
    def case_rows(self, ledger_id: str, benchmark_id: str, case_id: str) -> list[dict]: ...
    def all_rows(self, ledger_id: str) -> Iterable[dict]: ...
    def row_count(self, ledger_id: str) -> int: ...
    def goal_records(self, goal_id: str, limit: int | None = None) -> list[dict]: ...
    def run_ids(self, ledger_id: str) -> list[str]: ...
    def last_ledger_event(self, ledger_id: str) -> dict[str, Any] | None: ...


@dataclass
class MaintenancePlan:
    """Events to append (empty when nothing changes) and the block the command prints."""

    events: list[NewEvent] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)
    changed_rows: list[dict] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.events)


def require_store_ledger(reads: MaintenanceReads, target: LedgerTarget) -> None:
    """Refuse a ledger file the store does not know: rendering after a write would replace it
    with only the rows the store holds, losing the rest of the file."""
    if reads.ledger(target.ledger_id) is None and target.json_path.exists():
        shown = _display(target.display_path)
        raise InputError(
            f"{shown} is not in the store; import it first with "
            f"`benchledger import loopx-ledger {shown} --execute`"
        )


def _display(path_text: str) -> str:
    """A path as the user gave it when relative; only the file name when absolute."""
    text = str(path_text)
    return Path(text).name if os.path.isabs(os.path.expanduser(text)) else text


def _row_events(
    event_type: str,
    target: LedgerTarget,
    rows: Sequence[dict],
    extra: Mapping[str, Any],
    *,
    is_new_ledger: bool = False,
) -> list[NewEvent]:
    """Chunk the changed rows so no single event grows without bound (as the import does)."""
    chunks = [rows[i : i + EVENT_CHUNK_ROWS] for i in range(0, len(rows), EVENT_CHUNK_ROWS)]
    events = []
    for index, chunk in enumerate(chunks):
        payload = {
            "ledger_id": target.ledger_id,
            "ledger_path": target.display_path,
            "rows": list(chunk),
            **extra,
            "chunk": index + 1,
            "chunks": len(chunks),
        }
        if is_new_ledger and index == 0:
            payload["update_policy"] = DEFAULT_UPDATE_POLICY
        events.append(NewEvent(target.stream, event_type, payload))
    return events


# ---------------------------------------------------------------------------------------------
# archive / restore (ledger_v0 §9)
# ---------------------------------------------------------------------------------------------


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
        }


def _benchmark_rows(reads: MaintenanceReads, target: LedgerTarget, benchmark_id: str) -> list:
    """The benchmark's rows in document order (case, then §6.3), so samples read naturally."""
    rows = reads.rows_by_benchmark(target.ledger_id, str(benchmark_id or "").strip())
    return sorted(rows, key=lambda r: (str(r.get("case_id") or ""), *row_sort_key(r)))


def plan_archive(
    reads: MaintenanceReads, target: LedgerTarget, request: ArchiveRequest, *, now: str
) -> MaintenancePlan:
    """Archive the matching active runs; already archived ones are counted, never touched."""
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
    return MaintenancePlan(events, result.payload, changed)


def plan_restore(
    reads: MaintenanceReads, target: LedgerTarget, request: ArchiveRequest, *, now: str
) -> MaintenancePlan:
    """Give matching archived runs back to the active set (new; loopx had no way back).

    When the restore exactly undoes the ledger's last write (an archive of the same run ids,
    nothing written since), ``updated_at`` returns to its value before that archive too, so the
    rendered files are byte for byte what they were: the archive never happened for a reader.
    Any other restore is a write of its own and stamps ``now``.
    """
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
    return MaintenancePlan(events, payload, changed)


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


# ---------------------------------------------------------------------------------------------
# source ledgers (merge and aggregate)
# ---------------------------------------------------------------------------------------------


@dataclass
class LedgerSources:
    """Loaded source ledgers in the order given, and what happened to the rest."""

    documents: list[dict] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    missing: int = 0
    self_skipped: int = 0
    unique_paths: int = 0


def load_sources(
    paths: Sequence[str],
    globs: Sequence[str],
    *,
    target_json_path: Path | None,
    cwd: Path | None = None,
) -> LedgerSources:
    """Resolve ``--source-run-ledger-path``/``-glob`` (recursive ``**``), de-duplicated by
    resolved path; missing files are counted, the target itself is skipped (new)."""
    from ledger.handlers.import_loopx import load_ledger_document

    cwd = cwd or Path.cwd()
    target = target_json_path.resolve() if target_json_path else None
    out = LedgerSources()
    seen: set[Path] = set()
    for given in _candidates(paths, globs, cwd):
        path = Path(os.path.abspath(cwd / Path(given).expanduser())).resolve()
        if path in seen:
            continue
        seen.add(path)
        if target is not None and path == target:
            out.self_skipped += 1
            continue
        if path.is_dir():  # a glob matches directories too; like loopx, they are not sources
            out.missing += 1
            continue
        try:
            data = read_regular_file(path, shown=_display(given), limit=LEDGER_JSON_LIMIT)
        except FileNotFoundError:
            out.missing += 1
            continue
        out.documents.append(load_ledger_document(data, path.name))
        out.names.append(_display(given))
    out.unique_paths = len(seen)
    return out


def _candidates(paths: Sequence[str], globs: Sequence[str], cwd: Path) -> Iterator[str]:
    yield from (p for p in paths if str(p).strip())
    for pattern in globs:
        if not str(pattern).strip():
            continue
        expanded = os.path.expanduser(pattern)
        if os.path.isabs(expanded):
            yield from sorted(glob.glob(expanded, recursive=True))
        else:
            yield from sorted(glob.glob(expanded, root_dir=cwd, recursive=True))


# ---------------------------------------------------------------------------------------------
# merge (ledger_v0 §10)
# ---------------------------------------------------------------------------------------------


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
    return MaintenancePlan(events, payload, changed)


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


# ---------------------------------------------------------------------------------------------
# aggregate (ledger_v0 §11)
# ---------------------------------------------------------------------------------------------


def read_case_ids_file(path: str, flag: str) -> list[str]:
    """One id per line, blank lines ignored; OS errors named without the directory."""
    name = Path(path).name
    try:
        raw = read_regular_file(
            Path(path).expanduser(), shown=f"{flag} {name}", limit=TEXT_LIST_LIMIT
        )
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{flag}: file not found: {name}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{flag}: {name} is not UTF-8 text (at byte {exc.start})") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def case_root_ids(path: str) -> list[str]:
    """Names of the immediate sub-directories, sorted (hidden ones left out)."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise InputError(f"--canonical-case-root is not a directory: {_display(path)}")
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


@dataclass(frozen=True)
class AggregateRequest:
    benchmark_id: str
    selection: str = "best"
    canonical_case_ids: tuple[str, ...] = ()
    active_case_ids: tuple[str, ...] = ()
    include_noncanonical_sanity_sources: bool = False
    lanes: TargetLanes = field(default_factory=TargetLanes)


def aggregate_view(
    reads: MaintenanceReads,
    target: LedgerTarget,
    sources: LedgerSources,
    request: AggregateRequest,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The aggregate and its ``merge_preview``; sources are merged in memory, never written."""
    if not str(request.benchmark_id or "").strip():
        raise InputError("benchmark_id is required")
    benchmark_id = request.benchmark_id.strip()
    rows = reads.rows_by_benchmark(target.ledger_id, benchmark_id)
    primary_considered = len(rows)
    merged = MergeResult(rows)
    if sources.documents:
        merged = merge_ledgers(rows, sources.documents, benchmark_ids=[benchmark_id])
        rows = merged.rows
    has_primary = reads.ledger(target.ledger_id) is not None
    files = [_display(target.display_path)] if has_primary else []
    primary = (reads.row_count(target.ledger_id), primary_considered) if has_primary else None
    result = aggregate(
        rows,
        benchmark_id=benchmark_id,
        selection=request.selection,
        canonical_case_ids=request.canonical_case_ids,
        active_case_ids=request.active_case_ids,
        include_noncanonical_sanity_sources=request.include_noncanonical_sanity_sources,
        lanes=request.lanes,
        source_ledger_files=[*files, *sources.names],
    )
    return result, aggregate_merge_preview(merged, sources.unique_paths, primary)


# ---------------------------------------------------------------------------------------------
# drift check (ledger_v0 §12)
# ---------------------------------------------------------------------------------------------


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


__all__ = [
    "READ_BOUNDARY",
    "AggregateRequest",
    "ArchiveRequest",
    "LedgerSources",
    "MaintenancePlan",
    "MaintenanceReads",
    "aggregate_view",
    "case_root_ids",
    "drift_view",
    "load_sources",
    "plan_archive",
    "plan_merge",
    "plan_restore",
    "read_case_ids_file",
    "require_store_ledger",
]
