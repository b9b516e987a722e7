"""Harbor trial directories -> attempts: each trial's result read once, its facts taken while
it is parsed, its own config/lock read only when the result fails, its artifacts probed, never
read (docs/formats/harbor.md §4, §5.2).

Only the facts later steps use are kept (``_slim_result``): Harbor files are full of absolute
paths, URIs and tracebacks, none of which may reach a record.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchledger.ledger.core.errors import SourceError
from benchledger.ledger.core.input_files import shown_path
from benchledger.ledger.sources.harbor.files import _Json, _Reader
from benchledger.ledger.sources.harbor.values import (
    _MULTIPLIERS,
    _dict,
    _last_segment,
    _model_from_info,
    _text,
    _trial_times,
    _usage_of,
)

_TRIAL_MARKERS = ("result.json", "config.json", "lock.json")

Progress = Callable[[int, int], None]


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
    # What lock.json plans the trial under: the task config's name, else the last segment of its
    # path. A task whose task.toml names it otherwise (``harbor init`` writes ``org/<name>``)
    # has a result ``task_name`` that differs from it (docs/formats/harbor.md §5.3).
    plan_task: str | None = None
    info_agent: bool = False  # ``agent`` is Harbor's own ``agent_info.name``

    def __reduce__(self) -> tuple[type[_Attempt], tuple[Any, ...]]:
        """Pickled as its fields in order and rebuilt by one constructor call, as the workers
        of a parallel read (``parallel.py``) send attempts back: a slots dataclass's default
        state protocol runs Python code per object, which made joining a worker's 1,500
        attempts ~40 % slower on the command's critical path."""
        return (_Attempt, tuple(getattr(self, name) for name in self.__slots__))


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


# What later steps read from a TrialResult; the rest of what docs/formats/harbor.md §4 lets us use
# (names,
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
    """The TrialConfig fields docs/formats/harbor.md §4 lets us use; {} without a config.

    Its task, agent and verifier are kept whole: slimming them too was measured to cost more
    CPU (three small dict copies a trial) than the ~600 page faults it saves."""
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
    plan_task = _text(cfg_task.get("name")) or _last_segment(cfg_task.get("path"))
    task = _text(raw.get("task_name")) or plan_task
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
        _artifacts(reader, name, entries),  # files_present
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
        plan_task or task,  # plan_task
        info_name is not None,  # info_agent
    )


def _rewards(res: dict[str, Any]) -> dict[str, Any] | None:
    rewards = _dict(res.get("verifier_result")).get("rewards")
    return rewards if isinstance(rewards, dict) else None


def _artifacts(reader: _Reader, name: str, entries: set[str] | None) -> dict[str, bool]:
    """Which of trial ``name``'s artifact files exist; they are probed, never read. ``entries``
    is the trial's listing, or None when it was not listed: then every probe is made."""
    base = reader.path(name)
    fd = reader.dir_fd
    if entries is None:
        return {
            "trajectory": _exists(f"{base}/agent/trajectory.json", fd),
            "artifact_manifest": _exists(f"{base}/artifacts/manifest.json", fd),
            "reward_file": _exists(f"{base}/verifier/reward.txt", fd)
            or _exists(f"{base}/verifier/reward.json", fd),
        }
    return {
        "trajectory": "agent" in entries and _exists(f"{base}/agent/trajectory.json", fd),
        "artifact_manifest": "artifacts" in entries
        and _exists(f"{base}/artifacts/manifest.json", fd),
        "reward_file": "verifier" in entries
        and (
            _exists(f"{base}/verifier/reward.txt", fd)
            or _exists(f"{base}/verifier/reward.json", fd)
        ),
    }


def _exists(path: str, dir_fd: int | None) -> bool:
    """``os.path.exists`` without building a ``stat_result``: an existence probe is all we need,
    three per trial. Like ``exists`` it follows links; ``access`` checks the search rights with
    the real user id, which for this command is the effective one."""
    return os.access(path, os.F_OK, dir_fd=dir_fd)


def read_trials(
    reader: _Reader, progress: Progress | None, candidates: list[str] | None = None
) -> list[_Attempt]:
    """The job's trials in name order (``candidates``, when the caller listed them already),
    one after the other; ``progress(done, total)`` as they are read. Directories holding none
    of the trial files are left out."""
    if candidates is None:
        candidates = _list_trials(reader)
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


def _list_trials(reader: _Reader) -> list[str]:
    """The trial directories to read, in order; the links among them go to ``reader``."""
    try:
        candidates, reader.skipped_links = _trial_candidates(reader.root)
    except OSError as exc:
        raise SourceError(
            f"--harbor-job-dir cannot be listed: {exc.strerror or type(exc).__name__}; "
            "check its permissions"
        ) from None
    return candidates
