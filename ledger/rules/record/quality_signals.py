"""``solution_quality_signals`` (docs/formats/benchmark_run_v0.md §4.13): a compact outcome class
and
labels computed from the public record only, never from trajectories or logs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PUBLIC_LIMITS = (
    "task_text_not_recorded",
    "trajectory_not_recorded",
    "verifier_output_not_recorded",
)


def _count(block: Any, key: str) -> int:
    value = block.get(key) if isinstance(block, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def solution_quality_signals(record: Mapping[str, Any]) -> dict[str, Any]:
    """§4.13: a compact outcome class and labels computed from the public record only."""
    outcome = _outcome_class(record)
    activity = _worker_activity(record)
    if outcome == "pass":
        rubric_status = "not_applicable_pass"
    elif outcome == "missing_score":
        rubric_status = "score_missing"
    else:
        rubric_status = "not_available_from_compact_public_signals"
    labels = _action_labels(record, outcome, activity["task_facing_activity_observed"])
    if rubric_status == "not_available_from_compact_public_signals":
        labels.append("rubric_miss_labels_unavailable_compact_only")
    signals: dict[str, Any] = {
        "schema_version": "skillsbench_solution_quality_signals_v0",
        "source": "compact_public_signals",
        "outcome_class": outcome,
        "solution_action_labels": labels,
        # ``rubric_miss_labels`` is always [] and compaction never emits [] (§1): omitted.
        "rubric_miss_label_status": rubric_status,
        "worker_activity": activity,
        "public_limits": list(PUBLIC_LIMITS),
    }
    if not labels:
        del signals["solution_action_labels"]
    return signals


def _outcome_class(record: Mapping[str, Any]) -> str:
    task_score = record.get("official_task_score") or {}
    score = task_score.get("value", record.get("official_score"))
    verdict = task_score.get("passed")
    passed = verdict if isinstance(verdict, bool) else (score is not None and score >= 1)
    if score is None:
        return "missing_score"
    if passed:
        return "pass"
    if score == 0:
        return "official_zero"
    if score < 1:
        return "partial_nonpass"
    return "nonpassing_unknown"


def _worker_activity(record: Mapping[str, Any]) -> dict[str, Any]:
    """Whether the worker touched the task, from public counters only (tool calls, bridge)."""
    activity = record.get("agent_activity") or {}
    counters = record.get("interaction_counters") or {}
    bridge = record.get("worker_bridge_outcome") or {}
    tool_calls = activity.get("tool_call_count")
    if tool_calls is None:
        tool_calls = _count(counters, "private_trajectory_tool_call_count")
    operations = _count(counters, "bridge_task_facing_operation_count") or _count(
        bridge, "bridge_task_facing_operation_count"
    )
    successes = _count(counters, "bridge_task_facing_success_count") or _count(
        bridge, "bridge_task_facing_success_count"
    )
    task_facing = (
        tool_calls > 0
        or operations > 0
        or successes > 0
        or record.get("native_goal_worker_connected") is True
    )
    worker_turn = (
        task_facing
        or _count(activity, "prompt_count") > 0
        or _count(activity, "trajectory_steps") > 0
        or _count(record, "worker_loopx_cli_call_total") > 0
    )
    return {
        "task_facing_activity_observed": task_facing,
        "worker_turn_or_bridge_observed": worker_turn,
        "tool_call_count": tool_calls,
        "bridge_task_facing_operation_count": operations,
        "bridge_task_facing_success_count": successes,
    }


def _action_labels(record: Mapping[str, Any], outcome: str, task_facing: bool) -> list[str]:
    labels: list[str] = []
    if outcome == "official_zero":
        labels.append(
            "official_zero_after_public_worker_activity"
            if task_facing
            else "official_zero_without_public_worker_activity"
        )
    elif outcome == "partial_nonpass":
        labels.append("partial_nonpass_official_score")
    elif outcome == "pass":
        labels.append("official_pass")
    elif outcome == "missing_score":
        labels.append("official_score_missing")
    if "partial_trajectory" in (record.get("failure_attribution_labels") or []):
        labels.append("partial_trajectory_public_label_present")
    return labels
