"""``benchmark run`` without ``--goal-id`` (issue 34): an ingest records into a goal named
after what it reads (docs/cli.md "The goal"); a name that is no valid goal id, and a planned
run, which reads nothing, are refused with one line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.requests.goal_default import default_goal_source
from tests.support_benchflow_source import materialize
from tests.support_cli import invoke_json
from tests.support_harbor_ingest_cli import copy_job, load_manifest
from tests.support_inspect import copy_logs

JOB_NAME = "2026-05-02__09-14-07"


def _run(*args: str) -> tuple[int, Any, str]:
    return invoke_json("--runtime-root", "rt", "benchmark", "run", *args)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "project"
    (project / ".benchledger").mkdir(parents=True)
    monkeypatch.chdir(project)
    return project


def harbor_job(fixtures_dir: Path, dest: Path, name: str = JOB_NAME) -> Path:
    """The first fixture job, copied into ``dest/jobs/<name>``."""
    manifest = load_manifest(fixtures_dir)
    copied = copy_job(fixtures_dir, manifest, manifest["jobs"][0], dest / "src")
    job = dest / "jobs" / name
    job.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(copied, job)
    return job


def test_a_harbor_ingest_records_into_the_job_directorys_goal(
    fixtures_dir: Path, project: Path
) -> None:
    job = harbor_job(fixtures_dir, project)
    code, payload, err = _run("terminal-bench", "--harbor-job-dir", "jobs/" + JOB_NAME + "/",
                              "--no-global-sync", "--execute")  # fmt: skip
    assert code == 0, err
    assert payload["goal_id"] == JOB_NAME
    assert (project / "rt" / "goals" / JOB_NAME / "runs" / "index.jsonl").is_file()
    # the default is the same request as naming it: the second ingest is a no-op
    code, again, err = _run("terminal-bench", "--harbor-job-dir", str(job),
                            "--goal-id", JOB_NAME, "--no-global-sync", "--execute")  # fmt: skip
    assert code == 0, err
    assert again["already_recorded"] is True


def test_the_human_summary_says_where_the_goal_came_from(fixtures_dir: Path, project: Path) -> None:
    from benchledger.commands.cli import cli as root

    harbor_job(fixtures_dir, project)
    argv = ["--runtime-root", "rt", "benchmark", "run", "terminal-bench",
            "--harbor-job-dir", f"jobs/{JOB_NAME}", "--no-global-sync"]  # fmt: skip
    out = CliRunner().invoke(root, argv).stdout
    assert f"- goal: `{JOB_NAME}` is the job directory's name (`--goal-id` names another)" in out
    out = CliRunner().invoke(root, [*argv, "--goal-id", "tb2"]).stdout
    assert "to goal `tb2`" in out and "- goal:" not in out


def test_a_benchflow_root_and_an_inspect_log_name_their_goal(
    fixtures_dir: Path, project: Path
) -> None:
    root = materialize(fixtures_dir, project / "bf") / "cases" / "01_pass" / "jobs"
    code, payload, err = _run("skillsbench", "--skillsbench-result-root", str(root),
                              "--no-global-sync")  # fmt: skip
    assert code == 0, err
    assert payload["goal_id"] == "jobs"

    logs = copy_logs(project, "main") / "main"
    log = sorted(logs.glob("*.eval"))[0]
    code, payload, err = _run("inspect", "--log", str(log), "--no-global-sync")
    assert code == 0, err
    assert payload["goal_id"] == log.stem


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"harbor_job_dir": "jobs/J/"}, ("job directory", "J")),
        ({"harbor_job_dir": "."}, ("job directory", "project")),
        ({"skillsbench_result_root": "runs/sb-0502"}, ("result root", "sb-0502")),
        ({"skillsbench_result_json": "runs/sb/t1/result.json"}, ("result directory", "t1")),
        ({"log_dir": "logs/mmlu"}, ("log directory", "mmlu")),
        ({"log": ("logs/x_mmlu_Ab3.eval",)}, ("log file", "x_mmlu_Ab3")),
        ({"log": ("a.eval", "b.eval")}, None),
        ({"include_task_name": ("fix-git",)}, None),
    ],
)
def test_the_default_is_the_name_of_what_is_read(
    options: dict[str, Any], expected: tuple[str, str] | None, project: Path
) -> None:
    assert default_goal_source(BenchmarkRunRequest(**options)) == expected


def test_a_planned_run_still_needs_a_goal(project: Path) -> None:
    code, payload, err = _run("terminal-bench", "--include-task-name", "fix-git")
    assert code == 2
    assert err == (
        "error: --goal-id is required here: only an ingest of one job directory, result root, "
        "log directory or log file has a default goal (its name)\n"
    )


def test_a_name_that_is_no_goal_id_is_refused(fixtures_dir: Path, project: Path) -> None:
    long_name = "j" * 210  # a directory name may be 255 bytes, a goal id at most 200
    harbor_job(fixtures_dir, project, long_name)
    code, payload, err = _run("terminal-bench", "--harbor-job-dir", f"jobs/{long_name}",
                              "--execute")  # fmt: skip
    assert code == 1
    assert err.startswith("error: no --goal-id given, and the job directory's name 'jjj")
    assert err.endswith("cannot be one (goal id is too long (at most 200 bytes)); pass --goal-id\n")
    assert not (project / "rt").exists()
    assert not (project / ".benchledger" / "ledger.db").exists()
