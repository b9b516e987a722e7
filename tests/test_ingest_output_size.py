"""A 3,000-trial Harbor ingest prints a screenful (issue 34: it printed 1,089 lines).

The job is the benchmark's own (``bench/harbor_ingest.generate_job``: 3,000 trials over
Terminal-Bench's 89 tasks, cloned from a real fixture job in Harbor's format). The default
Markdown is the summary and the first runs, at most ``SCREEN`` lines, dry run or not;
``--verbose`` lists every run, and ``--format json`` keeps every record.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli

# generating the job (45,000 files, ~200 MB) takes ~7-15 s
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[1] / "bench"
TRIALS = 3000
SCREEN = 40


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    sys.path.insert(0, str(BENCH))  # harbor_ingest imports its sibling _fixtures
    try:
        harbor_ingest = importlib.import_module("harbor_ingest")
    finally:
        sys.path.remove(str(BENCH))
    root = tmp_path_factory.mktemp("big-job")
    yield harbor_ingest.generate_job(harbor_ingest.TEMPLATE_JOB, root, TRIALS)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".benchledger").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ingest(job: Path, *flags: str) -> str:
    argv = ["--runtime-root", "rt", "benchmark", "run", "terminal-bench", "--goal-id", "big",
            "--harbor-job-dir", str(job), "--update-run-ledger", "--no-global-sync",
            *flags]  # fmt: skip
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_summary_fits_a_screen_dry_run_and_execute(job: Path, project: Path) -> None:
    cases = {record["case_id"] for record in json.loads(ingest(job, "--format", "json"))[
        "benchmark_runs"]}  # fmt: skip
    for flags in ((), ("--execute",)):
        text = ingest(job, *flags)
        lines = text.splitlines()
        assert len(lines) <= SCREEN, f"{flags}: {len(lines)} lines\n{text}"
        assert f"**{len(cases)} cases, {TRIALS} attempts**" in text
        assert "- will not count: " in text
        shown = re.findall(r"^\| (\S+) \| codex__openai-gpt-5 \|", text, re.MULTILINE)
        assert 0 < len(shown) < len(cases) and set(shown) <= cases
        more = len(cases) - len(shown)
        assert lines[-1] == f"… and {more} more runs (`--verbose` to list all)"
    assert "- recorded: 89 runs appended to goal `big`" in text


def test_verbose_and_json_list_every_run(job: Path, project: Path) -> None:
    records = json.loads(ingest(job, "--format", "json"))["benchmark_runs"]
    assert len(records) == 89
    text = ingest(job, "--verbose")
    assert text.count("## Benchmark Run\n") == len(records)
    for record in records:
        assert f"- case_id: `{record['case_id']}`" in text
    assert "more runs" not in text
