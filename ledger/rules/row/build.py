"""Building a ledger row from a compact record, and normalising a stored row
(docs/formats/ledger_v0.md
§3-§5, §6.4).

Every rule that decides a row is versioned by ``RULES_VERSION``: an upserted row carries the
rule set that decided it, so replaying events never re-derives history with newer rules. The
input is an already-compacted ``benchmark_run_v0`` record (``ledger.rules.record.compaction``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.safety import is_public_safe
from benchledger.ledger.rules.record.rounds import round_fields
from benchledger.ledger.rules.row.archive_state import ARCHIVE_FIELDS
from benchledger.ledger.rules.row.copies import copied_fields
from benchledger.ledger.rules.row.countability import COUNTABILITY_FIELDS, countability_fields
from benchledger.ledger.rules.row.failure_class import derive_failure_class, derive_failure_scope
from benchledger.ledger.rules.row.identity import (
    content_identity_key,
    derive_arm_role,
    derive_benchmark_id,
    derive_case_ids,
    derive_run_id,
    parse_terminal_bench_case,
    renormalise_arm,
    resolve_arm,
)
from benchledger.ledger.rules.row.refs import artifact_refs, recheck_refs
from benchledger.ledger.rules.row.repair import REPAIR_FIELDS, repair_fields
from benchledger.ledger.rules.row.scoring import derive_score, derive_score_status, derive_status
from benchledger.ledger.rules.row.timestamps import utc_timestamp
from benchledger.ledger.rules.row.values import (
    as_number,
    as_str,
    compact_text,
    drop_empty,
    ledger_text,
)

RULES_VERSION = "benchledger-ledger-rules-1"
POST_LAUNCH_SCHEMA = "terminal_bench_post_launch_materialization_v0"
SKIP_REASON_NON_TERMINAL = "benchmark_run_not_terminal_for_public_ledger"
MAX_ROW_WARNINGS = 8


def _checked_identity_text(value: Any, limit: int, flag: str) -> str | None:
    """Identity inputs are refused (not dropped) when unsafe: silently changing them moves ids."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = " ".join(str(value).split())
    if not is_public_safe(text):
        raise InputError(f"{flag} is not public-safe")
    return ledger_text(text, limit)


def build_row(
    record: dict,
    *,
    run_group_id: str | None = None,
    arm_id: str | None = None,
    arm_role: str | None = None,
    run_key: str | None = None,
    notes: str | None = None,
    recorded_at: str | None = None,
    artifact_ref: str | None = None,
    result_ref: str | None = None,
    compact_artifact_ref: str | None = None,
    history_ref: str | None = None,
    now: str,
    ref_root: str | Path | None = None,
    runtime_root: str | Path | None = None,
) -> tuple[dict, list[str]]:
    """One ledger row from one compact record plus the command's options (§4-§5).

    ``ref_root`` is the project root refs must lie in (§5.13); without it, only relative refs
    are kept (checked against the directory policy as they are).
    """
    post_launch = record.get("schema_version") == POST_LAUNCH_SCHEMA
    group = _checked_identity_text(run_group_id, 160, "--run-group-id")
    explicit_arm = _checked_identity_text(arm_id, 120, "--arm-id")
    explicit_key = _checked_identity_text(run_key, 200, "--run-key")
    if arm_role is not None and arm_role not in ("baseline", "treatment", "other"):
        raise InputError("--arm-role must be one of baseline, treatment, other")
    warnings: list[str] = []
    note_text = ledger_text(notes, 220) if notes else None
    if notes and not note_text and " ".join(str(notes).split()):
        warnings.append("note_dropped_public_safety")
    row = _identity_part(record, group, explicit_arm, arm_role, explicit_key, post_launch, warnings)
    row.update(_outcome_part(record, row, post_launch))
    flags = score_flags(row.get("official_score"))
    if flags:
        row["score_flags"] = flags
        warnings.append("official_score_out_of_range")
    row["recorded_at"] = utc_timestamp(recorded_at) if recorded_at else now
    row["last_upserted_at"] = now
    row["notes"] = note_text
    row["artifact_refs"] = (
        artifact_refs(
            artifact_ref=artifact_ref,
            result_ref=result_ref,
            compact_artifact_ref=compact_artifact_ref,
            history_ref=history_ref,
            ref_root=ref_root,
            runtime_root=runtime_root,
        )
        or None
    )
    row["warnings"] = warnings[:MAX_ROW_WARNINGS]
    row["rules_version"] = RULES_VERSION
    return drop_empty(row), list(warnings)


def score_flags(score: Any) -> list[str] | None:
    """``["out_of_range"]`` for a score outside 0..1, the scale every score rule here reads
    (pass = score >= 1). Such a score is kept as the runner reported it, never clamped, but a
    reader of the row must be able to see that it is not a fraction."""
    if isinstance(score, int | float) and not isinstance(score, bool):
        if not 0.0 <= score <= 1.0:
            return ["out_of_range"]
    return None


def row_run_id(record: dict, *, run_group_id: str | None = None, arm_id: str | None = None) -> str:
    """The ``run_id`` ``build_row`` gives ``record`` with these options (§5.15), without
    deciding the rest of the row. Why: ``benchmark run`` without ``--update-run-ledger`` needs
    only the ids (its rollout records carry them), and building the whole rows for them was
    ~1 s of a 10,000-record dry run (bench/inspect_ingest.py)."""
    group = _checked_identity_text(run_group_id, 160, "--run-group-id")
    explicit_arm = _checked_identity_text(arm_id, 120, "--arm-id")
    post_launch = record.get("schema_version") == POST_LAUNCH_SCHEMA
    return _run_identity(record, group, explicit_arm, None, post_launch)["run_id"]


def _run_identity(
    record: Mapping[str, Any],
    group: str | None,
    explicit_arm: str | None,
    explicit_key: str | None,
    post_launch: bool,
) -> dict[str, Any]:
    """What the run id is derived from (§5.15), and the id."""
    benchmark_id = derive_benchmark_id(record, post_launch=post_launch)
    case_ids = derive_case_ids(record, benchmark_id)
    arm, arm_source, arm_warnings = resolve_arm(record, explicit_arm)
    group = (
        group
        or ledger_text(record.get("run_group_id"), 160)
        or ledger_text(record.get("job_name"), 160)
    )
    record_key = ledger_text(record.get("run_key"), 200)
    identity_key = explicit_key or record_key or content_identity_key(record)
    job_name = ledger_text(record.get("job_name"), 160) or ""
    run_id = derive_run_id(
        benchmark_id=benchmark_id,
        case_id=case_ids[0],
        arm_id=arm,
        run_group_id=group or "",
        job_name=job_name,
        identity_key=identity_key,
    )
    return {
        "run_id": run_id,
        "benchmark_id": benchmark_id,
        "case_ids": case_ids,
        "group": group,
        "arm": arm,
        "arm_source": arm_source,
        "arm_warnings": arm_warnings,
        "record_key": record_key,
    }


def _identity_part(
    record: Mapping[str, Any],
    group: str | None,
    explicit_arm: str | None,
    explicit_role: str | None,
    explicit_key: str | None,
    post_launch: bool,
    warnings: list[str],
) -> dict[str, Any]:
    identity = _run_identity(record, group, explicit_arm, explicit_key, post_launch)
    arm, arm_warnings = identity["arm"], identity["arm_warnings"]
    warnings.extend(arm_warnings)
    role = derive_arm_role(record, arm, explicit_role)
    if arm_warnings and not explicit_role:
        role = "other"
    run_id, case_ids = identity["run_id"], identity["case_ids"]
    return {
        "run_id": run_id,
        "benchmark_id": identity["benchmark_id"],
        "case_id": case_ids[0],
        "case_ids": case_ids,
        "run_group_id": identity["group"] or run_id,
        "arm_id": arm,
        "arm_source": identity["arm_source"],
        "arm_role": role,
        "run_key": explicit_key or identity["record_key"],
        **copied_fields(record, post_launch=post_launch),
    }


def _outcome_part(
    record: Mapping[str, Any], row: Mapping[str, Any], post_launch: bool
) -> dict[str, Any]:
    # The row's fields over the record's, as one dict: what ``ChainMap(row, record)`` reads,
    # without its Python-level lookup on every read (the rules below read ~100 keys per row).
    src = {**record, **row}
    score, passed, fallback_used = derive_score(src)
    if post_launch:
        score, passed, fallback_used = None, None, False
    status = derive_status(record, score, post_launch=post_launch)
    score_status = derive_score_status(record, score, passed, post_launch=post_launch)
    failure_class = derive_failure_class(src, status=status, score=score, post_launch=post_launch)
    scope = derive_failure_scope(failure_class, passed=passed, has_score=score is not None)
    out: dict[str, Any] = {
        "status": status,
        "score_status": score_status,
        "official_score": score,
        "official_passed": passed,
        "official_score_bool_fallback_used": True if fallback_used else None,
        "failure_class": failure_class,
        "failure_scope": scope,
    }
    out.update(round_fields(record))
    out.update(repair_fields(failure_class, scope, {**src, **out}))
    out.update(countability_fields({**src, **out}, status=status, scope=scope))
    return out


def normalize_row(row: dict, *, benchmark_key: str | None = None) -> dict:
    """Per-row part of §6.4: re-derive what depends on rules, keep what was decided."""
    out = dict(row)
    if not as_str(out.get("benchmark_id")) and benchmark_key:
        out["benchmark_id"] = benchmark_key
    _renormalised_case(out)
    renormalise_arm(out)
    if out.get("arm_role") not in ("baseline", "treatment", "other"):
        out["arm_role"] = derive_arm_role({**out, "arm_role": None}, as_str(out.get("arm_id")))
    has_score = as_number(out.get("official_score")) is not None
    failure_class = as_str(out.get("failure_class")) or (
        "score_missing" if not has_score else "none"
    )
    out["failure_class"] = failure_class
    scope = derive_failure_scope(
        failure_class, passed=out.get("official_passed"), has_score=has_score
    )
    out["failure_scope"] = scope
    _renormalised_repair(out, failure_class, scope)
    for key in COUNTABILITY_FIELDS:
        out.pop(key, None)
    out.update(countability_fields(out, status=as_str(out.get("status")), scope=scope))
    if out.get("archive_state") != "archived":
        for key in ARCHIVE_FIELDS:
            out.pop(key, None)
    refs = recheck_refs(out.get("artifact_refs"))
    out["artifact_refs"] = refs or None
    out["rules_version"] = RULES_VERSION
    return drop_empty(out)


def _renormalised_case(row: dict[str, Any]) -> None:
    case_id = as_str(row.get("case_id"))
    if case_id and case_id != "unknown-case" and not case_id.startswith("terminal_bench_"):
        return
    parsed = parse_terminal_bench_case(row.get("job_name"), as_str(row.get("benchmark_id")))
    if not parsed:
        if not case_id:
            row["case_id"] = "unknown-case"
            row["case_ids"] = ["unknown-case"]
        return
    rest = [item for item in row.get("case_ids") or [] if item not in (parsed, case_id)]
    row["case_id"] = parsed
    row["case_ids"] = [parsed, *rest]


def _renormalised_repair(row: dict[str, Any], failure_class: str, scope: str) -> None:
    """Recompute the route; keep stored next-action wording when the class did not change
    (wording is not part of the contract, and rewriting it would churn every imported row)."""
    stored_class = row.get("repair_class")
    stored_action = row.get("next_action")
    for key in REPAIR_FIELDS:
        row.pop(key, None)
    fields = repair_fields(failure_class, scope, row)
    if fields and fields["repair_class"] == stored_class and as_str(stored_action):
        fields["next_action"] = stored_action
    row.update(fields)


# The fields of a row's signature, each with the length loopx 0.4.8 cuts it to.
_SIGNATURE_FIELDS = (
    ("benchmark_id", 120),
    ("case_id", 160),
    ("arm_id", 120),
    ("mode", 120),
    ("job_name", 160),
    ("score_status", 80),
    ("official_score", 80),
    ("failure_class", 120),
)


def drift_signature(row: Mapping[str, Any]) -> tuple[str, ...]:
    """[loopx-specific] Logical identity used by the drift check (§12) and counted by merge's
    ``new_signature_count``: run group and refs left out on purpose. Each value is read as
    loopx reads it (``compact_text``), so a score stored as ``0`` and one stored as ``0.0`` are
    two signatures, as they are to loopx (a counterexample the differential suite found)."""
    return tuple(compact_text(row.get(key), limit) for key, limit in _SIGNATURE_FIELDS)
