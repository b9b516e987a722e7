"""Failure class and failure scope of a row (docs/formats/ledger_v0.md §5.9-§5.10).

The class keeps loopx's vocabulary (first matching rule wins); the scope is a closed set
computed from the class, so setup failures are never hidden behind ``score_missing`` (§13 #8).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.rules.record.fields import WORKER_MISMATCH_COUNTERS
from benchledger.ledger.rules.row.identity import route_of
from benchledger.ledger.rules.row.values import as_list, as_mapping, as_number, as_str, ledger_text

_STATUS_CLASSES = {
    "cancelled": "run_cancelled",
    "incomplete": "run_incomplete",
    "corrupt": "run_result_corrupt",
    "not_started": "run_not_started",
}
_PRIORITY_LABELS = (
    "codex_model_access_unsupported_for_account",
    "codex_model_access_failure_before_solution_attempt",
    "agent_setup_timeout_before_worker_start",
    "agent_setup_failed_before_worker_start",
    "environment_setup_failed_before_worker",
    "worker_self_validation_official_score_mismatch",
    "worker_validation_scope_ambiguous_official_score_failure",
    "worker_bridge_connected_official_score_failure",
    "verifier_dependency_install_failure",
    "verifier_platform_probe_failure",
    "agent_timeout_before_solution_completion",
)
COMPOSE_CLASSES = {
    "compose_setup_blocked_before_agent_rounds": (
        "skillsbench_compose_setup_blocked_before_agent_rounds"
    ),
    "runner_setup_blocked_before_agent_rounds": (
        "skillsbench_runner_setup_blocked_before_agent_rounds"
    ),
}


def setup_blockers(src: Mapping[str, Any]) -> list[str]:
    for key in ("worker_setup_diagnostic_blockers", "worker_startup_blockers", "setup_blockers"):
        value = src.get(key)
        if isinstance(value, list) and value:
            return [str(item) for item in value]
    return []


def _labels_for_class(src: Mapping[str, Any]) -> list[str]:
    value = src.get("failure_attribution_labels")
    if not isinstance(value, list):
        value = src.get("failure_labels")
    return [str(item) for item in value] if isinstance(value, list) else []


def derive_failure_class(
    src: Mapping[str, Any], *, status: str, score: Any, post_launch: bool
) -> str:
    """First matching class of §5.9 (loopx vocabulary)."""
    if status in _STATUS_CLASSES:
        return _STATUS_CLASSES[status]
    if post_launch:
        marker = as_mapping(src.get("compact_failure_marker"))
        for value in (src.get("compact_failure_class"), marker.get("failure_class")):
            if ledger_text(value):
                return ledger_text(value) or ""
        return ledger_text(src.get("first_blocker")) or "post_launch_compact_result_missing"
    if score is not None and score != 0:
        return "none"
    found = _class_before_labels(src, score)
    if found:
        return found
    labels = _labels_for_class(src)
    for label in _PRIORITY_LABELS:
        if label in labels:
            return label
    attribution = ledger_text(src.get("score_failure_attribution"))
    if attribution and attribution != "none":
        return attribution
    from_trials = _class_from_trials(src)
    if from_trials:
        return from_trials
    blocker = ledger_text(src.get("first_blocker"))
    if blocker:
        return blocker
    return "score_failure_unattributed" if score is not None else "score_missing"


def _class_before_labels(src: Mapping[str, Any], score: Any) -> str | None:
    """Steps 3-5 of §5.9: SkillsBench pre-agent setup, worker blockers, bridge verifier."""
    if score is None and (
        src.get("mode") == "skillsbench_codex_app_server_goal_baseline"
        or route_of(src) == "codex-app-server-goal-baseline"
    ):
        diagnostic = as_mapping(src.get("compose_setup_diagnostic"))
        started = diagnostic.get("agent_rounds_started", src.get("agent_rounds_started"))
        mapped = COMPOSE_CLASSES.get(as_str(diagnostic.get("status")))
        if mapped and started is not True:
            return mapped
    for blocker in setup_blockers(src):
        if blocker != "none":
            return ledger_text(blocker)
    labels = _labels_for_class(src)
    if (
        "official_verifier_solution_failure" in labels
        and "worker_bridge_connected_official_score_failure" in labels
        and src.get("worker_bridge_materialization_status") == "verified"
        and all((as_number(src.get(name)) or 0) == 0 for name in WORKER_MISMATCH_COUNTERS)
    ):
        return "official_verifier_solution_failure"
    return None


def _class_from_trials(src: Mapping[str, Any]) -> str | None:
    trials = as_list(src.get("trials"))
    kinds = [
        as_str(as_mapping(trial).get("exception_type")).lower()
        for trial in trials
        if as_str(as_mapping(trial).get("exception_type")) not in ("", "none")
    ]
    if not kinds:
        return None
    if any("setup" in kind and "timeout" in kind for kind in kinds):
        return "agent_setup_timeout_before_worker_start"
    if any("setup" in kind for kind in kinds):
        return "agent_setup_exception_before_solution_attempt"
    if any("timeout" in kind for kind in kinds):
        return "agent_timeout_before_solution_completion"
    return "agent_exception_before_solution_completion"


_PROBE_CLASSES = frozenset(
    {
        "not_applicable_worker_materialization_probe",
        "not_applicable_worker_materialization_probe_no_trial_result",
    }
)
_RUNNER_CLASSES = frozenset(
    {
        "run_cancelled",
        "run_incomplete",
        "run_result_corrupt",
        "run_not_started",
        "stale_active_job_without_trial_result",
        "detached_worker_ended_active_without_trial_result",
        "detached_worker_ended_without_trial_result",
        "post_launch_compact_result_missing",
    }
)
_NO_SCORE_RUNNER_TOKENS = (
    "setup",
    "runner",
    "preflight",
    "docker",
    "compose",
    "environment",
    "model_access",
    "model_provider",
    "install",
    "materializ",
)
_CASE_CLASSES = frozenset(
    {
        "none",
        "official_verifier_solution_failure",
        "official_score_zero_case_failure",
        "model_solution_failure",
        "agent_solution_failure",
        "task_solution_failure",
        "solution_incorrect",
        "agent_timeout_before_solution_completion",
        "agent_exception_before_solution_completion",
        "agent_budget_exhausted_before_solution_completion",
        "agent_idle_timeout_before_solution_completion",
        "agent_refused_task",
    }
)


def derive_failure_scope(failure_class: str, *, passed: Any, has_score: bool) -> str:
    """Closed set of scopes (§5.10); no-score rows are refined by class (gotcha #8)."""
    if passed is True:
        return "passed"
    if failure_class in _PROBE_CLASSES:
        return "startup_surface"
    if failure_class in _RUNNER_CLASSES:
        return "runner_or_setup"
    if not has_score:
        if failure_class.startswith("verifier_"):
            return "verifier_or_infra"
        if any(token in failure_class for token in _NO_SCORE_RUNNER_TOKENS):
            return "runner_or_setup"
        return "score_missing"
    if failure_class == "score_failure_unattributed":
        return "attribution_required"
    if failure_class in _CASE_CLASSES:
        return "case_or_solution"
    if failure_class.startswith("verifier_"):
        return "verifier_or_infra"
    return "runner_or_setup"
