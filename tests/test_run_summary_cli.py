"""The first lines a person reads after ``benchmark run``: a short summary before the details.

Markdown (the default) opens with what came in (cases, attempts), how each (agent, model) scored,
what was recorded and where the files went; ``--format json`` is the machine contract and stays
byte for byte what it was before the summary existed (``tests/fixtures/cli-output/``).
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from tests.support_benchflow_source import materialize
from tests.support_harbor_ingest_cli import copy_job, load_manifest

NOW = "2026-12-01T12:00:00Z"
GOLDEN = Path(__file__).resolve().parent / "fixtures" / "cli-output"
BENCHFLOW_CASE = "23_multi_task_root"
HARBOR_JOBS = ("06_multi_attempt", "16_two_agents_one_job")
INGEST_TAIL = ("--update-run-ledger", "--run-ledger-path", "out/ledger.json", "--no-global-sync")


@pytest.fixture(scope="module")
def benchflow(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return materialize(fixtures_dir, tmp_path_factory.mktemp("bf") / "benchflow")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory of one command line, with a fixed clock."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("benchledger.services.benchmark_run.utc_now_seconds", lambda: NOW)
    return tmp_path


def harbor_job(fixtures_dir: Path, project: Path, key: str) -> tuple[str, dict]:
    """The job copied into the project; its path relative to the project, and its manifest."""
    job = next(j for j in load_manifest(fixtures_dir)["jobs"] if j["key"] == key)
    copied = copy_job(fixtures_dir, load_manifest(fixtures_dir), job, project)
    return str(copied.relative_to(project)), job


def benchflow_root(benchflow: Path, project: Path) -> str:
    root = project / "bf"
    shutil.copytree(benchflow / "cases" / BENCHFLOW_CASE, root)  # copy2 keeps the mtimes
    return "bf/jobs"


def run(db_url: str, *args: str, fmt: str | None = None) -> str:
    argv = ["--db", db_url, "--runtime-root", "rt", *(["--format", fmt] if fmt else [])]
    result = CliRunner().invoke(cli, [*argv, "benchmark", "run", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def terminal_bench(job: str, *flags: str) -> tuple[str, ...]:
    return ("terminal-bench", "--goal-id", "demo", "--harbor-job-dir", job, *INGEST_TAIL, *flags)


def skillsbench(root: str, *flags: str) -> tuple[str, ...]:
    return ("skillsbench", "--goal-id", "sb", "--skillsbench-result-root", root, *INGEST_TAIL,
            *flags)  # fmt: skip


def summary_of(markdown: str) -> str:
    """Everything before the per-run sections."""
    return markdown.split("\n## ", 1)[0]


# --- the summary ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", HARBOR_JOBS)
def test_harbor_summary_counts_cases_attempts_and_scores_per_agent_model(
    key: str, db_url: str, fixtures_dir: Path, project: Path
) -> None:
    job_path, job = harbor_job(fixtures_dir, project, key)
    runs = json.loads(run(db_url, *terminal_bench(job_path), fmt="json"))  # dry run: same records
    markdown = run(db_url, *terminal_bench(job_path, "--execute"))
    head = summary_of(markdown)
    lines = head.splitlines()
    assert lines[0] == "# Benchmark Run Append"
    tasks = {trial["task_name"] for trial in job["trials"]}
    assert f"{len(tasks)} cases, {len(job['trials'])} attempts" in lines[2]
    for (agent, model), expected in per_agent_model(runs["benchmark_runs"]).items():
        row = next(line for line in lines if line.startswith(f"| {agent} | {model} |"))
        assert row == expected, head
    assert f"- recorded: {len(runs['benchmark_runs'])} runs appended to goal `demo`" in head
    assert ("in " in lines[2]) is (len(runs["benchmark_runs"]) != len(tasks))  # runs != cases
    assert "- ledger: `out/ledger.json` and `out/ledger.md`" in head
    assert "- run files: `rt/goals/demo/runs/`" in head
    assert head.index("- recorded:") < markdown.index("## Runs")


@pytest.mark.parametrize(
    ("key", "line"),
    [
        # docs/formats/harbor.md §3: one CancelledError trial cancels its own case, not the 39
        # others; the
        # five cases Harbor gave no reward are named with the reason their attempts give.
        ("07_many_tasks_full_sweep", "- will not count: 6 of 40 cases (1 cancelled; 5 unscored: "
         "3 verifier_failed, 2 exception_before_verification)"),
        ("08_running_job", "- will not count: 3 of 6 cases (3 unfinished: running)"),
        ("01_all_pass", None),
    ],
)  # fmt: skip
def test_summary_says_which_cases_will_not_count(
    key: str, line: str | None, db_url: str, fixtures_dir: Path, project: Path
) -> None:
    """Issue 31 item 7: right under the table, how many runs the table's numbers cannot stand
    for (unfinished, cancelled, unscored) and why; nothing when every run counts."""
    job_path, _job = harbor_job(fixtures_dir, project, key)
    lines = summary_of(run(db_url, *terminal_bench(job_path))).splitlines()
    table_end = max(i for i, text in enumerate(lines) if text.startswith("|"))
    under = [text for text in lines[table_end + 1 :] if text]
    if line is None:
        assert not any("will not count" in text for text in lines), lines
        assert under[0].startswith("- dry run:")
    else:
        assert under[0] == line


def per_agent_model(runs: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """The table rows the JSON payload implies, worked out here from the records."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for record in runs:
        groups[(record["agent"]["name"], record["agent"]["model"])].append(record)
    rows = {}
    for (agent, model), records in groups.items():
        scores = [r["official_score"] for r in records if r.get("official_score") is not None]
        passed = sum(bool((r.get("official_task_score") or {}).get("passed")) for r in records)
        mean = f"{sum(scores) / len(scores):.2f}" if scores else "-"
        cases = len({r["case_id"] for r in records})
        rows[(agent, model)] = (
            f"| {agent} | {model} | {cases} | {passed} | {mean} | {len(records) - len(scores)} |"
        )
    return rows


def test_skillsbench_dry_run_summary_says_nothing_was_written(
    db_url: str, benchflow: Path, project: Path
) -> None:
    root = benchflow_root(benchflow, project)
    head = summary_of(run(db_url, *skillsbench(root)))
    assert "4 cases, 4 attempts" in head
    # pass / fail / partial 0.6 / verifier timeout: 1 passed, mean of 3 scores, 1 without one
    assert "| codex-acp | gpt-5.5 | 4 | 1 | 0.53 | 1 |" in head
    assert "- dry run: nothing written; `--execute` would append 4 runs to goal `sb`" in head
    assert "- ledger: would write `out/ledger.json` and `out/ledger.md`" in head
    assert not (project / "out").exists() and not (project / "rt").exists()


def test_a_second_ingest_says_already_recorded(
    db_url: str, fixtures_dir: Path, project: Path
) -> None:
    job_path, _job = harbor_job(fixtures_dir, project, "16_two_agents_one_job")
    run(db_url, *terminal_bench(job_path, "--execute"))
    head = summary_of(run(db_url, *terminal_bench(job_path, "--execute")))
    assert "- already recorded: nothing appended" in head
    assert "3 cases, 6 attempts" in head


def test_the_run_file_keeps_its_format_without_the_summary(
    db_url: str, fixtures_dir: Path, project: Path
) -> None:
    job_path, _job = harbor_job(fixtures_dir, project, "06_multi_attempt")
    run(db_url, *terminal_bench(job_path, "--execute"))
    for markdown in (project / "rt" / "goals" / "demo" / "runs").glob("*.md"):
        text = markdown.read_text(encoding="utf-8")
        assert text.startswith("# Benchmark Run Append\n\n- ok: `true`\n"), text[:200]
        assert "attempts" not in text and "| agent |" not in text


# --- JSON stays as it was ---------------------------------------------------------------------


def golden_json(output: str, project: Path) -> str:
    """The output with the only machine-dependent part, the project directory, made fixed."""
    return output.replace(str(project), "<project>")


@pytest.mark.parametrize(
    "name, source, execute",
    [
        ("terminal-bench-06-dry-run", "harbor", False),
        ("terminal-bench-06-execute", "harbor", True),
        ("skillsbench-23-execute", "benchflow", True),
    ],
)
def test_json_output_is_byte_for_byte_what_it_was(
    name: str, source: str, execute: bool, db_url: str, fixtures_dir: Path, benchflow: Path,
    project: Path,
) -> None:  # fmt: skip
    flags = ("--execute",) if execute else ()
    if source == "harbor":
        args = terminal_bench(harbor_job(fixtures_dir, project, "06_multi_attempt")[0], *flags)
    else:
        args = skillsbench(benchflow_root(benchflow, project), *flags)
    output = golden_json(run(db_url, *args, fmt="json"), project)
    assert output == (GOLDEN / f"{name}.json").read_text(encoding="utf-8")
