"""``benchmark run skillsbench`` with BenchFlow results: the result tree (or one result file) read
into a ``BuiltSource``, with what the scan saw and which rollout stands for each task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchledger.ledger.handlers.built_source import BuiltSource, Progress, built_source, given_path
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.sources.base import SourceIngest
from benchledger.ledger.sources.benchflow import tree as benchflow
from benchledger.ledger.sources.benchflow.options import BenchflowReadOptions


def benchflow_read_options(request: BenchmarkRunRequest) -> BenchflowReadOptions:
    """What the BenchFlow reader reads of the request, once its options were validated.
    Every ``--include-task-name`` goes to the reader, so its messages name them all."""
    if request.skillsbench_result_json:
        root = Path(request.skillsbench_result_json)
    else:
        root = given_path(request.skillsbench_result_root, "--skillsbench-result-root")
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
    return built_source(
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
