"""``benchmark run terminal-bench --harbor-job-dir``: a Harbor job read into a ``BuiltSource``."""

from __future__ import annotations

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.built_source import BuiltSource, Progress, built_source, given_path
from benchledger.ledger.handlers.harbor_job_hint import job_dir_hint
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.sources.harbor.job import read_harbor_job
from benchledger.ledger.sources.harbor.options import HarborReadOptions


def harbor_read_options(request: BenchmarkRunRequest) -> HarborReadOptions:
    """What the Harbor reader reads of the request, once its options were validated."""
    return HarborReadOptions.from_flags(
        given_path(request.harbor_job_dir, "--harbor-job-dir"),
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
    return built_source(ingest, request, semantic=semantic)
