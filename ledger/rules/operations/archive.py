"""Archiving and restoring runs of a ledger (docs/formats/ledger_v0.md §9).

Rows are never deleted: matching rows get the archive fields (or lose them on restore), and
the ``archive`` block the command prints says what matched, what changed and what was kept.
"""

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.safety import is_public_safe
from benchledger.ledger.rules.row.archive_state import ARCHIVE_FIELDS, is_archived
from benchledger.ledger.rules.row.ordering import row_sort_key
from benchledger.ledger.rules.row.rows import clean_values
from benchledger.ledger.rules.row.values import compact_text, ledger_text

# ---------------------------------------------------------------------------------------------
# §9 archive and restore
# ---------------------------------------------------------------------------------------------

ARCHIVE_SCHEMA = "benchmark_run_ledger_archive_v0"
MAX_ARCHIVE_SAMPLES = 20


@dataclass(frozen=True)
class ArchiveResult:
    """All rows after the operation, the run ids it changed, and the ``archive`` payload."""

    rows: list[dict]
    changed_run_ids: list[str]
    payload: dict


@dataclass(frozen=True)
class _Selector:
    benchmark_id: str
    case_ids: frozenset[str]
    arm_ids: frozenset[str]
    run_group_contains: tuple[str, ...]
    keep_run_group_contains: tuple[str, ...]
    run_ids: frozenset[str] = frozenset()

    def classify(self, row: Mapping[str, Any]) -> str | None:
        """'kept', 'match' or None — keep patterns are checked first, across all scopes."""
        if row.get("benchmark_id") != self.benchmark_id:
            return None
        group = str(row.get("run_group_id") or "")
        if any(pattern in group for pattern in self.keep_run_group_contains):
            return "kept"
        if self.run_ids and row.get("run_id") not in self.run_ids:
            return None
        if self.case_ids and row.get("case_id") not in self.case_ids:
            return None
        if self.arm_ids and row.get("arm_id") not in self.arm_ids:
            return None
        if self.run_group_contains and not any(p in group for p in self.run_group_contains):
            return None
        return "match"


def _validated_selector(
    benchmark_id: str,
    reason: str,
    case_ids: Iterable[str] | None,
    arm_ids: Iterable[str] | None,
    run_group_contains: Iterable[str] | None,
    keep_run_group_contains: Iterable[str] | None,
    all_matching: bool,
    extra_filter: bool = False,
    run_ids: Iterable[str] | None = None,
) -> tuple[_Selector, str]:
    if not str(benchmark_id or "").strip():
        raise InputError(
            "--benchmark-id is required (or --run-id, whose runs name their benchmark)"
        )
    if not str(reason or "").strip():
        raise InputError("archive reason is required")
    reason_text = " ".join(str(reason).split())
    if not is_public_safe(reason_text):
        raise InputError("--reason is not public-safe")
    cases, arms = clean_values(case_ids), clean_values(arm_ids)
    groups, keeps = clean_values(run_group_contains), clean_values(keep_run_group_contains)
    runs = clean_values(run_ids)
    if not (runs or cases or arms or groups or all_matching or extra_filter):
        raise InputError("provide a run/case/arm filter, or pass --archive-all-matching-benchmark")
    selector = _Selector(
        str(benchmark_id).strip(),
        frozenset(cases),
        frozenset(arms),
        tuple(groups),
        tuple(keeps),
        frozenset(runs),
    )
    return selector, ledger_text(reason_text, 220) or reason_text[:220]


def default_archive_batch_id(
    benchmark_id: str,
    reason: str,
    case_ids: Iterable[str] = (),
    arm_ids: Iterable[str] = (),
    run_group_contains: Iterable[str] = (),
    keep_run_group_contains: Iterable[str] = (),
    run_ids: Iterable[str] = (),
) -> str:
    """Deterministic batch id (gotcha #6): the same request always names the same batch.
    Run ids join the parts only when given, so every earlier request keeps its batch id."""
    parts = [
        benchmark_id,
        reason,
        ",".join(sorted(case_ids)),
        ",".join(sorted(arm_ids)),
        ",".join(sorted(run_group_contains)),
        ",".join(sorted(keep_run_group_contains)),
    ]
    if run_ids:
        parts.append("run_ids=" + ",".join(sorted(run_ids)))
    return hashlib.sha1("|".join(parts).encode("utf-8")).hexdigest()[:12]


def _sample(row: Mapping[str, Any]) -> dict:
    """One newly archived run as the ``archive`` block shows it (absent ids as ``""``, an
    absent score or class as ``null``, as loopx 0.4.8 shows them)."""
    return {
        "run_id": row.get("run_id"),
        "case_id": compact_text(row.get("case_id"), 160),
        "arm_id": compact_text(row.get("arm_id"), 120),
        "run_group_id": compact_text(row.get("run_group_id"), 160),
        "official_score": row.get("official_score"),
        "failure_class": row.get("failure_class"),
    }


def _ledger_order(row: Mapping[str, Any]) -> tuple:
    """Where a row sits in the written ledger: its case (cases are written sorted), then its
    place in the case (§6.3)."""
    return (str(row.get("case_id") or ""), row_sort_key(row))


def archive_rows(
    rows: Sequence[dict],
    *,
    benchmark_id: str,
    reason: str,
    case_ids: Iterable[str] | None = None,
    arm_ids: Iterable[str] | None = None,
    run_group_contains: Iterable[str] | None = None,
    keep_run_group_contains: Iterable[str] | None = None,
    archive_all_matching_benchmark: bool = False,
    archive_batch_id: str | None = None,
    run_ids: Iterable[str] | None = None,
    now: str,
) -> ArchiveResult:
    """Mark matching runs archived; rows are never deleted (§9)."""
    selector, reason_text = _validated_selector(
        benchmark_id,
        reason,
        case_ids,
        arm_ids,
        run_group_contains,
        keep_run_group_contains,
        archive_all_matching_benchmark,
        run_ids=run_ids,
    )
    _require_known_runs(rows, selector)
    batch_id = ledger_text(archive_batch_id, 120) or _default_batch_id(selector, reason_text)
    stamp = {
        "archive_state": "archived",
        "archive_reason": reason_text,
        "archive_batch_id": batch_id,
        "archived_at": now,
    }
    out, newly, counts = _stamp_matches(rows, selector, stamp)
    changed = [str(row.get("run_id")) for row in newly]
    payload = {
        "schema_version": ARCHIVE_SCHEMA,
        "archive_batch_id": batch_id,
        "benchmark_id": selector.benchmark_id,
        "reason": reason_text,
        "matched_run_count": counts["matched"],
        "newly_archived_run_count": len(newly),
        "already_archived_run_count": counts["already"],
        "kept_run_count": counts["kept"],
        **_samples(newly),
    }
    return ArchiveResult(out, changed, payload)


def _default_batch_id(selector: _Selector, reason_text: str) -> str:
    return default_archive_batch_id(
        selector.benchmark_id,
        reason_text,
        selector.case_ids,
        selector.arm_ids,
        selector.run_group_contains,
        selector.keep_run_group_contains,
        selector.run_ids,
    )


def _require_known_runs(rows: Sequence[Mapping[str, Any]], selector: _Selector) -> None:
    """A ``--run-id`` that is no run of the benchmark is a mistake, not "0 matched"."""
    if not selector.run_ids:
        return
    benchmark = selector.benchmark_id
    known = {str(row.get("run_id")) for row in rows if row.get("benchmark_id") == benchmark}
    missing = sorted(selector.run_ids - known)
    if missing:
        raise InputError(
            f"run id {missing[0]} is not a run of benchmark {selector.benchmark_id} in this "
            f'ledger ({len(known)} runs; `benchledger sql "SELECT run_id, case_id FROM '
            f'ledger_runs_v"` lists them)'
        )


def _stamp_matches(
    rows: Sequence[dict], selector: _Selector, stamp: Mapping[str, Any]
) -> tuple[list[dict], list[dict], dict[str, int]]:
    """Every row, the matching active ones stamped archived; the newly archived rows; and the
    counts the payload reports (kept back by a keep filter, matched, already archived)."""
    out: list[dict] = []
    newly: list[dict] = []
    counts = {"kept": 0, "matched": 0, "already": 0}
    for row in rows:
        verdict = selector.classify(row)
        if verdict == "kept":
            counts["kept"] += 1
        elif verdict == "match":
            counts["matched"] += 1
            if is_archived(row):
                counts["already"] += 1
            else:
                row = {**row, **stamp}
                newly.append(row)
        out.append(row)
    return out, newly, counts


def _samples(newly: list[dict]) -> dict[str, Any]:
    """The first newly archived runs in ledger order (cases sorted, runs in case order), as
    loopx 0.4.8 lists them, and whether the list was cut."""
    ordered = sorted(newly, key=_ledger_order)
    return {
        "archived_samples": [_sample(row) for row in ordered[:MAX_ARCHIVE_SAMPLES]],
        "truncated": len(ordered) > MAX_ARCHIVE_SAMPLES,
    }


def restore_rows(
    rows: Sequence[dict],
    *,
    benchmark_id: str,
    reason: str,
    case_ids: Iterable[str] | None = None,
    arm_ids: Iterable[str] | None = None,
    run_group_contains: Iterable[str] | None = None,
    keep_run_group_contains: Iterable[str] | None = None,
    archive_all_matching_benchmark: bool = False,
    archive_batch_id: str | None = None,
    run_ids: Iterable[str] | None = None,
) -> ArchiveResult:
    """Undo an archive (new, ``--restore``): matching archived rows lose the archive fields.

    ``archive_batch_id`` narrows the restore to one batch, so archiving then restoring that
    batch gives back exactly the rows that were there before. The reason is required because
    the restore is an audited event of its own.
    """
    selector, reason_text = _validated_selector(
        benchmark_id,
        reason,
        case_ids,
        arm_ids,
        run_group_contains,
        keep_run_group_contains,
        archive_all_matching_benchmark,
        extra_filter=bool(archive_batch_id),
        run_ids=run_ids,
    )
    _require_known_runs(rows, selector)
    out, changed, matched, counts = _unstamp_matches(rows, selector, archive_batch_id)
    payload = {
        "schema_version": ARCHIVE_SCHEMA,
        "restore": True,
        "archive_batch_id": archive_batch_id,
        "benchmark_id": selector.benchmark_id,
        "reason": reason_text,
        "matched_run_count": len(matched),
        "newly_archived_run_count": 0,
        "restored_run_count": len(changed),
        "already_active_run_count": counts["active"],
        "kept_run_count": counts["kept"],
        "archived_samples": [_sample(row) for row in matched[:MAX_ARCHIVE_SAMPLES]],
        "truncated": len(matched) > MAX_ARCHIVE_SAMPLES,
    }
    return ArchiveResult(out, changed, payload)


def _unstamp_matches(
    rows: Sequence[dict], selector: _Selector, batch_id: str | None
) -> tuple[list[dict], list[str], list[dict], dict[str, int]]:
    """Every row, the matching archived ones (of ``batch_id`` when given) without the archive
    fields; the run ids restored; the rows matched; and the kept and already-active counts."""
    out: list[dict] = []
    changed: list[str] = []
    matched: list[dict] = []
    counts = {"kept": 0, "active": 0}
    for row in rows:
        verdict = selector.classify(row)
        if verdict == "match" and batch_id and row.get("archive_batch_id") != batch_id:
            verdict = None
        if verdict == "kept":
            counts["kept"] += 1
        elif verdict == "match":
            matched.append(row)
            if is_archived(row):
                row = {key: value for key, value in row.items() if key not in ARCHIVE_FIELDS}
                changed.append(str(row.get("run_id")))
            else:
                counts["active"] += 1
        out.append(row)
    return out, changed, matched, counts
