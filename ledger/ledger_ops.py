"""Pure operations on ledger rows: upsert/backfill, archive/restore, merge, aggregate, drift.

ledger_v0.md §6.1, §9-§12. Everything here takes lists of row dicts (and already-loaded ledger
documents) and returns new rows plus the payload a command prints; the store layer turns the
decisions into events and the projections render files. Nothing here reads files or a database.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledger.errors import InputError
from ledger.loopx_reading import read_loopx_row
from ledger.row_rules import (
    ARCHIVE_FIELDS,
    RULES_VERSION,
    SKIP_REASON_NON_TERMINAL,
    _as_number,
    _attempt_flag,
    build_row,
    compact_text,
    countability,
    drift_signature,
    earlier_timestamp,
    instant,
    is_public_safe,
    is_terminal,
    labels_of,
    ledger_text,
    normalize_row,
)
from ledger.safety import join_public, public_json

LEDGER_SCHEMA = "benchmark_run_ledger_v0"
READ_BOUNDARY = {
    "compact_only": True,
    "raw_logs_read": False,
    "task_text_read": False,
    "trajectory_read": False,
    "docker_invoked": False,
    "model_api_invoked": False,
    "upload_invoked": False,
}
LOGICAL_KEYS = ("run_group_id", "arm_id", "job_name", "mode")
LOGICAL_OUTCOME_KEYS = (
    "status",
    "score_status",
    "official_passed",
    "failure_class",
    "official_score",
)
BACKFILL_FIELDS = (
    "artifact_refs",
    "solution_quality_signals",
    "round_reward_count",
    "round_success_observed",
    "max_rounds_budget",
    "app_server_goal_round_semantics",
    "native_goal_session_policy",
    "max_rounds_budget_applies_to",
    "native_goal_initial_turn_budget",
    "native_goal_same_thread_followup_budget",
    "native_goal_independent_attempt_budget",
    "native_goal_fresh_thread_per_independent_attempt",
    "native_goal_official_reward_feedback_forwarded_to_worker",
    "native_goal_verifier_output_forwarded_to_worker",
    "official_feedback_blinded",
    "reward_feedback_forwarded",
    "task_setup_preflight",
    "task_staging",
    "run_key",
    "pass_at_k",
)


def _blank(value: Any) -> bool:
    """Backfill treats ``{}`` as empty too (§6.1), unlike row key dropping."""
    return value is None or value == "" or value == [] or value == {}


def row_sort_key(row: Mapping[str, Any]) -> tuple[float, str]:
    """§6.3: by ``recorded_at`` as an instant, then ``run_id``; the last one is "latest"."""
    return instant(row.get("recorded_at")), str(row.get("run_id") or "")


def sort_rows(rows: Iterable[dict]) -> list[dict]:
    return sorted(rows, key=row_sort_key)


def is_archived(row: Mapping[str, Any]) -> bool:
    return row.get("archive_state") == "archived"


# ---------------------------------------------------------------------------------------------
# §6.1 upsert
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpsertResult:
    """What one upsert did to one case.

    ``action`` is ``replaced``, ``backfilled``, ``appended``, ``archived_kept`` or ``skipped``
    (non-terminal row, §5.8); ``row`` is the stored row afterwards; ``touched_run_id`` the
    existing row it landed on; ``rows`` the case's runs afterwards, sorted (§6.3).
    """

    action: str
    row: dict
    touched_run_id: str | None
    rows: list[dict]
    skip_reason: str | None = None

    @property
    def updated(self) -> bool:
        return self.action != "skipped"


def logical_key(row: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The four identity texts of logical backfill, or None when any is empty."""
    values = tuple(row.get(key) for key in LOGICAL_KEYS)
    return None if any(not value for value in values) else values


def _same_logical_run(stored: Mapping[str, Any], new: Mapping[str, Any], key: tuple) -> bool:
    return logical_key(stored) == key and all(
        stored.get(name) == new.get(name) for name in LOGICAL_OUTCOME_KEYS
    )


def upsert_row(existing_rows: Sequence[dict], new_row: dict) -> UpsertResult:
    """Upsert one row into the rows of its case (the only rows it can land on, §6.1).

    Cost is O(rows of the case): the store hands over one case, never the whole ledger.
    """
    if not is_terminal(new_row):
        return UpsertResult(
            "skipped", dict(new_row), None, list(existing_rows), SKIP_REASON_NON_TERMINAL
        )
    rows = list(existing_rows)
    run_id = new_row.get("run_id")
    for index, stored in enumerate(rows):
        if run_id and stored.get("run_id") == run_id:
            merged, action = _replace(stored, new_row)
            rows[index] = merged
            return UpsertResult(action, merged, stored.get("run_id"), sort_rows(rows))
    key = logical_key(new_row)
    if key is not None:
        for index, stored in enumerate(rows):
            if _same_logical_run(stored, new_row, key):
                filled = _backfill(stored, new_row)
                rows[index] = filled
                return UpsertResult("backfilled", filled, stored.get("run_id"), sort_rows(rows))
    appended = dict(new_row)
    rows.append(appended)
    return UpsertResult("appended", appended, None, sort_rows(rows))


def _replace(stored: Mapping[str, Any], new_row: Mapping[str, Any]) -> tuple[dict, str]:
    merged = dict(new_row)
    recorded = earlier_timestamp(stored.get("recorded_at"), new_row.get("recorded_at"))
    if recorded:
        merged["recorded_at"] = recorded
    if is_archived(stored) and "archive_state" not in new_row:
        for key in ARCHIVE_FIELDS:
            if key in stored:
                merged[key] = stored[key]
        return merged, "archived_kept"
    return merged, "replaced"


def _backfill(stored: Mapping[str, Any], new_row: Mapping[str, Any]) -> dict:
    filled = dict(stored)
    for key in BACKFILL_FIELDS:
        if _blank(filled.get(key)) and not _blank(new_row.get(key)):
            filled[key] = new_row[key]
    if new_row.get("last_upserted_at"):
        filled["last_upserted_at"] = new_row["last_upserted_at"]
    return filled


# ---------------------------------------------------------------------------------------------
# Loading a document's rows (§6.4, the row part used by merge and aggregate sources)
# ---------------------------------------------------------------------------------------------


def document_rows(document: Any) -> list[dict]:
    """Rows of a loaded ledger document as they are read, de-duplicated by ``run_id`` (last
    wins): a row benchledger wrote (it carries ``rules_version``) is normalised by our rules,
    any other row is read as loopx 0.4.8 reads it (``ledger.loopx_reading``), exactly as an
    imported ledger's rows are."""
    if not isinstance(document, Mapping):
        raise InputError("benchmark run ledger must be a JSON object")
    if document.get("schema_version") != LEDGER_SCHEMA:
        raise InputError(f"benchmark run ledger must use schema_version={LEDGER_SCHEMA}")
    by_key: dict[str, dict] = {}
    benchmarks = document.get("benchmarks")
    for benchmark_key, node in (benchmarks if isinstance(benchmarks, Mapping) else {}).items():
        cases = node.get("cases") if isinstance(node, Mapping) else None
        for case_key, case in (cases if isinstance(cases, Mapping) else {}).items():
            runs = case.get("runs") if isinstance(case, Mapping) else None
            for run in runs if isinstance(runs, list) else []:
                if isinstance(run, Mapping):
                    row = _read_document_row(run, str(benchmark_key), str(case_key))
                    key = row.get("run_id") or json.dumps(row, sort_keys=True, ensure_ascii=False)
                    by_key.pop(key, None)
                    by_key[key] = row
    return list(by_key.values())


def _read_document_row(run: Mapping[str, Any], benchmark_key: str, case_key: str) -> dict:
    if not run.get("rules_version"):
        return read_loopx_row(run, benchmark_key=benchmark_key, case_key=case_key)
    clean, _ = public_json(dict(run))  # another ledger's rows: filtered like ours
    return normalize_row(clean, benchmark_key=join_public("", benchmark_key))


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

    def classify(self, row: Mapping[str, Any]) -> str | None:
        """'kept', 'match' or None — keep patterns are checked first, across all scopes."""
        if row.get("benchmark_id") != self.benchmark_id:
            return None
        group = str(row.get("run_group_id") or "")
        if any(pattern in group for pattern in self.keep_run_group_contains):
            return "kept"
        if self.case_ids and row.get("case_id") not in self.case_ids:
            return None
        if self.arm_ids and row.get("arm_id") not in self.arm_ids:
            return None
        if self.run_group_contains and not any(p in group for p in self.run_group_contains):
            return None
        return "match"


def _clean_values(values: Iterable[str] | None) -> list[str]:
    return [str(value) for value in values or () if str(value).strip()]


def _validated_selector(
    benchmark_id: str,
    reason: str,
    case_ids: Iterable[str] | None,
    arm_ids: Iterable[str] | None,
    run_group_contains: Iterable[str] | None,
    keep_run_group_contains: Iterable[str] | None,
    all_matching: bool,
    extra_filter: bool = False,
) -> tuple[_Selector, str]:
    if not str(benchmark_id or "").strip():
        raise InputError("benchmark_id is required")
    if not str(reason or "").strip():
        raise InputError("archive reason is required")
    reason_text = " ".join(str(reason).split())
    if not is_public_safe(reason_text):
        raise InputError("--reason is not public-safe")
    cases, arms = _clean_values(case_ids), _clean_values(arm_ids)
    groups, keeps = _clean_values(run_group_contains), _clean_values(keep_run_group_contains)
    if not (cases or arms or groups or all_matching or extra_filter):
        raise InputError("provide a run/case/arm filter, or pass --archive-all-matching-benchmark")
    selector = _Selector(
        str(benchmark_id).strip(), frozenset(cases), frozenset(arms), tuple(groups), tuple(keeps)
    )
    return selector, ledger_text(reason_text, 220) or reason_text[:220]


def default_archive_batch_id(
    benchmark_id: str,
    reason: str,
    case_ids: Iterable[str] = (),
    arm_ids: Iterable[str] = (),
    run_group_contains: Iterable[str] = (),
    keep_run_group_contains: Iterable[str] = (),
) -> str:
    """Deterministic batch id (gotcha #6): the same request always names the same batch."""
    parts = [
        benchmark_id,
        reason,
        ",".join(sorted(case_ids)),
        ",".join(sorted(arm_ids)),
        ",".join(sorted(run_group_contains)),
        ",".join(sorted(keep_run_group_contains)),
    ]
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
    )
    batch_id = ledger_text(archive_batch_id, 120) or default_archive_batch_id(
        selector.benchmark_id,
        reason_text,
        selector.case_ids,
        selector.arm_ids,
        selector.run_group_contains,
        selector.keep_run_group_contains,
    )
    out: list[dict] = []
    changed: list[str] = []
    matched: list[dict] = []
    counts = {"kept": 0, "already": 0}
    for row in rows:
        verdict = selector.classify(row)
        if verdict == "kept":
            counts["kept"] += 1
        elif verdict == "match":
            matched.append(row)
            if is_archived(row):
                counts["already"] += 1
            else:
                row = {
                    **row,
                    "archive_state": "archived",
                    "archive_reason": reason_text,
                    "archive_batch_id": batch_id,
                    "archived_at": now,
                }
                changed.append(str(row.get("run_id")))
        out.append(row)
    changed_ids = set(changed)
    newly = sorted((row for row in out if str(row.get("run_id")) in changed_ids), key=_ledger_order)
    payload = {
        "schema_version": ARCHIVE_SCHEMA,
        "archive_batch_id": batch_id,
        "benchmark_id": selector.benchmark_id,
        "reason": reason_text,
        "matched_run_count": len(matched),
        "newly_archived_run_count": len(changed),
        "already_archived_run_count": counts["already"],
        "kept_run_count": counts["kept"],
        "archived_samples": [_sample(row) for row in newly[:MAX_ARCHIVE_SAMPLES]],
        "truncated": len(newly) > MAX_ARCHIVE_SAMPLES,
    }
    return ArchiveResult(out, changed, payload)


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
    )
    out: list[dict] = []
    changed: list[str] = []
    matched: list[dict] = []
    counts = {"kept": 0, "active": 0}
    for row in rows:
        verdict = selector.classify(row)
        if verdict == "match" and archive_batch_id:
            if row.get("archive_batch_id") != archive_batch_id:
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


# ---------------------------------------------------------------------------------------------
# §10 merge
# ---------------------------------------------------------------------------------------------

MERGE_SCHEMA = "benchmark_run_ledger_merge_v0"


@dataclass
class MergeResult:
    """Target rows after the merge, the per-upsert outcomes, and the ``merge`` statistics."""

    rows: list[dict]
    outcomes: list[UpsertResult] = field(default_factory=list)
    payload: dict = field(default_factory=dict)


class _CaseIndex:
    """Rows bucketed by (benchmark, case) with a run-id index, so each upsert sees one case."""

    def __init__(self, rows: Iterable[dict]) -> None:
        self.buckets: dict[tuple[str, str], list[dict]] = {}
        self.where: dict[str, tuple[str, str]] = {}
        for row in rows:
            key = (str(row.get("benchmark_id") or ""), str(row.get("case_id") or ""))
            self.buckets.setdefault(key, []).append(row)
            if row.get("run_id"):
                self.where[str(row["run_id"])] = key

    def upsert(self, row: dict) -> UpsertResult:
        key = (str(row.get("benchmark_id") or ""), str(row.get("case_id") or ""))
        case_rows = self.buckets.get(key, [])
        previous = self.where.get(str(row.get("run_id") or ""))
        if previous is not None and previous != key:
            moved = [r for r in self.buckets[previous] if r.get("run_id") == row.get("run_id")]
            self.buckets[previous] = [
                r for r in self.buckets[previous] if r.get("run_id") != row.get("run_id")
            ]
            case_rows = [*case_rows, *moved]
        result = upsert_row(case_rows, row)
        if result.updated:
            self.buckets[key] = result.rows
            if result.row.get("run_id"):
                self.where[str(result.row["run_id"])] = key
        return result

    def rows(self) -> list[dict]:
        return [row for bucket in self.buckets.values() for row in bucket]


def merge_ledgers(
    target_rows: Sequence[dict],
    source_docs: Sequence[Any],
    *,
    benchmark_ids: Iterable[str] | None = None,
    run_group_contains: Iterable[str] | None = None,
    missing_source_count: int = 0,
    self_source_skipped: int = 0,
) -> MergeResult:
    """Upsert every run of every source ledger into the target, in the order given (§10).

    ``source_docs`` are loaded documents; resolving paths and globs, counting missing files and
    skipping the target itself are the caller's file-system work (passed in as counts).
    """
    wanted = set(_clean_values(benchmark_ids))
    groups = _clean_values(run_group_contains)
    index = _CaseIndex(target_rows)
    known_ids = set(index.where)
    known_signatures = {drift_signature(row) for row in target_rows}
    skipped: dict[str, int] = {}
    outcomes: list[UpsertResult] = []
    stats = {"source_runs": 0, "considered": 0, "new_ids": 0, "new_signatures": 0}
    for document in source_docs:
        for row in document_rows(document):
            stats["source_runs"] += 1
            reason = _merge_skip_reason(row, wanted, groups)
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            stats["considered"] += 1
            if not is_terminal(row):
                skipped["non_terminal"] = skipped.get("non_terminal", 0) + 1
                continue
            outcomes.append(index.upsert(row))
            _count_new(row, known_ids, known_signatures, stats)
    rows = index.rows()
    payload = {
        "schema_version": MERGE_SCHEMA,
        "source_ledger_count": len(source_docs),
        "missing_source_count": missing_source_count,
        "self_source_skipped": self_source_skipped,
        "source_run_count": stats["source_runs"],
        "considered_run_count": stats["considered"],
        "merged_run_count": len(outcomes),
        "new_run_id_count": stats["new_ids"],
        "new_signature_count": stats["new_signatures"],
        "target_run_count": len(rows),
        "skipped_run_count": sum(skipped.values()),
        "skipped_by_reason": dict(sorted(skipped.items())),
        "benchmark_ids": sorted(wanted),
        "run_group_contains": groups,
        "source_paths_recorded": False,
    }
    return MergeResult(rows, outcomes, payload)


def _merge_skip_reason(row: Mapping[str, Any], wanted: set[str], groups: list[str]) -> str | None:
    if wanted and row.get("benchmark_id") not in wanted:
        return "benchmark_filter"
    if groups and not any(p in str(row.get("run_group_id") or "") for p in groups):
        return "run_group_filter"
    return None


def _count_new(
    row: Mapping[str, Any], ids: set[str], signatures: set[tuple], stats: dict[str, int]
) -> None:
    run_id = str(row.get("run_id") or "")
    if run_id and run_id not in ids:
        ids.add(run_id)
        stats["new_ids"] += 1
    signature = drift_signature(row)
    if signature not in signatures:
        signatures.add(signature)
        stats["new_signatures"] += 1


# ---------------------------------------------------------------------------------------------
# §11 aggregate
# ---------------------------------------------------------------------------------------------

AGGREGATE_SCHEMA = "benchmark_run_ledger_current_aggregate_v0"
BUCKET_PRECEDENCE = (
    "pass",
    "partial",
    "official_zero",
    "uncountable_official_score",
    "verifier_no_reward",
    "setup_runner_infra",
    "missing",
)
BUCKET_RANK = {name: rank for rank, name in enumerate(reversed(BUCKET_PRECEDENCE))}
STANDARD_CASE_SET_POLICY = (
    "accepted_numeric_official_scores_blocked_uncountable_infra_missing_elsewhere"
)
COUNTABLE_BUCKETS = frozenset({"pass", "partial", "official_zero"})
BLOCKED_BUCKETS = frozenset(
    {"setup_runner_infra", "verifier_no_reward", "uncountable_official_score"}
)
SELECTION_POLICIES = {
    "best": "best",
    "best-of-n": "best",
    "best_of_n": "best",
    "latest_countable": "latest_countable",
    "latest-countable": "latest_countable",
}
_SETUP_ATTEMPT_FLAGS = (
    "case_attempt_countable",
    "solver_attempt_countable",
    "verifier_attempt_countable",
)
_SETUP_CLASS_TOKENS = ("infrastructure", "setup", "preflight", "compose", "docker", "runner")
_SETUP_LABEL_TOKENS = ("infra", "setup", "compose", "docker", "runner")
_PRIVACY_FLAGS = {
    "raw_logs_recorded": False,
    "raw_task_text_recorded": False,
    "absolute_paths_recorded": False,
}
# loopx 0.4.8's case summary fields, then benchledger's additions (arm role, job, mode, rounds,
# next action).
_CASE_BEST_FIELDS = (
    "run_id",
    "recorded_at",
    "benchmark_id",
    "case_id",
    "run_group_id",
    "arm_id",
    "route",
    "artifact_refs",
    "status",
    "score_status",
    "official_score",
    "official_passed",
    "round_reward_count",
    "round_success_observed",
    "max_rounds_budget",
    "app_server_goal_round_semantics",
    "native_goal_session_policy",
    "max_rounds_budget_applies_to",
    "native_goal_initial_turn_budget",
    "native_goal_same_thread_followup_budget",
    "native_goal_independent_attempt_budget",
    "native_goal_fresh_thread_per_independent_attempt",
    "native_goal_official_reward_feedback_forwarded_to_worker",
    "native_goal_verifier_output_forwarded_to_worker",
    "official_feedback_blinded",
    "reward_feedback_forwarded",
    "failure_class",
    "failure_scope",
    "failure_labels",
    "score_failure_attribution",
    "failure_attribution_labels",
    "attempt_lifecycle_phase",
    "attempt_failure_label",
    "attempt_failure_class",
    "runner_return_status",
    "runner_score_recovered_from_verifier_artifact",
    "verifier_reward_artifact_recovery_status",
    "verifier_reward_artifact_recovered",
    "official_result_json_materialized",
    "solution_quality_signals",
    "task_setup_preflight",
    "task_staging",
    "repair_class",
    "repair_priority",
    # benchledger additions
    "arm_role",
    "job_name",
    "mode",
    "official_score_bool_fallback_used",
    "first_success_round",
    "final_round_reward",
    "best_round_reward",
    "next_action",
)
_LANE_SOURCES = (
    "current_countable",
    "backfill_countable",
    "current_noncountable",
    "backfill_noncountable",
    "missing",
)
CURRENT_EVIDENCE_RULE = (
    "a target-lane run is current evidence unless it matches a backfill pattern, or, when "
    "current patterns are given, unless it matches none of them"
)
DUPLICATE_CASE_RULE = (
    "a countable current official score wins; a countable backfill score is used only when "
    "no countable current evidence exists"
)


@dataclass(frozen=True)
class _Judged:
    """One active row with its bucket, so selection never re-derives it."""

    row: dict
    bucket: str
    countable: bool
    reason: str
    score: float | None
    effective_class: str

    def best_key(self) -> tuple:
        score = self.score if self.score is not None else -1.0
        row = self.row
        return (
            BUCKET_RANK[self.bucket],
            score,
            instant(row.get("recorded_at")),
            str(row.get("run_group_id") or ""),
            str(row.get("run_id") or ""),
        )


def effective_failure_class(row: Mapping[str, Any]) -> str:
    """The first meaningful failure text of a row (its class, attribution, attempt class or
    label, first blocker), else its first failure label."""
    for key in (
        "failure_class",
        "score_failure_attribution",
        "attempt_failure_class",
        "attempt_failure_label",
        "first_blocker",
    ):
        value = compact_text(row.get(key), 120)
        if value and value not in ("none", "None", "null"):
            return value
    for label in _failure_labels(row):
        if label not in ("none", "None", "null"):
            return label
    return ""


def _failure_labels(row: Mapping[str, Any]) -> list[str]:
    """``failure_labels`` then ``failure_attribution_labels``: each list's first 16 distinct
    non-empty labels, then de-duplicated across both."""
    out: list[str] = []
    for key in ("failure_labels", "failure_attribution_labels"):
        value = row.get(key)
        distinct: list[str] = []
        for item in value if isinstance(value, list) else []:
            text = compact_text(item, 120)
            if text and text not in distinct:
                distinct.append(text)
            if len(distinct) >= 16:
                break
        out.extend(label for label in distinct if label not in out)
    return out


def _stored_countability(row: dict) -> tuple[bool, str]:
    """Rows normalised by these rules already carry countability (§5.11 recomputes it on every
    load); older rows are recomputed here."""
    countable = row.get("official_score_countable")
    reason = row.get("official_score_countability_reason")
    if row.get("rules_version") == RULES_VERSION and isinstance(countable, bool) and reason:
        return countable, str(reason)
    if not row.get("rules_version"):  # a loopx row: loopx's checks, as its aggregate applies them
        countable, reason, _ = countability(row, loopx_reading=True)
        return countable, reason
    countable, reason, _ = countability(
        row, status=str(row.get("status") or ""), scope=str(row.get("failure_scope") or "")
    )
    return countable, reason


def _loopx_row(row: Mapping[str, Any]) -> bool:
    """A row benchledger did not write (imported from loopx): loopx's bucket rules apply to it,
    the "(new)" ones of §11 only to rows benchledger wrote (they carry ``rules_version``)."""
    return not row.get("rules_version")


def _has_setup_signal(scope: Any, eff: str, labels: list[str]) -> bool:
    """§11's setup signal: a setup scope, or a setup token in the effective class or a label."""
    return (
        scope in ("runner_or_setup", "score_missing")
        or any(token in eff for token in _SETUP_CLASS_TOKENS)
        or any(token in label for label in labels for token in _SETUP_LABEL_TOKENS)
    )


def _no_reward_signal(scope: Any, eff: str, labels: list[str], loopx_row: bool) -> bool:
    """§11 (3): a verifier-reward label or class; scope ``verifier_or_infra`` only for rows
    benchledger wrote (new)."""
    return (
        "verifier_no_reward" in labels
        or "verifier_reward_missing" in labels
        or "reward_missing" in eff
        or "verifier_no_reward" in eff
        or (not loopx_row and scope == "verifier_or_infra")
    )


def judge_row(row: dict) -> _Judged:
    """Bucket of one active run (§11, first match)."""
    loopx_row = _loopx_row(row)
    labels = _failure_labels(row) if loopx_row else labels_of(row)
    effective = effective_failure_class(row)
    eff = effective
    scope = row.get("failure_scope")
    setup_signal = _has_setup_signal(scope, eff, labels)
    countable, reason = _stored_countability(row)
    score = _as_number(row.get("official_score"))
    number = float(score) if score is not None else None

    def judged(bucket: str) -> _Judged:
        return _Judged(row, bucket, countable, reason, number, effective)

    if (
        row.get("official_score_bool_fallback_used") is True
        and setup_signal
        and any(_attempt_flag(row, name) is False for name in _SETUP_ATTEMPT_FLAGS)
    ):
        return judged("setup_runner_infra")
    if number is not None:
        if not countable:
            return judged("uncountable_official_score")
        return judged("pass" if number >= 1 else "partial" if number > 0 else "official_zero")
    if _no_reward_signal(scope, eff, labels, loopx_row):
        return judged("verifier_no_reward")
    return judged("setup_runner_infra" if setup_signal else "missing")


def _pick(candidates: list[_Judged], policy: str) -> _Judged | None:
    if not candidates:
        return None
    if policy == "latest_countable":
        countable = [j for j in candidates if j.bucket in COUNTABLE_BUCKETS]
        if countable:
            return max(countable, key=lambda j: row_sort_key(j.row))
    return max(candidates, key=_Judged.best_key)


def _dedupe(values: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        text = str(value).strip()
        if text:
            seen.setdefault(text, None)
    return list(seen)


def _noncanonical_source(row: Mapping[str, Any]) -> bool:
    """[loopx-specific] best effort: the row's task-setup preflight says the canonical task
    was not present, or the class excludes the task source from formal scoring."""
    preflight = row.get("task_setup_preflight")
    if isinstance(preflight, Mapping) and preflight.get("canonical_task_present") is False:
        return True
    return row.get("failure_class") == "skillsbench_task_source_excluded"


@dataclass(frozen=True)
class TargetLanes:
    """Current/backfill lanes of a target (§11); patterns match case-insensitively."""

    lane_id: str | None = None
    target: tuple[str, ...] = ()
    current: tuple[str, ...] = ()
    backfill: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.target or self.current or self.backfill)

    def lane_of(self, row: Mapping[str, Any]) -> str | None:
        text = " ".join(
            str(row.get(key) or "") for key in ("run_group_id", "run_id", "job_name")
        ).lower()
        in_target = any(p.lower() in text for p in self.target)
        in_current = any(p.lower() in text for p in self.current)
        in_backfill = any(p.lower() in text for p in self.backfill)
        if in_current or (in_target and not in_backfill):
            return "current"
        if in_backfill:
            return "backfill"
        return None


def _pick_lane(
    judged: list[_Judged], lanes: TargetLanes, policy: str
) -> tuple[_Judged | None, str]:
    by_lane: dict[str, list[_Judged]] = {"current": [], "backfill": []}
    for item in judged:
        lane = lanes.lane_of(item.row)
        if lane:
            by_lane[lane].append(item)
    for lane, countable_only, label in (
        ("current", True, "current_countable"),
        ("backfill", True, "backfill_countable"),
        ("current", False, "current_noncountable"),
        ("backfill", False, "backfill_noncountable"),
    ):
        pool = [j for j in by_lane[lane] if not countable_only or j.bucket in COUNTABLE_BUCKETS]
        chosen = _pick(pool, policy)
        if chosen is not None:
            return chosen, label
    return None, "missing"


def _case_summary(judged: _Judged | None, lane_source: str | None) -> dict[str, Any]:
    if judged is None:
        summary: dict[str, Any] = {"bucket": "missing"}
    else:
        summary = {key: judged.row[key] for key in _CASE_BEST_FIELDS if key in judged.row}
        summary.update(
            {
                "bucket": judged.bucket,
                "official_score_countable": judged.countable,
                "official_score_countability_reason": judged.reason,
            }
        )
        if judged.effective_class:
            summary["effective_failure_class"] = judged.effective_class
        if judged.bucket in COUNTABLE_BUCKETS:
            summary["countable_score"] = judged.score
    if lane_source is not None:
        summary["target_lane_source"] = lane_source
    return summary


def aggregate(
    rows: Sequence[dict],
    *,
    benchmark_id: str,
    selection: str = "best",
    canonical_case_ids: Iterable[str] | None = None,
    active_case_ids: Iterable[str] | None = None,
    include_noncanonical_sanity_sources: bool = False,
    lanes: TargetLanes | None = None,
    source_ledger_files: Sequence[str] = (),
) -> dict:
    """One current result per canonical case (§11); nothing is written back anywhere."""
    policy = SELECTION_POLICIES.get(selection)
    if policy is None:
        raise InputError("--selection-policy must be best or latest_countable")
    lanes = lanes or TargetLanes()
    by_case, run_ids = _active_rows_by_case(rows, benchmark_id)
    canonical = _dedupe(canonical_case_ids or ())
    if not canonical:
        canonical = sorted(
            case
            for case, case_rows in by_case.items()
            if include_noncanonical_sanity_sources
            or not all(_noncanonical_source(row) for row in case_rows)
        )
    active = _dedupe(active_case_ids or ())
    case_best: dict[str, dict] = {}
    buckets: dict[str, str] = {}
    lane_counts: dict[str, int] = {}
    for case in canonical:
        judged = [judge_row(row) for row in by_case.get(case, [])]
        lane_source = None
        if lanes.enabled:
            chosen, lane_source = _pick_lane(judged, lanes, policy)
            lane_counts[lane_source] = lane_counts.get(lane_source, 0) + 1
        else:
            chosen = _pick(judged, policy)
        buckets[case] = chosen.bucket if chosen else "missing"
        case_best[case] = _case_summary(chosen, lane_source)
    return _aggregate_payload(
        benchmark_id, canonical, active, buckets, case_best, run_ids, policy, lanes,
        lane_counts, source_ledger_files,
    )  # fmt: skip


def _active_rows_by_case(
    rows: Sequence[dict], benchmark_id: str
) -> tuple[dict[str, list[dict]], set[str]]:
    by_case: dict[str, list[dict]] = {}
    run_ids: set[str] = set()
    for row in rows:
        if row.get("benchmark_id") != benchmark_id or is_archived(row):
            continue
        by_case.setdefault(str(row.get("case_id") or ""), []).append(row)
        if row.get("run_id"):
            run_ids.add(str(row["run_id"]))
    return by_case, run_ids


def _aggregate_payload(
    benchmark_id: str,
    canonical: list[str],
    active: list[str],
    buckets: dict[str, str],
    case_best: dict[str, dict],
    run_ids: set[str],
    policy: str,
    lanes: TargetLanes,
    lane_counts: dict[str, int],
    source_ledger_files: Sequence[str],
) -> dict:
    cases_by_bucket = {
        name: [c for c in canonical if buckets[c] == name] for name in BUCKET_PRECEDENCE
    }
    accepted = [c for c in canonical if buckets[c] in COUNTABLE_BUCKETS]
    missing = cases_by_bucket["missing"]
    blocked = [c for c in canonical if buckets[c] in BLOCKED_BUCKETS]
    active_set = set(active)
    runnable_missing = [c for c in missing if c not in active_set]
    runnable_blocked = [c for c in blocked if c not in active_set]
    runnable = [c for c in canonical if c in set(runnable_missing) | set(runnable_blocked)]
    return {
        "schema_version": AGGREGATE_SCHEMA,
        "benchmark_id": benchmark_id,
        "canonical_total": len(canonical),
        "canonical_covered": len(canonical) - len(missing),
        "countable_score_summary": _score_summary(accepted, cases_by_bucket, case_best),
        "distribution": {name: len(cases_by_bucket[name]) for name in BUCKET_PRECEDENCE},
        "cases_by_bucket": cases_by_bucket,
        "standard_case_sets": {
            "schema_version": "benchmark_run_ledger_standard_case_sets_v0",
            "policy": STANDARD_CASE_SET_POLICY,
            "accepted_case_ids": accepted,
            "missing_case_ids": missing,
            "blocked_uncountable_case_ids": blocked,
            "active_case_ids": active,
            "runnable_missing_case_ids": runnable_missing,
            "runnable_blocked_uncountable_case_ids": runnable_blocked,
            "runnable_case_ids": runnable,
            **_PRIVACY_FLAGS,
            "source_paths_recorded": False,
        },
        "accepted_case_ids": accepted,
        "missing_case_ids": missing,
        "blocked_uncountable_case_ids": blocked,
        "active_case_ids": active,
        "runnable_missing_case_ids": runnable_missing,
        "runnable_blocked_uncountable_case_ids": runnable_blocked,
        "runnable_case_ids": runnable,
        "case_best": case_best,
        "deduped_run_count": len(run_ids),
        "source_ledger_files": len(source_ledger_files),
        "selection_policy": _selection_policy(policy, lanes, lane_counts),
        "rules_version": RULES_VERSION,
    }


def _score_summary(
    accepted: list[str], cases_by_bucket: dict[str, list[str]], case_best: dict[str, dict]
) -> dict:
    scores = [float(case_best[c]["countable_score"]) for c in accepted]
    uncountable = cases_by_bucket["uncountable_official_score"]
    return {
        "schema_version": "benchmark_run_ledger_countable_score_summary_v0",
        "countable_case_count": len(accepted),
        "countable_score_sum": round(sum(scores), 6),
        "countable_score_mean": round(sum(scores) / len(scores), 6) if scores else None,
        "pass_count": len(cases_by_bucket["pass"]),
        "partial_count": len(cases_by_bucket["partial"]),
        "official_zero_count": len(cases_by_bucket["official_zero"]),
        "uncountable_numeric_case_count": len(uncountable),
        "countable_case_ids": accepted,
        "uncountable_numeric_case_ids": uncountable,
    }


_POLICY_RULES = {
    "best": "prefer_countable_official_result_over_missing_or_infra_rows",
    "latest_countable": "latest_countable_official_result",
}
_POLICY_DESCRIPTIONS = {
    "best": (
        "best-of-N: per case the run in the highest bucket wins, then the higher score, then the "
        "later recorded_at; a pass always beats a later failure"
    ),
    "latest_countable": (
        "latest countable: per case the latest run in a countable bucket (pass, partial, "
        "official_zero) wins; cases without one fall back to best-of-N"
    ),
}


def _selection_policy(policy: str, lanes: TargetLanes, lane_counts: dict[str, int]) -> dict:
    rule = _POLICY_RULES[policy]
    if lanes.enabled:
        rule = "target_lane_current_countable_wins_backfill_fills_missing"
    counts = {name: 0 for name in _LANE_SOURCES}
    counts.update(lane_counts)
    return {
        "schema_version": "benchmark_run_ledger_current_selection_policy_v0",
        "selection": policy,
        "rule": rule,
        "description": _POLICY_DESCRIPTIONS[policy],
        "bucket_precedence": list(BUCKET_PRECEDENCE),
        **_PRIVACY_FLAGS,
        "source_paths_recorded": False,
        "target_lane": {
            "enabled": lanes.enabled,
            "lane_id": compact_text(lanes.lane_id, 120),
            "target_run_group_contains": _lane_patterns(lanes.target),
            "current_run_group_contains": _lane_patterns(lanes.current),
            "backfill_run_group_contains": _lane_patterns(lanes.backfill),
            "case_source_counts": counts,
            "current_evidence_rule": CURRENT_EVIDENCE_RULE,
            "duplicate_case_rule": DUPLICATE_CASE_RULE,
        },
    }


def _lane_patterns(patterns: Iterable[str]) -> list[str]:
    return [text for text in (compact_text(p, 120) for p in patterns) if text]


def aggregate_merge_preview(
    merge: MergeResult, unique_source_path_count: int, primary: tuple[int, int] | None = None
) -> dict:
    """The CLI's ``merge_preview`` block. As in loopx, the primary ledger counts as the first
    source: ``primary`` is its (row count, rows of the benchmark), ``None`` when it has none."""
    ledgers, runs, considered = (1, *primary) if primary is not None else (0, 0, 0)
    return {
        "schema_version": "benchmark_run_ledger_aggregate_source_merge_v0",
        "source_ledger_count": ledgers + merge.payload.get("source_ledger_count", 0),
        "source_run_count": runs + merge.payload.get("source_run_count", 0),
        "considered_run_count": considered + merge.payload.get("considered_run_count", 0),
        "source_paths_recorded": False,
        "unique_source_path_count": ledgers + unique_source_path_count,
    }


# ---------------------------------------------------------------------------------------------
# §12 drift check
# ---------------------------------------------------------------------------------------------

DRIFT_SCHEMA = "benchmark_run_ledger_drift_v0"
_RUN_SCHEMA = "benchmark_run_v0"


def resolve_benchmark_run(record: Any) -> dict | None:
    """The ``benchmark_run_v0`` inside a history/index record (benchmark_run_v0.md §2)."""
    if not isinstance(record, Mapping):
        return None
    nested = record.get("benchmark_run")
    if isinstance(nested, Mapping) and nested.get("schema_version") == _RUN_SCHEMA:
        return dict(nested)
    if record.get("schema_version") == _RUN_SCHEMA:
        return dict(record)
    if record.get("schema_version") == "harbor_job_result_reducer_v0":
        return resolve_benchmark_run(record.get("compact_benchmark_run"))
    return None


def _compacted(record: dict) -> dict:
    """History records are stored compacted; re-compact when the shared compactor exists so
    the id matches what an upsert of the same record computes (compaction is idempotent)."""
    try:
        from ledger.record import compact_run  # type: ignore[attr-defined]
    except ImportError:
        return record
    compacted = compact_run(record)
    return compacted if isinstance(compacted, dict) and compacted else record


def _display_ledger_path(ledger_path: str) -> str:
    text = str(ledger_path or "benchmark-run-ledger.json")
    if text.startswith(("/", "~", "\\")) or (len(text) > 2 and text[1] == ":"):
        return "<benchmark-run-ledger.json>"
    return text


def _history_row(record: Mapping[str, Any], run: dict, now: str) -> dict | None:
    generated_at = record.get("generated_at")
    options = {"history_ref": record.get("json_path"), "now": now}
    try:
        row, _ = build_row(run, recorded_at=generated_at or None, **options)
    except InputError:
        try:
            row, _ = build_row(run, **options)
        except InputError:
            return None
    return row


def history_rows(
    history_records: Sequence[Mapping[str, Any]], *, history_limit: int, now: str
) -> list[tuple[Mapping[str, Any], dict | None]]:
    """The newest ``history_limit`` records, each with the ledger row it describes (None when
    it holds no usable run)."""
    out: list[tuple[Mapping[str, Any], dict | None]] = []
    for record in history_records[: max(int(history_limit), 0)]:
        run = resolve_benchmark_run(record)
        out.append((record, _history_row(record, _compacted(run), now) if run else None))
    return out


def drift_check(
    history_records: Sequence[Mapping[str, Any]],
    ledger_rows: Sequence[Mapping[str, Any]],
    *,
    ledger_path: str = "benchmark-run-ledger.json",
    history_limit: int = 500,
    limit: int = 20,
    now: str,
    ledger_schema_version: str = LEDGER_SCHEMA,
    rows: Sequence[tuple[Mapping[str, Any], dict | None]] | None = None,
) -> dict:
    """Is every terminal run of the goal's history also in the ledger? (§12)

    ``history_records`` are index records newest first; the ``history_limit`` newest are read.
    ``rows``: ``history_rows`` of them when the caller already built them (building a row
    compacts the record, the larger part of a check's cost).
    """
    history_limit, limit = max(int(history_limit), 0), max(int(limit), 0)
    if rows is None:
        rows = history_rows(history_records, history_limit=history_limit, now=now)
    ids = {str(row.get("run_id")) for row in ledger_rows if row.get("run_id")}
    # A row without a benchmark id (the bare run-id stubs drift_view passes for untouched
    # cases) can never share a signature with a history row, which always has one.
    signatures = {drift_signature(row) for row in ledger_rows if row.get("benchmark_id")}
    shown_path = _display_ledger_path(ledger_path)
    counts = {"checked": 0, "terminal": 0, "matched": 0, "non_terminal": 0}
    missing: list[dict] = []
    for record, row in rows:
        if row is None:
            continue
        counts["checked"] += 1
        if not is_terminal(row):
            counts["non_terminal"] += 1
            continue
        counts["terminal"] += 1
        if row["run_id"] in ids or drift_signature(row) in signatures:
            counts["matched"] += 1
        else:
            missing.append(_missing_item(row, record.get("generated_at"), shown_path))
    return {
        "schema_version": DRIFT_SCHEMA,
        "ok": True,
        "drift_detected": bool(missing),
        "ledger_schema_version": ledger_schema_version,
        "ledger_run_count": len(ledger_rows),
        "checked_history_run_count": counts["checked"],
        "terminal_history_run_count": counts["terminal"],
        "matched_history_run_count": counts["matched"],
        "non_terminal_skipped_count": counts["non_terminal"],
        "missing_ledger_run_count": len(missing),
        "missing_runs": missing[:limit],
        "truncated": len(missing) > limit,
        "limit": limit,
        "read_boundary": dict(READ_BOUNDARY),
    }


def _quoted(text: str) -> str:
    """Shell-quote real values; leave ``<placeholder>`` tokens readable."""
    return text if text.startswith("<") and text.endswith(">") else shlex.quote(text)


def _missing_item(row: Mapping[str, Any], generated_at: Any, ledger_path: str) -> dict:
    stamp = str(generated_at or row.get("recorded_at") or "")
    command = " ".join(
        [
            "benchledger benchmark run-ledger-upsert",
            "--benchmark-run-json <compact-benchmark-run-v0.json>",
            f"--run-ledger-path {_quoted(ledger_path)}",
            f"--run-group-id {shlex.quote(str(row.get('run_group_id') or ''))}",
            f"--arm-id {shlex.quote(str(row.get('arm_id') or ''))}",
            f"--recorded-at {shlex.quote(stamp)}",
            "--execute",
        ]
    )
    item = {
        "run_id": row.get("run_id"),
        "generated_at": stamp or None,
        "benchmark_id": row.get("benchmark_id"),
        "case_id": row.get("case_id"),
        "arm_id": row.get("arm_id"),
        "mode": row.get("mode"),
        "job_name": row.get("job_name"),
        "score_status": row.get("score_status"),
        "official_score": row.get("official_score"),
        "failure_class": row.get("failure_class"),
        "catch_up_command_template": command,
    }
    return item
