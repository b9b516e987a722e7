"""Inspect AI eval logs, record assembly: one ``benchmark_run_v0`` record per (log, sample),
every epoch an attempt (docs/formats/inspect.md).

A log is one (task, solver, model) eval, so a record is a (task, sample, solver, model) run;
its run key is the log's ``task_id`` and the sample id. ``eval_retry`` keeps the task id, so
when a directory holds a failed eval and its retry, the retry stands for the task and the
failed log is counted as superseded: the same run is recorded once, from its latest state.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from benchledger.ledger.core.read_boundary import INGEST_READ_BOUNDARY
from benchledger.ledger.core.safety import is_public_safe, join_public
from benchledger.ledger.sources.attempt_accounting import (
    accounting_block,
    countable_layers,
    failure_class,
    failure_label,
    lifecycle_reached,
)
from benchledger.ledger.sources.base import SourceIngest, record_view
from benchledger.ledger.sources.common import pass_at_k, slug_uncut_trim
from benchledger.ledger.sources.inspect.harbor_names import dataset_name, harbor_dataset
from benchledger.ledger.sources.inspect.reading import (
    ADAPTER_VERSION,
    SOURCE_RUNNER,
    Attempt,
    Log,
    find_logs,
    read_logs,
)

#: Inspect's log status -> the run status: only a finished eval is a completed run.
RUN_STATUS = {
    "success": "completed",
    "error": "incomplete",
    "cancelled": "cancelled",
    "started": "running",
}
_STATUS_RANK = {"success": 3, "error": 2, "cancelled": 1, "started": 0}


def read_inspect_logs(
    log_dir: Path | None,
    log_files: tuple[str, ...],
    *,
    scorer: str | None = None,
    benchmark_id: str | None = None,
    arm_id: str | None = None,
    run_group_id: str | None = None,
    jobs: int | None = None,
) -> SourceIngest:
    """Every log under ``log_dir`` (or each ``log_files``) read into records; ``jobs``: the
    cores the logs are read on (None: one), which changes no record."""
    root, paths = find_logs(log_dir, log_files)
    logs = read_logs(root, paths, scorer, jobs)
    kept, superseded = _latest_per_task(logs)
    records: list[dict[str, Any]] = []
    tasks_of: dict[str, set[str]] = {}  # run_key -> the task ids of the logs it was read from
    warnings: list[str] = []
    for log in kept:
        for sample_id, attempts in log.samples.items():
            record = _record(log, sample_id, attempts, scorer, benchmark_id, arm_id, run_group_id)
            records.append(record)
            tasks_of.setdefault(record["run_key"], set()).add(log.task_id)
    if not records:
        raise_no_samples(logs)
    if superseded:
        warnings.append("inspect_log_superseded_by_retry")
    names = _public_names(logs)
    entries = {
        id(log): {
            "relative_path": names[id(log)],
            "status": log.status,
            "kept": log in kept,
            "task_id": log.task_id if is_public_safe(log.task_id) else "unsafe",
        }
        for log in logs
    }
    provenance = {
        "kind": "inspect_logs",
        "adapter_version": ADAPTER_VERSION,
        "logs": [entries[id(log)] for log in logs],
        "superseded_log_count": len(superseded),
        "scorer": scorer if scorer is None or is_public_safe(scorer) else "unsafe",
        "files": {names[id(log)]: log.sha256 for log in sorted(logs, key=_path)},
    }
    own = _RecordLogs(logs, names, entries, provenance)
    record_provenance = {run_key: own(tasks) for run_key, tasks in tasks_of.items()}
    return SourceIngest(
        records, provenance, warnings, record_provenance=record_provenance, root=root
    )


class _RecordLogs:
    """A record's provenance names only the logs of its task id: the log it was read from and
    the failed logs a retry of that eval superseded (docs/formats/inspect.md §3), not every
    log of the directory. Records of one task share one provenance object, so the events of a
    log's samples serialise it once (``ledger/handlers/benchmark_run.py``)."""

    def __init__(
        self,
        logs: list[Log],
        names: dict[int, str],
        entries: dict[int, dict[str, Any]],
        provenance: dict[str, Any],
    ) -> None:
        self.by_task: dict[str, list[Log]] = {}
        for log in logs:
            self.by_task.setdefault(log.task_id, []).append(log)
        self.names, self.entries, self.provenance = names, entries, provenance
        self.made: dict[frozenset[str], dict[str, Any]] = {}

    def __call__(self, task_ids: set[str]) -> dict[str, Any]:
        key = frozenset(task_ids)  # several only when unsafe task ids make run keys collide
        made = self.made.get(key)
        if made is None:
            logs = [log for task in sorted(key) for log in self.by_task[task]]
            files = {self.names[id(log)]: log.sha256 for log in logs}
            made = record_view(self.provenance, files, logs=[self.entries[id(log)] for log in logs])
            self.made[key] = made
        return made


def _public_names(logs: list[Log]) -> dict[int, str]:
    """Each log's relative path for provenance; one that fails the public-safety filter (a
    secret or a local path in a file name) is named by its place instead."""
    return {
        id(log): log.relative_path if is_public_safe(log.relative_path) else f"unsafe-name-{n}"
        for n, log in enumerate(logs, start=1)
    }


def _path(log: Log) -> str:
    return log.relative_path


def raise_no_samples(logs: list[Log]) -> None:
    from benchledger.ledger.core.errors import SourceError

    states = ", ".join(sorted({log.status for log in logs}))
    raise SourceError(f"the Inspect logs hold no samples yet (status: {states})")


def _latest_per_task(logs: list[Log]) -> tuple[list[Log], list[Log]]:
    """Per task id, the most finished log, then the newest (a retry over its failed run)."""
    best: dict[str, Log] = {}
    for log in logs:
        current = best.get(log.task_id)
        if current is None or _rank(log) > _rank(current):
            best[log.task_id] = log
    kept = sorted(best.values(), key=lambda log: (log.created, log.relative_path))
    return kept, [log for log in logs if best[log.task_id] is not log]


def _rank(log: Log) -> tuple[int, str, str]:
    return (_STATUS_RANK.get(log.status, -1), log.created, log.relative_path)


def benchmark_of(log: Log, flag: str | None) -> str:
    """Flag, else the Harbor dataset an ``inspect-harbor`` eval ran, else the task's registry
    name and version, else the dataset's name."""
    if flag:
        return flag
    harbor = harbor_dataset(log.task, log.task_args)
    if harbor:
        return harbor
    if log.task:
        return f"{log.task}@{log.task_version}"
    return log.dataset or "inspect-adhoc"


def trial_source(log: Log) -> str | None:
    """The dataset the trials name as their source: the log's, else (``inspect-harbor`` builds
    its dataset without a name) the Harbor dataset, as Harbor's own trials name it."""
    if log.dataset:
        return log.dataset
    harbor = harbor_dataset(log.task, log.task_args)
    return dataset_name(harbor) if harbor else None


def _record(
    log: Log,
    sample_id: str,
    attempts: list[Attempt],
    scorer: str | None,
    benchmark_flag: str | None,
    arm_flag: str | None,
    group_flag: str | None,
) -> dict[str, Any]:
    primary = scorer or (log.scorers[0] if log.scorers else None)
    benchmark_id = benchmark_of(log, benchmark_flag)
    case_id = sample_id if is_public_safe(sample_id) else "unsafe"
    run_status = RUN_STATUS.get(log.status, "incomplete")
    source = trial_source(log)
    trials = [
        _trial(case_id, attempt, primary, index, source)
        for index, attempt in enumerate(attempts, start=1)
    ]
    scored = [t["primary_reward"] for t in trials if "primary_reward" in t]
    value = sum(scored) / len(scored) if scored else None
    agent_name = log.agent or log.solver
    record: dict[str, Any] = {
        "schema_version": "benchmark_run_v0",
        "source_runner": SOURCE_RUNNER,
        "benchmark_id": benchmark_id,
        "case_id": case_id,
        "case_ids": [case_id],
        "job_name": log.run_id,
        "run_key": join_public(":", "inspect", log.task_id, case_id),
        "run_status": run_status,
        "run_group_id": group_flag or log.run_id,
        "mode": "inspect_observed",
        "agent": _agent(agent_name, log),
        "real_run": True,
        "submit_eligible": False,
        "leaderboard_evidence": False,
        "trial_count": len(trials),
        "trials": trials,
    }
    record.update(_score_fields(value, scored, trials, run_status, primary))
    record.update(_usage_fields(attempts))
    record.update(_attribution(value, trials, run_status))
    record["runner_job"] = _runner_job(log, primary)
    record["read_boundary"] = INGEST_READ_BOUNDARY
    if arm_flag:
        record["arm_id"], record["arm_source"] = arm_flag, "explicit"
    else:
        arm = slug_uncut_trim(agent_name or "") + f"__{slug_uncut_trim(log.model)}"
        record["arm_id"], record["arm_source"] = arm.lstrip("_"), "adapter"
    warnings = [f"inspect_score_not_numeric:{name}" for a in attempts for name in a.unconvertible]
    if warnings:
        record["ingest_warnings"] = list(dict.fromkeys(warnings))[:5]
    return record


def _agent(name: str | None, log: Log) -> dict[str, Any]:
    agent: dict[str, Any] = {}
    if name:
        agent["name"] = name
    if log.agent_version:
        agent["version"] = log.agent_version
    agent["model"] = log.model
    return agent


def _trial(
    case_id: str, attempt: Attempt, primary: str | None, index: int, dataset: str | None
) -> dict[str, Any]:
    trial: dict[str, Any] = {
        "task_id": case_id,
        "trial_name": f"{case_id}:epoch{attempt.epoch}",
        "attempt_index": index,
        "status": "cancelled" if attempt.error_type == "CancelledError" else "completed",
    }
    if dataset:
        trial["source"] = dataset  # the dataset, as Harbor's trials name theirs
    if attempt.scores:
        trial["reward"] = dict(attempt.scores)
    value = attempt.scores.get(primary) if primary else None
    if value is not None:
        trial["primary_reward"] = value
        trial["passed"] = value >= 1.0
        trial["runner_verdict"] = "passed" if value >= 1.0 else "failed"
    elif attempt.error_type is not None:
        cancelled = trial["status"] == "cancelled"
        cause = "sample_cancelled" if cancelled else "sample_error"
        trial["exception_type"] = attempt.error_type
        trial["failure_cause"] = cause
        trial["unscored_reason"] = cause
        trial["runner_verdict"] = "cancelled" if cancelled else "errored"
    else:
        trial["unscored_reason"] = "score_missing"
        trial["runner_verdict"] = "unscored"
    if attempt.usage:
        trial["metrics"] = dict(attempt.usage)
    if attempt.timing:
        trial["timing"] = dict(attempt.timing)
    return trial


def _score_fields(
    value: float | None,
    scored: list[float],
    trials: list[dict[str, Any]],
    run_status: str,
    primary: str | None,
) -> dict[str, Any]:
    source = "inspect_sample_scores"
    fields: dict[str, Any] = {"official_score_source": source}
    if value is not None:
        fields["official_score"] = value
        fields["official_task_score"] = {
            "kind": "inspect_scorer_value",
            "value": value,
            "passed": all(s >= 1.0 for s in scored),
            "source": source,
        }
        fields["official_score_status"] = (
            "completed" if run_status == "completed" else "provisional"
        )
    else:
        fields["official_task_score"] = {"kind": "inspect_scorer_value_missing", "source": source}
        fields["official_score_status"] = "missing"
    reasons = Counter(t["unscored_reason"] for t in trials if t.get("unscored_reason"))
    aggregation: dict[str, Any] = {
        "policy": "mean_of_scored_attempts",
        "primary_reward_key": primary or "",
        "attempt_count": len(trials),
        "scored_attempt_count": len(scored),
        "unscored_attempt_count": len(trials) - len(scored),
        "passed_attempt_count": sum(1 for t in trials if t.get("passed")),
    }
    if reasons:
        aggregation["unscored_reasons"] = dict(sorted(reasons.items()))
    if scored:
        aggregation["binary_rewards"] = all(s in (0, 1) for s in scored)
    else:
        aggregation["primary_score_missing_reason"] = "no_scored_attempt"
    fields["score_aggregation"] = aggregation
    if len(scored) >= 2 and all(s in (0, 1) for s in scored):
        fields["pass_at_k"] = pass_at_k(len(scored), sum(1 for s in scored if s == 1))
        fields["pass_at_k_basis"] = "scored_attempts_only"
    verdicts = [t.get("runner_verdict") for t in trials]
    fields["progress"] = {
        "n_total_trials": len(trials),
        "n_completed_trials": sum(v in ("passed", "failed") for v in verdicts),
        "n_errored_trials": sum(v == "errored" for v in verdicts),
        "n_running_trials": 0,
        "n_pending_trials": 0,
        "n_cancelled_trials": sum(t["status"] == "cancelled" for t in trials),
    }
    return fields


def _usage_fields(attempts: list[Attempt]) -> dict[str, Any]:
    """Sums with coverage, so a zero is never confused with 'not reported'."""
    fields: dict[str, Any] = {}
    metrics: dict[str, float] = {}
    timing: dict[str, float] = {}
    for attempt in attempts:
        for key, number in attempt.usage.items():
            metrics[key] = metrics.get(key, 0) + number
        for key, number in attempt.timing.items():
            timing[key] = round(timing.get(key, 0) + number, 3)
    if metrics:
        fields["metrics"] = metrics
    fields["metrics_coverage"] = {
        "attempts_with_usage": sum(1 for a in attempts if a.usage),
        "attempts_total": len(attempts),
    }
    if timing:
        fields["timing"] = timing
    if "total" in timing:
        fields["wall_time_seconds"] = timing["total"]
    return fields


def _attribution(value: float | None, trials: list[dict[str, Any]], run_status: str) -> dict:
    errored = any(t.get("failure_cause") for t in trials)
    attribution = "none" if (value is not None and value > 0) or not errored else "sample_error"
    fields: dict[str, Any] = {"score_failure_attribution": attribution}
    if errored:
        fields["failure_attribution_labels"] = ["sample_error"]
    facts = {
        "process_started": True,
        "runner_accepted_args": True,
        "job_root_materialized": True,
        "trial_started": bool(trials),
        "worker_started": bool(trials),
        "result_written": bool(trials),
        "verifier_scored": value is not None,
    }
    reached, ok = lifecycle_reached(facts)
    attempted = {
        "launcher": True,
        "case": True,
        "solver": ok["trial_started"],
        "verifier": ok["worker_started"],
        "official_score": ok["result_written"],
    }
    fields["attempt_accounting"] = accounting_block(
        reached,
        failure_label(value, attribution),
        failure_class(ok["worker_started"], value, False),
        countable_layers(ok, run_status),
        attempted,
    )
    return fields


def _runner_job(log: Log, primary: str | None) -> dict[str, Any]:
    job: dict[str, Any] = {
        "runner": SOURCE_RUNNER,
        "job_name": log.run_id,
        "job_status": RUN_STATUS.get(log.status, "incomplete"),
    }
    if log.inspect_version:
        job["runner_version"] = log.inspect_version
    if log.total_samples is not None:
        job["n_total_trials"] = log.total_samples
    metric = log.results.get(primary or "", {})
    if metric:
        job["runner_metric"] = dict(metric)
    job["evals_key"] = join_public(":", "inspect", log.task_id)
    return job
