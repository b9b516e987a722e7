"""Turning ``benchmark run`` options into compacted records, one builder per source.

Harbor job directories, BenchFlow results, planned Terminal-Bench runs and SkillsBench
skeletons all end as a ``BuiltSource``: compact records, what was read (for idempotency), the
classification label and the ``benchmark_cli`` block. Builders read files but never the store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypedDict

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.harbor_job_hint import job_dir_hint
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.rules.record.compaction import compact_run
from benchledger.ledger.rules.row.classification import (
    ClassificationInput,
    classification_label,
)
from benchledger.ledger.sources.base import RecordProvenance, SourceIngest
from benchledger.ledger.sources.benchflow import tree as benchflow
from benchledger.ledger.sources.harbor.job import read_harbor_job
from benchledger.ledger.sources.planned.benchmark_cli import build_benchmark_cli
from benchledger.ledger.sources.planned.records import build_planned_terminal_bench_records
from benchledger.ledger.sources.planned.skillsbench_routes import (
    build_planned_skillsbench_records,
)
from benchledger.ledger.store.chain import canonical_json

Progress = Callable[[int, int], None]


@dataclass
class BuiltSource:
    """What a source adapter produced, already compacted."""

    records: list[dict[str, Any]]
    provenance: dict[str, Any]
    content_digest: str
    classification: str
    benchmark_cli: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    adapter_recommended_action: str | None = None
    discovery: dict[str, Any] | None = None
    selection: dict[str, Any] | None = None
    semantic_options: dict[str, Any] = field(default_factory=dict)
    record_dirs: dict[str, frozenset[str]] = field(default_factory=dict)

    def provenance_for(self, record: dict[str, Any]) -> dict[str, Any]:
        """What one record's ``run_built`` event carries (its own files, not the whole job's)."""
        return self._record_provenance(record.get("run_key"))

    @cached_property
    def _record_provenance(self) -> RecordProvenance:
        return RecordProvenance(self.provenance, self.record_dirs)


def compact_records(raw_records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    records = [compact_run(r) for r in raw_records]
    if not records or any(len(r) <= 1 for r in records):
        raise InputError("benchmark command did not produce a compactable benchmark_run_v0")
    return records


def _classification(request: BenchmarkRunRequest) -> str:

    return classification_label(
        ClassificationInput(
            benchmark=request.benchmark_name or "",  # the label asks only "skillsbench?"
            mode=request.mode or "loopx-managed-codex",
            classification=request.classification,
            skillsbench_route=request.skillsbench_route,
            skillsbench_result=bool(
                request.skillsbench_result_json or request.skillsbench_result_root
            ),
            harbor_job_dir=bool(request.harbor_job_dir),
            active_user_observation_fixture=bool(request.active_user_observation_fixture),
            active_user_assisted_treatment=bool(request.active_user_assisted_treatment),
            active_cli_bridge=bool(request.active_cli_bridge),
            worker_cli_bridge_fixture=bool(request.worker_cli_bridge_fixture),
            cli_bridge_contract=bool(request.cli_bridge_contract),
            preflight_guard=bool(request.preflight_guard),
            fake_worker=bool(request.fake_worker),
        )
    )


def _built(
    ingest: SourceIngest,
    request: BenchmarkRunRequest,
    *,
    semantic: dict[str, Any],
    skillsbench_result_ingested: bool = False,
    discovery: dict | None = None,
    selection: dict | None = None,
) -> BuiltSource:
    records = compact_records(ingest.records)
    return BuiltSource(
        records=records,
        provenance=ingest.provenance,
        content_digest=ingest.content_digest,
        classification=_classification(request),
        benchmark_cli=build_benchmark_cli(
            request, records, skillsbench_result_ingested=skillsbench_result_ingested
        ),
        warnings=list(ingest.warnings),
        discovery=discovery,
        selection=selection,
        semantic_options=semantic,
        record_dirs=ingest.record_dirs,
    )


def build_harbor(request: BenchmarkRunRequest, progress: Progress | None = None) -> BuiltSource:
    job_dir = _given_path(request.harbor_job_dir, "--harbor-job-dir")
    try:
        ingest = read_harbor_job(
            job_dir,
            progress=progress,
            benchmark_id=request.dataset,
            arm_id=request.arm_id,
            arm_map=request.arm_map or (),
            arm_role=request.arm_role,
            run_group_id=request.run_group_id,
        )
    except InputError as err:
        hint = job_dir_hint(str(request.harbor_job_dir), Path(job_dir))
        if hint is None:
            raise
        raise InputError(f"{err.message}: {hint}") from None
    semantic = {
        "source": "harbor",
        "dataset": request.dataset,
        "arm_map": list(request.arm_map or ()),
        "arm_role": request.arm_role,
        "include_task_name": list(request.include_task_name or ()),
    }
    ingest = _filter_tasks(ingest, request.include_task_name)
    return _built(ingest, request, semantic=semantic)


def _filter_tasks(ingest: SourceIngest, tasks: Any) -> SourceIngest:
    if not tasks:
        return ingest
    wanted = set(tasks)
    kept = [r for r in ingest.records if r.get("case_id") in wanted]
    if not kept:
        raise InputError(f"no records for --include-task-name {', '.join(sorted(wanted))}")
    return SourceIngest(kept, ingest.provenance, ingest.warnings, ingest.record_dirs)


def _given_path(value: str | None, option: str) -> Path:
    """The path an option names; ``build_source`` picks a source only when its option is set."""
    if not value:
        raise InputError(f"{option} is required for this source")
    return Path(value)


class _BenchflowOptions(TypedDict):
    """What both BenchFlow readers take besides the path."""

    task: list[str] | None
    policy: str
    benchmark_id: str | None
    route: str | None
    arm_id: str | None
    run_group_id: str | None
    strict: bool


def build_benchflow(request: BenchmarkRunRequest, progress: Progress | None = None) -> BuiltSource:
    """Every `--include-task-name` goes to the adapter, so its spec messages name them all."""
    policy = _benchflow_policy(request.selection_policy)
    tasks = list(request.include_task_name or ())
    common: _BenchflowOptions = {
        "task": tasks or None,
        "policy": policy,
        "benchmark_id": request.dataset,
        "route": request.skillsbench_route,
        "arm_id": request.arm_id,
        "run_group_id": request.run_group_id,
        "strict": not request.keep_corrupt,
    }
    if request.skillsbench_result_json:
        ingest = benchflow.read_benchflow_result(Path(request.skillsbench_result_json), **common)
    else:
        root = _given_path(request.skillsbench_result_root, "--skillsbench-result-root")
        ingest = benchflow.read_benchflow_root(root, **common)
    selection = _benchflow_selection(ingest)
    semantic = {
        "source": "benchflow",
        "policy": policy,
        "tasks": tasks,
        "dataset": request.dataset,
        "route": request.skillsbench_route,
        "model": request.model,
        "strict": common["strict"],
        # The pick also depends on file mtimes, which the content digest does not cover: the
        # same bytes touched into another order must not be mistaken for the recorded input.
        "picks": [p.get("selected_relative_path") for p in selection["records"]],
    }
    return _built(
        ingest,
        request,
        semantic=semantic,
        skillsbench_result_ingested=True,
        discovery=_benchflow_discovery(ingest),
        selection=selection,
    )


def _benchflow_discovery(ingest: SourceIngest) -> dict[str, Any]:
    """What the scan saw, for the payload: counts only, paths relative to the ingest root."""
    provenance = ingest.provenance
    return {
        "schema_version": "skillsbench_result_discovery_v0",
        "status": "found",
        "source_kind": provenance.get("kind"),
        "candidate_count": len(provenance.get("candidates") or ()),
        "ignored_reviewer_count": provenance.get("ignored_reviewer_count", 0),
        "ignored_nested_count": provenance.get("ignored_nested_count", 0),
        "unattributed_attempt_count": provenance.get("unattributed_attempt_count", 0),
        "record_count": len(ingest.records),
    }


def _benchflow_selection(ingest: SourceIngest) -> dict[str, Any]:
    """One line per record: which rollout (or how many attempts) stands for each task."""
    policy = ingest.provenance.get("selection_policy")
    picks = []
    for record in ingest.records:
        selection = record.get("selection") or {}
        pick = {
            "case_id": record.get("case_id"),
            "run_key": record.get("run_key"),
            "candidate_count": selection.get("candidate_count"),
        }
        if selection.get("selected_relative_path"):
            pick["selected_relative_path"] = selection["selected_relative_path"]
        picks.append(pick)
    first = (ingest.records[0].get("selection") or {}) if ingest.records else {}
    return {"policy": policy, "tie_breaker": first.get("tie_breaker"), "records": picks}


def _benchflow_policy(value: str | None) -> str:
    return {None: "benchflow", "benchflow_canonical": "benchflow"}.get(value, value or "benchflow")


def build_planned_terminal_bench(
    request: BenchmarkRunRequest, *, env: Mapping[str, str], which: Callable[[str], str | None]
) -> BuiltSource:
    raw = build_planned_terminal_bench_records(request, env=env, which=which)
    return _planned(raw, request, kind="terminal_bench_planned")


def build_skillsbench_skeleton(request: BenchmarkRunRequest) -> BuiltSource:
    tasks = list(request.include_task_name or ()) or None
    raw = build_planned_skillsbench_records(
        dataset=request.dataset,
        tasks=tasks,
        route=request.skillsbench_route,
        model=request.model,
        agent=request.agent,
    )
    return _planned(raw, request, kind="skillsbench_skeleton")


def _planned(raw: list[dict[str, Any]], request: BenchmarkRunRequest, *, kind: str) -> BuiltSource:
    """Planned records are decided by the options alone, so the options are the content."""
    semantic = {
        k: (list(v) if isinstance(v, tuple) else v)
        for k, v in sorted(request.option_items())
        if k not in {"execute", "dry_run", "format"} and v not in (None, False, (), [])
    }
    digest = hashlib.sha256(canonical_json({"kind": kind, "records": raw}).encode()).hexdigest()
    ingest = SourceIngest(raw, {"kind": kind, "options": semantic, "files": {}}, [])
    built = _built(ingest, request, semantic=semantic)
    built.content_digest = digest
    return built


def build_source(
    request: BenchmarkRunRequest,
    *,
    env: Mapping[str, str],
    which: Callable[[str], str | None],
    progress: Progress | None = None,
) -> BuiltSource:
    """Pick the source the flags name: a result tree, a Harbor job, or a planned run."""
    if request.benchmark_name == "skillsbench":
        if request.ingests_skillsbench_result:
            return build_benchflow(request)
        return build_skillsbench_skeleton(request)
    if request.harbor_job_dir:
        return build_harbor(request, progress=progress)
    return build_planned_terminal_bench(request, env=env, which=which)
