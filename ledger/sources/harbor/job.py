"""Harbor 0.25 job directory -> raw ``benchmark_run_v0`` records (docs/formats/harbor.md).

One record per (benchmark, task, agent, model): a case is a task, every attempt is kept, the score
is the mean of the attempts that have a primary reward. A missing reward is never a zero, and the
job's own state (running, cancelled, incomplete, corrupt, not started) is reported as found, never
upgraded to ``completed``. The adapter is pure: it reads files, returns dicts, and copies no
absolute path, URI, traceback or exception message into a record, because Harbor files are full
of them (``trial_uri``, local task paths, tracebacks).

This module is the entry point (``read_harbor_job``) and the grouping of attempts into records.
The steps live beside it, each importing only the ones before it: ``values`` (coercions and
timings), ``files`` (each file read once, digested), ``trials`` (trial directories into
attempts), ``plan`` (planned trials matched to the trials found), ``scoring`` and ``records``.
``options`` holds the reader's whole input (``HarborReadOptions``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import SourceError
from benchledger.ledger.core.json_input import json_type
from benchledger.ledger.rules.record.fields import PROGRESS_KEYS
from benchledger.ledger.sources.base import SourceIngest, keep_tasks
from benchledger.ledger.sources.harbor.files import _Json, _Reader
from benchledger.ledger.sources.harbor.options import HarborReadOptions
from benchledger.ledger.sources.harbor.parallel import TrialReading
from benchledger.ledger.sources.harbor.plan import (
    _match_plan,
    _planned_counts,
    _planned_from_config,
    _planned_from_lock,
    _slim_lock,
    _Slot,
)
from benchledger.ledger.sources.harbor.records import (
    ADAPTER_VERSION,
    _build_record,
    _Job,
    _job_warnings,
    _run_key,
    _runner_job_base,
)
from benchledger.ledger.sources.harbor.scoring import (
    _attempt_status,
    _BenchmarkIds,
    _job_status,
    _primary_reward,
)
from benchledger.ledger.sources.harbor.trials import Progress, _Attempt
from benchledger.ledger.sources.harbor.values import _METRIC_KEYS, _dict, _number, _text

_ERR_NOT_DIR = "--harbor-job-dir does not exist or is not a directory"
_ERR_NOT_JOB = (
    "--harbor-job-dir is not a Harbor job directory "
    "(no config.json, lock.json, result.json or trial directories)"
)
_ERR_NOTHING = "--harbor-job-dir has no trials and no task list; nothing to ingest"


# --------------------------------------------------------------------------- entry point


def _run_group(job_dir: Path) -> str | None:
    parent = job_dir.parent
    if parent.name == "jobs" and parent.parent.name:
        return parent.parent.name
    return parent.name or None


def _job_identity(
    config: _Json, job_result: _Json, observed: list[_Attempt], dir_name: str
) -> tuple[str, str | None]:
    """Harbor's own names: ``job_name`` from config, job id from result (else a trial config)."""
    name = _text(config.obj.get("job_name")) or dir_name
    job_id = _text(job_result.obj.get("id"))
    if job_id is None:
        job_id = next((i for a in observed if (i := _text(a.config.get("job_id")))), None)
    return name, job_id


def _job_stats_provenance(job_result: _Json) -> dict[str, Any]:
    """Harbor's own job-wide figures, kept beside the records for comparison only."""
    res = job_result.obj
    stats = _dict(res.get("stats"))
    legacy = {"n_completed_trials": "n_trials", "n_errored_trials": "n_errors"}
    counters = {}
    for key in PROGRESS_KEYS:
        if key == "n_total_trials":  # the job-wide total sits beside the counters, not in them
            continue
        value = stats.get(key, stats.get(legacy.get(key, ""), None))
        if _number(value) is not None:
            counters[key] = value
    evals = {}
    for key, entry in _dict(stats.get("evals")).items():
        entry = _dict(entry)
        evals[key] = {
            "n_trials": entry.get("n_trials"),
            "n_errors": entry.get("n_errors"),
            "metrics": [m for m in entry.get("metrics") or [] if isinstance(m, dict)],
            "pass_at_k": _dict(entry.get("pass_at_k")),
        }
    return {
        "n_total_trials": res.get("n_total_trials"),
        "started_at": res.get("started_at"),
        "updated_at": res.get("updated_at"),
        "finished_at": res.get("finished_at"),
        "counters": counters,
        "tokens": {k: stats.get(k) for k, _ in _METRIC_KEYS},
        "evals": evals,
    }


def read_harbor_job(options: HarborReadOptions, progress: Progress | None = None) -> SourceIngest:
    """Read a Harbor 0.25 job directory into one raw record per (benchmark, task, agent, model).

    The path is resolved first so every spelling of it (``a/../job``, a symlink, another cwd)
    yields the same records; identity comes from Harbor's job name and the case, never the path.
    ``progress(done, total)`` is called as trial directories are read. With
    ``options.include_tasks`` only those cases' records are kept; the provenance still names
    every file read.
    """
    job_dir = options.job_dir
    if not job_dir.is_dir():
        raise SourceError(_ERR_NOT_DIR)
    job_dir = job_dir.resolve()
    with _Reader(str(job_dir)) as reader:
        ingest = _read_files(job_dir, reader, progress, options)
    return keep_tasks(ingest, options.include_tasks)


def _read_files(
    job_dir: Path, reader: _Reader, progress: Progress | None, opts: HarborReadOptions
) -> SourceIngest:
    """``read_harbor_job`` once the job directory is open for reading: read every file once,
    match the plan, group the attempts, build the records."""
    with TrialReading(reader, progress, opts.jobs) as trials:  # other cores start on them now
        config, lock = reader.json("config.json"), reader.json("lock.json")
        if lock.ok:  # freed before the trials are read, which then reuse its memory
            lock.data = _slim_lock(lock.data)
        job_result = reader.json("result.json")
        observed = trials.attempts()
    planned = _planned_from_lock(lock.obj) or _planned_from_config(config.obj)
    if config.state == lock.state == job_result.state == "missing" and not observed:
        raise SourceError(_ERR_NOT_JOB)
    warnings = _file_warnings(config, lock, job_result, observed)
    warnings += [f"{name}: a symbolic link, not read as a trial" for name in reader.skipped_links]
    owed = _match_plan(observed, planned)
    status = _job_status(job_result, observed, owed, bool(observed))
    for attempt in observed + owed:
        attempt.status = _attempt_status(attempt, status)

    name, job_id = _job_identity(config, job_result, observed, job_dir.name)
    job = _Job(
        name=name,
        job_id=job_id,
        status=status,
        config=config.obj,
        lock=lock.obj,
        result=job_result,
        has_config=config.state != "missing",
        has_lock=lock.state != "missing",
        has_trial_dirs=bool(observed),
        run_group_id=_run_group(job_dir),
    )
    groups, planned_by_group = _group(observed, owed, planned, config.obj, opts, job)
    if not groups:
        raise SourceError(_ERR_NOTHING)
    for attempt in observed:
        info = _dict(attempt.res.get("agent_info"))
        if info.get("name"):
            job.agent_infos.setdefault((attempt.agent, attempt.model), info)
    arms = _arms(groups, opts)
    job.arm_count, job.case_count = len(arms), len({(k[0], k[1]) for k in groups})
    job.runner_base, job.warnings = _runner_job_base(job), _job_warnings(job)
    records = [_build_record(k, v, planned_by_group.get(k), job, opts) for k, v in groups.items()]
    records.sort(key=lambda r: (r["benchmark_id"], r["case_id"], r.get("arm_id", "")))
    record_dirs = {
        _run_key(k, job): frozenset(a.dir_name for a in v if a.dir_name is not None)
        for k, v in groups.items()
    }
    provenance = _provenance(job, job_dir.name, reader, len(observed))
    return SourceIngest(
        records=records,
        provenance=provenance,
        warnings=warnings,
        record_dirs=record_dirs,
        root=job_dir,
    )


def _arms(groups: Mapping[tuple, Any], opts: HarborReadOptions) -> set[tuple]:
    """The job's (agent, model) arms; one ``--arm-id`` cannot name several."""
    arms = {(k[2], k[3]) for k in groups}
    if opts.arm_id and not opts.arm_map and len(arms) > 1:
        raise SourceError(
            f"--arm-id is ambiguous for a Harbor job with {len(arms)} agent/model arms; "
            "use --arm-map"
        )
    return arms


def _provenance(job: _Job, dir_name: str, reader: _Reader, trial_dirs: int) -> dict[str, Any]:
    """What was read, kept beside the records: the digests make a re-ingest idempotent."""
    return {
        "kind": "harbor_job",
        "adapter_version": ADAPTER_VERSION,
        "job_id": job.job_id,
        "job_name": job.name,
        "job_dir_name": dir_name,
        "job_status": job.status,
        "harbor_version": _text(_dict(job.lock.get("harbor")).get("version")),
        "trial_dir_count": trial_dirs,
        "files": dict(sorted(reader.files.items())),
        "harbor_job_stats": _job_stats_provenance(job.result) if job.result.ok else None,
    }


def _file_warnings(
    config: _Json, lock: _Json, job_result: _Json, observed: list[_Attempt]
) -> list[str]:
    """One line each, relative names only, for the CLI to show."""
    warnings = []
    for rel, state in (("config.json", config.state), ("lock.json", lock.state)):
        if state == "corrupt":
            warnings.append(f"{rel} is not valid JSON; its facts are ignored")
    if job_result.state == "corrupt":
        warnings.append("result.json is not valid JSON; the job is reported as corrupt")
    elif job_result.state == "missing" and observed:
        warnings.append("result.json is missing; the job is reported as incomplete")
    for attempt in observed:
        if attempt.result.state == "corrupt":
            warnings.append(
                f"{attempt.trial_name}/result.json is not valid JSON; the attempt is not scored"
            )
        if attempt.task is None:
            warnings.append(
                f"{attempt.trial_name}: no task name found; the attempt is not attributed"
            )
        warnings.extend(_reward_warnings(attempt))
    return warnings


def _reward_warnings(attempt: _Attempt) -> list[str]:
    """A reward that is not a number is not scored and one outside 0..1 is kept; either way
    the user is told which trial, so neither passes without a word."""
    primary, key, reason = _primary_reward(attempt.rewards if attempt.result.ok else None)
    where = f"{attempt.trial_name}/result.json verifier_result.rewards.{key}"
    if reason == "non_numeric_reward":
        found = json_type(attempt.rewards.get(key) if attempt.rewards and key is not None else None)
        return [f"{where} is {found}, not a number; the attempt is not scored"]
    if primary is not None and not 0.0 <= primary <= 1.0:
        return [f"{where} = {primary!r} is outside 0..1; kept as found and flagged"]
    return []


def _group(
    observed: list[_Attempt],
    owed: list[_Attempt],
    planned: list[_Slot],
    config: dict[str, Any],
    opts: HarborReadOptions,
    job: _Job,
) -> tuple[dict[tuple, list[_Attempt]], dict[tuple, int]]:
    """Group attempts by (benchmark id, task, agent, model); planned counts per group.

    Harbor's own names win over the plan's: an attempt without a result (running, killed, or
    never started) takes the agent name (``agent_info.name``) and task name (result
    ``task_name``) that the finished trials of the same planned agent and task carry, so an
    agent given by import path or a task whose task.toml renames it makes no phantom arm or
    case (issue 31 items 1-2; docs/formats/harbor.md §5.3).
    """
    ids = _BenchmarkIds(config)
    display: dict[tuple[str | None, str | None], str | None] = {}
    for attempt in observed:
        if attempt.info_agent:
            display.setdefault((attempt.match_agent, attempt.model), attempt.agent)
    for attempt in observed:
        display.setdefault((attempt.match_agent, attempt.model), attempt.agent)
    tasks: dict[str | None, str | None] = {}
    for attempt in observed:
        if attempt.result.ok and attempt.plan_task is not None:
            tasks.setdefault(attempt.plan_task, attempt.task)

    def bench(source: str | None) -> str:
        return opts.benchmark_id or ids(source)

    for attempt in observed:
        if not attempt.info_agent:
            attempt.agent = display.get((attempt.match_agent, attempt.model), attempt.agent)
        if not attempt.result.ok and attempt.plan_task is not None:
            attempt.task = tasks.get(attempt.plan_task, attempt.task)
    for attempt in owed:
        attempt.agent = display.get((attempt.match_agent, attempt.model), attempt.match_agent)
        attempt.task = tasks.get(attempt.task, attempt.task)
    groups: dict[tuple, list[_Attempt]] = {}
    for attempt in observed + owed:
        if attempt.task is None:
            job.unattributed += 1
            continue
        attempt.benchmark_id = bench(attempt.source)
        groups.setdefault(
            (attempt.benchmark_id, attempt.task, attempt.agent, attempt.model), []
        ).append(attempt)
    planned_by_group: Counter = Counter()
    for (task, source, match_agent, model), n in _planned_counts(planned).items():
        agent = display.get((match_agent, model), match_agent)
        planned_by_group[(bench(source), tasks.get(task, task), agent, model)] += n
    return groups, dict(planned_by_group)
