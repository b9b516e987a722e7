"""What the BenchFlow reader reads of a ``benchmark run``: the path it was pointed at and the
selection (tasks, policy, strictness) plus the few values that name its records
(docs/formats/benchflow.md §5-§7, docs/formats/cli.md §5.1).

Built once at the edge from the command's request, after its options were validated; the
reader takes this small frozen object and nothing else, so it never reaches back up to the
request, the handlers or the services.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class BenchflowReadOptions:
    """The BenchFlow reader's whole input besides the files themselves.

    ``root`` is the jobs tree (``--skillsbench-result-root``) for ``read_benchflow_root`` and
    the named ``result.json`` (``--skillsbench-result-json``) for ``read_benchflow_result``.
    """

    root: Path
    tasks: tuple[str, ...] = ()  # --include-task-name; () keeps every task
    policy: str = "benchflow"  # --selection-policy (benchflow = benchflow_canonical)
    strict: bool = False  # not --keep-corrupt: a corrupt file is an error naming it
    benchmark_id: str | None = None  # --dataset
    route: str | None = None  # --skillsbench-route
    arm_id: str | None = None
    run_group_id: str | None = None
