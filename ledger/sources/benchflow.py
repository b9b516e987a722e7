"""BenchFlow 0.7.11 (SkillsBench) result trees → `benchmark_run_v0` records.

The adapter answers three questions the way BenchFlow itself would, and writes down how it did:

* **Which files are rollouts?** The scan uses BenchFlow's own boundary rules: a `result.json`
  below another trial directory (e.g. a rubric reviewer's child run) or with
  `purpose == "reviewer"` is not a rollout of the task (benchflow.md §5.2).
* **Which rollout stands for a task?** A named selection policy, recorded on every record with
  every candidate, so a reader can see that an older scored pass beat a newer crashed retry (§5.3).
* **Did it pass?** BenchFlow's verdict (§4): a complete review `scoring` block decides; otherwise
  only a reward of exactly 1.0 passes, and an explicit reward wins over an agent error.

Pure: files in, dicts out. Only paths relative to the ingest root ever leave this module, since
BenchFlow's own files (`results.jsonl`) carry absolute host paths that must never reach a record.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ledger.errors import InputError, SourceError
from ledger.input_files import RUNNER_JSON_LIMIT, read_regular_file, shown_path
from ledger.safety import UNSAFE_PART, finite_number, is_public_safe, join_public
from ledger.sources.base import SourceIngest, sha256_bytes
from ledger.sources.skillsbench_routes import (
    get_route,
    route_contract_fields,
    route_mismatch_warnings,
)

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
        if "result.json" not in names and names & {"timing.json", "prompts.json"}:
            partial_dirs.append(here)
    results.sort(key=lambda p: _rel(p, root))
    return results, solver_dirs, partial_dirs


_READ_NAMES = frozenset({"result.json", "solver.json", "timing.json", "prompts.json"})


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
    """A rollout that died before BenchFlow's final atomic write of `result.json` (new)."""
    stamps = [
        stamp
        for name in ("timing.json", "prompts.json")
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


def read_benchflow_root(
    root: Path,
    *,
    task: str | Sequence[str] | None = None,
    policy: str = "benchflow",
    benchmark_id: str | None = None,
    route: str | None = None,
    arm_id: str | None = None,
    run_group_id: str | None = None,
    strict: bool = False,
) -> SourceIngest:
    """One record per (benchmark, task, agent, model) found below `root` (§5.2-§6).

    `strict=True` turns a corrupt `result.json` or `timing.json` into a SourceError naming the
    file instead of the spec's default (a `result_corrupt` candidate / a timing warning).
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError("--skillsbench-result-root must be a directory")
    name = normalize_policy(policy)
    scan = scan_benchflow_root(root, strict=strict)
    ctx = _Context(
        base=root,
        policy=name,
        benchmark_id=benchmark_id,
        route=route,
        arm_id=arm_id,
        run_group_id=run_group_id,
        strict=strict,
        ignored_reviewer_count=scan.ignored_reviewer_count,
        ignored_nested_count=scan.ignored_nested_count,
        files=dict(scan.files),
    )
    candidates = _filter_tasks(scan, task)
    groups = _group(candidates, ctx)
    records = [_build_record(key, members, ctx) for key, members in groups.items()]
    warnings = _note_unattributed(records, len(scan.unattributed_relative_paths))
    provenance = _provenance("benchflow_result_root", ".", name, candidates, ctx)
    provenance["unattributed_attempt_count"] = len(scan.unattributed_relative_paths)
    provenance["ignored"] = dict(sorted(scan.ignored_relative_paths.items()))
    return SourceIngest(records=records, provenance=provenance, warnings=warnings)


def _note_unattributed(records: list[dict[str, Any]], count: int) -> list[str]:
    """A corrupt file with no task identity belongs to no record, so every record says so."""
    if not count:
        return []
    for record in records:
        record["runner_job"]["unattributed_attempt_count"] = count
        warnings = record.setdefault("ingest_warnings", [])
        warnings.append("corrupt_result_without_task_identity")
    return ["corrupt_result_without_task_identity"]


def read_benchflow_result(
    result_json: Path,
    *,
    task: str | Sequence[str] | None = None,
    policy: str = "benchflow",
    benchmark_id: str | None = None,
    route: str | None = None,
    arm_id: str | None = None,
    run_group_id: str | None = None,
    strict: bool = False,
) -> SourceIngest:
    """One explicitly named rollout (`--skillsbench-result-json`); a directory acts as a root.

    Paths are recorded relative to the jobs directory (two levels above the rollout), so the
    same rollout gets the same `run_key` and run group whichever flag named it. `policy` only
    matters for a directory, which is read exactly like `--skillsbench-result-root`.
    """
    path = Path(result_json)
    if path.is_dir():
        return read_benchflow_root(
            path,
            task=task,
            policy=policy,
            benchmark_id=benchmark_id,
            route=route,
            arm_id=arm_id,
            run_group_id=run_group_id,
            strict=strict,
        )
    if not path.is_file() or path.name != "result.json":
        raise InputError("--skillsbench-result-json must be a result.json file or a directory")
    base = path.parent.parent.parent if len(path.parents) >= 3 else path.parent
    ctx = _Context(
        base=base,
        policy="explicit_result_json",
        benchmark_id=benchmark_id,
        route=route,
        arm_id=arm_id,
        run_group_id=run_group_id,
        strict=strict,
    )
    candidate = _explicit_candidate(path, ctx)
    candidates = _filter_tasks(Scan(candidates=[candidate]), task)
    groups = _group(candidates, ctx)
    records = [_build_record(key, members, ctx) for key, members in groups.items()]
    provenance = _provenance(
        "benchflow_result_json", candidate.relative_path, ctx.policy, candidates, ctx
    )
    return SourceIngest(records=records, provenance=provenance)


def _explicit_candidate(path: Path, ctx: _Context) -> Candidate:
    rel = _rel(path, ctx.base)
    raw = _read_bytes(path, rel)
    if raw is not None:
        ctx.files[rel] = sha256_bytes(raw)
    data = _parse_object(raw)
    mtime = _stat_mtime(path)
    if data is None:
        match = _ROLLOUT_DIR.match(path.parent.name)
        if ctx.strict or match is None:
            raise SourceError(f"BenchFlow result.json is not a readable JSON object: {rel}")
        return Candidate(rel, path.parent, "result_corrupt", match["task"], mtime=mtime)
    if data.get("purpose") == "reviewer":
        raise InputError(
            "--skillsbench-result-json points to a reviewer child result (purpose=reviewer)"
        )
    return _readable_candidate(path, rel, data, mtime, ctx.files[rel])


def _filter_tasks(scan: Scan, task: str | Sequence[str] | None) -> list[Candidate]:
    """Apply `--include-task-name`; the two 'nothing found' messages are the spec's, verbatim."""
    if not scan.candidates:
        raise SourceError(
            "no BenchFlow result.json found below the ingest root; candidate_count=0 "
            f"ignored_reviewer_count={scan.ignored_reviewer_count} "
            f"ignored_nested_count={scan.ignored_nested_count}"
        )
    wanted = _wanted_tasks(task)
    if wanted is None:
        return list(scan.candidates)
    found = {c.task for c in scan.candidates}
    missing = [name for name in wanted if name not in found]
    if missing:
        raise SourceError(
            f"no BenchFlow result.json found for requested task(s): {', '.join(missing)}; "
            f"candidate_count={len(scan.candidates)}"
        )
    return [c for c in scan.candidates if c.task in wanted]


def _wanted_tasks(task: str | Sequence[str] | None) -> list[str] | None:
    if task is None:
        return None
    names = [task] if isinstance(task, str) else list(task)
    cleaned = [n.strip() for n in names if n and n.strip()]
    return list(dict.fromkeys(cleaned)) or None


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
        if ctx.strict:
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
    agent_result = data.get("agent_result") if isinstance(data.get("agent_result"), dict) else {}
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
    run_status = _run_status(kept, ctx.policy)
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


_READ_BOUNDARY = {
    "compact_only": True,
    "raw_artifacts_read": False,
    "task_text_read": False,
    "trajectory_read": False,
    "controller_trace_read": False,
    "local_paths_recorded": False,
    "docker_invoked": False,
    "model_api_invoked": False,
    "upload_invoked": False,
}


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
    parts = (job_name, benchmark_id, task, slug(agent or ""), slug(model or "") or "-")
    return join_public(":", "benchflow", *parts)


def _run_status(kept: list[Candidate], policy: str) -> str:
    statuses = {c.status for c in kept}
    if "result_missing" in statuses:
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
    c = sum(1 for a in score.scored if a.trial.get("passed"))
    ks = sorted({k for k in range(2, n + 1) if (k & (k - 1)) == 0 or k % 5 == 0})
    out: dict[str, float] = {}
    for k in ks:
        out[str(k)] = 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)
    return out


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


_PHASES = (
    "process_started",
    "runner_accepted_args",
    "job_root_materialized",
    "trial_started",
    "worker_started",
    "result_written",
    "verifier_scored",
)


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
    reached = "not_started"
    for phase in _PHASES:
        if not facts[phase]:
            break
        reached = phase
    ok = {phase: _PHASES.index(phase) <= _PHASES.index(reached) for phase in _PHASES}
    if reached == "not_started":
        ok = dict.fromkeys(_PHASES, False)
    countable = {
        "launcher": ok["process_started"],
        "case": ok["trial_started"],
        "solver": ok["worker_started"],
        "verifier": ok["verifier_scored"],
        "official_score": ok["verifier_scored"] and run_status == "completed",
    }
    attempted = {
        "launcher": True,
        "case": ok["job_root_materialized"],
        "solver": ok["trial_started"],
        "verifier": ok["worker_started"] or ok["result_written"],
        "official_score": ok["result_written"],
    }
    return {
        "schema_version": "benchmark_attempt_accounting_v0",
        "lifecycle_phase": reached,
        "failure_label": _failure_label(score, attribution),
        "failure_class": _failure_class(score, attempts, ok),
        **{f"{name}_attempt_countable": value for name, value in countable.items()},
        "attempts": {
            name: {"attempted": attempted[name], "countable": countable[name]} for name in countable
        },
    }


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


def _failure_label(score: _Score, attribution: str) -> str:
    if attribution != "none":
        return attribution
    if score.value is None:
        return "official_score_missing"
    return "official_score_zero" if score.value == 0 else "none"


def _failure_class(score: _Score, attempts: list[_Attempt], ok: dict[str, bool]) -> str:
    if not ok["worker_started"]:
        return "job_materialization_failed"
    if score.value is None:
        reasons = Counter(a.trial.get("unscored_reason") for a in attempts)
        top = reasons.most_common(1)[0][0] if reasons else None
        return "verifier_failed" if top == "verifier_error_no_reward" else "official_score_failed"
    return "solver_failed" if score.value == 0 else "none"


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
    """Arm: explicit flag, else the route's ledger arm, else slug(agent)__slug(model) (§6.2)."""
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
        arm = slug(agent or "") + (f"__{slug(model)}" if model else "")
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


# ---------------------------------------------------------------------------------------------
# Small helpers


def slug(value: str) -> str:
    """harbor.md §5.6: lowercase, runs outside [a-z0-9._-] become '-', trimmed, ≤ 60 chars.

    Text failing the public-safety filter becomes ``unsafe``: slugging would launder it into
    an id that passes (``token=abc…`` -> ``token-abc…``), and ids reach the public ledger."""
    if not is_public_safe(value):
        return UNSAFE_PART
    return re.sub(r"[^a-z0-9._-]+", "-", value.lower()).strip("-")[:60]


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


def _sum_maps(maps: Iterable[dict[str, float]]) -> dict[str, float]:
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
