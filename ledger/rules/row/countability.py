"""Whether a row's official score counts (docs/formats/ledger_v0.md §5.11), and why not.

A score only counts when the attempt reached the official verifier; runner, setup and preflight
failures are recorded but must not lower a case's pass rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.rules.row.scoring import (
    COUNTABLE_STATUSES,
    _fallback_verdict,
    _ots_verdict_only,
    _score_status_input,
    fallback_allowed,
)
from benchledger.ledger.rules.row.values import (
    as_mapping,
    as_number,
    as_str,
    compact_text,
    is_pos_int,
)

COUNTABILITY_FIELDS = (
    "official_score_countable",
    "official_score_countability_reason",
    "countable_score",
)


_NOT_COUNTABLE_PHASES = frozenset({"not_started", "runner_accepted_args"})
_ATTEMPT_CLASS_TOKENS = ("runner", "setup", "preflight", "docker", "compose")
_UNCOUNTABLE_TEXT_KEYS = (
    "score_failure_attribution",
    "failure_class",
    "attempt_failure_label",
    "attempt_failure_class",
    "first_blocker",
    "runner_return_status",
)
_COUNTABLE_SCORE_STATUSES = frozenset({"completed", "passed", "failed"})


def _score_float(value: Any) -> float | None:
    """A score as the countability checks read it: numbers and numeric strings, as float."""
    number = as_number(value)
    return None if number is None else float(number)


def countability(
    src: Mapping[str, Any],
    *,
    status: str | None = None,
    scope: str | None = None,
    loopx_reading: bool = False,
) -> tuple[bool, str, float | None]:
    """(countable, reason, score) — the reason is the first failed check of §5.11.

    ``loopx_reading``: the checks exactly as loopx 0.4.8 applies them on load, without
    benchledger's two additions (the run-status gate and the partial-coverage reason).
    ``scope`` overrides the row's stored ``failure_scope`` (rows being built have none yet).
    """
    if scope is not None:
        src = {**src, "failure_scope": scope}
    if not loopx_reading and (status if status is not None else as_str(src.get("status"))) not in (
        COUNTABLE_STATUSES
    ):
        return False, "run_not_completed", None
    ots = as_mapping(src.get("official_task_score"))
    allowed = fallback_allowed(src)
    score = _score_float(src.get("official_score"))
    if score is None:
        score = _score_float(ots.get("value"))
    if score is None and allowed:
        verdict = _fallback_verdict(src, ots)
        score = None if verdict is None else (1.0 if verdict else 0.0)
    if score is None:
        return False, "score_missing", None
    if (_ots_verdict_only(src, ots) or src.get("official_score_bool_fallback_used") is True) and (
        not allowed
    ):
        return False, "official_score_bool_fallback_not_allowed", None
    completed_pass = _completed_task_pass(src, score, ots)
    if not completed_pass and _attempt_not_countable(src, ots, allowed):
        return False, "official_score_attempt_not_countable", None
    score_status = _score_status_input(src)
    if score_status == "missing" and allowed:
        score_status = "failed" if score < 1 else "passed"
    if score_status and score_status not in _COUNTABLE_SCORE_STATUSES:
        return False, "official_score_status_not_countable", None
    if not completed_pass and _mentions_uncountable(src):
        return False, "uncountable_attribution", None
    if completed_pass:
        return True, "countable_completed_task_attempt_pass", score
    if not loopx_reading and _partial_attempt_coverage(src):
        return True, "countable_partial_attempt_coverage", score
    return True, "countable_official_score", score


def _completed_task_pass(src: Mapping[str, Any], score: float, ots: Mapping[str, Any]) -> bool:
    activity = as_mapping(as_mapping(src.get("solution_quality_signals")).get("worker_activity"))
    return (
        _score_status_input(src) in ("completed", "passed")
        and score >= 1
        and (src.get("official_passed") is True or ots.get("passed") is True)
        and activity.get("task_facing_activity_observed") is True
    )


def _attempt_not_countable(src: Mapping[str, Any], ots: Mapping[str, Any], allowed: bool) -> bool:
    if (
        compact_text(ots.get("kind"), 120) == "skillsbench_verifier_reward_missing"
        and as_number(ots.get("value")) is None
    ):
        return True
    accounting = as_mapping(src.get("attempt_accounting"))
    flag = src.get("official_score_attempt_countable")
    if flag is None:
        flag = accounting.get("official_score_attempt_countable")
    if flag is False and not allowed:
        return True
    phase = compact_text(
        src.get("attempt_lifecycle_phase") or accounting.get("lifecycle_phase"), 120
    )
    if flag is True and phase == "verifier_scored":
        return False
    scope = compact_text(src.get("failure_scope"), 120)
    if scope == "verifier_or_infra":
        return True
    if scope != "runner_or_setup" or phase not in _NOT_COUNTABLE_PHASES:
        return False
    attempt_class = compact_text(
        src.get("score_failure_attribution")
        or src.get("failure_class")
        or accounting.get("failure_class")
        or accounting.get("failure_label"),
        180,
    ).lower()
    return any(token in attempt_class for token in _ATTEMPT_CLASS_TOKENS)


def _mentions_uncountable(src: Mapping[str, Any]) -> bool:
    accounting = as_mapping(src.get("attempt_accounting"))
    texts = [compact_text(src.get(key), 180) for key in _UNCOUNTABLE_TEXT_KEYS]
    for key in ("failure_labels", "failure_attribution_labels", "setup_blockers"):
        texts += _compact_items(src.get(key), 16)
    texts += [compact_text(accounting.get(key), 180) for key in ("failure_label", "failure_class")]
    return any("uncountable" in text.lower() for text in texts)


def _compact_items(value: Any, max_items: int) -> list[str]:
    """The first ``max_items`` non-empty compacted items of a list (loopx's label reading)."""
    out: list[str] = []
    for item in value if isinstance(value, list) else []:
        text = compact_text(item)
        if text:
            out.append(text)
        if len(out) >= max_items:
            break
    return out


def _partial_attempt_coverage(src: Mapping[str, Any]) -> bool:
    aggregation = as_mapping(src.get("score_aggregation"))
    scored = src.get("scored_attempt_count", aggregation.get("scored_attempt_count"))
    unscored = src.get("unscored_attempt_count", aggregation.get("unscored_attempt_count"))
    return is_pos_int(scored) and is_pos_int(unscored)


def countability_fields(src: Mapping[str, Any], *, status: str, scope: str) -> dict[str, Any]:
    countable, reason, score = countability(src, status=status, scope=scope)
    fields: dict[str, Any] = {
        "official_score_countable": countable,
        "official_score_countability_reason": reason,
    }
    if countable:
        fields["countable_score"] = score
    return fields
