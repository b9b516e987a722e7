"""bench/make_ledger.py: the generated ledgers have the layout the ledger benchmarks rely on, and
benchledger reads them (import, aggregate, drift check) the way the benchmarks measure."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.rules.operations.drift import drift_check
from benchledger.ledger.rules.row.build import normalize_row
from benchledger.ledger.rules.row.rows import document_rows

GENERATOR = Path(__file__).resolve().parents[1] / "bench" / "make_ledger.py"
SIZES = (100, 250)
HISTORY = 40


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ledger-data")
    sizes = ",".join(map(str, SIZES))
    argv = [sys.executable, str(GENERATOR), "--out", str(out), "--loopx", "off",
            "--sizes", sizes, "--seq", "12", "--history", str(HISTORY)]  # fmt: skip
    subprocess.run(argv, check=True, capture_output=True)
    return out


def ledger(data: Path, size: int) -> dict:
    return json.loads((data / "ledger" / f"ledger-{size}.json").read_text(encoding="utf-8"))


def test_rows_follow_the_documented_layout(data: Path) -> None:
    rows = document_rows(ledger(data, 250))
    assert len(rows) == 250 and len({row["run_id"] for row in rows}) == 250
    per_case = Counter((row["benchmark_id"], row["case_id"]) for row in rows)
    assert set(per_case.values()) == {5} and len(per_case) == 50
    assert {row["benchmark_id"] for row in rows} == {
        "terminal-bench@2.0", "skillsbench@1.1", "swe-marathon"
    }  # fmt: skip
    assert len({(row["arm_id"], row["mode"]) for row in rows}) == 4
    archived = sum(row.get("archive_state") == "archived" for row in rows)
    assert 0.1 * len(rows) < archived < 0.3 * len(rows)
    assert {row["score_status"] for row in rows} >= {"passed", "failed", "missing"}


def test_a_smaller_ledger_is_a_prefix_of_a_larger_one(data: Path) -> None:
    small = {row["run_id"]: row for row in document_rows(ledger(data, 100))}
    large = {row["run_id"]: row for row in document_rows(ledger(data, 250))}
    assert small and all(large[run_id] == row for run_id, row in small.items())


def test_generation_is_reproducible(data: Path, tmp_path: Path) -> None:
    argv = [sys.executable, str(GENERATOR), "--out", str(tmp_path), "--loopx", "off",
            "--sizes", "100", "--seq", "0", "--history", "0"]  # fmt: skip
    subprocess.run(argv, check=True, capture_output=True)
    again = tmp_path / "ledger" / "ledger-100.json"
    assert again.read_bytes() == (data / "ledger" / "ledger-100.json").read_bytes()


def test_half_the_history_matches_the_ledger_in_the_drift_check(data: Path) -> None:
    index = data / "history" / "runtime" / "goals" / "g" / "runs" / "index.jsonl"
    records = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines()]
    rows = [normalize_row(dict(row)) for row in document_rows(ledger(data, 100))]
    drift = drift_check(records, rows, now="2026-12-01T00:00:00Z", limit=0)
    assert drift["checked_history_run_count"] == HISTORY
    assert drift["matched_history_run_count"] == HISTORY // 2


def test_benchledger_imports_and_aggregates_a_generated_ledger(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "L.json").write_bytes((data / "ledger" / "ledger-100.json").read_bytes())
    db = f"sqlite:///{tmp_path / 'ledger.db'}"
    runner = CliRunner()
    imported = runner.invoke(cli, ["--db", db, "import", "loopx-ledger", "L.json", "--execute"])
    assert imported.exit_code == 0, imported.output
    aggregate = runner.invoke(cli, ["--db", db, "--format", "json", "benchmark",
                                     "run-ledger-aggregate", "--benchmark-id",
                                     "terminal-bench@2.0"])  # fmt: skip
    assert aggregate.exit_code == 0, aggregate.output
    assert json.loads(aggregate.output)["ok"] is True
    new_run = json.loads((data / "inputs" / "new-run.compact.json").read_text(encoding="utf-8"))
    rows = document_rows(ledger(data, 100))
    assert new_run["case_id"] in {row["case_id"] for row in rows}  # a new run of a known case
    assert new_run["job_name"] not in {row["job_name"] for row in rows}
