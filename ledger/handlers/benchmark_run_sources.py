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
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.benchmark_cli import build_benchmark_cli
from benchledger.ledger.handlers.harbor_job_hint import job_dir_hint
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest, require_option_names
from benchledger.ledger.rules.record.compaction import compact_run
from benchledger.ledger.rules.row.classification import (
    ClassificationInput,
    classification_label,
)
from benchledger.ledger.sources.base import RecordProvenance, SourceIngest, keep_tasks
from benchledger.ledger.sources.benchflow import tree as benchflow
from benchledger.ledger.sources.benchflow.options import BenchflowReadOptions
from benchledger.ledger.sources.harbor.job import read_harbor_job
from benchledger.ledger.sources.harbor.options import HarborReadOptions
from benchledger.ledger.sources.inspect.records import read_inspect_logs
from benchledger.ledger.sources.planned.records import build_planned_terminal_bench_records
from benchledger.ledger.sources.planned.run_options import PLANNED_OPTION_NAMES, PlannedRunOptions
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
    local_root: str | None = None  # the resolved directory the source was read from

    def provenance_for(self, record: dict[str, Any]) -> dict[str, Any]:
        """What one record's ``run_built`` event carries (its own files, not the whole job's),
        and where on this machine they were read: ``local_root`` stays in the store's event,
        never in a record or a published file; only ``report --link-artifacts`` reads it
        (docs/report.md)."""
        provenance = self._record_provenance(record.get("run_key"))
        if self.local_root is None:
            return provenance
        return {**provenance, "local_root": self.local_root}

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
        local_root=None if ingest.root is None else str(ingest.root.resolve()),
    )


def harbor_read_options(request: BenchmarkRunRequest) -> HarborReadOptions:
    """What the Harbor reader reads of the request, once its options were validated."""
    return HarborReadOptions.from_flags(
        _given_path(request.harbor_job_dir, "--harbor-job-dir"),
        benchmark_id=request.dataset,
        arm_id=request.arm_id,
        arm_map=request.arm_map,
        arm_role=request.arm_role,
        run_group_id=request.run_group_id,
        include_tasks=request.include_task_name,
        jobs=request.jobs,
    )


def build_harbor(request: BenchmarkRunRequest, progress: Progress | None = None) -> BuiltSource:
    options = harbor_read_options(request)
    try:
        ingest = read_harbor_job(options, progress)
    except InputError as err:
        hint = job_dir_hint(str(request.harbor_job_dir), options.job_dir)
        if hint is None:
            raise
        raise InputError(f"{err.message}: {hint}") from None
    semantic = {
        "source": "harbor",
        "dataset": request.dataset,
        "arm_map": list(request.arm_map),
        "arm_role": request.arm_role,
        "include_task_name": list(request.include_task_name),
    }
    return _built(ingest, request, semantic=semantic)


def _given_path(value: str | None, option: str) -> Path:
    """The path an option names; ``build_source`` picks a source only when its option is set."""
    if not value:
        raise InputError(f"{option} is required for this source")
    return Path(value)


def benchflow_read_options(request: BenchmarkRunRequest) -> BenchflowReadOptions:
    """What the BenchFlow reader reads of the request, once its options were validated.
    Every ``--include-task-name`` goes to the reader, so its messages name them all."""
    if request.skillsbench_result_json:
        root = Path(request.skillsbench_result_json)
    else:
        root = _given_path(request.skillsbench_result_root, "--skillsbench-result-root")
    return BenchflowReadOptions(
        root,
        tasks=tuple(request.include_task_name),
        policy=_benchflow_policy(request.selection_policy),
        strict=not request.keep_corrupt,
        benchmark_id=request.dataset,
        route=request.skillsbench_route,
        arm_id=request.arm_id,
        run_group_id=request.run_group_id,
    )


def build_benchflow(request: BenchmarkRunRequest, progress: Progress | None = None) -> BuiltSource:
    options = benchflow_read_options(request)
    if request.skillsbench_result_json:
        ingest = benchflow.read_benchflow_result(options)
    else:
        ingest = benchflow.read_benchflow_root(options)
    selection = _benchflow_selection(ingest)
    semantic = {
        "source": "benchflow",
        "policy": options.policy,
        "tasks": list(options.tasks),
        "dataset": request.dataset,
        "route": request.skillsbench_route,
        "model": request.model,
        "strict": options.strict,
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


_PLANNED_OPTIONS = require_option_names(PLANNED_OPTION_NAMES)
_REPEATABLE = frozenset({"include_task_name", "arm_map", "agent_kwarg", "auth_env_name"})


def planned_run_options(request: BenchmarkRunRequest) -> PlannedRunOptions:
    """What the planner reads of the request (same names), once its options were validated."""
    values = {name: getattr(request, name) for name in _PLANNED_OPTIONS}
    for name in _REPEATABLE:
        value = values[name]
        values[name] = (value,) if isinstance(value, str) else tuple(value or ())
    return PlannedRunOptions(**values)


def build_inspect(request: BenchmarkRunRequest) -> BuiltSource:
    """Inspect AI logs (docs/formats/inspect.md): a directory or the files named."""
    if bool(request.log_dir) == bool(request.log):
        raise InputError("benchmark run inspect takes one of --log-dir DIR or --log FILE")
    ingest = read_inspect_logs(
        Path(request.log_dir) if request.log_dir else None,
        tuple(request.log),
        scorer=request.scorer,
        benchmark_id=request.dataset,
        arm_id=request.arm_id,
        run_group_id=request.run_group_id,
    )
    semantic = {
        "source": "inspect",
        "scorer": request.scorer,
        "dataset": request.dataset,
        "include_task_name": list(request.include_task_name or ()),
    }
    return _built(
        keep_tasks(ingest, tuple(request.include_task_name or ())), request, semantic=semantic
    )


def build_planned_terminal_bench(
    request: BenchmarkRunRequest, *, env: Mapping[str, str], which: Callable[[str], str | None]
) -> BuiltSource:
    raw = build_planned_terminal_bench_records(planned_run_options(request), env=env, which=which)
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
        if k not in {"execute", "dry_run", "format", "jobs"} and v not in (None, False, (), [])
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
    if request.benchmark_name == "inspect":
        return build_inspect(request)
    if request.benchmark_name == "skillsbench":
        if request.ingests_skillsbench_result:
            return build_benchflow(request)
        return build_skillsbench_skeleton(request)
    if request.harbor_job_dir:
        return build_harbor(request, progress=progress)
    return build_planned_terminal_bench(request, env=env, which=which)
