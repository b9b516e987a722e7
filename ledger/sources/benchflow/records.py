"""BenchFlow 0.7.11 result trees, record assembly: candidates grouped by (benchmark, task,
agent, model), then one ``benchmark_run_v0`` record per group with its score, aggregation,
pass@k, accounting, selection and provenance (docs/formats/benchflow.md §5.3-§6).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
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
from benchledger.ledger.sources.base import sha256_bytes
from benchledger.ledger.sources.benchflow.reading import (
    ADAPTER_VERSION,
    ADHOC_BENCHMARK_ID,
    MAX_ATTEMPT_CANDIDATES,
    SOURCE_RUNNER,
    TIE_BREAKERS,
    Candidate,
    _complete_scoring,
    _Context,
    _number,
    _parse_object,
    _read_bytes,
    _rel,
    _sum_maps,
    _text,
    _when,
    error_category,
    select_result,
)
from benchledger.ledger.sources.benchflow.scoring import (
    _PRE_WORKER_CATEGORIES,
    _Attempt,
    _build_attempt,
    _ordered_labels,
)
from benchledger.ledger.sources.common import pass_at_k, slug_uncut_trim
from benchledger.ledger.sources.planned.skillsbench_routes import (
    get_route,
    route_contract_fields,
    route_mismatch_warnings,
)

# ---------------------------------------------------------------------------------------------
# Grouping


GroupKey = tuple[str, str, str | None, str | None]


def _group(candidates: Iterable[Candidate], ctx: _Context) -> dict[GroupKey, list[Candidate]]:
    """Key (benchmark id, task, agent, model); unreadable rollouts join their task's only group."""
    groups: dict[GroupKey, list[Candidate]] = {}
    orphans: list[Candidate] = []
    for candidate in candidates:
        if candidate.data is None:
            orphans.append(candidate)
            continue
        key = (
            _benchmark_id(candidate, ctx),
            candidate.task or "",
            candidate.agent,
            candidate.model,
        )
        groups.setdefault(key, []).append(candidate)
    for orphan in orphans:
        same_task = [key for key in groups if key[1] == orphan.task]
        if len(same_task) == 1:
            groups[same_task[0]].append(orphan)
        else:
            key = (_benchmark_id(orphan, ctx), orphan.task or "", None, None)
            groups.setdefault(key, []).append(orphan)
    return groups


def _benchmark_id(candidate: Candidate, ctx: _Context) -> str:
    """Flag, else the result's dataset, else the job summary's, else `benchflow-adhoc`."""
    if ctx.benchmark_id:
        return ctx.benchmark_id
    found = _dataset_id(candidate.data or {})
    if found:
        return found
    summary = _job_summary(candidate, ctx)
    return _dataset_id(summary or {}) or ADHOC_BENCHMARK_ID


def _dataset_id(blob: dict[str, Any]) -> str | None:
    name = _text(blob.get("dataset_name"))
    if not name:
        return None
    version = _text(blob.get("dataset_version"))
    return f"{name}@{version}" if version else name


def _job_summary(candidate: Candidate, ctx: _Context) -> dict[str, Any] | None:
    """The job `summary.json` beside the rollout, read (and hashed) once per job directory."""
    job_dir = candidate.rollout_dir.parent
    if job_dir not in ctx.summaries:
        path = job_dir / "summary.json"
        summary = None
        rel = _rel(path, ctx.base)
        raw = _read_bytes(path, rel)
        if raw is not None:
            ctx.files[rel] = sha256_bytes(raw)
            summary = _parse_object(raw)
        ctx.summaries[job_dir] = summary
    return ctx.summaries[job_dir]


# ---------------------------------------------------------------------------------------------
# The record


def _build_record(key: GroupKey, members: list[Candidate], ctx: _Context) -> dict[str, Any]:
    benchmark_id, task, agent, model = key
    kept = _kept_attempts(members, ctx.policy)
    attempts = [_build_attempt(c, benchmark_id, ctx) for c in kept]
    for index, attempt in enumerate(attempts, start=1):
        attempt.trial["attempt_index"] = index
    lead = kept[0]
    summary = _job_summary(lead, ctx)
    job_name = _job_name(lead, summary)
    run_status = _run_status(kept, members, ctx.policy)
    score = _score(attempts, ctx.policy)
    record: dict[str, Any] = {
        "schema_version": "benchmark_run_v0",
        "source_runner": SOURCE_RUNNER,
        "benchmark_id": benchmark_id,
        "case_id": task,
        "case_ids": [task],
        "job_name": job_name,
        "run_key": _run_key(job_name, lead, key, ctx.policy),
        "run_status": run_status,
        "run_group_id": ctx.run_group_id or job_name,
        "mode": "benchflow_observed",
        "agent": {k: v for k, v in (("name", agent), ("model", model)) if v},
        "real_run": True,
        "submit_eligible": False,
        "leaderboard_evidence": False,
        "trial_count": len(attempts),
        "trials": [a.trial for a in attempts],
    }
    record.update(_score_fields(score, attempts, run_status, ctx.policy))
    record.update(_usage_fields(attempts))
    record.update(_attribution_fields(score, attempts, run_status))
    record["runner_job"] = _runner_job(job_name, summary)
    record["selection"] = _selection(members, kept, ctx)
    record["read_boundary"] = _READ_BOUNDARY
    skill_mode = _text((lead.data or {}).get("skill_mode"))
    if skill_mode:
        record["skill_mode"] = skill_mode
    warnings = _record_warnings(attempts, summary, members, ctx)
    _apply_arm_and_route(record, agent, model, skill_mode, ctx, warnings)
    if warnings:
        record["ingest_warnings"] = list(dict.fromkeys(warnings))
    return record


def _kept_attempts(members: list[Candidate], policy: str) -> list[Candidate]:
    if policy == "all_attempts":
        return sorted(members, key=lambda c: (_started_key(c), c.relative_path))
    if policy == "explicit_result_json":
        return list(members[:1])
    return [select_result(members, policy)]


def _started_key(candidate: Candidate) -> str:
    started = _when((candidate.data or {}).get("started_at"))
    return started.isoformat() if started else "9999"


def _job_name(lead: Candidate, summary: dict[str, Any] | None) -> str:
    """BenchFlow's own job name when the summary says it; else the job directory's name."""
    name = _text((summary or {}).get("job_name"))
    return name or lead.rollout_dir.parent.name


def _run_key(job_name: str, lead: Candidate, key: GroupKey, policy: str) -> str:
    """Built from runner ids only, never from where the tree happens to live."""
    if policy != "all_attempts":
        return join_public(":", "benchflow", job_name, lead.rollout_name)
    benchmark_id, task, agent, model = key
    parts = (
        job_name,
        benchmark_id,
        task,
        slug_uncut_trim(agent or ""),
        slug_uncut_trim(model or "") or "-",
    )
    return join_public(":", "benchflow", *parts)


def _run_status(kept: list[Candidate], members: list[Candidate], policy: str) -> str:
    """The task's own status (issue 31 item 6, as docs/formats/harbor.md §3): ``incomplete`` while
    any of its
    rollouts has no result yet, even when a single-result policy keeps another one; ``corrupt``
    when the kept result is unreadable; else ``completed``."""
    statuses = {c.status for c in kept}
    if "result_missing" in statuses or any(c.status == "result_missing" for c in members):
        return "incomplete"
    if "result_corrupt" in statuses:
        return (
            "corrupt"
            if statuses == {"result_corrupt"} or policy != "all_attempts"
            else "incomplete"
        )
    return "completed"


@dataclass
class _Score:
    value: float | None
    passed: bool | None
    source: str
    scored: list[_Attempt]


def _score(attempts: list[_Attempt], policy: str) -> _Score:
    scored = [a for a in attempts if a.trial.get("primary_reward") is not None]
    reviewed = any(
        _complete_scoring((a.candidate.data or {}).get("scoring")) is not None for a in scored
    )
    source = "benchflow_review_scoring" if reviewed else "benchflow_result_reward"
    if not scored:
        return _Score(None, None, source, scored)
    if policy == "all_attempts":
        value = sum(a.trial["primary_reward"] for a in scored) / len(scored)
        passed = all(a.trial.get("passed") for a in scored)
    else:
        value = scored[0].trial["primary_reward"]
        passed = bool(scored[0].trial.get("passed"))
    return _Score(value, passed, source, scored)


def _score_fields(
    score: _Score, attempts: list[_Attempt], run_status: str, policy: str
) -> dict[str, Any]:
    fields: dict[str, Any] = {"official_score_source": score.source}
    if score.value is not None:
        fields["official_score"] = score.value
        fields["official_task_score"] = {
            "kind": "skillsbench_verifier_reward",
            "value": score.value,
            "passed": score.passed,
            "source": score.source,
        }
        fields["official_score_status"] = (
            "completed" if run_status == "completed" else "provisional"
        )
    else:
        fields["official_task_score"] = {
            "kind": "skillsbench_verifier_reward_missing",
            "source": score.source,
        }
        fields["official_score_status"] = "missing"
    if policy != "all_attempts":
        fields["runner_verdict"] = attempts[0].trial.get("runner_verdict")
    fields["score_aggregation"] = _aggregation(score, attempts, policy)
    pass_at_k = _pass_at_k(score) if policy == "all_attempts" else {}
    if pass_at_k:
        fields["pass_at_k"] = pass_at_k
        fields["pass_at_k_basis"] = "scored_attempts_only"
    fields["progress"] = _progress(attempts)
    return fields


def _aggregation(score: _Score, attempts: list[_Attempt], policy: str) -> dict[str, Any]:
    rewards = [a.trial["primary_reward"] for a in score.scored]
    reasons = Counter(
        a.trial["unscored_reason"] for a in attempts if a.trial.get("unscored_reason")
    )
    readable = [a for a in attempts if a.candidate.data is not None]
    agg: dict[str, Any] = {
        "policy": "mean_of_scored_attempts" if policy == "all_attempts" else "single_result",
        "primary_reward_key": "reward",
        "attempt_count": len(attempts),
        "scored_attempt_count": len(rewards),
        "unscored_attempt_count": len(attempts) - len(rewards),
        "passed_attempt_count": sum(1 for a in score.scored if a.trial.get("passed")),
    }
    if reasons:
        agg["unscored_reasons"] = dict(sorted(reasons.items()))
    if rewards:
        agg["binary_rewards"] = all(r in (0, 1) for r in rewards)
    else:
        agg["primary_score_missing_reason"] = "no_scored_attempt"
    if readable:
        agg["runner_equivalent_mean"] = sum(rewards) / len(readable)
    return agg


def _pass_at_k(score: _Score) -> dict[str, float]:
    """pass@k over scored attempts only, when rewards are binary and n ≥ 2 (§4.4)."""
    rewards = [a.trial["primary_reward"] for a in score.scored]
    n = len(rewards)
    if n < 2 or not all(r in (0, 1) for r in rewards):
        return {}
    return pass_at_k(n, sum(1 for a in score.scored if a.trial.get("passed")))


def _progress(attempts: list[_Attempt]) -> dict[str, int]:
    verdicts = [a.trial.get("runner_verdict") for a in attempts]
    return {
        "n_total_trials": len(attempts),
        "n_completed_trials": sum(v in ("passed", "failed") for v in verdicts),
        "n_errored_trials": sum(
            v in ("errored", "verifier_errored", "result_corrupt") for v in verdicts
        ),
        "n_running_trials": 0,
        "n_pending_trials": 0,
        "n_cancelled_trials": 0,
    }


def _usage_fields(attempts: list[_Attempt]) -> dict[str, Any]:
    """Per-record sums with coverage, so a zero is never confused with 'not reported'."""
    fields: dict[str, Any] = {}
    metrics = _sum_maps(a.metrics for a in attempts)
    if metrics:
        fields["metrics"] = metrics
    fields["metrics_coverage"] = {
        "attempts_with_usage": sum(1 for a in attempts if a.metrics),
        "attempts_total": len(attempts),
    }
    timing = _sum_maps(a.timing for a in attempts)
    if timing:
        fields["timing"] = dict(list(timing.items())[:12])
    walls = [a.wall_time for a in attempts if a.wall_time is not None]
    if walls:
        fields["wall_time_seconds"] = round(sum(walls), 3)
    activity = _sum_maps(a.activity for a in attempts)
    if activity:
        fields["agent_activity"] = {k: int(v) for k, v in activity.items()}
    return fields


def _attribution_fields(score: _Score, attempts: list[_Attempt], run_status: str) -> dict[str, Any]:
    labels = _ordered_labels(label for a in attempts for label in a.labels)
    if score.value is not None and score.value > 0:
        attribution = "none"
    else:
        attribution = labels[0] if labels else "none"
    fields: dict[str, Any] = {"score_failure_attribution": attribution}
    if labels:
        fields["failure_attribution_labels"] = labels
    fields["attempt_accounting"] = _attempt_accounting(score, attempts, run_status, attribution)
    return fields


def _attempt_accounting(
    score: _Score, attempts: list[_Attempt], run_status: str, attribution: str
) -> dict[str, Any]:
    """Lifecycle facts per §6.3; a phase counts only when every earlier phase counts."""
    facts = {
        "process_started": True,
        "runner_accepted_args": True,
        "job_root_materialized": True,
        "trial_started": any(_trial_started(a) for a in attempts),
        "worker_started": any(_worker_started(a) for a in attempts),
        "result_written": any(a.candidate.data is not None for a in attempts),
        "verifier_scored": bool(score.scored),
    }
    reached, ok = lifecycle_reached(facts)
    countable = countable_layers(ok, run_status)
    attempted = {
        "launcher": True,
        "case": ok["job_root_materialized"],
        "solver": ok["trial_started"],
        "verifier": ok["worker_started"] or ok["result_written"],
        "official_score": ok["result_written"],
    }
    return accounting_block(
        reached,
        failure_label(score.value, attribution),
        _failure_class(score, attempts, ok),
        countable,
        attempted,
    )


def _trial_started(attempt: _Attempt) -> bool:
    return attempt.candidate.data is not None or "environment_setup" in attempt.timing


def _worker_started(attempt: _Attempt) -> bool:
    data = attempt.candidate.data or {}
    tools = attempt.activity.get("tool_call_count", 0)
    if tools > 0:
        return True
    if error_category(data) in _PRE_WORKER_CATEGORIES:
        return False
    return "agent_execution" in attempt.timing or attempt.trial.get("primary_reward") is not None


def _failure_class(score: _Score, attempts: list[_Attempt], ok: dict[str, bool]) -> str:
    reasons = Counter(a.trial.get("unscored_reason") for a in attempts)
    top = reasons.most_common(1)[0][0] if reasons else None
    return failure_class(ok["worker_started"], score.value, top == "verifier_error_no_reward")


def _runner_job(job_name: str, summary: dict[str, Any] | None) -> dict[str, Any]:
    job: dict[str, Any] = {"runner": SOURCE_RUNNER, "job_name": job_name}
    if summary is None:
        return job
    job["job_status"] = "completed"
    keys = (
        "total",
        "passed",
        "failed",
        "errored",
        "verifier_errored",
        "mean_reward",
        "score_ratio",
    )
    metric = {k: summary[k] for k in keys if _number(summary.get(k)) is not None}
    if metric:
        job["runner_metric"] = metric
    total = summary.get("total")
    if isinstance(total, int) and not isinstance(total, bool):
        job["n_total_trials"] = total
    return job


def _selection(members: list[Candidate], kept: list[Candidate], ctx: _Context) -> dict[str, Any]:
    ordered = sorted(members, key=lambda c: c.relative_path)
    selection: dict[str, Any] = {
        "policy": ctx.policy,
        "tie_breaker": TIE_BREAKERS[ctx.policy],
        "candidate_count": len(members),
        "ignored_reviewer_count": ctx.ignored_reviewer_count,
        "ignored_nested_count": ctx.ignored_nested_count,
        "candidates": [c.summary() for c in ordered[:MAX_ATTEMPT_CANDIDATES]],
    }
    if ctx.policy != "all_attempts":
        selection["selected_relative_path"] = kept[0].relative_path
    return selection


def _record_warnings(
    attempts: list[_Attempt],
    summary: dict[str, Any] | None,
    members: list[Candidate],
    ctx: _Context,
) -> list[str]:
    warnings = [w for a in attempts for w in a.warnings]
    if summary is None:
        warnings.append("benchflow_summary_missing")
    if ctx.benchmark_id and any(
        _dataset_id(c.data or {}) not in (None, ctx.benchmark_id) for c in members
    ):
        warnings.append("dataset_flag_differs_from_result")
    return warnings


def _apply_arm_and_route(
    record: dict[str, Any],
    agent: str | None,
    model: str | None,
    skill_mode: str | None,
    ctx: _Context,
    warnings: list[str],
) -> None:
    """Arm: explicit flag, else the route's ledger arm, else slug(agent)__slug(model) (§6.2;
    ``common.slug_uncut_trim``)."""
    route = get_route(ctx.route) if ctx.route else None
    if route is not None:
        record["mode"] = route.mode
        record.update(route_contract_fields(route, oracle=agent == "oracle"))
        warnings.extend(route_mismatch_warnings(route, agent=agent, skill_mode=skill_mode))
    if ctx.arm_id:
        record["arm_id"], record["arm_source"] = ctx.arm_id, "explicit"
    elif route is not None:
        record["arm_id"], record["arm_source"] = route.arm_id, "route"
        record["arm_role"] = route.arm_role
    else:
        arm = slug_uncut_trim(agent or "") + (f"__{slug_uncut_trim(model)}" if model else "")
        if arm:
            record["arm_id"], record["arm_source"] = arm, "adapter"


def _provenance(
    kind: str, reference: str, policy: str, candidates: list[Candidate], ctx: _Context
) -> dict[str, Any]:
    """What was read, by relative path and digest, so an unchanged tree is recognised."""
    return {
        "kind": kind,
        "adapter_version": ADAPTER_VERSION,
        "reference": reference,
        "selection_policy": policy,
        "ignored_reviewer_count": ctx.ignored_reviewer_count,
        "ignored_nested_count": ctx.ignored_nested_count,
        "candidates": [
            {**c.summary(), "status": c.status, "task": c.task, "agent": c.agent, "model": c.model}
            for c in candidates
        ],
        "files": dict(sorted(ctx.files.items())),
    }
