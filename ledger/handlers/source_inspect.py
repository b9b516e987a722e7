"""``benchmark run inspect``: Inspect AI eval logs read into a ``BuiltSource``."""

from __future__ import annotations

from pathlib import Path

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.built_source import BuiltSource, built_source
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.sources.base import keep_tasks
from benchledger.ledger.sources.inspect.records import read_inspect_logs


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
        jobs=request.jobs,
    )
    semantic = {
        "source": "inspect",
        "scorer": request.scorer,
        "dataset": request.dataset,
        "include_task_name": list(request.include_task_name or ()),
    }
    return built_source(
        keep_tasks(ingest, tuple(request.include_task_name or ())), request, semantic=semantic
    )
