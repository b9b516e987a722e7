"""Score, score status and run status of a row (docs/formats/ledger_v0.md §5.6-§5.8).

The boolean fallback (a verdict without a numeric score) is allowed only where the record says
how the verdict was reached; otherwise a missing score stays missing rather than invented.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.rules.record.vocabulary import RUN_STATUSES
from benchledger.ledger.rules.row.values import (
    as_mapping,
    as_number,
    as_str,
    compact_text,
    first_bool,
    is_number,
    is_pos_int,
    ledger_text,
)

NON_TERMINAL_STATUSES = frozenset({"planned", "fixture", "running"})
COUNTABLE_STATUSES = frozenset({"completed", "recorded"})


def attempt_flag(src: Mapping[str, Any], name: str) -> bool | None:
    """A boolean attempt flag: top level first, then ``attempt_accounting`` (§3 copies)."""
    value = src.get(name)
    if isinstance(value, bool):
        return value
    value = as_mapping(src.get("attempt_accounting")).get(name)
    return value if isinstance(value, bool) else None


def labels_of(src: Mapping[str, Any]) -> list[str]:
    """Row label lists (failure labels, setup blockers), for aggregate bucket signals."""
    items: list[str] = []
    for key in ("failure_labels", "failure_attribution_labels", "setup_blockers"):
        value = src.get(key)
        items.extend(str(item) for item in (value if isinstance(value, list) else []))
    return items


def lower_labels(src: Mapping[str, Any]) -> list[str]:
    """The label set of the fallback guard (§5.6): named texts plus the label lists."""
    labels = [
        compact_text(src.get(key), 180).lower()
        for key in (
            "repair_class",
            "score_failure_attribution",
            "failure_class",
            "first_blocker",
            "runner_return_status",
        )
    ]
    for key in ("failure_labels", "failure_attribution_labels", "setup_blockers"):
        value = src.get(key)
        items = value[:16] if isinstance(value, list) else []
        labels.extend(compact_text(item, 180).lower() for item in items)
    return [label for label in labels if label]


def round_success_observed(src: Mapping[str, Any]) -> bool:
    trace = as_mapping(src.get("round_reward_trace"))
    if trace.get("success_observed") is True:
        return True
    for key in ("first_success_round", "best_round_passed", "final_round_passed"):
        value = trace.get(key)
        if value is True or is_pos_int(value):
            return True
    for item in trace.get("records") or []:
        record = as_mapping(item)
        reward = record.get("reward")
        if record.get("passed") is True or (is_number(reward) and reward >= 1):
            return True
    if src.get("round_success_observed") is True:
        return True
    return is_number(src.get("first_success_round"))


def _score_status_input(src: Mapping[str, Any]) -> str:
    return compact_text(src.get("official_score_status") or src.get("score_status"), 80)


def _ots_verdict_only(src: Mapping[str, Any], ots: Mapping[str, Any]) -> bool:
    """The record has a pass/fail verdict but no numeric score anywhere."""
    return (
        isinstance(ots.get("passed"), bool)
        and as_number(ots.get("value")) is None
        and as_number(src.get("official_score")) is None
    )


def fallback_candidate(src: Mapping[str, Any]) -> bool:
    if _ots_verdict_only(src, as_mapping(src.get("official_task_score"))):
        return True
    return src.get("official_score_bool_fallback_used") is True and isinstance(
        first_bool(src, "official_passed", "passed"), bool
    )


def fallback_allowed(src: Mapping[str, Any]) -> bool:
    """Guard against recording a bool verdict as a score when the attempt did not count."""
    if not fallback_candidate(src):
        return False
    if attempt_flag(src, "official_score_attempt_countable") is False:
        return False
    labels = lower_labels(src)
    if "skillsbench_codex_acp_post_success_finalization" in labels:
        return False
    transport = any(
        "jsonrpc" in label or "transport" in label or "finalization" in label for label in labels
    )
    return not (_score_status_input(src) == "missing" and transport and round_success_observed(src))


def derive_score(src: Mapping[str, Any]) -> tuple[int | float | None, bool | None, bool]:
    """(score, passed, bool_fallback_used) per §5.6."""
    ots = as_mapping(src.get("official_task_score"))
    allowed = fallback_allowed(src)
    value = as_number(ots.get("value"))
    if value is not None:
        passed = ots.get("passed") if isinstance(ots.get("passed"), bool) else value >= 1
        return value, passed, allowed
    top = as_number(src.get("official_score"))
    if top is not None:
        return top, top >= 1, allowed
    if allowed:
        verdict = _fallback_verdict(src, ots)
        if verdict is not None:
            return (1.0 if verdict else 0.0), verdict, True
    return None, None, False


def _fallback_verdict(src: Mapping[str, Any], ots: Mapping[str, Any]) -> bool | None:
    if isinstance(ots.get("passed"), bool):
        return ots["passed"]
    status_ok = _score_status_input(src) in ("completed", "passed", "failed")
    if status_ok and src.get("runner_return_status") != "failed_before_official_result":
        return first_bool(src, "official_passed", "passed")
    return None


def derive_score_status(
    src: Mapping[str, Any], score: Any, passed: bool | None, *, post_launch: bool
) -> str:
    if post_launch:
        return "missing"
    explicit = as_str(src.get("official_score_status"))
    if explicit and explicit != "completed":
        if explicit == "missing" and score is not None and isinstance(passed, bool):
            return "passed" if passed else "failed"
        return ledger_text(explicit, 120) or "missing"
    if score is None:
        return "missing"
    return "passed" if passed else "failed"


# A completed run's status is decided by its score; every other run_status is the row's status.
_PASSTHROUGH_RUN_STATUS = RUN_STATUSES - {"completed"}


def derive_status(src: Mapping[str, Any], score: Any, *, post_launch: bool) -> str:
    if post_launch:
        if src.get("ready_for_compact_failure_marker") is True:
            return "blocked"
        if src.get("job_active_without_trial_result") is True:
            return "running"
        return "recorded"
    run_status = src.get("run_status")
    if run_status in _PASSTHROUGH_RUN_STATUS:
        return run_status
    running = as_number(as_mapping(src.get("progress")).get("n_running_trials"))
    if running is not None and running > 0:
        return "running"
    if score is not None or as_str(src.get("runner_return_status")):
        return "completed"
    return "recorded"


def is_terminal(row: Mapping[str, Any]) -> bool:
    """Planned, fixture and running rows never enter the public ledger (§5.8, §6.2)."""
    return row.get("status") not in NON_TERMINAL_STATUSES
