"""``run-ledger-aggregate`` of a benchmark no ledger it read holds (issue 34): one line on
stderr naming the ledger and the benchmarks that exist there, exit 1, nothing written. loopx
0.4.8 answers with an empty aggregate and exit 0 (docs/loopx-compat.md); a benchmark that is
there aggregates as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support_cli import invoke_json
from tests.support_harbor_ingest_cli import copy_job, load_manifest

TB = "terminal-bench@2.0"


def _run(*args: str) -> tuple[int, Any, str]:
    return invoke_json(*args)


@pytest.fixture
def project(fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose store ledger holds one Terminal-Bench job."""
    manifest = load_manifest(fixtures_dir)
    job = copy_job(fixtures_dir, manifest, manifest["jobs"][0], tmp_path / "src")
    project = tmp_path / "project"
    (project / ".benchledger").mkdir(parents=True)
    monkeypatch.chdir(project)
    code, _payload, err = _run(
        "benchmark", "run", "terminal-bench", "--goal-id", "tb2", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--no-global-sync", "--execute",
    )  # fmt: skip
    assert code == 0, err
    return project


def _aggregate(*args: str) -> tuple[int, Any, str]:
    return _run("benchmark", "run-ledger-aggregate", *args)


def test_an_unknown_benchmark_names_the_ledger_and_its_benchmarks(project: Path) -> None:
    code, payload, err = _aggregate("--benchmark-id", "terminal-bench@2", "--execute",
                                    "--output-json", "agg.json")  # fmt: skip
    assert code == 1
    assert err == (
        "error: no ledger rows for benchmark terminal-bench@2 in ledger "
        f"benchmark-run-ledger.json (benchmarks in it: {TB})\n"
    )
    assert payload["ok"] is False and payload["error_code"] == "input_error"
    assert not (project / "agg.json").exists()  # nothing written


def test_a_known_benchmark_still_aggregates(project: Path) -> None:
    code, payload, err = _aggregate("--benchmark-id", TB)
    assert code == 0, err
    assert payload["aggregate"]["benchmark_id"] == TB
    assert payload["aggregate"]["deduped_run_count"] > 0


def test_an_empty_store_says_it_holds_no_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".benchledger").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _payload, err = _aggregate("--benchmark-id", TB)
    assert code == 1
    assert err.startswith(f"error: no ledger rows for benchmark {TB} in ledger ")
    assert "the store holds no ledger rows yet" in err and err.count("\n") == 1


def test_source_ledgers_count_as_read(project: Path, tmp_path: Path) -> None:
    """A benchmark only a source ledger holds aggregates; one that none holds lists the
    benchmarks of the store ledger and the sources together."""
    source = tmp_path / "source.json"
    document = json.loads((project / "benchmark-run-ledger.json").read_text(encoding="utf-8"))
    node = document["benchmarks"].pop(TB)
    for case in node["cases"].values():
        for run in case["runs"]:
            run["benchmark_id"] = "swe-marathon"
    document["benchmarks"]["swe-marathon"] = node
    source.write_text(json.dumps(document), encoding="utf-8")

    code, payload, err = _aggregate("--benchmark-id", "swe-marathon",
                                    "--source-run-ledger-path", str(source))  # fmt: skip
    assert code == 0, err
    assert payload["aggregate"]["deduped_run_count"] > 0

    code, _payload, err = _aggregate("--benchmark-id", "nope",
                                     "--source-run-ledger-path", str(source))  # fmt: skip
    assert code == 1
    assert err == (
        "error: no ledger rows for benchmark nope in ledger benchmark-run-ledger.json or its "
        f"source ledgers (benchmarks in them: swe-marathon, {TB})\n"
    )
