"""How ``benchmark run inspect`` reads a log (issue 35): Inspect's sample summaries, not its
samples; whole samples only for a log that holds no summaries; and which Harbor dataset an
``inspect-harbor`` eval ran (docs/formats/inspect.md §2, §5).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchledger.ledger.sources.inspect import reading as inspect_reading
from tests.support_inspect import copy_logs, ingest, rewrite_log
from tests.support_parallel import count_forks

pytest.importorskip("inspect_ai", reason="the `inspect` extra (part of `test`) is not installed")

#: What a record says about its figures: equal whichever way Inspect's reader gave them.
FIGURES = (
    "run_key", "benchmark_id", "case_id", "arm_id", "run_status", "trials", "official_score",
    "official_score_status", "metrics", "metrics_coverage", "timing", "progress",
)  # fmt: skip


def _figures(tmp_path: Path, root: Path, *args: str) -> dict[str, dict]:
    call = ingest(
        ["--log-dir", str(root), *args], db=f"sqlite:///{tmp_path / 'l.db'}",
        runtime_root=tmp_path / "rr", execute=False,
    )  # fmt: skip
    assert call.code == 0, call.result.output
    return {
        run["run_key"]: {key: run.get(key) for key in FIGURES}
        for run in call.payload["benchmark_runs"]
    }


def _is_summary(name: str) -> bool:
    return name == "summaries.json" or name.startswith("_journal/summaries/")


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("inspect-read")
    return _figures(tmp, copy_logs(tmp, "main", "cancelled", "retry"))


def test_samples_are_not_parsed_when_summaries_hold_the_figures(
    tmp_path: Path, expected: dict[str, dict]
) -> None:
    """Every sample entry of every ``.eval`` log emptied: the figures come from the summaries
    alone, so they do not change (reading whole samples cost ~1 s per 300-sample log)."""
    root = copy_logs(tmp_path, "main", "cancelled", "retry")
    for log in root.rglob("*.eval"):
        rewrite_log(log, lambda name, data: b"{}" if name.startswith("samples/") else data)
    assert _figures(tmp_path, root) == expected


def test_a_running_logs_journal_gives_the_same_figures(
    tmp_path: Path, expected: dict[str, dict]
) -> None:
    """Without ``summaries.json`` (written when the eval ends), Inspect reads the summaries
    its journal keeps while the eval runs (the samples emptied: nothing else could give them)."""

    def running(name: str, data: bytes) -> bytes | None:
        if name == "summaries.json":
            return None
        return b"{}" if name.startswith("samples/") else data

    root = copy_logs(tmp_path, "main", "cancelled", "retry")
    for log in root.rglob("*.eval"):
        rewrite_log(log, running)
    assert _figures(tmp_path, root) == expected


def test_a_log_without_summaries_is_read_sample_by_sample(
    tmp_path: Path, expected: dict[str, dict]
) -> None:
    """An ``.eval`` log holding samples but no summaries (as Inspect wrote them before it kept
    summaries) gives the same figures through whole samples."""
    root = copy_logs(tmp_path, "main", "cancelled", "retry")
    for log in root.rglob("*.eval"):
        rewrite_log(log, lambda name, data: None if _is_summary(name) else data)
    assert _figures(tmp_path, root) == expected


TB2 = "terminal-bench/terminal-bench-2"
PRO = "terminal-bench-pro/terminal-bench-pro"
TB20 = "terminal-bench@2.0"


@pytest.mark.parametrize(
    ("task", "args", "benchmark"),
    [
        # inspect-harbor 0.4: wrappers of harbor(dataset_name_version=...)
        ("inspect_harbor/terminal_bench_2_0", {}, "terminal-bench@2.0"),
        ("inspect_harbor/terminal_bench", {}, "terminal-bench"),
        ("inspect_harbor/terminal_bench_pro", {}, "terminal-bench-pro"),
        # inspect-harbor 0.5+: wrappers of harbor(package_name=..., package_ref=ref)
        ("inspect_harbor/terminal_bench_2", {"ref": "latest"}, f"{TB2}@latest"),
        ("inspect_harbor/terminal_bench_pro", {"ref": "3"}, f"{PRO}@3"),
        # the generic task, named by its arguments
        ("inspect_harbor/harbor", {"dataset_name_version": "terminal-bench@2.0"}, TB20),
        ("inspect_harbor/harbor", {"package_name": "org/set", "package_ref": "7"}, "org/set@7"),
        ("inspect_harbor/harbor", {"package_name": "org/set"}, "org/set@latest"),
        ("inspect_harbor/harbor", {}, None),  # a local path: no Harbor dataset named
        ("inspect_harbor/aime", {"ref": "latest"}, None),  # not a Terminal-Bench wrapper
        ("terminal_bench_2_0", {}, None),  # not inspect-harbor's namespace
    ],
)  # fmt: skip
def test_the_harbor_dataset_of_an_inspect_harbor_task(
    task: str, args: dict[str, str], benchmark: str | None
) -> None:
    from benchledger.ledger.sources.inspect.harbor_names import harbor_dataset, harbor_task_args

    assert harbor_dataset(task, harbor_task_args({**args, "n_tasks": None})) == benchmark


def test_logs_read_on_several_cores_give_the_same_figures(
    tmp_path: Path, expected: dict[str, dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--jobs 3``: two workers read the later logs (forked, as ``_start`` counts) and the
    records are those of one core."""
    monkeypatch.setattr(inspect_reading, "MIN_LOGS_PER_RUN", 1)
    forked = count_forks(monkeypatch)
    root = copy_logs(tmp_path, "main", "cancelled", "retry")
    assert _figures(tmp_path, root, "--jobs", "3") == expected
    assert len(forked) == 2 and all(forked)
    forked.clear()
    assert _figures(tmp_path, root) == expected
    assert forked == []  # without --jobs nothing is forked


def test_a_bad_log_read_by_a_worker_is_reported_as_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last log truncated: the worker that meets it fails, its run is read again here, and
    the command says what one core says, naming the log."""
    monkeypatch.setattr(inspect_reading, "MIN_LOGS_PER_RUN", 1)
    root = copy_logs(tmp_path, "main", "cancelled", "retry")
    last = sorted(root.rglob("*.eval"))[-1]
    last.write_bytes(last.read_bytes()[:-200])
    outputs = []
    for jobs in ("1", "3"):
        call = ingest(
            ["--log-dir", str(root), "--jobs", jobs], db=f"sqlite:///{tmp_path / f'{jobs}.db'}",
            runtime_root=tmp_path / f"rr{jobs}", execute=False,
        )  # fmt: skip
        assert call.code == 1
        outputs.append(call.payload["error"])
    assert outputs[0] == outputs[1] and last.name in outputs[0]
