"""``benchmark run`` options are validated once, at the edge, and each reader or planner gets a
small typed options object (issue 30): the readers never reach back up to the request, the
handlers or the services, and no source module grows past 600 lines.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import InputError, SourceError
from benchledger.ledger.requests import benchmark_run_rules
from benchledger.ledger.sources import parallel as sources_parallel
from benchledger.ledger.sources.harbor import files as harbor_files
from benchledger.ledger.sources.harbor import parallel as harbor_parallel
from benchledger.ledger.sources.harbor.job import read_harbor_job
from benchledger.ledger.sources.harbor.options import ArmMapping, HarborReadOptions
from tests.conftest import FIXTURES_DIR
from tests.support_parallel import count_forks
from tests.support_planned_cli import invoke

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "ledger" / "sources"
HARBOR = FIXTURES_DIR / "harbor"
BENCHFLOW_ROOT = FIXTURES_DIR / "benchflow" / "cases" / "01_pass"
UPWARD = (
    "benchledger.ledger.requests",
    "benchledger.ledger.handlers",
    "benchledger.services",
    "benchledger.commands",
)


def _job(key: str) -> Path:
    manifest = json.loads((HARBOR / "manifest.json").read_text("utf-8"))
    return HARBOR / next(j["job_dir"] for j in manifest["jobs"] if j["key"] == key)


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_sources_never_import_upward() -> None:
    """Readers and planner take typed options; none imports the request or a layer above."""
    found = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in SOURCES.rglob("*.py")
        for name in _imports(path)
        if name.startswith(UPWARD)
    }
    assert found == set()


def test_no_source_module_over_600_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text("utf-8").splitlines())
        for path in SOURCES.rglob("*.py")
    }
    assert {name: n for name, n in sizes.items() if n > 600} == {}


@pytest.mark.parametrize(
    "args",
    [
        ["terminal-bench", "--goal-id", "g", "--include-task-name", "t1"],
        ["terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(_job("01_all_pass"))],
        ["skillsbench", "--goal-id", "g", "--skillsbench-result-root", str(BENCHFLOW_ROOT)],
    ],
    ids=["planned", "harbor", "benchflow"],
)
def test_benchmark_run_validates_its_options_once(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    calls: list[str] = []
    check = benchmark_run_rules.check_parser_choices

    def counted(opts):  # noqa: ANN001, ANN202
        calls.append(opts.benchmark_name)
        return check(opts)

    monkeypatch.setattr(benchmark_run_rules, "check_parser_choices", counted)
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    done = invoke(
        ["benchmark", "run", *args, "--no-global-sync", "--format", "json"],
        db=db,
        runtime_root=tmp_path / "rt",
    )
    assert done.code == 0, done.stderr
    assert calls == [args[0]]


def test_harbor_options_filter_tasks_in_the_reader() -> None:
    job = _job("07_many_tasks_full_sweep")
    everything = read_harbor_job(HarborReadOptions.from_flags(job))
    cases = sorted({r["case_id"] for r in everything.records})
    kept = read_harbor_job(HarborReadOptions.from_flags(job, include_tasks=cases[:2]))
    assert sorted(r["case_id"] for r in kept.records) == cases[:2]
    assert kept.provenance == everything.provenance  # every file read is still named
    with pytest.raises(InputError, match="^no records for --include-task-name nope$"):
        read_harbor_job(HarborReadOptions.from_flags(job, include_tasks=["nope"]))


def test_harbor_arm_map_is_parsed_once_before_any_file_is_read(tmp_path: Path) -> None:
    options = HarborReadOptions.from_flags(tmp_path, arm_map=["codex:openai/gpt-5=b", "t2=o"])
    assert options.arm_map == (
        ArmMapping("codex", "openai/gpt-5", "b"),
        ArmMapping("t2", None, "o"),
    )
    with pytest.raises(SourceError, match="^invalid --arm-map entry: codex$"):
        HarborReadOptions.from_flags(tmp_path / "no-such-dir", arm_map=["codex"])


@pytest.mark.parametrize("key", ["07_many_tasks_full_sweep", "03_mixed_with_timeouts"])
def test_harbor_jobs_read_on_several_cores_give_the_same_ingest(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harbor_parallel, "MIN_TRIALS_PER_RUN", 1)  # fork even for a few
    alone = read_harbor_job(HarborReadOptions.from_flags(_job(key), jobs=1))
    calls: list[tuple[int, int]] = []
    shared = read_harbor_job(
        HarborReadOptions.from_flags(_job(key), jobs=3), progress=lambda d, t: calls.append((d, t))
    )
    assert shared == alone
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] == alone.provenance["trial_dir_count"]


def test_harbor_workers_start_before_the_job_files_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With --jobs 2 one worker reads the second half of the trials, started before this process
    reads the job's own files (lock.json is the largest); without --jobs nothing is forked.
    The ingest is the same either way."""
    monkeypatch.setattr(harbor_parallel, "MIN_TRIALS_PER_RUN", 1)
    job = _job("07_many_tasks_full_sweep")
    alone = read_harbor_job(HarborReadOptions.from_flags(job, jobs=1))
    trials = alone.provenance["trial_dir_count"]
    order: list[str] = []
    started = count_forks(monkeypatch, lambda: order.append("worker"))
    read_json = harbor_files._Reader.json

    def noted(reader: harbor_files._Reader, rel: str) -> harbor_files._Json:
        order.append(rel)
        return read_json(reader, rel)

    monkeypatch.setattr(harbor_files._Reader, "json", noted)
    assert read_harbor_job(HarborReadOptions.from_flags(job, jobs=2)) == alone
    assert len(started) == 1 and 0 < started[0] < trials  # one worker read the second half
    assert order[:3] == ["worker", "config.json", "lock.json"]
    started.clear()
    assert read_harbor_job(HarborReadOptions.from_flags(job)) == alone
    assert started == []


@pytest.mark.parametrize(
    ("trials", "jobs", "parts"),
    [
        (3000, None, 1),  # the default: here alone
        (3000, 1, 1),
        (3000, 2, 2),
        (3000, 8, 8),  # --jobs N is taken as asked, down to 200 trials a run
        (300, 8, 1),
    ],
)
def test_how_many_runs_a_job_is_read_in(trials: int, jobs: int | None, parts: int) -> None:
    assert sources_parallel.parts(trials, jobs, harbor_parallel.MIN_TRIALS_PER_RUN) == parts


def test_harbor_jobs_a_bad_trial_read_by_a_worker_is_reported_as_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harbor_parallel, "MIN_TRIALS_PER_RUN", 1)
    job = tmp_path / "job"
    shutil.copytree(_job("07_many_tasks_full_sweep"), job)
    last = sorted(p for p in job.iterdir() if p.is_dir())[-1]
    (last / "result.json").unlink()
    os.mkfifo(last / "result.json")  # a worker meets it; the command must name it the same way
    with pytest.raises(InputError) as alone:
        read_harbor_job(HarborReadOptions.from_flags(job, jobs=1))
    with pytest.raises(InputError) as shared:
        read_harbor_job(HarborReadOptions.from_flags(job, jobs=4))
    assert shared.value.message == alone.value.message
    assert last.name in alone.value.message


@pytest.mark.parametrize("value", ["0", "-2"])
def test_jobs_must_be_positive(value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    job = str(_job("01_all_pass"))
    done = invoke(
        ["benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", job,
         "--jobs", value, "--no-global-sync"],
        db=f"sqlite:///{tmp_path / 'db.sqlite'}",
    )  # fmt: skip
    assert done.code == 1
    assert done.stderr.strip() == "error: --jobs must be a positive integer"
