"""Harbor 0.25 job directory, reading: each job and trial file read once (digest recorded), a
trial's facts taken while its result is parsed, and the planned trials of lock.json/config.json
matched to the trial directories found (harbor.md §4, §5.1-5.3).

Only the facts later steps use are kept (``_slim_result``): Harbor files are full of absolute
paths, URIs and tracebacks, none of which may reach a record.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from benchledger.ledger.core.errors import InputError, SourceError
from benchledger.ledger.core.input_files import RUNNER_JSON_LIMIT, read_regular_file, shown_path
from benchledger.ledger.core.json_input import NUL_REASON, holds_nul, inexact_integer
from benchledger.ledger.rules.record.vocabulary import MULTIPLIER_KEYS as _MULTIPLIERS

if TYPE_CHECKING:
    from benchledger.ledger.sources.harbor.prefetch import Split
_TRIAL_MARKERS = ("result.json", "config.json", "lock.json")
_PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
_AGENT_TIMEOUT_OVERRIDES = ("override_timeout_sec", "override_setup_timeout_sec", "max_timeout_sec")
_METRIC_KEYS = (
    ("n_input_tokens", "input_tokens"),
    ("n_cache_tokens", "cache_tokens"),
    ("n_output_tokens", "output_tokens"),
    ("cost_usd", "cost_usd"),
)

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
    """Reads each file once and remembers its digest, keyed by the path relative to the job dir.

    Files are looked up from a handle on the job directory where the OS offers one (Linux's
    ``O_PATH``: no read permission on the directory needed, only the search permission every
    lookup below it needs anyway): the kernel then walks a trial's own path components
    instead of the job's whole absolute path again for each of the five lookups of every
    trial, ~15,000 at 3,000 trials (bench/README.md, issue 18). Elsewhere, or when the
    directory cannot be opened, paths are absolute as before. Close it (or use ``with``).
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, str] = {}
        self.skipped_links: list[str] = []
        self.dir_fd = _open_directory(root)

    def path(self, rel: str) -> str:
        """``rel`` as the OS calls taking ``dir_fd=self.dir_fd`` want it."""
        return rel if self.dir_fd is not None else f"{self.root}/{rel}"

    def close(self) -> None:
        if self.dir_fd is not None:
            os.close(self.dir_fd)
            self.dir_fd = None

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def json(self, rel: str) -> _Json:
        """The file as found; its digest is recorded exactly when its bytes could be read.

        A file that is there but must not be read (a FIFO, a device, a directory, one over the
        size limit, a link loop) stops the ingest with an error naming it: reading on would
        record a job state ("corrupt") that the runner never wrote."""
        try:
            raw = read_regular_file(
                self.path(rel),
                shown=f"Harbor job file {rel}",
                limit=RUNNER_JSON_LIMIT,
                dir_fd=self.dir_fd,
            )
        except FileNotFoundError:
            return _Json("missing")
        self.files[rel] = hashlib.sha256(raw).hexdigest()
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _Json("corrupt")
        if holds_nul(raw, data):
            raise InputError(f"Harbor job file {rel}: {NUL_REASON}")
        big = inexact_integer(raw)  # a token count past 64 bits, which orjson read rounded
        if big is not None:
            raise InputError(f"Harbor job file {rel}: {big}")
        # Harbor writes only objects; anything else is as unusable as torn JSON.
        return _Json("ok", data) if isinstance(data, dict) else _Json("corrupt")


_O_PATH = getattr(os, "O_PATH", 0)  # Linux
_LOOKUP_HANDLES = bool(_O_PATH) and {os.open, os.stat, os.access} <= os.supports_dir_fd


def _open_directory(root: str) -> int | None:
    """A lookup handle on ``root``, or None (no ``O_PATH`` here, or it cannot be opened: the
    absolute paths then meet the same error and report it as before)."""
    if not _LOOKUP_HANDLES:
        return None
    try:
        return os.open(root, _O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None


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
    stamps appear twice; ``epochs`` parses each distinct one once (a bad one is remembered as
    None). This runs once per trial, so the five spans are written out in one loop.
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
        first = epochs[start] if start in epochs else epochs.setdefault(start, _stamp_epoch(start))
        last = epochs[end] if end in epochs else epochs.setdefault(end, _stamp_epoch(end))
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
        started = epochs[started] if started in epochs else _stamp_epoch(started)
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
        elif type(value) is int:  # token counts: always finite, and a bool is no int here
            usage[out] = value
        elif value is not None and _number(value) is not None:
            usage[out] = value
    return usage


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
    """The TrialConfig fields harbor.md §4 lets us use; {} without a config.

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


def _scan_trials(reader: _Reader, progress: Progress | None) -> list[_Attempt]:
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


# --------------------------------------------------------------------------- read on two cores


def read_front_for_prefetch(job_dir: str, split: Split, write: Callable[[bytes], Any]) -> None:
    """The forked reader's part (``ledger.sources.harbor.prefetch``): the trials from the first
    on, each one claimed before it is read, until it meets the trials the command claimed
    from the back. Written as JSON lines while they are read: the trials in order, a batch per
    line (``_TrialLines``); then a last line with the directory as ``read_harbor_job``
    resolves it, the trial directories listed, the symbolic links skipped and the digests of
    the files read. Everything in an attempt came out of ``orjson.loads`` or is a bool, a
    finite float or a short text, so it comes out of JSON exactly as it went in (and JSON text
    never holds a raw newline)."""

    path = Path(job_dir)
    if not path.is_dir():
        raise SourceError("not a directory")
    root = str(path.resolve())
    with _Reader(root) as reader:
        candidates = _list_trials(reader)
        split.begin(len(candidates))
        lines = _TrialLines(write)
        for i, name in enumerate(candidates):
            if not split.take_front(i):
                break
            lines.add(_read_trial(reader, name))
        lines.flush()
        write(orjson.dumps([root, candidates, reader.skipped_links, reader.files]))


class _TrialLines:
    """The reader's trials as JSON lines of ``[new configs, attempts]``: each attempt is
    ``_attempt_fields`` (or null for a directory holding no trial) with its trial config
    replaced by its number in the job's table of distinct configs, each of which is written
    once, on the line of its first attempt.

    Why: a trial's config is ~1 KB of the ~1.8 KB an attempt takes, and a job's trials share
    a few (one per task here), so the command, which loads the reader's lines after both
    have read (~40 ms for 2,000 attempts, on one core), parsed the same config thousands of
    times; now it parses each once, and the attempts share it (nothing changes a config)."""

    def __init__(self, write: Callable[[bytes], Any]) -> None:
        self._write = write
        self._numbers: dict[bytes, int] = {}
        self._new: list[orjson.Fragment] = []
        self._batch: list[list[Any] | None] = []

    def add(self, attempt: _Attempt | None) -> None:
        fields = None if attempt is None else _attempt_fields(attempt)
        if fields is not None:
            text = orjson.dumps(fields[_CONFIG_FIELD])
            number = self._numbers.get(text)
            if number is None:
                number = self._numbers[text] = len(self._numbers)
                self._new.append(orjson.Fragment(text))
            fields[_CONFIG_FIELD] = number
        self._batch.append(fields)
        if len(self._batch) == _BATCH:
            self.flush()

    def flush(self) -> None:
        if self._batch:
            self._write(orjson.dumps([self._new, self._batch]) + b"\n")
            self._new, self._batch = [], []


def _loaded_trials(lines: list[bytes]) -> list[list[Any] | None]:
    """The attempts' fields from ``_TrialLines``' lines, each config in place (shared)."""
    configs: list[Any] = []
    front: list[list[Any] | None] = []
    for line in lines:
        new, batch = orjson.loads(line)
        configs += new
        for fields in batch:
            if fields is not None:
                fields[_CONFIG_FIELD] = configs[fields[_CONFIG_FIELD]]
            front.append(fields)
    return front


_BATCH = 256  # trials per line the reader writes


def observed_trials(
    reader: _Reader, progress: Progress | None, split: Split | None
) -> list[_Attempt]:
    """The job's trials: read together with ``split``'s reader, forked at start-up, when it
    reads this very directory (``ledger.sources.harbor.prefetch``), else all read here. Either
    way the same attempts and digests come out; anything unexpected falls back to reading
    here."""
    if split is None:
        return _scan_trials(reader, progress)
    before = dict(reader.files)
    try:
        attempts = _read_with(reader, split)
    except Exception:  # noqa: BLE001 - read alone: the same error, if any, in trial order
        attempts = None
    finally:
        split.close()
    if attempts is None:
        reader.files = before
        return _scan_trials(reader, progress)
    if progress:
        progress(0, len(attempts))
        progress(len(attempts), len(attempts))
    return [a for a in attempts if a is not None]


def _read_with(reader: _Reader, split: Split) -> list[_Attempt | None] | None:
    """Read from the back while the forked reader reads from the front; join both parts.
    None when the two did not read the same listing of the same directory."""
    candidates = _list_trials(reader)
    total = split.wait_begun()
    if total != len(candidates):
        return None
    back: dict[int, _Attempt | None] = {}
    for i in range(total - 1, -1, -1):
        if not split.take_back(i):
            break
        back[i] = _read_trial(reader, candidates[i])
    message = split.result()
    if message is None:
        return None
    *batches, last = message.split(b"\n")
    root, listed, links, files = orjson.loads(last)
    front = _loaded_trials(batches)
    if root != reader.root or listed != candidates or links != reader.skipped_links:
        return None
    if any(i not in back for i in range(len(front), total)):
        return None
    # A trial both sides read (at most one or two, where they met) counts as the front read
    # it: its digests come from there too.
    twice = tuple(f"{candidates[i]}/" for i in range(min(back, default=total), len(front)))
    if twice:
        for rel in [rel for rel in reader.files if rel.startswith(twice)]:
            del reader.files[rel]
    out: list[_Attempt | None] = [None if f is None else _attempt_from_fields(f) for f in front]
    out.extend(back[i] for i in range(len(front), total))
    reader.files.update(files)
    return out


_CONFIG_FIELD = 9  # the trial config in ``_attempt_fields`` (``_TrialLines``: its number)


def _attempt_fields(a: _Attempt) -> list[Any]:
    """A trial's attempt as just read, less the fields that are still at their defaults then
    (``lock``, ``status``, ``benchmark_id``, ``attempt_index``) and ``res``, which is the
    result's data (or ``{}``)."""
    return [
        a.task, a.source, a.agent, a.match_agent, a.model, a.trial_name, a.dir_name,
        a.result.state, a.result.data, a.config, a.config_source, a.files_present,
        a.timing, a.wall, a.started, a.exception_type, a.rewards, a.usage,
    ]  # fmt: skip


def _attempt_from_fields(f: list[Any]) -> _Attempt:
    result = _Json(f[7], f[8])
    res = result.data if result.ok else {}
    return _Attempt(
        f[0], f[1], f[2], f[3], f[4], f[5], f[6], result, f[_CONFIG_FIELD], f[10], None, f[11],
        "pending", "", 0, f[12], f[13], f[14], res, f[15], f[16], f[17],
    )  # fmt: skip


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


# What later steps read of a TrialLock: its task (name, source, digest), its AgentConfig
# (identity, kwargs, timeout overrides) and its multipliers. Its environment, verifier,
# skills and bridge inputs (two thirds of its ~1.5 KB) are not.
_LOCK_TRIAL_KEYS = ("task", "agent", *_MULTIPLIERS)


def _slim_lock(lock: dict[str, Any]) -> dict[str, Any]:
    """Keep only the lock.json fields later steps read, right after parsing.

    lock.json holds about 1.5 KB per planned trial (4.5 MB at 3,000 trials), and the matched
    trial entries used to keep the whole parsed document alive to the end of the command
    (~6 MB of peak RSS, ~1,500 page faults). Slimmed at once, the memory it held is reused by
    the trial reading that follows. The task and agent blocks are kept whole, by reference:
    copying their few read fields was measured to cost more CPU (~17k instructions a trial)
    than the faults it saved. Every later read (``_planned_from_lock``, ``_Attempt.lock``,
    ``_Job.lock``) sees the same values, truth values included (harbor.md §5.3, §5.7).
    """
    slim: dict[str, Any] = {}
    harbor = lock.get("harbor")
    if isinstance(harbor, dict) and "version" in harbor:
        slim["harbor"] = {"version": harbor["version"]}
    if "trials" in lock:
        trials = lock["trials"]
        # Harbor writes a list; anything else is left as found for the planner to judge.
        slim["trials"] = [_slim_lock_trial(t) for t in trials] if type(trials) is list else trials
    return slim


def _slim_lock_trial(trial: Any) -> dict[str, Any]:
    """One TrialLock's read fields; a non-object reads as {} (``_planned_from_lock`` reads it
    so). A trial with none of them is kept whole: "is there a lock trial" decides which
    multipliers a record cites. A plain loop: measured cheaper than a comprehension (a call
    of its own) and than ``dict(zip(keys, map(trial.get, keys)))``."""
    if not isinstance(trial, dict):
        return {}
    slim = {}
    for key in _LOCK_TRIAL_KEYS:
        if key in trial:
            slim[key] = trial[key]
    return slim or trial


def _planned_from_lock(lock: dict[str, Any]) -> list[_Slot]:
    """One slot per TrialLock. This runs once per planned trial (3,000 in a large job), so
    ``_dict``/``_text`` are written out in line: the eight calls were a third of its cost."""
    planned = []
    for trial in lock.get("trials") or []:
        if not isinstance(trial, dict):
            trial = {}
        task, agent = trial.get("task"), trial.get("agent")
        if not isinstance(task, dict):
            task = {}
        if not isinstance(agent, dict):
            agent = {}
        name, source = task.get("name"), task.get("source")
        match_agent, model = agent.get("name"), agent.get("model_name")
        if not (isinstance(match_agent, str) and match_agent):
            match_agent = _text(agent.get("import_path"))
        planned.append(
            _Slot(
                name if isinstance(name, str) and name else None,
                source if isinstance(source, str) and source else None,
                match_agent,
                model if isinstance(model, str) and model else None,
                trial,
            )
        )
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
