"""BenchFlow 0.7.11 result trees, scoring one attempt: its reward, labels, warnings, timing and
usage, from the candidate's result (docs/formats/benchflow.md §4, §6).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import SourceError
from benchledger.ledger.sources.base import sha256_bytes
from benchledger.ledger.sources.benchflow.reading import (
    Candidate,
    _Context,
    _count,
    _nonneg_nummap,
    _number,
    _nummap,
    _parse_object,
    _read_bytes,
    _rel,
    _text,
    _when,
    benchflow_verdict,
    error_category,
    primary_reward,
    unscored_reason,
    verifier_error_category,
)

# Attempt attribution labels (§6.3), in priority order.
LABEL_PRIORITY = (
    "environment_setup_failed_before_worker",
    "agent_setup_failed_before_worker_start",
    "model_provider_failure_before_solution_attempt",
    "runner_infrastructure_failure",
    "agent_transport_failure",
    "agent_protocol_failure",
    "verifier_dependency_install_failure",
    "verifier_infrastructure_failure",
    "verifier_timeout_no_reward",
    "verifier_crashed_no_reward",
    "verifier_failed_no_reward",
    "official_verifier_solution_failure",
    "agent_idle_timeout_before_solution_completion",
    "agent_timeout_before_solution_completion",
    "agent_exception_before_solution_completion",
    "skill_export_failure",
    "partial_trajectory",
)
_ERROR_LABELS = {
    "sandbox_setup": "environment_setup_failed_before_worker",
    "install_failure": "agent_setup_failed_before_worker_start",
    "provider_auth": "model_provider_failure_before_solution_attempt",
    "provider_rate_limit": "model_provider_failure_before_solution_attempt",
    "provider_rejected": "model_provider_failure_before_solution_attempt",
    "api_error": "model_provider_failure_before_solution_attempt",
    "suspected_api_error": "model_provider_failure_before_solution_attempt",
    "infra_failure": "runner_infrastructure_failure",
    "pipe_closed": "agent_transport_failure",
    "acp_error": "agent_protocol_failure",
    "idle_timeout": "agent_idle_timeout_before_solution_completion",
    "timeout": "agent_timeout_before_solution_completion",
    "other": "agent_exception_before_solution_completion",
}
_VERIFIER_LABELS = {
    "verifier_dep_install": "verifier_dependency_install_failure",
    "verifier_infra": "verifier_infrastructure_failure",
    "verifier_timeout": "verifier_timeout_no_reward",
    "verifier_failure": "verifier_crashed_no_reward",
    "verifier_other": "verifier_failed_no_reward",
}
_PRE_WORKER_CATEGORIES = {"sandbox_setup", "install_failure"}


# ---------------------------------------------------------------------------------------------
# Attempts (trials)


@dataclass
class _Attempt:
    candidate: Candidate
    trial: dict[str, Any]
    labels: list[str]
    warnings: list[str]
    metrics: dict[str, float]
    timing: dict[str, float]
    wall_time: float | None
    activity: dict[str, int]


def _build_attempt(candidate: Candidate, benchmark_id: str, ctx: _Context) -> _Attempt:
    data = candidate.data or {}
    warnings: list[str] = []
    timing = _attempt_timing(candidate, ctx, warnings)
    reward = primary_reward(data) if candidate.data is not None else None
    trial: dict[str, Any] = {
        "task_id": candidate.task,
        "trial_name": candidate.rollout_name,
        "source": benchmark_id,
        "status": candidate.status,
        "trial_result_present": candidate.data is not None,
        "verifier_reward_file_present": _reward_file_present(candidate.rollout_dir),
    }
    if candidate.data is not None:
        trial.update(_readable_trial_fields(data, reward))
    else:
        trial["runner_verdict"] = candidate.status
    trial["unscored_reason"] = unscored_reason(candidate)
    metrics = _attempt_metrics(data)
    if metrics:
        trial["metrics"] = metrics
    if timing:
        trial["timing"] = timing
    labels = _attempt_labels(data, reward) if candidate.data is not None else []
    _split_labels(trial, labels)
    warnings.extend(_attempt_warnings(data, reward, trial))
    return _Attempt(
        candidate=candidate,
        trial={k: v for k, v in trial.items() if v is not None},
        labels=labels,
        warnings=warnings,
        metrics=metrics,
        timing=timing,
        wall_time=_wall_time(data, timing),
        activity=_activity(data),
    )


def _readable_trial_fields(data: dict[str, Any], reward: float | None) -> dict[str, Any]:
    verdict = benchflow_verdict(data)
    rewards = data.get("rewards")
    return {
        "reward": _nummap(rewards) or None,
        "primary_reward": reward,
        "passed": verdict == "passed",
        "runner_verdict": verdict,
        "error_category": error_category(data),
        "verifier_error_category": verifier_error_category(data),
        "task_digest": _text(data.get("task_digest")),
        "trajectory_present": bool(data.get("trajectory_source")),
        "verifier_reward_present": isinstance(rewards, dict) and bool(_nummap(rewards)),
    }


def _attempt_labels(data: dict[str, Any], reward: float | None) -> list[str]:
    """Labels only for unscored attempts or scored zeros: a scored error is not the story."""
    found: list[str] = []
    if reward is None:
        found.append(_ERROR_LABELS.get(error_category(data) or "", ""))
        found.append(_VERIFIER_LABELS.get(verifier_error_category(data) or "", ""))
    elif reward == 0:
        found.append("official_verifier_solution_failure")
    else:
        return []
    if data.get("export_error"):
        found.append("skill_export_failure")
    if _partial_trajectory(data):
        found.append("partial_trajectory")
    return _ordered_labels(found)


def _split_labels(trial: dict[str, Any], labels: list[str]) -> None:
    verifier = [label for label in labels if label.startswith("verifier_")]
    agent = [label for label in labels if not label.startswith("verifier_")]
    if agent:
        trial["agent_failure_attribution_labels"] = agent
    if verifier:
        trial["verifier_failure_attribution_labels"] = verifier
        trial["verifier_failure_attribution"] = verifier[0]


def _attempt_warnings(data: dict[str, Any], reward: float | None, trial: dict) -> list[str]:
    warnings: list[str] = []
    if reward is not None and (data.get("error") or data.get("error_category")):
        warnings.append("runner_error_after_scored_result")
    if data.get("export_error"):
        warnings.append("export_error_present")
    if reward is None and trial.get("verifier_reward_file_present"):
        warnings.append("reward_file_present_without_verifier_result")
    if trial.get("status") == "result_missing":
        warnings.append("rollout_result_missing")  # stopped before its result; never a score
    if trial.get("unscored_reason") == "non_numeric_reward":
        warnings.append("reward_not_a_number")  # "1.0" or true: not scored, but said so
    if reward is not None and not 0.0 <= reward <= 1.0:
        warnings.append("reward_out_of_range")  # kept as BenchFlow wrote it
    return warnings


def _attempt_timing(candidate: Candidate, ctx: _Context, warnings: list[str]) -> dict[str, float]:
    """Result `timing` first; `timing.json` is still read so a torn file is noticed and hashed."""
    from_file = _read_timing_json(candidate, ctx, warnings)
    from_result = _nonneg_nummap((candidate.data or {}).get("timing"))
    return from_result or from_file


def _read_timing_json(candidate: Candidate, ctx: _Context, warnings: list[str]) -> dict[str, float]:
    path = candidate.rollout_dir / "timing.json"
    rel = _rel(path, ctx.base)
    raw = _read_bytes(path, rel)
    if raw is None:
        return {}
    ctx.files[rel] = sha256_bytes(raw)
    parsed = _parse_object(raw)
    if parsed is None:
        # A rollout without result.json was stopped while writing its files: BenchFlow skips
        # it and so does the strict mode; the attempt says so (issue 31 item 4).
        if ctx.strict and candidate.status != "result_missing":
            raise SourceError(f"BenchFlow timing.json is not a readable JSON object: {rel}")
        warnings.append("timing_json_unreadable")
        return {}
    return _nonneg_nummap(parsed)


def _attempt_metrics(data: dict[str, Any]) -> dict[str, float]:
    """Usage per attempt: `agent_result`, else `final_metrics` (loopx always wrote zeros)."""
    agent_result = data.get("agent_result")
    final = data.get("final_metrics")
    pairs = (
        ("input_tokens", "n_input_tokens", "total_prompt_tokens"),
        ("cache_tokens", "n_cache_read_tokens", "total_cached_tokens"),
        ("output_tokens", "n_output_tokens", "total_completion_tokens"),
        ("cost_usd", "cost_usd", "total_cost_usd"),
    )
    metrics: dict[str, float] = {}
    for key, agent_key, final_key in pairs:
        value = _number(agent_result.get(agent_key)) if isinstance(agent_result, dict) else None
        if value is None and isinstance(final, dict):
            value = _number(final.get(final_key))
        if value is not None:
            metrics[key] = value
    return metrics


def _activity(data: dict[str, Any]) -> dict[str, int]:
    raw_result = data.get("agent_result")
    agent_result = raw_result if isinstance(raw_result, dict) else {}
    summary = data.get("trajectory_summary")
    summary = summary if isinstance(summary, dict) else {}
    values = {
        "tool_call_count": _count(data.get("n_tool_calls"), agent_result.get("n_tool_calls")),
        "trajectory_steps": _count(summary.get("steps")),
        "prompt_count": _count(data.get("n_prompts"), agent_result.get("n_prompts")),
    }
    return {key: value for key, value in values.items() if value is not None}


def _wall_time(data: dict[str, Any], timing: dict[str, float]) -> float | None:
    if "total" in timing:
        return timing["total"]
    started, finished = _when(data.get("started_at")), _when(data.get("finished_at"))
    if started and finished and finished >= started:
        return round((finished - started).total_seconds(), 3)
    return None


def _reward_file_present(rollout_dir: Path) -> bool:
    verifier = rollout_dir / "verifier"
    return (verifier / "reward.txt").is_file() or (verifier / "reward.json").is_file()


def _partial_trajectory(data: dict[str, Any]) -> bool:
    summary = data.get("trajectory_summary")
    nested = summary.get("partial_trajectory") if isinstance(summary, dict) else None
    return data.get("partial_trajectory") is True or nested is True


def _ordered_labels(labels: Iterable[str]) -> list[str]:
    present = {label for label in labels if label}
    return [label for label in LABEL_PRIORITY if label in present]
