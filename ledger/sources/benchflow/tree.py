"""BenchFlow 0.7.11 (SkillsBench) result trees → `benchmark_run_v0` records.

The adapter answers three questions the way BenchFlow itself would, and writes down how it did:

* **Which files are rollouts?** The scan uses BenchFlow's own boundary rules: a `result.json`
  below another trial directory (e.g. a rubric reviewer's child run) or with
  `purpose == "reviewer"` is not a rollout of the task (docs/formats/benchflow.md §5.2).
* **Which rollout stands for a task?** A named selection policy, recorded on every record with
  every candidate, so a reader can see that an older scored pass beat a newer crashed retry (§5.3).
* **Did it pass?** BenchFlow's verdict (§4): a complete review `scoring` block decides; otherwise
  only a reward of exactly 1.0 passes, and an explicit reward wins over an agent error.

Pure: files in, dicts out. Only paths relative to the ingest root ever leave this module, since
BenchFlow's own files (`results.jsonl`) carry absolute host paths that must never reach a record.

This module is the entry point (``read_benchflow_root``, ``read_benchflow_result``, both taking
one ``BenchflowReadOptions``); reading, scoring and record assembly live in ``reading``,
``scoring`` and ``records`` beside it, each importing only the ones before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError, SourceError
from benchledger.ledger.sources.base import SourceIngest, sha256_bytes
from benchledger.ledger.sources.benchflow.options import BenchflowReadOptions
from benchledger.ledger.sources.benchflow.reading import (
    _ROLLOUT_DIR,
    Candidate,
    Scan,
    _Context,
    _parse_object,
    _read_bytes,
    _readable_candidate,
    _rel,
    _stat_mtime,
    _wanted_tasks,
    benchflow_verdict,
    discover_benchflow_results,
    normalize_policy,
    scan_benchflow_root,
    select_result,
)
from benchledger.ledger.sources.benchflow.records import _build_record, _group, _provenance

# The adapter's public API; the scan, selection and verdict are defined in benchflow_reading.
__all__ = [
    "benchflow_verdict",
    "discover_benchflow_results",
    "read_benchflow_result",
    "read_benchflow_root",
    "scan_benchflow_root",
    "select_result",
]


def read_benchflow_root(options: BenchflowReadOptions) -> SourceIngest:
    """One record per (benchmark, task, agent, model) found below `options.root` (§5.2-§6).

    `strict` turns a corrupt `result.json` or `timing.json` into a SourceError naming the
    file instead of the spec's default (a `result_corrupt` candidate / a timing warning).
    """
    root = options.root
    if not root.is_dir():
        raise InputError("--skillsbench-result-root must be a directory")
    name = normalize_policy(options.policy)
    scan = scan_benchflow_root(root, strict=options.strict)
    ctx = _Context(
        base=root,
        policy=name,
        benchmark_id=options.benchmark_id,
        route=options.route,
        arm_id=options.arm_id,
        run_group_id=options.run_group_id,
        strict=options.strict,
        ignored_reviewer_count=scan.ignored_reviewer_count,
        ignored_nested_count=scan.ignored_nested_count,
        files=dict(scan.files),
    )
    candidates = _filter_tasks(scan, options.tasks)
    groups = _group(candidates, ctx)
    records = [_build_record(key, members, ctx) for key, members in groups.items()]
    warnings = _note_unattributed(records, len(scan.unattributed_relative_paths))
    provenance = _provenance("benchflow_result_root", ".", name, candidates, ctx)
    provenance["unattributed_attempt_count"] = len(scan.unattributed_relative_paths)
    provenance["ignored"] = dict(sorted(scan.ignored_relative_paths.items()))
    return SourceIngest(records=records, provenance=provenance, warnings=warnings, root=root)


def _note_unattributed(records: list[dict[str, Any]], count: int) -> list[str]:
    """A corrupt file with no task identity belongs to no record, so every record says so."""
    if not count:
        return []
    for record in records:
        record["runner_job"]["unattributed_attempt_count"] = count
        warnings = record.setdefault("ingest_warnings", [])
        warnings.append("corrupt_result_without_task_identity")
    return ["corrupt_result_without_task_identity"]


def read_benchflow_result(options: BenchflowReadOptions) -> SourceIngest:
    """One explicitly named rollout (`--skillsbench-result-json`, in `options.root`); a
    directory acts as a root.

    Paths are recorded relative to the jobs directory (two levels above the rollout), so the
    same rollout gets the same `run_key` and run group whichever flag named it. `policy` only
    matters for a directory, which is read exactly like `--skillsbench-result-root`.
    """
    path = options.root
    if path.is_dir():
        return read_benchflow_root(options)
    if not path.is_file() or path.name != "result.json":
        raise InputError("--skillsbench-result-json must be a result.json file or a directory")
    base = path.parent.parent.parent if len(path.parents) >= 3 else path.parent
    ctx = _Context(
        base=base,
        policy="explicit_result_json",
        benchmark_id=options.benchmark_id,
        route=options.route,
        arm_id=options.arm_id,
        run_group_id=options.run_group_id,
        strict=options.strict,
    )
    candidate = _explicit_candidate(path, ctx)
    candidates = _filter_tasks(Scan(candidates=[candidate]), options.tasks)
    groups = _group(candidates, ctx)
    records = [_build_record(key, members, ctx) for key, members in groups.items()]
    provenance = _provenance(
        "benchflow_result_json", candidate.relative_path, ctx.policy, candidates, ctx
    )
    return SourceIngest(records=records, provenance=provenance, root=ctx.base)


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
