"""Harbor 0.25 job directory, record assembly: one raw ``benchmark_run_v0`` record per
(benchmark, task, agent, model) from its scored attempts: trial blocks, aggregation, timeout
policy, accounting, runner job, arm and run key (docs/formats/harbor.md §5.5-5.9).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from benchledger.ledger.core.read_boundary import INGEST_READ_BOUNDARY as _READ_BOUNDARY
from benchledger.ledger.core.safety import join_public
from benchledger.ledger.sources.attempt_accounting import (
    accounting_block,
    countable_layers,
    failure_class,
    failure_label,
    lifecycle_reached,
)
from benchledger.ledger.sources.common import pass_at_k, slug
from benchledger.ledger.sources.harbor.files import _Json
from benchledger.ledger.sources.harbor.options import HarborReadOptions
from benchledger.ledger.sources.harbor.scoring import _LABEL_RANK, _case_status, _score, _Scored
from benchledger.ledger.sources.harbor.trials import _Attempt
from benchledger.ledger.sources.harbor.values import (
    _AGENT_TIMEOUT_OVERRIDES,
    _MULTIPLIERS,
    _dict,
    _effective,
    _multipliers,
    _number,
    _text,
)

ADAPTER_VERSION = "harbor_job_adapter_v1"
SCHEMA_VERSION = "benchmark_run_v0"
SCORE_SOURCE = "harbor_attempt_mean"


# --------------------------------------------------------------------------- records


@dataclass
class _Job:
    """Job-wide facts every record of the ingest shares."""

    name: str
    job_id: str | None
    status: str
    config: dict[str, Any]
    lock: dict[str, Any]
    result: _Json
    has_config: bool
    has_lock: bool
    has_trial_dirs: bool
    run_group_id: str | None
    arm_count: int = 0
    case_count: int = 0
    unattributed: int = 0
    runner_base: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # (agent, model) -> the agent_info of a finished trial of that arm: names the evals key of
    # a case none of whose attempts finished yet
    agent_infos: dict[tuple, dict[str, Any]] = field(default_factory=dict)


def _trial_block(attempt: _Attempt, scored: _Scored) -> dict[str, Any]:
    """One ``trials[]`` entry; only the identity fields can be null, so only they are filtered."""
    block: dict[str, Any] = {}
    if attempt.task is not None:
        block["task_id"] = attempt.task
    if attempt.trial_name is not None:
        block["trial_name"] = attempt.trial_name
    if attempt.source is not None:
        block["source"] = attempt.source
    block["attempt_index"] = attempt.attempt_index
    block["status"] = attempt.status
    result_ok = attempt.result.ok
    if result_ok:
        block["exception_type"] = attempt.exception_type or "none"
    if scored.cause:
        block["failure_cause"] = scored.cause
    if scored.reward:
        block["reward"] = scored.reward
    if scored.primary is not None:
        block["primary_reward"] = scored.primary
        block["passed"] = scored.primary == 1.0
    else:
        block["unscored_reason"] = scored.reason
    if attempt.usage:
        block["metrics"] = attempt.usage
    if attempt.timing:
        block["timing"] = attempt.timing
    present = attempt.files_present
    block["trajectory_present"] = bool(present.get("trajectory"))
    block["artifact_manifest_present"] = bool(present.get("artifact_manifest"))
    block["verifier_reward_present"] = bool(attempt.rewards)
    block["verifier_reward_file_present"] = bool(present.get("reward_file"))
    block["trial_result_present"] = result_ok
    lock = attempt.lock
    digest = _text(_dict(lock.get("task")).get("digest")) if isinstance(lock, dict) else None
    checksum = _text(attempt.res.get("task_checksum"))
    if digest or checksum:
        block["task_digest"] = digest or f"sha256:{checksum}"
    return block


def _agent_config(attempts: list[_Attempt], job: _Job) -> dict[str, Any]:
    """The group's AgentConfig: first trial config, else its lock trial, else the job config."""
    for attempt in attempts:
        agent = _dict(attempt.config.get("agent"))
        if agent and attempt.config_source == "result":
            return agent
    for attempt in attempts:
        agent = _dict(_dict(attempt.lock).get("agent"))
        if agent:
            return agent
    first = attempts[0]
    for agent in job.config.get("agents") or []:
        agent = _dict(agent)
        if first.match_agent in (_text(agent.get("name")), _text(agent.get("import_path"))):
            return agent
    for attempt in attempts:
        agent = _dict(attempt.config.get("agent"))
        if agent:
            return agent
    return {}


def _timeout_policy(
    attempts: list[_Attempt], job: _Job, agent_cfg: dict[str, Any]
) -> tuple[dict[str, Any], bool]:
    """Effective multipliers: trial config, else lock trial, else job config
    (docs/formats/harbor.md §5.7)."""
    # Each attempt's effective multipliers, in _MULTIPLIERS order: equal tuples, equal policies.
    # Attempts mostly share their raw values; with the values' types as well, equal raw tuples
    # give equal multipliers (1 == 1.0 == True, but True is no number), so each is worked once.
    raw: set[tuple] = set()
    for attempt in attempts:
        block = attempt.config or attempt.lock
        if block:
            values = tuple(map(block.get, _MULTIPLIERS))
            raw.add((values, tuple(map(type, values))))
    seen: set[tuple[float, ...]] = set()
    for values, _types in raw:
        found = _multipliers(dict(zip(_MULTIPLIERS, values, strict=True)))
        seen.add(tuple([found.get(key, 1.0) for key in _MULTIPLIERS]))
    chosen, source = None, None
    for attempt in attempts:
        if attempt.config:
            chosen, source = _multipliers(attempt.config), "harbor_trial_config"
            break
    if chosen is None:
        for attempt in attempts:
            if attempt.lock:
                chosen, source = _multipliers(attempt.lock), "harbor_lock"
                break
    if chosen is None:
        chosen, source = _multipliers(job.config), "harbor_job_config"
    overrides = [k for k in _AGENT_TIMEOUT_OVERRIDES if agent_cfg.get(k) is not None]
    effective = _effective(chosen)
    policy: dict[str, Any] = {
        "multipliers": chosen,
        "effective_multipliers": effective,
        "official_comparable": all(v == 1.0 for v in effective.values()) and not overrides,
        "source": source,
    }
    if overrides:
        policy["agent_timeout_overrides"] = overrides
    return policy, len(seen) > 1


def _aggregation(
    attempts: list[_Attempt], scores: list[_Scored], planned: int | None
) -> dict[str, Any]:
    scored = [s for s in scores if s.primary is not None]
    keys = {s.primary_key for s in scored}
    reasons = Counter(s.reason for s in scores if s.primary is None)
    denominator = sum(1 for a in attempts if a.status in ("completed", "cancelled"))
    agg: dict[str, Any] = {
        "policy": "mean_of_scored_attempts",
        "attempt_count": len(attempts),
        "scored_attempt_count": len(scored),
        "unscored_attempt_count": len(scores) - len(scored),
        "passed_attempt_count": sum(1 for s in scored if s.primary == 1.0),
    }
    if scored:  # with nothing scored there is no reward to call binary
        agg["binary_rewards"] = all(s.primary in (0.0, 1.0) for s in scored)
    if planned:
        agg["planned_attempt_count"] = planned
    if len(keys) == 1:
        agg["primary_reward_key"] = next(iter(keys))
    if reasons:
        agg["unscored_reasons"] = dict(sorted(reasons.items()))
    if denominator:
        agg["runner_equivalent_mean"] = sum(p for s in scored if (p := s.primary) is not None) / (
            denominator
        )
    if not scored:
        multi = "multi_key_reward_without_reward_key"
        agg["primary_score_missing_reason"] = multi if multi in reasons else "no_scored_attempt"
    return agg


def _progress(attempts: list[_Attempt]) -> dict[str, int]:
    statuses = Counter(a.status for a in attempts)
    errored = sum(1 for a in attempts if a.status == "completed" and a.exception_type)
    return {
        "n_total_trials": len(attempts),
        "n_completed_trials": statuses["completed"] - errored,
        "n_errored_trials": errored,
        "n_running_trials": statuses["running"],
        "n_pending_trials": statuses["pending"],
        "n_cancelled_trials": statuses["cancelled"],
    }


def _usage(attempts: list[_Attempt]) -> tuple[dict[str, float | int], dict[str, int]]:
    """Token and cost sums, and how many attempts reported any: an ``agent_result`` whose
    every figure is null (oracle, nop) reports no usage, as the BenchFlow reader counts it
    (issue 31 item 3)."""
    sums: dict[str, float | int] = {}
    with_usage = 0
    for attempt in attempts:
        if not attempt.usage:
            continue
        with_usage += 1
        for out, value in attempt.usage.items():
            sums[out] = sums.get(out, 0) + value
    return sums, {"attempts_with_usage": with_usage, "attempts_total": len(attempts)}


def _timing(attempts: list[_Attempt]) -> tuple[dict[str, float], float | None]:
    phases: dict[str, float] = {}
    wall: float | None = None
    for attempt in attempts:
        for phase, d in attempt.timing.items():
            phases[phase] = phases.get(phase, 0.0) + d
        if attempt.wall is not None:
            wall = (wall or 0.0) + attempt.wall
    rounded = {phase: round(v, 3) for phase, v in phases.items()}
    return rounded, (round(wall, 3) if wall is not None else None)


def _accounting(
    attempts: list[_Attempt], scores: list[_Scored], job: _Job, run_status: str, attribution: str
) -> dict[str, Any]:
    reached = {
        "process_started": job.has_lock,
        "runner_accepted_args": job.has_config,
        "job_root_materialized": job.result.ok or job.has_trial_dirs,
        "trial_started": any(a.dir_name is not None for a in attempts),
        "worker_started": any(
            _dict(a.res.get("agent_execution")).get("started_at") or a.usage is not None
            for a in attempts
        ),
        "result_written": any(a.result.ok for a in attempts),
        "verifier_scored": any(s.primary is not None for s in scores),
    }
    phase, counted = lifecycle_reached(reached)
    countable = countable_layers(counted, run_status)
    attempted = {
        "launcher": True,
        "case": counted["job_root_materialized"],
        "solver": counted["trial_started"],
        "verifier": counted["result_written"],
        "official_score": counted["verifier_scored"],
    }
    scored = [s.primary for s in scores if s.primary is not None]
    score = sum(scored) / len(scored) if scored else None
    reasons = Counter(s.reason for s in scores if s.primary is None)
    top = reasons.most_common(1)[0][0] if reasons else None
    return accounting_block(
        phase,
        failure_label(score, attribution),
        failure_class(counted["worker_started"], score, top == "verifier_failed"),
        countable,
        attempted,
    )


def _evals_key(attempts: list[_Attempt], job: _Job) -> str:
    """``agent__model__source`` as Harbor keys ``stats.evals`` (names from ``agent_info``,
    else from a finished trial of the same arm elsewhere in the job).

    The raw key: it looks up Harbor's own metrics; ``_runner_job`` publishes it with every part
    that fails the safety filter replaced."""
    first = attempts[0]
    found = [(a, _dict(a.res.get("agent_info"))) for a in attempts]
    found.append((first, job.agent_infos.get((first.agent, first.model), {})))
    for attempt, info in found:
        if info.get("name"):
            first, agent = attempt, info["name"]
            model = _text(_dict(info.get("model_info")).get("name"))
            break
    else:
        agent = first.agent or "unknown"
        model = first.model.split("/", 1)[-1] if first.model else None
    source = first.source or "adhoc"
    return f"{agent}__{model}__{source}" if model else f"{agent}__{source}"


def _runner_job_base(job: _Job) -> dict[str, Any]:
    """The job-wide part of ``runner_job``, built once and shared by every record."""
    res = job.result.obj
    stats = _dict(res.get("stats"))
    started = _text(res.get("started_at"))
    block: dict[str, Any] = {
        "runner": "harbor",
        "runner_version": _text(_dict(job.lock.get("harbor")).get("version")),
        "job_id": job.job_id,
        "job_name": job.name,
        "job_status": job.status,
        "started_at": started,
        "finished_at": _text(res.get("finished_at")),
        "n_total_trials": res.get("n_total_trials")
        if isinstance(res.get("n_total_trials"), int)
        else None,
        "arm_count": job.arm_count,
        "case_count": job.case_count,
        "n_retries": stats.get("n_retries") if isinstance(stats.get("n_retries"), int) else None,
        "unattributed_attempt_count": job.unattributed,
    }
    if started:
        block["timestamps_timezone"] = "naive_local" if _is_naive(started) else "utc"
    return {k: v for k, v in block.items() if v is not None}


def _runner_job(job: _Job, evals_key: str) -> dict[str, Any]:
    """Job-wide facts plus Harbor's own metric and pass@k for this record's arm."""
    block = {**job.runner_base, "evals_key": join_public("__", *evals_key.split("__"))}
    entry = _dict(_dict(_dict(job.result.obj.get("stats")).get("evals")).get(evals_key))
    metrics = entry.get("metrics")
    if isinstance(metrics, list) and metrics and isinstance(metrics[0], dict):
        block["runner_metric"] = {k: v for k, v in metrics[0].items() if _number(v) is not None}
    pass_at_k = _dict(entry.get("pass_at_k"))
    if pass_at_k:
        block["runner_pass_at_k"] = {
            str(k): v for k, v in pass_at_k.items() if _number(v) is not None
        }
    return block


def _is_naive(stamp: str) -> bool:
    try:
        return datetime.fromisoformat(stamp).tzinfo is None
    except ValueError:
        return False


def _arm(
    agent: str | None,
    match_agent: str | None,
    model: str | None,
    kwargs: dict,
    opts: HarborReadOptions,
) -> tuple[str | None, str]:
    """(arm_id or None, arm_source) per docs/formats/harbor.md §5.6."""
    for mapping in opts.arm_map:
        if mapping.agent in (agent, match_agent) and mapping.model in (None, model):
            return mapping.arm, "explicit"
    if opts.arm_id:
        return opts.arm_id, "explicit"
    if "loopx_mode" in kwargs:
        return None, "inferred"
    base = slug(agent or "unknown")
    return (f"{base}__{slug(model)}" if model else base), "adapter"


def _mode(agent: str | None, kwargs: dict[str, Any]) -> str:
    loopx_mode = _text(kwargs.get("loopx_mode"))
    if loopx_mode:
        return loopx_mode
    return "bare_codex_cli" if agent == "codex" else "harbor_observed"


def _run_key(key: tuple, job: _Job) -> str:
    """Harbor's own identity for a run: job name + (benchmark, task, agent, model)."""
    benchmark_id, task, agent, model = key
    model_part = slug(model) if model else "-"
    parts = ("harbor", job.name, benchmark_id, task, slug(agent or "unknown"), model_part)
    return join_public(":", *parts)


def _agent_version(attempts: list[_Attempt]) -> str | None:
    """The first agent version an attempt's result names."""
    return next(
        (v for a in attempts if (v := _text(_dict(a.res.get("agent_info")).get("version")))), None
    )


def _agent_block(
    agent: str | None,
    import_path: str | None,
    model: str | None,
    version: str | None,
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    block = {
        "name": agent,
        "import_path": import_path,
        "model": model,
        "version": version,
        "kwargs_keys": sorted(kwargs) or None,
    }
    return {k: v for k, v in block.items() if v is not None}


def _official_score_fields(
    score: float | None, scored: list[float], run_status: str
) -> dict[str, Any]:
    """The score source, its status and the task score: a missing mean is said, never 0."""
    task_score: dict[str, Any]
    if score is None:
        status = "missing"
        task_score = {"kind": "harbor_verifier_reward_missing", "source": SCORE_SOURCE}
    else:
        status = "completed" if run_status == "completed" else "provisional"
        task_score = {
            "kind": "harbor_verifier_reward",
            "value": score,
            "passed": all(s == 1.0 for s in scored),
            "source": SCORE_SOURCE,
        }
    return {
        "official_score_source": SCORE_SOURCE,
        "official_score_status": status,
        "official_task_score": task_score,
    }


def _number_attempts(attempts: list[_Attempt]) -> None:
    """Attempts in their run order, numbered from 1 (the order trials and pass@k read)."""
    attempts.sort(key=_attempt_order)
    for i, attempt in enumerate(attempts, 1):
        attempt.attempt_index = i


def _attribution(scores: list[_Scored], score: float | None) -> tuple[list[str], str]:
    """The failure labels, most telling first, and the one the run is attributed to: none
    when it scored above zero."""
    labels = sorted({s.label for s in scores if s.label}, key=_LABEL_RANK.__getitem__)
    attribution = "none" if score is not None and score > 0 else (labels[0] if labels else "none")
    return labels, attribution


def _build_record(
    key: tuple, attempts: list[_Attempt], planned: int | None, job: _Job, opts: HarborReadOptions
) -> dict[str, Any]:
    """One raw ``benchmark_run_v0`` record for a (benchmark, task, agent, model) group."""
    benchmark_id, task, agent, model = key
    _number_attempts(attempts)
    scores = [_score(a) for a in attempts]
    job_running = job.result.ok and job.result.obj.get("finished_at") is None
    run_status = _case_status(attempts, job.status, job_running)
    scored = [s.primary for s in scores if s.primary is not None]
    agent_cfg = _agent_config(attempts, job)
    kwargs = _dict(agent_cfg.get("kwargs"))
    arm_id, _ = _arm(agent, attempts[0].match_agent, model, kwargs, opts)
    version = _agent_version(attempts)
    import_path = _text(agent_cfg.get("import_path"))

    score = sum(scored) / len(scored) if scored else None
    labels, attribution = _attribution(scores, score)
    policy, multipliers_differ = _timeout_policy(attempts, job, agent_cfg)
    usage, coverage = _usage(attempts)
    phases, wall = _timing(attempts)
    warnings = _record_warnings(attempts, scores, job, multipliers_differ)

    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "source_runner": "harbor",
        "benchmark_id": benchmark_id,
        "job_name": job.name,
        "mode": _mode(agent, kwargs),
        "case_id": task,
        "case_ids": [task],
        "run_key": _run_key(key, job),
        "run_status": run_status,
        "arm_id": arm_id,
        "arm_role": opts.arm_role,
        "run_group_id": opts.run_group_id or job.run_group_id,
        "agent": _agent_block(agent, import_path, model, version, kwargs),
        **_official_score_fields(score, scored, run_status),
        "score_aggregation": _aggregation(attempts, scores, planned),
        "score_failure_attribution": attribution,
        "failure_attribution_labels": labels[:5],
        "runner_return_status": run_status,
        "ingest_warnings": warnings[:10],
        "attempt_accounting": _accounting(attempts, scores, job, run_status, attribution),
        "progress": _progress(attempts),
        "metrics": usage,
        "metrics_coverage": coverage,
        "wall_time_seconds": wall,
        "timing": phases,
        "timeout_policy": policy,
        "trial_count": len(attempts),
        "trials": [_trial_block(a, s) for a, s in zip(attempts, scores, strict=True)],
        "runner_job": _runner_job(job, _evals_key(attempts, job)),
        "real_run": True,
        "submit_eligible": False,
        "leaderboard_evidence": False,
        "read_boundary": dict(_READ_BOUNDARY),
    }
    if score is not None:
        _add_score(record, score, scored)
    return {k: v for k, v in record.items() if v not in (None, [], {})}


def _add_score(record: dict[str, Any], score: float, scored: list[float]) -> None:
    """The mean, and pass@k over the scored attempts when their rewards are binary."""
    record["official_score"] = score
    binary = record["score_aggregation"].get("binary_rewards", False)
    if binary and len(scored) >= 2:
        record["pass_at_k"] = pass_at_k(len(scored), sum(1 for s in scored if s == 1.0))
        record["pass_at_k_basis"] = "scored_attempts_only"


def _attempt_order(attempt: _Attempt) -> tuple:
    """By trial start (UTC), then trial name; undated trials after dated ones; pending last."""
    started = attempt.started
    return (
        attempt.dir_name is None,
        started is None,
        started or 0.0,
        attempt.trial_name or "",
    )


def _job_warnings(job: _Job) -> list[str]:
    """Warning codes every record of the job carries."""
    warnings: list[str] = []
    if job.status == "corrupt":
        warnings.append("job_result_corrupt")
    elif job.result.state == "missing":
        warnings.append("job_result_missing")
    started = _text(job.result.obj.get("started_at"))
    if started and _is_naive(started):
        warnings.append("job_timestamps_naive_local_time")
    return warnings


def _record_warnings(
    attempts: list[_Attempt], scores: list[_Scored], job: _Job, differ: bool
) -> list[str]:
    warnings = list(job.warnings)
    if any(a.status == "result_corrupt" for a in attempts):
        warnings.append("trial_result_corrupt")
    if any(
        s.primary is None and a.files_present.get("reward_file")
        for a, s in zip(attempts, scores, strict=True)
    ):
        warnings.append("reward_file_present_without_verifier_result")
    if any(
        s.reason == "reward_missing" and a.res.get("step_results")
        for a, s in zip(attempts, scores, strict=True)
    ):
        warnings.append("multi_step_trial_not_aggregated")
    if any(s.reason == "non_numeric_reward" for s in scores):
        warnings.append("reward_not_a_number")
    if any(s.primary is not None and not 0.0 <= s.primary <= 1.0 for s in scores):
        warnings.append("reward_out_of_range")
    if differ:
        warnings.append("timeout_multipliers_differ_between_attempts")
    if job.unattributed:
        warnings.append("trial_without_task_identity")
    return warnings
