"""``--harbor-job-dir`` at the wrong level names the directory to use (issue 34)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchledger.ledger.handlers.harbor_job_hint import job_dir_hint

REPO = Path(__file__).resolve().parents[1]
JOB = "2026-05-02__09-14-07"


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "jobs"
    shutil.copytree(REPO / "examples" / "harbor" / JOB, root / JOB)
    monkeypatch.chdir(tmp_path)
    return root


def _error(db: str, job_dir: str) -> str:
    from benchledger.commands.cli import cli

    result = CliRunner().invoke(
        cli, ["--db", db, "benchmark", "run", "terminal-bench", "--goal-id", "g",
              "--harbor-job-dir", job_dir, "--execute"],
    )  # fmt: skip
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    return line


def test_a_trial_directory_points_at_its_job(jobs: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's' / 'ledger.db'}"
    trial = next(p for p in (jobs / JOB).iterdir() if p.is_dir())
    line = _error(db, f"jobs/{JOB}/{trial.name}")
    assert line.endswith(
        f"it looks like a trial directory; pass the job directory above it "
        f"(--harbor-job-dir jobs/{JOB})"
    )


def test_the_jobs_folder_lists_its_jobs(jobs: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's' / 'ledger.db'}"
    line = _error(db, "jobs")
    assert line.endswith(
        f"it holds 1 Harbor job directory ({JOB}); pass one of them; "
        f"e.g. --harbor-job-dir jobs/{JOB}"
    )
    absolute = _error(db, str(jobs))
    assert str(tmp_path) not in absolute and absolute.endswith("pass one of them")


def test_no_hint_for_an_unrelated_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert job_dir_hint("empty", tmp_path / "empty") is None
    assert json.dumps(job_dir_hint("x", tmp_path / "missing")) == "null"
