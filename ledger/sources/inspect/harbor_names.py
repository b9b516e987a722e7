"""Which Harbor dataset an ``inspect-harbor`` eval ran, so its records line up with the Harbor
runs of the same tasks (docs/formats/inspect.md §5).

``inspect-harbor`` (github.com/meridianlabs-ai/inspect_harbor) registers its tasks as
``inspect_harbor/<function>`` and builds them without a name, version or dataset name, so an
eval log says ``task: inspect_harbor/terminal_bench_2_0``, ``task_version: 0`` and no dataset.
The Harbor dataset is named only by the function (a generated wrapper of the generic
``harbor`` task) or, for ``harbor`` itself, by its arguments. Sample ids are Harbor's task
names either way. The tables below are the Terminal-Bench wrappers of its ``_tasks.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The registry namespace ``inspect-harbor`` tasks carry.
NAMESPACE = "inspect_harbor/"
#: Task arguments read here (all text); nothing else of ``eval.task_args`` is kept.
TASK_ARGS = ("dataset_name_version", "package_name", "package_ref", "ref")
#: inspect-harbor up to 0.4.x: wrappers of ``harbor(dataset_name_version=...)``.
REGISTRY_DATASETS = {
    "terminal_bench_2_0": "terminal-bench@2.0",
    "terminal_bench": "terminal-bench",
    "terminal_bench_pro_1_0": "terminal-bench-pro@1.0",
    "terminal_bench_pro": "terminal-bench-pro",
    "terminal_bench_sample_2_0": "terminal-bench-sample@2.0",
    "terminal_bench_sample": "terminal-bench-sample",
}
#: inspect-harbor 0.5 and later: wrappers of ``harbor(package_name=..., package_ref=ref)``,
#: whose ``ref`` argument (default ``latest``) the log's task arguments record.
PACKAGE_DATASETS = {
    "terminal_bench_2": "terminal-bench/terminal-bench-2",
    "terminal_bench_2_1": "terminal-bench/terminal-bench-2-1",
    "terminal_bench_3": "terminal-bench/terminal-bench-3",
    "terminal_bench_pro": "terminal-bench-pro/terminal-bench-pro",
}


def harbor_dataset(task: str, task_args: Mapping[str, str]) -> str | None:
    """The Harbor benchmark id (``name@version``, ``name@ref`` or ``name``, the forms the
    Harbor reader gives a job's dataset) of an ``inspect-harbor`` eval, else ``None``."""
    if not task.startswith(NAMESPACE):
        return None
    function = task.removeprefix(NAMESPACE)
    if function == "harbor":
        if task_args.get("dataset_name_version"):
            return task_args["dataset_name_version"]
        if task_args.get("package_name"):
            ref = task_args.get("package_ref") or "latest"
            return f"{task_args['package_name']}@{ref}"
        return None
    if "ref" in task_args and function in PACKAGE_DATASETS:
        return f"{PACKAGE_DATASETS[function]}@{task_args['ref'] or 'latest'}"
    return REGISTRY_DATASETS.get(function)


def dataset_name(benchmark_id: str) -> str:
    """The dataset part of a benchmark id (what Harbor's trials name as their source)."""
    return benchmark_id.split("@", 1)[0]


def harbor_task_args(task_args: Mapping[str, Any] | None) -> dict[str, str]:
    """The few task arguments :func:`harbor_dataset` reads, as text."""
    return {
        key: value.strip()
        for key, value in (task_args or {}).items()
        if key in TASK_ARGS and isinstance(value, str) and value.strip()
    }
