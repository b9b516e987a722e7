"""BenchFlow 0.7.11 result trees, reading: the scan for rollouts (BenchFlow's own boundary
rules), each candidate's ``result.json`` read once, the selection policies, BenchFlow's own
verdict and reward (docs/formats/benchflow.md §4, §5.2-5.3), and the small file and value helpers
the other
``benchflow_*`` modules share.

Only paths relative to the ingest root ever leave these modules: BenchFlow's files carry
absolute host paths.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from benchledger.ledger.core.errors import InputError, SourceError
from benchledger.ledger.core.input_files import RUNNER_JSON_LIMIT, read_regular_file, shown_path
from benchledger.ledger.core.json_input import holds_nul, inexact_integer
from benchledger.ledger.core.safety import finite_number
from benchledger.ledger.sources.base import sha256_bytes

ADAPTER_VERSION = "benchflow-0.7.11-adapter/1"
SOURCE_RUNNER = "benchflow"
ADHOC_BENCHMARK_ID = "benchflow-adhoc"
MAX_ATTEMPT_CANDIDATES = 20

POLICY_ALIASES = {
    "benchflow": "benchflow_canonical",
    "benchflow_canonical": "benchflow_canonical",
    "newest": "newest",
    "all_attempts": "all_attempts",
}
TIE_BREAKERS = {
    "benchflow_canonical": "scored_then_newest_mtime_then_path",
    "newest": "newest_mtime_then_path",
    "all_attempts": "all",
    "explicit_result_json": "explicit",
}

_ROLLOUT_DIR = re.compile(r"^(?P<task>.+)__[0-9a-f]{8}$")


# ---------------------------------------------------------------------------------------------
# Candidates and the scan


@dataclass
class Candidate:
    """One rollout that might stand for a task: a readable, corrupt, or missing `result.json`.

    `rollout_dir` is the only absolute path and is kept out of every record and provenance.
    """

    relative_path: str
    rollout_dir: Path = field(repr=False)
    status: str  # completed | result_corrupt | result_missing
    task: str | None
    agent: str | None = None
    model: str | None = None
    mtime: float | None = None
    data: dict[str, Any] | None = field(default=None, repr=False)
    sha256: str | None = None

    @property
    def rollout_name(self) -> str:
        """BenchFlow's trial id; the directory name only when the result does not say."""
        name = (self.data or {}).get("rollout_name")
        return name.strip() if isinstance(name, str) and name.strip() else self.rollout_dir.name

    @property
    def verdict(self) -> str:
        """BenchFlow's verdict, or the candidate status when there is no readable result."""
        return benchflow_verdict(self.data) if self.data is not None else self.status

    @property
    def primary_reward(self) -> float | None:
        return primary_reward(self.data) if self.data is not None else None

    @property
    def scored(self) -> bool:
        return self.primary_reward is not None

    @property
    def rank_tier(self) -> int:
        """BenchFlow's 'has a rewards object' first; then what BenchFlow would skip, lowest."""
        if self.status == "result_missing":
            return 0
        if self.data is None:
            return 1
        if isinstance(self.data.get("rewards"), dict):
            return 4
        if self.data.get("verifier_error") or self.data.get("scoring") is not None:
            return 3
        return 2

    def summary(self) -> dict[str, Any]:
        """The public line of `selection.candidates`: no absolute path, no free text."""
        out: dict[str, Any] = {
            "relative_path": self.relative_path,
            "scored": self.scored,
            "verdict": self.verdict,
        }
        if self.mtime is not None:
            out["mtime"] = _iso_utc(self.mtime)
        return out


@dataclass
class Scan:
    """Everything a walk of the ingest root found, including what BenchFlow would not count."""

    candidates: list[Candidate]
    ignored_reviewer_count: int = 0
    ignored_nested_count: int = 0
    ignored_relative_paths: dict[str, str] = field(default_factory=dict)
    unattributed_relative_paths: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)


def scan_benchflow_root(root: Path, *, strict: bool = False) -> Scan:
    """Walk `root` with BenchFlow's boundary rules (§5.2); every `result.json` read is hashed."""
    root = Path(root)
    results, solver_dirs, partial_dirs = _walk(root)
    trial_dirs = {path.parent for path in results} | solver_dirs
    scan = Scan(candidates=[])
    for path in results:
        rel = _rel(path, root)
        if _below_trial_dir(path.parent, root, trial_dirs):
            scan.ignored_nested_count += 1
            scan.ignored_relative_paths[rel] = "nested_below_trial_dir"
            continue
        _scan_result(path, rel, scan, strict=strict)
    for rollout in partial_dirs:
        if rollout in trial_dirs or _below_trial_dir(rollout, root, trial_dirs):
            continue
        match = _ROLLOUT_DIR.match(rollout.name)
        if match:
            scan.candidates.append(_missing_candidate(rollout, root, match["task"]))
    scan.candidates.sort(key=lambda c: c.relative_path)
    return scan


def discover_benchflow_results(
    root: Path, *, task: str | Sequence[str] | None = None
) -> list[Candidate]:
    """Candidate rollouts below `root`, reviewer and nested results already set aside."""
    wanted = _wanted_tasks(task)
    candidates = scan_benchflow_root(root).candidates
    return [c for c in candidates if wanted is None or c.task in wanted]


def _walk(root: Path) -> tuple[list[Path], set[Path], list[Path]]:
    """One pass over the tree; hidden directories are included like BenchFlow's rglob."""
    results: list[Path] = []
    solver_dirs: set[Path] = set()
    partial_dirs: list[Path] = []
    for dirpath, _dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        names = set(filenames)
        if names & _READ_NAMES:
            _require_utf8_path(_rel(here, root))
        if "result.json" in names:
            results.append(here / "result.json")
        if "solver.json" in names:
            solver_dirs.add(here)
        partial = "result.json" not in names and names & _PARTIAL_MARKERS
        if partial and _ROLLOUT_DIR.match(here.name):
            _require_utf8_path(_rel(here, root))
            partial_dirs.append(here)
    results.sort(key=lambda p: _rel(p, root))
    return results, solver_dirs, partial_dirs


_READ_NAMES = frozenset({"result.json", "solver.json", "timing.json", "prompts.json"})
# What a rollout writes before its final result.json: its config.json first (a rollout killed
# mid-agent has only that, beside empty agent/, verifier/, artifacts/ and trajectory/), then
# timing.json and prompts.json (docs/formats/benchflow.md §1).
_PARTIAL_MARKERS = frozenset({"config.json", "timing.json", "prompts.json"})


def _require_utf8_path(rel: str) -> None:
    """A rollout path becomes a trial name, a provenance key and a warning, all UTF-8; one that
    is not stops the ingest and is named, escaped."""
    if rel.isascii():
        return
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise SourceError(
            f"BenchFlow directory name is not valid UTF-8: {shown_path(rel)}; "
            "rename or remove that directory and rerun"
        ) from None


def _below_trial_dir(directory: Path, root: Path, trial_dirs: set[Path]) -> bool:
    """True when any directory strictly above `directory`, up to and including root, is a trial."""
    if directory == root:
        return False
    for parent in directory.parents:
        if parent in trial_dirs:
            return True
        if parent == root:
            return False
    return False


def _scan_result(path: Path, rel: str, scan: Scan, *, strict: bool) -> None:
    raw = _read_bytes(path, rel)
    if raw is not None:
        scan.files[rel] = sha256_bytes(raw)
    data = _parse_object(raw)
    mtime = _stat_mtime(path)
    if data is None:
        if strict:
            raise SourceError(f"BenchFlow result.json is not a readable JSON object: {rel}")
        match = _ROLLOUT_DIR.match(path.parent.name)
        if match is None:
            scan.unattributed_relative_paths.append(rel)
            return
        scan.candidates.append(
            Candidate(rel, path.parent, "result_corrupt", match["task"], mtime=mtime, sha256=None)
        )
        return
    if data.get("purpose") == "reviewer":
        scan.ignored_reviewer_count += 1
        scan.ignored_relative_paths[rel] = "reviewer_child"
        return
    scan.candidates.append(_readable_candidate(path, rel, data, mtime, scan.files[rel]))


def _readable_candidate(
    path: Path, rel: str, data: dict[str, Any], mtime: float | None, digest: str
) -> Candidate:
    task = _text(data.get("task_name"))
    if task is None:
        match = _ROLLOUT_DIR.match(path.parent.name)
        task = match["task"] if match else path.parent.name
    agent = _text(data.get("agent")) or _text(data.get("agent_name"))
    return Candidate(
        relative_path=rel,
        rollout_dir=path.parent,
        status="completed",
        task=task,
        agent=agent,
        model=_text(data.get("model")),
        mtime=mtime,
        data=data,
        sha256=digest,
    )


def _missing_candidate(rollout: Path, root: Path, task: str) -> Candidate:
    """A rollout that died (or still runs) before BenchFlow's final atomic write of
    `result.json` (new): an attempt of its task whose result is missing, never a score."""
    stamps = [
        stamp
        for name in ("config.json", "timing.json", "prompts.json")
        if (rollout / name).is_file() and (stamp := _stat_mtime(rollout / name)) is not None
    ]
    return Candidate(
        relative_path=_rel(rollout / "result.json", root),
        rollout_dir=rollout,
        status="result_missing",
        task=task,
        mtime=max(stamps) if stamps else None,
    )


# ---------------------------------------------------------------------------------------------
# Selection


def normalize_policy(policy: str) -> str:
    """`benchflow` is the short spelling of the spec's `benchflow_canonical`."""
    try:
        return POLICY_ALIASES[policy]
    except KeyError:
        choices = ", ".join(sorted(set(POLICY_ALIASES.values())))
        raise InputError(f"unknown selection policy: {policy} (choose {choices})") from None


def select_result(candidates: Sequence[Candidate], policy: str = "benchflow") -> Candidate:
    """The single candidate a single-result policy keeps (§5.3).

    `benchflow_canonical` is BenchFlow's own rank (rewards object, mtime, path) extended so that
    what BenchFlow would drop still ranks, lowest, instead of making the task vanish.
    """
    if not candidates:
        raise SourceError("no BenchFlow result candidates to select from")
    name = normalize_policy(policy)
    if name == "newest":
        return max(candidates, key=lambda c: (_mtime(c), c.relative_path))
    if name == "all_attempts":
        raise InputError("all_attempts keeps every candidate; select_result picks one")
    return max(candidates, key=lambda c: (c.rank_tier, _mtime(c), c.relative_path))


def _mtime(candidate: Candidate) -> float:
    return candidate.mtime if candidate.mtime is not None else float("-inf")


# ---------------------------------------------------------------------------------------------
# BenchFlow's verdict and rewards (§4, §6.1)


def benchflow_verdict(data: dict[str, Any]) -> str:
    """passed / failed / errored / verifier_errored, exactly as BenchFlow classifies a result."""
    scoring = data.get("scoring")
    if scoring is not None:
        complete = _complete_scoring(scoring)
        if complete is not None:
            return "passed" if complete else "failed"
        return "errored" if data.get("error") else "verifier_errored"
    reward = _reward_value(data.get("rewards"))
    if reward is not None:
        return "passed" if reward == 1.0 else "failed"
    if data.get("error"):
        return "errored"
    if data.get("verifier_error"):
        return "verifier_errored"
    return "errored"


def primary_reward(data: dict[str, Any]) -> float | None:
    """`rewards.reward` when it is a finite number; under review scoring only once complete."""
    if data.get("scoring") is not None and _complete_scoring(data["scoring"]) is None:
        return None
    return _reward_value(data.get("rewards"))


def _complete_scoring(scoring: Any) -> bool | None:
    """`scoring.passed` of a complete, well-formed review block; None when it cannot decide."""
    if not isinstance(scoring, dict) or scoring.get("status") != "complete":
        return None
    passed = scoring.get("passed")
    return passed if isinstance(passed, bool) else None


def _reward_value(rewards: Any) -> float | None:
    if not isinstance(rewards, dict):
        return None
    return _number(rewards.get("reward"))


def unscored_reason(candidate: Candidate) -> str | None:
    """First matching reason code (§6.1); None when the attempt has a primary reward."""
    if candidate.status in ("result_missing", "result_corrupt"):
        return candidate.status
    data = candidate.data or {}
    if primary_reward(data) is not None:
        return None
    if data.get("scoring") is not None and _complete_scoring(data["scoring"]) is None:
        return "review_scoring_incomplete"
    rewards = data.get("rewards")
    if isinstance(rewards, dict) and rewards.get("reward") is not None:
        return "non_numeric_reward"
    if data.get("error"):
        return "agent_error_no_reward"
    if data.get("verifier_error"):
        return "verifier_error_no_reward"
    return "reward_missing"


def error_category(data: dict[str, Any]) -> str | None:
    """The category BenchFlow wrote; a coarse reading of the text only when it wrote none."""
    category = _text(data.get("error_category"))
    if category or not data.get("error"):
        return category
    text = str(data["error"]).lower()
    if "idle" in text:
        return "idle_timeout"
    if "timed out" in text:
        return "timeout"
    if "sandbox startup failed" in text:
        return "sandbox_setup"
    return "other"


def verifier_error_category(data: dict[str, Any]) -> str | None:
    """Same idea for the verifier, using the message prefixes BenchFlow writes."""
    category = _text(data.get("verifier_error_category"))
    if category or not data.get("verifier_error"):
        return category
    text = str(data["verifier_error"]).lower()
    if "timed out" in text:
        return "verifier_timeout"
    if text.startswith("verifier crashed"):
        return "verifier_failure"
    return "verifier_other"


# ---------------------------------------------------------------------------------------------
# Reading


@dataclass
class _Context:
    """What one ingest call shares across groups: options, files read, whole-scan counts."""

    base: Path
    policy: str
    benchmark_id: str | None = None
    route: str | None = None
    arm_id: str | None = None
    run_group_id: str | None = None
    strict: bool = False
    ignored_reviewer_count: int = 0
    ignored_nested_count: int = 0
    files: dict[str, str] = field(default_factory=dict)
    summaries: dict[Path, dict[str, Any] | None] = field(default_factory=dict)


def _wanted_tasks(task: str | Sequence[str] | None) -> list[str] | None:
    if task is None:
        return None
    names = [task] if isinstance(task, str) else list(task)
    cleaned = [n.strip() for n in names if n and n.strip()]
    return list(dict.fromkeys(cleaned)) or None


def _parse_object(raw: bytes | None) -> dict[str, Any] | None:
    """A JSON object or None: torn writes, bad UTF-8, nesting too deep for the parser, text
    that cannot be written back as UTF-8 (lone surrogates) and non-objects are all
    'unreadable', like a file that could not be read at all (None).

    orjson first (strict and fast); the stdlib only for what Python's own json writer emits
    and orjson refuses (NaN, Infinity, huge numbers), which the number helpers then drop."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        if _has_unencodable_text(value):
            return None
    if holds_nul(raw, value):  # as unusable as a lone surrogate (``json_input.holds_nul``)
        return None
    big = inexact_integer(raw)  # orjson read an integer past 64 bits as a rounded float
    if big is not None:
        raise InputError(f"a BenchFlow result file: {big}")
    return value if isinstance(value, dict) else None


def _has_unencodable_text(value: Any) -> bool:
    """True when a key or string holds a lone surrogate (valid JSON escape, not UTF-8)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _read_bytes(path: Path, rel: str) -> bytes | None:
    """The file's bytes, or None when it is not there (or vanished after it was listed).

    A file that is there but must not be read (a FIFO, a device, a directory, one over the
    size limit, a link loop, no permission) stops the ingest with an error naming it: reading
    on would record a rollout as corrupt that BenchFlow never wrote that way."""
    try:
        return read_regular_file(path, shown=f"BenchFlow file {rel}", limit=RUNNER_JSON_LIMIT)
    except FileNotFoundError:
        return None


def _stat_mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _number(value: Any) -> float | None:
    """Finite int/float only; booleans, NaN/Infinity and integers beyond 64 bits (which
    ``math.isfinite`` cannot even convert) are not numbers here."""
    return finite_number(value)


def _nummap(blob: Any) -> dict[str, float]:
    if not isinstance(blob, dict):
        return {}
    return {str(k): v for k, v in blob.items() if _number(v) is not None}


def _nonneg_nummap(blob: Any) -> dict[str, float]:
    return {k: v for k, v in _nummap(blob).items() if v >= 0}


def _sum_maps(maps: Iterable[Mapping[str, float]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for blob in maps:
        for key, value in blob.items():
            total[key] = total.get(key, 0) + value
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in total.items()}


def _count(*values: Any) -> int | None:
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
            return value
    return None


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value or None


def _when(value: Any) -> datetime | None:
    """BenchFlow writes `str(datetime)`: naive local time, with or without microseconds."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        return None


def _iso_utc(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).isoformat()


def _rel(path: Path, base: Path) -> str:
    """POSIX path relative to the ingest base; never absolute."""
    return Path(os.path.relpath(path, base)).as_posix()
