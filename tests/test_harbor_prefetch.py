"""The Harbor trials read on two cores (``ledger.sources.harbor.prefetch``) give exactly what
one core reads: the same records, provenance (every file digest) and warnings, whichever
trial the two sides meet at, and the same error, in trial order, when a trial cannot be read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import BenchledgerError
from benchledger.ledger.sources.harbor import prefetch as harbor_prefetch
from benchledger.ledger.sources.harbor.job import read_harbor_job
from tests.conftest import FIXTURES_DIR

pytestmark = pytest.mark.skipif(not harbor_prefetch._enabled(), reason="needs fork (Linux)")

HARBOR = FIXTURES_DIR / "harbor"
JOBS = sorted(p for p in HARBOR.glob("*/jobs/*") if p.is_dir())
TEMPLATE = HARBOR / "tb2-pilot-20260502" / "jobs" / "2026-05-02__14-03-19"
REPO = Path(__file__).resolve().parents[1]


def _outcome(job: Path) -> object:
    """What reading ``job`` gives: its source ingest, or the error it stops with."""
    try:
        got = read_harbor_job(job)
    except BenchledgerError as exc:
        return (type(exc).__name__, str(exc))
    return (got.records, got.provenance, got.warnings, got.record_dirs)


def _two_cores(job: Path, back: int | None = None) -> object:
    if back is None:
        harbor_prefetch.fork_reader(str(job))
    else:
        harbor_prefetch.fork_reader(str(job), back=back)
    try:
        return _outcome(job)
    finally:
        harbor_prefetch.discard()  # a reader the read did not claim (an early error) is stopped


def _big_job(tmp_path: Path, copies: int) -> Path:
    """The template job with each trial directory cloned ``copies`` times under new names."""
    job = tmp_path / "job"
    shutil.copytree(TEMPLATE, job)
    trials = [p for p in job.iterdir() if (p / "result.json").exists()]
    for trial in trials:
        for n in range(copies):
            shutil.copytree(trial, job / f"{trial.name}-{n:03d}")
    return job


@pytest.mark.parametrize("job", JOBS, ids=lambda p: f"{p.parents[1].name}/{p.name}")
def test_every_fixture_job_reads_the_same_on_two_cores(job: Path) -> None:
    assert _two_cores(job) == _outcome(job)


@pytest.mark.parametrize("back", [0, 1, 7, 32, 63, 64, 10**6])
def test_any_meeting_point_reads_the_same(tmp_path: Path, back: int) -> None:
    """The reader stops where the command's claims begin: from nothing read by the reader (0)
    to everything (past the end); the command reads the rest, twice where they overlap."""
    job = _big_job(tmp_path, 7)
    one_core = _outcome(job)
    assert isinstance(one_core, tuple) and one_core[1]["trial_dir_count"] == 64
    assert _two_cores(job, back) == one_core


def test_unreadable_trial_is_the_same_error_in_trial_order(tmp_path: Path) -> None:
    """A FIFO where a trial's result.json should be: the reader fails, the command reads alone
    and reports the first unreadable trial, as without the reader."""
    job = _big_job(tmp_path, 3)
    trials = sorted(p for p in job.iterdir() if p.is_dir())
    for victim in (trials[5], trials[-3]):
        (victim / "result.json").unlink()
        os.mkfifo(victim / "result.json")
    one_core = _outcome(job)
    assert one_core[0] == "UnreadableFileError" and trials[5].name in str(one_core[1])
    for back in (None, 0, 4, 10, len(trials) - 2):
        assert _two_cores(job, back) == one_core


def test_nul_in_a_trial_is_the_same_error(tmp_path: Path) -> None:
    job = _big_job(tmp_path, 2)
    victim = sorted(p for p in job.iterdir() if p.is_dir())[-1]
    result = json.loads((victim / "result.json").read_text())
    result["task_name"] = "a\u0000b"
    (victim / "result.json").write_text(json.dumps(result))
    one_core = _outcome(job)
    assert one_core[0] == "InputError" and "NUL" in str(one_core[1])
    assert _two_cores(job) == one_core
    assert _two_cores(job, 0) == one_core


def test_another_directory_is_read_by_the_command(tmp_path: Path) -> None:
    """A reader started for one directory is not used for another (the scan of the raw
    arguments only guesses which directory the command will read)."""
    other = _big_job(tmp_path, 1)
    harbor_prefetch.fork_reader(str(TEMPLATE))
    try:
        assert _outcome(other) == _outcome(other)
    finally:
        harbor_prefetch.discard()


def test_unclaimed_reader_is_stopped_and_reaped() -> None:
    harbor_prefetch.fork_reader(str(TEMPLATE))
    split = harbor_prefetch._pending
    assert split is not None
    harbor_prefetch.discard()
    assert harbor_prefetch._pending is None
    with pytest.raises(ChildProcessError):
        os.waitpid(split.pid, os.WNOHANG)  # already reaped: no zombie left behind


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["benchmark", "run", "terminal-bench", "--harbor-job-dir", "j"], "j"),
        (["--db", "x", "benchmark", "run", "terminal-bench", "--harbor-job-dir=j"], "j"),
        (["benchmark", "run", "terminal-bench", "--harbor-job-dir"], None),
        (["benchmark", "run", "skillsbench", "--skillsbench-result-root", "r"], None),
        (["events", "list"], None),
        (["benchmark", "run-ledger-upsert", "--harbor-job-dir", "j"], None),
    ],
)
def test_job_dir_is_found_in_the_raw_arguments(argv: list[str], expected: str | None) -> None:
    assert harbor_prefetch.job_dir_in(argv) == expected


def test_console_script_ingests_the_same_with_and_without_the_reader(tmp_path: Path) -> None:
    """Through the installed entry point, as a user runs it: the same events are stored."""
    job = _big_job(tmp_path, 4)
    stored = {}
    for mode in ("1", "0"):
        work = tmp_path / f"project-{mode}"
        work.mkdir()
        env = {**os.environ, "BENCHLEDGER_PREFETCH": mode, "PYTHONPATH": str(REPO)}
        argv = [sys.executable, "-c", "from benchledger.commands.entry import main; main()"]
        run = subprocess.run(
            [*argv, "--format", "json", "benchmark", "run", "terminal-bench", "--goal-id", "g",
             "--harbor-job-dir", str(job), "--no-global-sync", "--execute"],
            cwd=work, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["ok"] is True
        listed = subprocess.run(
            [*argv, "--format", "json", "sql",
             "SELECT event_type, payload FROM events WHERE event_type = 'run_built' "
             "ORDER BY position"],
            cwd=work, env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        stored[mode] = json.loads(listed.stdout)
    assert stored["1"] == stored["0"]
    assert len(stored["1"]["rows"]) == 8  # one record per task of the template


def test_reader_lines_carry_each_trial_config_once(tmp_path: Path) -> None:
    """The reader's lines hold each distinct trial config once (a job's trials share a few);
    loaded back, every attempt has its own config's content, and equal configs are one object."""
    from benchledger.ledger.sources.harbor import reading as harbor_reading
    job = _big_job(tmp_path, 3)

    class Everything:  # the reader's side of a split that lets it read every trial
        def begin(self, total: int) -> None:
            pass

        def take_front(self, i: int) -> bool:
            return True

    lines: list[bytes] = []
    harbor_reading.read_front_for_prefetch(str(job), Everything(), lines.append)  # type: ignore[arg-type]
    *batches, _ = b"".join(lines).split(b"\n")
    with harbor_reading._Reader(str(job.resolve())) as reader:
        names = harbor_reading._list_trials(reader)
        expected = [harbor_reading._read_trial(reader, name) for name in names]
    first = next(a for a in expected if a is not None)
    fields = harbor_reading._attempt_fields(first)
    assert fields[harbor_reading._CONFIG_FIELD] is first.config  # the index names the config
    assert harbor_reading._attempt_from_fields(fields).config is first.config
    loaded = harbor_reading._loaded_trials(batches)
    assert loaded == [None if a is None else harbor_reading._attempt_fields(a) for a in expected]
    configs = [f[harbor_reading._CONFIG_FIELD] for f in loaded if f is not None]
    distinct = {json.dumps(c, sort_keys=True) for c in configs}
    assert len({id(c) for c in configs}) == len(distinct) < len(configs)
    written = b"".join(batches)
    one = json.dumps(configs[0], separators=(",", ":")).encode()
    assert written.count(one) == 1
