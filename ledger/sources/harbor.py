"""Harbor 0.25 job directory -> raw ``benchmark_run_v0`` records (harbor.md).

One record per (benchmark, task, agent, model): a case is a task, every attempt is kept, the score
is the mean of the attempts that have a primary reward. A missing reward is never a zero, and the
job's own state (running, cancelled, incomplete, corrupt, not started) is reported as found, never
upgraded to ``completed``. The adapter is pure: it reads files, returns dicts, and copies no
absolute path, URI, traceback or exception message into a record, because Harbor files are full
of them (``trial_uri``, local task paths, tracebacks).
"""

from __future__ import annotations

import gc
import hashlib
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ledger.errors import SourceError
from ledger.input_files import RUNNER_JSON_LIMIT, read_regular_file, shown_path
from ledger.json_input import json_type
from ledger.rules.vocabulary import MULTIPLIER_KEYS as _MULTIPLIERS
from ledger.safety import UNSAFE_PART, is_public_safe, join_public
from ledger.sources.base import SourceIngest

ADAPTER_VERSION = "harbor_job_adapter_v1"
SCHEMA_VERSION = "benchmark_run_v0"
SCORE_SOURCE = "harbor_attempt_mean"

_TRIAL_MARKERS = ("result.json", "config.json", "lock.json")
_PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
_AGENT_TIMEOUT_OVERRIDES = ("override_timeout_sec", "override_setup_timeout_sec", "max_timeout_sec")
_METRIC_KEYS = (
    ("n_input_tokens", "input_tokens"),
    ("n_cache_tokens", "cache_tokens"),
    ("n_output_tokens", "output_tokens"),
    ("cost_usd", "cost_usd"),
)

# Harbor 0.25.0's own error policy (harbor.md §2): exception type -> cause.
_CAUSES: dict[str, tuple[str, ...]] = {
    "sandbox_failed": (
        "EnvironmentStartTimeoutError SandboxBuildFailedError AgentSetupTimeoutError "
        "HealthcheckError SandboxLikelyOutOfMemoryError MemoryLimitExceededError SSHAccessError "
        "GKEExecStreamClosedError GKEPodNotFoundError RuntimeRequestError AddTestsDirError "
        "DownloadVerifierDirError"
    ).split(),
    "model_provider_failed": (
        "ApiError ApiRateLimitError ApiInternalServerError ApiOverloadedError "
        "ApiConnectionClosedError ApiResponseStalledError UnknownApiError "
        "NetworkConnectionError ApiConnectionError "
        "ApiUsageLimitError RateLimitError InternalServerError ServiceUnavailableError "
        "APIConnectionError APIError Timeout BadRequestError UnprocessableEntityError "
        "UnsupportedParamsError APIResponseValidationError BudgetExceededError "
        "AgentAuthenticationError ModelNotFoundError ApiProviderResourceNotFoundError "
        "AuthenticationError PermissionDeniedError NotFoundError"
    ).split(),
    "harbor_failed": (
        "ServiceOperationsUnsupportedError VercelScopeError DspyImportError MissingExtraError "
        "RegradeError"
    ).split(),
    "agent_exhausted_budget": (
        "AgentTimeoutError ContextWindowExceededError OutputTokenExceededError "
        "ContextLengthExceededError OutputLengthExceededError"
    ).split(),
    "agent_refused_task": ["AgentSafetyRefusalError", "ContentPolicyViolationError"],
    "verifier_failed": [
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
    ],
    "cancelled": ["CancelledError"],
}
_CAUSE_OF = {exc: cause for cause, excs in _CAUSES.items() for exc in excs}

# harbor.md §5.8: attribution labels in priority order.
_LABEL_PRIORITY = (
    "run_cancelled",
    "agent_setup_timeout_before_worker_start",
    "environment_setup_failed_before_worker",
    "model_provider_failure_before_solution_attempt",
    "runner_internal_failure",
    "agent_process_nonzero_exit_before_solution_attempt",
    "verifier_failed_no_reward",
    "verification_disabled_no_reward",
    "official_verifier_solution_failure",
    "agent_timeout_before_solution_completion",
    "agent_budget_exhausted_before_solution_completion",
    "agent_refused_task",
    "agent_exception_before_solution_completion",
)
_LABEL_RANK = {label: i for i, label in enumerate(_LABEL_PRIORITY)}
_CAUSE_LABEL = {
    "sandbox_failed": "environment_setup_failed_before_worker",
    "model_provider_failed": "model_provider_failure_before_solution_attempt",
    "harbor_failed": "runner_internal_failure",
    "agent_exhausted_budget": "agent_budget_exhausted_before_solution_completion",
    "agent_refused_task": "agent_refused_task",
    "verifier_failed": "verifier_failed_no_reward",
    "cancelled": "run_cancelled",
}
_EXCEPTION_LABEL = {
    "AgentSetupTimeoutError": "agent_setup_timeout_before_worker_start",
    "NonZeroAgentExitCodeError": "agent_process_nonzero_exit_before_solution_attempt",
    "AgentTimeoutError": "agent_timeout_before_solution_completion",
}

_LIFECYCLE = (
    "process_started",
    "runner_accepted_args",
    "job_root_materialized",
    "trial_started",
    "worker_started",
    "result_written",
    "verifier_scored",
)
_SLUG_RE = re.compile(r"[^a-z0-9._-]+")

_ERR_NOT_DIR = "--harbor-job-dir does not exist or is not a directory"
_ERR_NOT_JOB = (
    "--harbor-job-dir is not a Harbor job directory "
    "(no config.json, lock.json, result.json or trial directories)"
)
_ERR_NOTHING = "--harbor-job-dir has no trials and no task list; nothing to ingest"

Progress = Callable[[int, int], None]


# --------------------------------------------------------------------------- file reading


@dataclass(slots=True)
class _Json:
    """One JSON file as found: ``missing``, ``corrupt`` (unreadable or wrong shape) or ``ok``."""

    state: str
    data: Any = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    @property
    def obj(self) -> dict[str, Any]:
        return self.data if self.ok and isinstance(self.data, dict) else {}


class _Reader:
    """Reads each file once and remembers its digest, keyed by the path relative to the job dir."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, str] = {}
        self.skipped_links: list[str] = []

    def json(self, rel: str) -> _Json:
        """The file as found; its digest is recorded exactly when its bytes could be read.

        A file that is there but must not be read (a FIFO, a device, a directory, one over the
        size limit, a link loop) stops the ingest with an error naming it: reading on would
        record a job state ("corrupt") that the runner never wrote."""
        try:
            raw = read_regular_file(
                f"{self.root}/{rel}", shown=f"Harbor job file {rel}", limit=RUNNER_JSON_LIMIT
            )
        except FileNotFoundError:
            return _Json("missing")
        self.files[rel] = hashlib.sha256(raw).hexdigest()
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _Json("corrupt")
        # Harbor writes only objects; anything else is as unusable as torn JSON.
        return _Json("ok", data) if isinstance(data, dict) else _Json("corrupt")


# --------------------------------------------------------------------------- small helpers


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> float | int | None:
    """A finite int/float; booleans are not numbers (benchmark_run_v0 §1)."""
    if type(value) is float:  # the common case first
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def _last_segment(path: Any) -> str | None:
    if not isinstance(path, str):
        return None
    parts = [p for p in re.split(r"[\\/]+", path) if p]
    return parts[-1] if parts else None


def _stamp_epoch(stamp: str) -> float | None:
    """Epoch seconds; naive stamps are read as UTC, which only matters for order and durations."""
    try:
        dt = _fromisoformat(stamp)
    except ValueError:
        return None
    return (dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt).timestamp()


_fromisoformat = datetime.fromisoformat
# The trial itself (its wall time, under "") and then its phases: (record key, result key).
_TIMED_BLOCKS = (("", None), *((phase, phase) for phase in _PHASES))


def _trial_times(res: dict[str, Any]) -> tuple[dict[str, float], float | None, float | None]:
    """(phase durations, wall seconds, start epoch) of one trial result.

    A span is ``finished_at - started_at``, never negative, None unless both are stamps; Harbor
    stamps carry microseconds, and milliseconds keep sums free of float noise. Harbor's phases
    abut (each phase ends when the next starts, the trial starts with its first phase), so most
    stamps appear twice; ``epochs`` parses each distinct one once (a bad one is just retried).
    This runs once per trial, so the five spans are written out in one loop.
    """
    epochs: dict[str, float | None] = {}
    timing: dict[str, float] = {}
    wall = None
    for phase, key in _TIMED_BLOCKS:
        block = res if key is None else res.get(key)
        if not isinstance(block, dict):
            continue
        start, end = block.get("started_at"), block.get("finished_at")
        if not isinstance(start, str) or not isinstance(end, str):
            continue
        first = epochs.get(start)
        if first is None:
            first = epochs[start] = _stamp_epoch(start)
        last = epochs.get(end)
        if last is None:
            last = epochs[end] = _stamp_epoch(end)
        if first is None or last is None:
            continue
        seconds = last - first
        seconds = round(seconds, 3) if seconds > 0.0 else 0.0
        if key is None:
            wall = seconds
        else:
            timing[phase] = seconds
    started = res.get("started_at")
    if isinstance(started, str):
        epoch = epochs.get(started)
        started = _stamp_epoch(started) if epoch is None else epoch
    else:
        started = None
    return timing, wall, started


def _usage_of(agent_result: Any) -> dict[str, Any] | None:
    """An AgentResult's numeric token and cost figures under record names; None without one."""
    if not isinstance(agent_result, dict):
        return None
    usage = {}
    for key, out in _METRIC_KEYS:
        value = agent_result.get(key)
        if type(value) is float:  # _number's own first case, written out (costs)
            if math.isfinite(value):
                usage[out] = value
        elif value is not None and _number(value) is not None:
            usage[out] = value
    return usage


def slug(value: str) -> str:
    """harbor.md §5.6: lowercase, other runs -> '-', trimmed, at most 60 characters.

    Text failing the public-safety filter becomes ``unsafe``: slugging would launder it into
    an id that passes (``token=abc…`` -> ``token-abc…``), and ids reach the public ledger."""
    if not is_public_safe(value):
        return UNSAFE_PART
    return _SLUG_RE.sub("-", value.lower()).strip("-")[:60].strip("-")


def _model_from_info(agent_info: dict[str, Any]) -> str | None:
    info = _dict(agent_info.get("model_info"))
    name, provider = _text(info.get("name")), _text(info.get("provider"))
    if name and provider:
        return f"{provider}/{name}"
    return name


def _multipliers(block: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in _MULTIPLIERS:
        value = block.get(key)
        if value is None:  # Harbor writes null for every multiplier left at its default
            continue
        value = _number(value)
        if value is not None and value > 0:
            out[key] = float(value)
    return out


def _effective(multipliers: dict[str, float]) -> dict[str, float]:
    return {key: multipliers.get(key, 1.0) for key in _MULTIPLIERS}


def _pass_at_k(n: int, c: int) -> dict[str, float]:
    """Unbiased pass@k over k in {2,4,8,..} U {5,10,15,..}, k <= n (benchmark_run_v0 §4.4)."""
    ks: set[int] = set()
    k = 2
    while k <= n:
        ks.add(k)
        k *= 2
    ks.update(range(5, n + 1, 5))
    out: dict[str, float] = {}
    for k in sorted(ks):
        out[str(k)] = 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)
    return out


# --------------------------------------------------------------------------- attempts


@dataclass(slots=True)
class _Attempt:
    """One attempt of a case: a trial directory, or a planned trial that has none.

    ``res`` and the facts below it are taken from the result once, when the trial is read:
    every later step (status, scoring, trial blocks, record sums) asks for them again.
    """

    task: str | None
    source: str | None
    agent: str | None  # display agent: agent_info.name, else config name, else import path
    match_agent: str | None  # what lock.json calls it: config name, else import path
    model: str | None
    trial_name: str | None = None
    dir_name: str | None = None  # the trial directory, relative to the job; None when planned
    result: _Json = field(default_factory=lambda: _Json("missing"))
    config: dict[str, Any] = field(default_factory=dict)
    config_source: str | None = None
    lock: dict[str, Any] | None = None  # the TrialLock this attempt realises
    files_present: dict[str, bool] = field(default_factory=dict)
    status: str = "pending"
    benchmark_id: str = ""
    attempt_index: int = 0
    timing: dict[str, float] = field(default_factory=dict)
    wall: float | None = None
    started: float | None = None
    res: dict[str, Any] = field(default_factory=dict)  # what later steps read of the result
    exception_type: str | None = None
    rewards: dict[str, Any] | None = None  # verifier_result.rewards when it is an object
    usage: dict[str, Any] | None = None  # numeric agent_result metrics; None without agent_result


def _trial_candidates(job_dir: str) -> tuple[list[str], list[str]]:
    """Immediate non-hidden subdirectories, sorted so plan matching is deterministic, and the
    symbolic links among them: Harbor never links a trial, and a link may lead out of the job
    (or back into it), so links are named in a warning instead of being read."""
    names, links = [], []
    with os.scandir(job_dir) as it:
        for entry in it:
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                _require_utf8_name(entry.name)
                links.append(entry.name)
            elif entry.is_dir(follow_symlinks=False):
                _require_utf8_name(entry.name)
                names.append(entry.name)
    return sorted(names), sorted(links)


def _require_utf8_name(name: str) -> None:
    """Harbor names trials ``<task>__<id>`` in UTF-8. A name that is not cannot become a trial
    name, a provenance key or a warning, so the ingest stops and names it, escaped."""
    if name.isascii():
        return
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise SourceError(
            f"trial directory name is not valid UTF-8: {shown_path(name)}; "
            "rename or remove that directory and rerun"
        ) from None


# What later steps read from a TrialResult; the rest of what harbor.md §4 lets us use (names,
# source, stamps, rewards, exception type, usage, config) is taken while the trial is read.
_KEPT_RESULT_KEYS = ("task_checksum", "agent_info", "agent_execution")
_CONFIG_KEYS = ("task", "agent", "verifier", "job_id", *_MULTIPLIERS)


def _slim_result(res: dict[str, Any]) -> dict[str, Any]:
    """Keep only the TrialResult fields later steps read.

    Messages, tracebacks, ``trial_uri``, rollout details and metadata are dropped right after
    parsing: they may hold local paths, and freeing them early keeps a 3,000-trial ingest cheap.
    """
    slim = {k: res[k] for k in _KEPT_RESULT_KEYS if k in res}
    if res.get("step_results"):
        slim["step_results"] = True
    return slim


def _slim_config(res: dict[str, Any]) -> dict[str, Any]:
    """The TrialConfig fields harbor.md §4 lets us use; {} without a config."""
    config = _dict(res.get("config"))
    return {k: config[k] for k in _CONFIG_KEYS if k in config} if config else {}


def _read_trial(reader: _Reader, name: str) -> _Attempt | None:
    """Read one trial directory; None when it holds none of the trial files.

    The result is opened before the directory is listed: nearly every trial has one, and a
    result whose bytes could be read already makes the directory a trial, so a listing would
    only add a system call per trial. Without a readable result the listing decides.
    """
    rel = f"{name}/result.json"
    result = reader.json(rel)
    if rel in reader.files:  # its bytes were read
        return _trial_attempt(reader, name, result, None)
    try:
        entries = set(os.listdir(f"{reader.root}/{name}"))
    except OSError:
        return None
    if not entries.intersection(_TRIAL_MARKERS):
        return None
    if "result.json" not in entries:
        result = _Json("missing")
    return _trial_attempt(reader, name, result, entries)


def _trial_attempt(reader: _Reader, name: str, result: _Json, entries: set[str] | None) -> _Attempt:
    """A trial's attempt: its result, and its own config/lock only when the result fails.

    ``entries`` is the directory listing, or None when the directory was not listed; then each
    file is simply tried, and a file that is not there reads as ``missing`` just as an unlisted
    one would.
    """
    raw: dict[str, Any] = result.data if result.ok else {}
    if result.ok:  # the parsed document is freed as soon as its facts are taken
        result.data = _slim_result(raw)
    config = _slim_config(raw)
    config_source = "result" if config else None
    if not result.ok and (entries is None or "config.json" in entries):
        cfg_file = reader.json(f"{name}/config.json")
        config, config_source = cfg_file.obj, ("trial_config" if cfg_file.ok else None)
    cfg_task, cfg_agent = _dict(config.get("task")), _dict(config.get("agent"))
    task = (
        _text(raw.get("task_name"))
        or _text(cfg_task.get("name"))
        or _last_segment(cfg_task.get("path"))
    )
    if task is None and (entries is None or "lock.json" in entries):
        task = _text(_dict(reader.json(f"{name}/lock.json").obj.get("task")).get("name"))
    agent_info = _dict(raw.get("agent_info"))
    info_name = _text(agent_info.get("name"))
    cfg_name, cfg_import = _text(cfg_agent.get("name")), _text(cfg_agent.get("import_path"))
    timing, wall, started = _trial_times(raw)
    # Positional, in field order: a keyword call to a class builds a dict of 18 keywords, and
    # this runs once per trial. The comments name the fields.
    return _Attempt(
        task,
        _text(raw.get("source")) or _text(cfg_task.get("source")),  # source
        info_name or cfg_name or cfg_import,  # agent
        cfg_name or cfg_import or info_name,  # match_agent
        _text(cfg_agent.get("model_name")) or _model_from_info(agent_info),  # model
        _text(raw.get("trial_name")) or name,  # trial_name
        name,  # dir_name
        result,
        config,
        config_source,
        None,  # lock: set when the plan is matched
        _artifacts(f"{reader.root}/{name}", entries),  # files_present
        "pending",  # status: set once the job status is known
        "",  # benchmark_id: set when grouped
        0,  # attempt_index: set when the record is built
        timing,
        wall,
        started,
        result.data if result.ok else {},  # res
        _text(_dict(raw.get("exception_info")).get("exception_type")),  # exception_type
        _rewards(raw),
        _usage_of(raw.get("agent_result")),  # usage
    )


def _rewards(res: dict[str, Any]) -> dict[str, Any] | None:
    rewards = _dict(res.get("verifier_result")).get("rewards")
    return rewards if isinstance(rewards, dict) else None


def _artifacts(base: str, entries: set[str] | None) -> dict[str, bool]:
    """Which of a trial's artifact files exist; they are probed, never read. ``entries`` is the
    trial's listing, or None when it was not listed: then every probe is made."""
    if entries is None:
        return {
            "trajectory": _exists(f"{base}/agent/trajectory.json"),
            "artifact_manifest": _exists(f"{base}/artifacts/manifest.json"),
            "reward_file": _exists(f"{base}/verifier/reward.txt")
            or _exists(f"{base}/verifier/reward.json"),
        }
    return {
        "trajectory": "agent" in entries and _exists(f"{base}/agent/trajectory.json"),
        "artifact_manifest": "artifacts" in entries and _exists(f"{base}/artifacts/manifest.json"),
        "reward_file": "verifier" in entries
        and (_exists(f"{base}/verifier/reward.txt") or _exists(f"{base}/verifier/reward.json")),
    }


def _exists(path: str) -> bool:
    """``os.path.exists`` without building a ``stat_result``: an existence probe is all we need,
    three per trial. Like ``exists`` it follows links; ``access`` checks the search rights with
    the real user id, which for this command is the effective one."""
    return os.access(path, os.F_OK)


def _scan_trials(reader: _Reader, progress: Progress | None) -> list[_Attempt]:
    try:
        candidates, reader.skipped_links = _trial_candidates(reader.root)
    except OSError as exc:
        raise SourceError(
            f"--harbor-job-dir cannot be listed: {exc.strerror or type(exc).__name__}; "
            "check its permissions"
        ) from None
    total = len(candidates)
    if progress:
        progress(0, total)
    attempts: list[_Attempt] = []
    for done, name in enumerate(candidates, 1):
        attempt = _read_trial(reader, name)
        if attempt is not None:
            attempts.append(attempt)
        if progress:
            progress(done, total)
    return attempts


# --------------------------------------------------------------------------- the plan


class _Slot(NamedTuple):
    """One planned trial: what an observed attempt must match to realise it.

    A slot becomes an ``_Attempt`` only when no trial directory realised it; a 3,000-trial
    plan is otherwise 3,000 full attempt objects made just to be matched and dropped.
    """

    task: str | None
    source: str | None
    match_agent: str | None
    model: str | None
    lock: dict[str, Any] | None = None

    def owed(self) -> _Attempt:
        return _Attempt(
            task=self.task,
            source=self.source,
            agent=self.match_agent,
            match_agent=self.match_agent,
            model=self.model,
            lock=self.lock,
        )


def _planned_from_lock(lock: dict[str, Any]) -> list[_Slot]:
    planned = []
    for trial in lock.get("trials") or []:
        trial = _dict(trial)
        task, agent = _dict(trial.get("task")), _dict(trial.get("agent"))
        name, source = _text(task.get("name")), _text(task.get("source"))
        match_agent = _text(agent.get("name")) or _text(agent.get("import_path"))
        planned.append(_Slot(name, source, match_agent, _text(agent.get("model_name")), trial))
    return planned


def _planned_from_config(config: dict[str, Any]) -> list[_Slot]:
    """Without lock trials, the config's task list x agents x n_attempts is the plan (§5.3)."""
    tasks: list[tuple[str, str | None]] = []
    for ds in config.get("datasets") or []:
        ds = _dict(ds)
        for name in ds.get("task_names") or []:
            if _text(name):
                tasks.append((name, _text(ds.get("name"))))
    for task in config.get("tasks") or []:
        task = _dict(task)
        name = _text(task.get("name")) or _last_segment(task.get("path"))
        if name:
            tasks.append((name, _text(task.get("source"))))
    n_attempts = config.get("n_attempts")
    n_attempts = n_attempts if isinstance(n_attempts, int) and n_attempts > 0 else 1
    planned = []
    for agent in config.get("agents") or []:
        agent = _dict(agent)
        match_agent = _text(agent.get("name")) or _text(agent.get("import_path"))
        if match_agent is None:
            continue
        for _ in range(n_attempts):
            for task, source in tasks:
                planned.append(_Slot(task, source, match_agent, _text(agent.get("model_name"))))
    return planned


def _match_plan(observed: list[_Attempt], planned: list[_Slot]) -> list[_Attempt]:
    """Observed attempts consume planned slots in trial-name order; the rest are still owed.

    A second, looser pass ignores the source so a trial whose config lost its source does not
    leave a phantom pending attempt behind.
    """
    free = list(planned)
    keys: list[Callable[[Any], tuple]] = [
        attrgetter("task", "source", "match_agent", "model"),
        attrgetter("task", "match_agent", "model"),
    ]
    unmatched = sorted((a for a in observed if a.task), key=lambda a: a.trial_name or "")
    for key in keys:
        if not unmatched:
            break
        slots: dict[tuple, list[int]] = {}
        for i, slot in enumerate(free):
            slots.setdefault(key(slot), []).append(i)
        taken: set[int] = set()
        still: list[_Attempt] = []
        for attempt in unmatched:
            queue = slots.get(key(attempt))
            if queue:
                i = queue.pop(0)
                taken.add(i)
                attempt.lock = free[i].lock
            else:
                still.append(attempt)
        free = [slot for i, slot in enumerate(free) if i not in taken]
        unmatched = still
    return [slot.owed() for slot in free]


def _planned_counts(planned: list[_Slot]) -> Counter:
    return Counter((a.task, a.source, a.match_agent, a.model) for a in planned)


# --------------------------------------------------------------------------- job status


def _job_status(
    job_result: _Json, observed: list[_Attempt], owed: list[_Attempt], has_trial_dirs: bool
) -> str:
    """harbor.md §5.2, first match wins."""
    if job_result.state == "corrupt":
        return "corrupt"
    if job_result.state == "missing":
        return "incomplete" if has_trial_dirs else "not_started"
    stats = _dict(job_result.obj.get("stats"))
    cancelled = _number(stats.get("n_cancelled_trials")) or 0
    if cancelled > 0 or any(a.exception_type == "CancelledError" for a in observed):
        return "cancelled"
    if job_result.obj.get("finished_at") is None:
        return "running"
    if owed or any(a.result.state == "missing" for a in observed):
        return "incomplete"
    return "completed"


def _attempt_status(attempt: _Attempt, job_status: str) -> str:
    if attempt.dir_name is None:
        return (
            "pending" if job_status in ("running", "not_started", "cancelled") else "result_missing"
        )
    if attempt.result.state == "corrupt":
        return "result_corrupt"
    if attempt.result.ok:
        return "cancelled" if attempt.exception_type == "CancelledError" else "completed"
    return "running" if job_status == "running" else "result_missing"


# --------------------------------------------------------------------------- benchmark ids


class _BenchmarkIds:
    """Attempt source -> ``name@version`` from the config's datasets (§5.3.4), cached."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.datasets = [_dict(d) for d in config.get("datasets") or []]
        self.cache: dict[str | None, str] = {}

    def __call__(self, source: str | None) -> str:
        if source not in self.cache:
            self.cache[source] = self._resolve(source)
        return self.cache[source]

    def _resolve(self, source: str | None) -> str:
        if source is None:
            return "harbor-adhoc"
        for ds in self.datasets:
            name = _text(ds.get("name"))
            if name == source or (name and _last_segment(ds.get("path")) == source):
                for suffix in ("version", "ref"):
                    if _text(ds.get(suffix)):
                        return f"{name}@{ds[suffix]}"
                return name
        return source


# --------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class _Scored:
    """What an attempt contributes to the case score."""

    reward: dict[str, float | int]
    primary: float | None
    primary_key: str | None
    reason: str | None
    cause: str | None
    label: str | None


def _primary_reward(rewards: dict[str, Any] | None) -> tuple[float | None, str | None, str | None]:
    """(value, key, unscored reason) from a reward map (harbor.md §5.4)."""
    if not rewards:
        return None, None, None
    if len(rewards) == 1:
        key = next(iter(rewards))
    elif "reward" in rewards:
        key = "reward"
    else:
        return None, None, "multi_key_reward_without_reward_key"
    value = _number(rewards[key])
    if value is None:
        return None, key, "non_numeric_reward"
    return float(value), key, None


def _unscored_reason(attempt: _Attempt, cause: str | None, reward_reason: str | None) -> str:
    status = attempt.status
    if status == "pending":
        return "trial_pending"
    if status == "running":
        return "trial_running"
    if status == "result_missing":
        return "trial_result_missing"
    if status == "result_corrupt":
        return "trial_result_corrupt"
    if status == "cancelled":
        return "trial_cancelled"
    if _dict(attempt.config.get("verifier")).get("disable") is True:
        return "verification_disabled"
    if cause == "verifier_failed":
        return "verifier_failed"
    if attempt.exception_type and not attempt.rewards:
        return "exception_before_verification"
    return reward_reason or "reward_missing"


def _attribution(
    exception: str | None, cause: str | None, primary: float | None, reason: str | None
) -> str | None:
    """The attempt's attribution label (harbor.md §5.8); None for a non-zero clean score."""
    if exception:
        return _EXCEPTION_LABEL.get(exception) or _CAUSE_LABEL.get(
            cause or "", "agent_exception_before_solution_completion"
        )
    if reason == "verification_disabled":
        return "verification_disabled_no_reward"
    if primary == 0.0:
        return "official_verifier_solution_failure"
    return None


def _score(attempt: _Attempt) -> _Scored:
    exception = attempt.exception_type
    cause = (_CAUSE_OF.get(exception, "unclassified")) if exception else None
    rewards = attempt.rewards if attempt.result.ok else None
    reward = {k: v for k, v in rewards.items() if _number(v) is not None} if rewards else {}
    primary, key, reward_reason = _primary_reward(rewards)
    reason = None if primary is not None else _unscored_reason(attempt, cause, reward_reason)
    return _Scored(
        reward, primary, key, reason, cause, _attribution(exception, cause, primary, reason)
    )


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
    """Effective multipliers: trial config, else lock trial, else job config (harbor.md §5.7)."""
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
        agg["runner_equivalent_mean"] = sum(s.primary for s in scored) / denominator
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
    sums: dict[str, float | int] = {}
    with_usage = 0
    for attempt in attempts:
        if attempt.usage is None:
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
    phase = "not_started"
    for name in _LIFECYCLE:  # cumulative: a phase counts only if every earlier one does
        if not reached[name]:
            break
        phase = name
    hit = _LIFECYCLE.index(phase) + 1 if phase != "not_started" else 0
    counted = {name: i < hit for i, name in enumerate(_LIFECYCLE)}
    countable = {
        "launcher": counted["process_started"],
        "case": counted["trial_started"],
        "solver": counted["worker_started"],
        "verifier": counted["verifier_scored"],
        "official_score": counted["verifier_scored"] and run_status == "completed",
    }
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
    if not counted["worker_started"]:
        failure_class = "job_materialization_failed"
    elif score is None:
        top = reasons.most_common(1)[0][0] if reasons else None
        failure_class = "verifier_failed" if top == "verifier_failed" else "official_score_failed"
    elif score == 0:
        failure_class = "solver_failed"
    else:
        failure_class = "none"
    if attribution != "none":
        label = attribution
    elif score is None:
        label = "official_score_missing"
    elif score == 0:
        label = "official_score_zero"
    else:
        label = "none"
    return {
        "schema_version": "benchmark_attempt_accounting_v0",
        "lifecycle_phase": phase,
        "failure_label": label,
        "failure_class": failure_class,
        **{f"{k}_attempt_countable": v for k, v in countable.items()},
        "attempts": {k: {"attempted": attempted[k], "countable": countable[k]} for k in countable},
    }


def _evals_key(attempts: list[_Attempt]) -> str:
    """``agent__model__source`` as Harbor keys ``stats.evals`` (names from ``agent_info``).

    The raw key: it looks up Harbor's own metrics; ``_runner_job`` publishes it with every part
    that fails the safety filter replaced."""
    first = attempts[0]
    for attempt in attempts:
        info = _dict(attempt.res.get("agent_info"))
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


@dataclass
class _Options:
    benchmark_id: str | None
    arm_id: str | None
    arm_map: list[tuple[str, str | None, str]]
    arm_role: str | None
    run_group_id: str | None


def _arm(
    agent: str | None, match_agent: str | None, model: str | None, kwargs: dict, opts: _Options
) -> tuple[str | None, str]:
    """(arm_id or None, arm_source) per harbor.md §5.6."""
    for map_agent, map_model, arm in opts.arm_map:
        if map_agent in (agent, match_agent) and (map_model is None or map_model == model):
            return arm, "explicit"
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


def _build_record(
    key: tuple, attempts: list[_Attempt], planned: int | None, job: _Job, opts: _Options
) -> dict[str, Any]:
    """One raw ``benchmark_run_v0`` record for a (benchmark, task, agent, model) group."""
    benchmark_id, task, agent, model = key
    attempts.sort(key=_attempt_order)
    for i, attempt in enumerate(attempts, 1):
        attempt.attempt_index = i
    scores = [_score(a) for a in attempts]
    run_status = job.status
    scored = [s.primary for s in scores if s.primary is not None]
    agent_cfg = _agent_config(attempts, job)
    kwargs = _dict(agent_cfg.get("kwargs"))
    arm_id, _ = _arm(agent, attempts[0].match_agent, model, kwargs, opts)
    version = next(
        (v for a in attempts if (v := _text(_dict(a.res.get("agent_info")).get("version")))), None
    )
    import_path = _text(agent_cfg.get("import_path"))

    labels = sorted({s.label for s in scores if s.label}, key=_LABEL_RANK.__getitem__)
    score = sum(scored) / len(scored) if scored else None
    attribution = "none" if score is not None and score > 0 else (labels[0] if labels else "none")
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
        "agent": {
            k: v
            for k, v in {
                "name": agent,
                "import_path": import_path,
                "model": model,
                "version": version,
                "kwargs_keys": sorted(kwargs) or None,
            }.items()
            if v is not None
        },
        "official_score_source": SCORE_SOURCE,
        "official_score_status": "missing"
        if score is None
        else ("completed" if run_status == "completed" else "provisional"),
        "official_task_score": {"kind": "harbor_verifier_reward_missing", "source": SCORE_SOURCE}
        if score is None
        else {
            "kind": "harbor_verifier_reward",
            "value": score,
            "passed": all(s == 1.0 for s in scored),
            "source": SCORE_SOURCE,
        },
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
        "runner_job": _runner_job(job, _evals_key(attempts)),
        "real_run": True,
        "submit_eligible": False,
        "leaderboard_evidence": False,
        "read_boundary": {
            "compact_only": True,
            "raw_artifacts_read": False,
            "task_text_read": False,
            "trajectory_read": False,
            "controller_trace_read": False,
            "local_paths_recorded": False,
            "docker_invoked": False,
            "model_api_invoked": False,
            "upload_invoked": False,
        },
    }
    if score is not None:
        record["official_score"] = score
        binary = record["score_aggregation"].get("binary_rewards", False)
        if binary and len(scored) >= 2:
            record["pass_at_k"] = _pass_at_k(len(scored), sum(1 for s in scored if s == 1.0))
            record["pass_at_k_basis"] = "scored_attempts_only"
    return {k: v for k, v in record.items() if v not in (None, [], {})}


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


# --------------------------------------------------------------------------- entry point


def _parse_arm_map(entries: Iterable[str]) -> list[tuple[str, str | None, str]]:
    parsed = []
    for entry in entries:
        left, sep, arm = entry.partition("=")
        agent, _, model = left.partition(":")
        if not sep or not agent.strip() or not arm.strip():
            raise SourceError(f"invalid --arm-map entry: {entry}")
        parsed.append((agent.strip(), model.strip() or None, arm.strip()))
    return parsed


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
    for key in (
        "n_completed_trials",
        "n_errored_trials",
        "n_running_trials",
        "n_pending_trials",
        "n_cancelled_trials",
        "n_retries",
    ):
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


def read_harbor_job(
    job_dir: Path,
    *,
    progress: Progress | None = None,
    benchmark_id: str | None = None,
    arm_id: str | None = None,
    arm_map: Iterable[str] = (),
    arm_role: str | None = None,
    run_group_id: str | None = None,
) -> SourceIngest:
    """Read a Harbor 0.25 job directory into one raw record per (benchmark, task, agent, model).

    The path is resolved first so every spelling of it (``a/../job``, a symlink, another cwd)
    yields the same records; identity comes from Harbor's job name and the case, never the path.
    ``progress(done, total)`` is called as trial directories are read.
    """
    # Parsed JSON is acyclic, so reference counting frees it; cyclic-GC passes over the
    # hundreds of thousands of live dicts of a large job would otherwise dominate the ingest.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _read_job(
            Path(job_dir),
            progress,
            _Options(benchmark_id, arm_id, _parse_arm_map(arm_map), arm_role, run_group_id),
        )
    finally:
        if gc_was_enabled:
            gc.enable()


def _read_job(job_dir: Path, progress: Progress | None, opts: _Options) -> SourceIngest:
    """The ingest proper (harbor.md §5): validate, read once, plan, group, build records."""
    if not job_dir.is_dir():
        raise SourceError(_ERR_NOT_DIR)
    job_dir = job_dir.resolve()
    reader = _Reader(str(job_dir))
    config, lock, job_result = (reader.json(n) for n in ("config.json", "lock.json", "result.json"))
    observed = _scan_trials(reader, progress)
    if config.state == lock.state == job_result.state == "missing" and not observed:
        raise SourceError(_ERR_NOT_JOB)

    warnings = _file_warnings(config, lock, job_result, observed)
    warnings += [f"{name}: a symbolic link, not read as a trial" for name in reader.skipped_links]
    planned = _planned_from_lock(lock.obj) or _planned_from_config(config.obj)
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
    arms = {(k[2], k[3]) for k in groups}
    if opts.arm_id and not opts.arm_map and len(arms) > 1:
        raise SourceError(
            f"--arm-id is ambiguous for a Harbor job with {len(arms)} agent/model arms; "
            "use --arm-map"
        )
    job.arm_count, job.case_count = len(arms), len({(k[0], k[1]) for k in groups})
    job.runner_base, job.warnings = _runner_job_base(job), _job_warnings(job)
    records = [_build_record(k, v, planned_by_group.get(k), job, opts) for k, v in groups.items()]
    records.sort(key=lambda r: (r["benchmark_id"], r["case_id"], r.get("arm_id", "")))
    record_dirs = {
        _run_key(k, job): frozenset(a.dir_name for a in v if a.dir_name is not None)
        for k, v in groups.items()
    }
    provenance = {
        "kind": "harbor_job",
        "adapter_version": ADAPTER_VERSION,
        "job_id": job_id,
        "job_name": name,
        "job_dir_name": job_dir.name,
        "job_status": status,
        "harbor_version": _text(_dict(lock.obj.get("harbor")).get("version")),
        "trial_dir_count": len(observed),
        "files": dict(sorted(reader.files.items())),
        "harbor_job_stats": _job_stats_provenance(job_result) if job_result.ok else None,
    }
    return SourceIngest(
        records=records, provenance=provenance, warnings=warnings, record_dirs=record_dirs
    )


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
        found = json_type(attempt.rewards.get(key) if attempt.rewards else None)
        return [f"{where} is {found}, not a number; the attempt is not scored"]
    if primary is not None and not 0.0 <= primary <= 1.0:
        return [f"{where} = {primary!r} is outside 0..1; kept as found and flagged"]
    return []


def _group(
    observed: list[_Attempt],
    owed: list[_Attempt],
    planned: list[_Slot],
    config: dict[str, Any],
    opts: _Options,
    job: _Job,
) -> tuple[dict[tuple, list[_Attempt]], dict[tuple, int]]:
    """Group attempts by (benchmark id, task, agent, model); planned counts per group."""
    ids = _BenchmarkIds(config)
    display = {}
    for attempt in observed:
        display.setdefault((attempt.match_agent, attempt.model), attempt.agent)

    def bench(source: str | None) -> str:
        return opts.benchmark_id or ids(source)

    for attempt in owed:
        attempt.agent = display.get((attempt.match_agent, attempt.model), attempt.match_agent)
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
        planned_by_group[(bench(source), task, agent, model)] += n
    return groups, dict(planned_by_group)
