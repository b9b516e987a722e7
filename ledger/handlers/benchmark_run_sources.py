"""Which source a ``benchmark run`` reads, picked from its flags: a Harbor job, BenchFlow
results, Inspect AI logs, or a planned run (``source_*.py``, one module per source, each ending
in a ``BuiltSource``). Builders read files but never the store.

Each source's module is imported only when its source is picked: a Harbor ingest never loads
the BenchFlow, Inspect or planner modules (with the standard library modules only they use,
~15 ms of every ingest; bench/README.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from benchledger.ledger.handlers.built_source import BuiltSource, Progress
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest


def build_source(
    request: BenchmarkRunRequest,
    *,
    env: Mapping[str, str],
    progress: Progress | None = None,
) -> BuiltSource:
    """Pick the source the flags name: a result tree, a Harbor job, or a planned run. Only the
    picked source's module is imported (the module docstring says why)."""
    if request.benchmark_name == "inspect":
        from benchledger.ledger.handlers.source_inspect import build_inspect

        return build_inspect(request)
    if request.benchmark_name == "skillsbench":
        if request.ingests_skillsbench_result:
            from benchledger.ledger.handlers.source_benchflow import build_benchflow

            return build_benchflow(request)
        from benchledger.ledger.handlers.source_planned import build_skillsbench_skeleton

        return build_skillsbench_skeleton(request)
    if request.harbor_job_dir:
        from benchledger.ledger.handlers.source_harbor import build_harbor

        return build_harbor(request, progress=progress)
    from benchledger.ledger.handlers.source_planned import build_planned_terminal_bench

    return build_planned_terminal_bench(request, env=env)
