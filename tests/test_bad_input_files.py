"""Files that are not what their names say, through every command that reads one.

A FIFO named ``result.json`` used to block an ingest forever and a link to ``/dev/zero`` read
until memory ran out. Each test plants one such file where a command reads, runs the command
on SQLite and PostgreSQL under an alarm (a hang fails the test instead of the suite), and
expects one ``error:`` line naming the file, exit 1 and no new event.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.core.input_files import (
    UnreadableFileError,
    read_input_file,
    read_regular_file,
    shown_path,
)
from tests.conftest import FIXTURES_DIR
from tests.support_bad_input import HARBOR_JOB, harbor_empty_dirs, make_writable_copy
from tests.test_ledger_cli import compact_run

BENCHFLOW_CASE = "01_pass"
BENCHFLOW_ROLLOUT = "jobs/2026-03-02__09-37-00/citation-check__6517cb81"
HARBOR_TRIAL = "regex-chess__2SQ9vaA"


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A blocked open or an endless read fails the test after 60 s instead of hanging."""

    def fail(_signum: int, _frame: object) -> None:
        raise TimeoutError("the command hung on a file it should have refused")

    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class Env:
    """A project directory and a store; every command counted in events before and after."""

    def __init__(self, db_url: str, root: Path) -> None:
        self.db_url = db_url
        self.root = root

    def run(self, *args: str):
        return CliRunner().invoke(cli, ["--db", self.db_url, *args], catch_exceptions=True)

    def events(self) -> int:
        result = self.run("events", "list", "--limit", "100000", "--format", "json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["count"]

    def refused(self, *args: str) -> str:
        """The one error line of a refused command, after checking nothing was appended."""
        before = self.events()
        result = self.run(*args)
        out = result.stdout + result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit), out
        assert "Traceback" not in out and "internal error" not in out, out
        assert result.exit_code == 1, out
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert self.events() == before, "a refused command appended events"
        return lines[0]


@pytest.fixture
def env(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    monkeypatch.chdir(tmp_path)
    for name in ("BENCHLEDGER_REGISTRY", "BENCHLEDGER_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    made = Env(db_url, tmp_path)
    made.events()  # the store exists before the first count that matters
    return made


# --------------------------------------------------------------------------- what gets planted


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _directory(path: Path) -> None:
    (path / "nested").mkdir(parents=True)


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()  # the socket file stays


def _loop(path: Path) -> None:
    path.symlink_to(path.name)  # resolves to itself: ELOOP


PLANTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "FIFO"),
    "dev_zero": (_zero, "character device"),
    "directory": (_directory, "directory"),
    "socket": (_socket, "socket"),
    "link_loop": (_loop, "symbolic link"),
}


def _plant(path: Path, how: str) -> str:
    if path.exists() or path.is_symlink():
        path.unlink()
    if how == "socket" and len(str(path)) > 100:  # AF_UNIX paths are short
        pytest.skip("socket path too long for AF_UNIX")
    plant, words = PLANTS[how]
    plant(path)
    return words


# --------------------------------------------------------------------------- the reader itself


@pytest.mark.parametrize("how", sorted(PLANTS))
def test_reader_refuses_what_is_not_a_regular_file(tmp_path: Path, how: str) -> None:
    words = _plant(tmp_path / "result.json", how)
    with pytest.raises(UnreadableFileError) as info:
        read_regular_file(tmp_path / "result.json", shown="job/result.json", limit=1 << 20)
    assert "job/result.json" in info.value.message and words in info.value.message
    assert str(tmp_path) not in info.value.message


def test_reader_caps_size_before_and_during_the_read(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(5 << 20)  # sparse: costs no disk
    with pytest.raises(UnreadableFileError) as info:
        read_regular_file(big, shown="big.json", limit=1 << 20)
    assert "larger than the 1 MiB limit" in info.value.message
    # a file that grows after it was checked is still cut off at the limit
    small = tmp_path / "small.json"
    small.write_bytes(b"{}")
    real_stat = os.stat

    class _Lying:
        def __init__(self, found: os.stat_result) -> None:
            self.st_mode, self.st_size = found.st_mode, 2

    def stat(path, *args, **kwargs):  # noqa: ANN001, ANN202
        found = real_stat(path, *args, **kwargs)
        return _Lying(found) if os.fspath(path) == os.fspath(big) else found

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "stat", stat)
        with pytest.raises(UnreadableFileError, match="larger than the 1 MiB limit"):
            read_regular_file(big, shown="big.json", limit=1 << 20)
    assert read_regular_file(small, shown="small.json", limit=2) == b"{}"


def test_missing_and_dangling_are_not_found_and_permissions_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "gone.json", shown="gone.json", limit=10)
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "dangling.json", shown="dangling.json", limit=10)
    with pytest.raises(UnreadableFileError, match="file not found: gone.json"):
        read_input_file(tmp_path / "gone.json", shown="gone.json", limit=10)
    locked = tmp_path / "locked.json"
    locked.write_bytes(b"{}")
    real_open = os.open

    def denied(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
        # tests run as root, where chmod 000 denies nothing; the OS answer is simulated
        if os.fspath(path) == os.fspath(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "open", denied)
        with pytest.raises(UnreadableFileError) as info:
            read_regular_file(locked, shown="locked.json", limit=10)
    assert info.value.message == (
        "cannot read locked.json: Permission denied; check the file's permissions"
    )


def test_shown_path_escapes_undecodable_bytes_and_controls() -> None:
    name = os.fsdecode(b"trial-\xff\xfe") + "\n\x1b"
    assert shown_path(name) == "trial-\\xff\\xfe\\n\\x1b"


# --------------------------------------------------------------------------- Harbor


def _harbor_job(root: Path) -> Path:
    return make_writable_copy(
        FIXTURES_DIR / "harbor" / HARBOR_JOB,
        root / "harbor" / "job",
        harbor_empty_dirs(HARBOR_JOB),
    )


def _harbor(env: Env, job: Path) -> str:
    return env.refused(
        "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--execute",
    )  # fmt: skip


@pytest.mark.parametrize(
    "rel",
    ["result.json", "config.json", "lock.json", f"{HARBOR_TRIAL}/result.json"],
)
@pytest.mark.parametrize("how", ["fifo", "dev_zero", "directory", "link_loop"])
def test_harbor_refuses_a_file_that_is_not_a_file(env: Env, rel: str, how: str) -> None:
    job = _harbor_job(env.root)
    words = _plant(job / rel, how)
    line = _harbor(env, job)
    assert f"Harbor job file {rel}" in line and words in line, line
    assert str(env.root) not in line
    assert not (env.root / "benchmark-run-ledger.json").exists()


def test_harbor_job_dir_that_cannot_be_listed_is_named(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _harbor_job(env.root)
    real = os.scandir

    def scandir(path):  # noqa: ANN001, ANN202
        # tests run as root, where chmod 000 denies nothing; the OS answer is simulated
        if os.fspath(path) == os.fspath(job.resolve()):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    line = _harbor(env, job)
    assert line == (
        "error: --harbor-job-dir cannot be listed: Permission denied; check its permissions"
    )


def test_harbor_trial_config_is_read_safely_too(env: Env) -> None:
    """Without a usable result the trial's own config.json is read: a FIFO there is refused."""
    job = _harbor_job(env.root)
    (job / HARBOR_TRIAL / "result.json").unlink()
    _plant(job / HARBOR_TRIAL / "config.json", "fifo")
    line = _harbor(env, job)
    assert f"{HARBOR_TRIAL}/config.json" in line and "FIFO" in line


def test_harbor_non_utf8_trial_directory_is_named(env: Env) -> None:
    job = _harbor_job(env.root)
    (Path(os.fsdecode(os.fsencode(job) + b"/notes-\xff.txt"))).write_text("x")  # not a trial
    bad = os.fsencode(job) + b"/regex-chess__\xff\xfe"
    os.rename(os.fsencode(job / HARBOR_TRIAL), bad)
    line = _harbor(env, job)
    assert "trial directory name is not valid UTF-8: regex-chess__\\xff\\xfe" in line
    assert "rename" in line


def test_harbor_stray_file_with_a_non_utf8_name_is_not_a_trial(env: Env) -> None:
    job = _harbor_job(env.root)
    Path(os.fsdecode(os.fsencode(job) + b"/notes-\xff.txt")).write_text("x")
    result = env.run(
        "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--execute", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ok"] is True


def test_harbor_reward_that_is_not_a_number_or_out_of_range_is_reported(env: Env) -> None:
    job = _harbor_job(env.root)
    trial = job / HARBOR_TRIAL / "result.json"
    document = json.loads(trial.read_text("utf-8"))
    document["verifier_result"] = {"rewards": {"reward": "1.0"}}
    trial.write_text(json.dumps(document), "utf-8")
    other = next(p for p in job.iterdir() if p.is_dir() and p.name != HARBOR_TRIAL)
    document = json.loads((other / "result.json").read_text("utf-8"))
    document["verifier_result"] = {"rewards": {"reward": -5}}
    (other / "result.json").write_text(json.dumps(document), "utf-8")
    result = env.run(
        "benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir", str(job),
        "--update-run-ledger", "--execute", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout + result.stderr
    assert f"{HARBOR_TRIAL}/result.json verifier_result.rewards.reward is a string" in out
    assert f"{other.name}/result.json verifier_result.rewards.reward = -5.0 is outside" in out
    ledger = json.loads((env.root / "benchmark-run-ledger.json").read_text("utf-8"))
    rows = [
        run
        for node in ledger["benchmarks"].values()
        for case in node["cases"].values()
        for run in case["runs"]
    ]
    flagged = [r for r in rows if r.get("score_flags")]
    assert flagged and all(r["official_score"] < 0 for r in flagged)
    assert all(f["score_flags"] == ["out_of_range"] for f in flagged)


# --------------------------------------------------------------------------- BenchFlow


def _benchflow_root(root: Path) -> Path:
    return make_writable_copy(FIXTURES_DIR / "benchflow" / "cases" / BENCHFLOW_CASE, root / "bf")


@pytest.mark.parametrize(
    "rel",
    [f"{BENCHFLOW_ROLLOUT}/result.json", f"{BENCHFLOW_ROLLOUT}/timing.json",
     "jobs/2026-03-02__09-37-00/summary.json"],
)  # fmt: skip
@pytest.mark.parametrize("how", ["fifo", "dev_zero", "link_loop"])
def test_benchflow_refuses_a_file_that_is_not_a_file(env: Env, rel: str, how: str) -> None:
    root = _benchflow_root(env.root)
    words = _plant(root / rel, how)
    line = env.refused(
        "benchmark", "run", "skillsbench", "--goal-id", "g", "--skillsbench-result-root",
        str(root), "--update-run-ledger", "--execute",
    )  # fmt: skip
    assert f"BenchFlow file {rel}" in line and words in line, line
    assert str(env.root) not in line


def test_benchflow_non_utf8_rollout_directory_is_named(env: Env) -> None:
    root = _benchflow_root(env.root)
    rollout = root / BENCHFLOW_ROLLOUT
    os.rename(os.fsencode(rollout), os.fsencode(rollout.parent) + b"/citation-check__\xff")
    line = env.refused(
        "benchmark", "run", "skillsbench", "--goal-id", "g", "--skillsbench-result-root",
        str(root), "--execute",
    )  # fmt: skip
    assert "BenchFlow directory name is not valid UTF-8" in line and "\\xff" in line


# --------------------------------------------------------------------------- user-named inputs


@pytest.mark.parametrize("how", ["fifo", "dev_zero", "directory"])
def test_upsert_import_merge_and_registry_refuse_special_files(env: Env, how: str) -> None:
    target = env.root / "in.json"
    words = _plant(target, how)
    upsert = env.refused("benchmark", "run-ledger-upsert", "--benchmark-run-json", "in.json",
                         "--execute")  # fmt: skip
    assert "in.json" in upsert and words in upsert
    imported = env.refused("import", "loopx-ledger", "in.json", "--execute")
    assert "in.json" in imported and words in imported
    job = _harbor_job(env.root)
    registry = env.refused("--registry", "in.json", "benchmark", "run", "terminal-bench",
                           "--goal-id", "g", "--harbor-job-dir", str(job),
                           "--execute")  # fmt: skip
    assert "registry in.json" in registry and words in registry


def test_verify_files_does_not_block_on_a_fifo_where_a_ledger_was_published(env: Env) -> None:
    (env.root / "run.json").write_text(json.dumps(compact_run("a", score=1, job="j")))
    result = env.run("benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json",
                     "--execute")  # fmt: skip
    assert result.exit_code == 0, result.output
    published = env.root / "benchmark-run-ledger.json"
    published.unlink()
    os.mkfifo(published)
    verified = env.run("verify", "--files", "--format", "json")
    assert "Traceback" not in verified.output
    assert json.loads(verified.stdout)["verify"]["ok"] is False  # the file no longer matches


def test_merge_source_that_is_a_fifo_is_refused(env: Env) -> None:
    _plant(env.root / "src.json", "fifo")
    line = env.refused("benchmark", "run-ledger-merge", "--source-run-ledger-path", "src.json",
                       "--execute")  # fmt: skip
    assert "src.json" in line and "FIFO" in line


def test_stdin_is_capped(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    import benchledger.services.ledger_upsert as ledger_upsert

    monkeypatch.setattr(ledger_upsert, "COMPACT_JSON_LIMIT", 64)  # the upsert's input cap
    before = env.events()
    result = CliRunner().invoke(
        cli,
        ["--db", env.db_url, "benchmark", "run-ledger-upsert", "--benchmark-run-json", "-",
         "--execute"],
        input=json.dumps(compact_run("a", score=1, job="j")),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "standard input: larger than the 64 bytes limit" in result.stderr
    assert env.events() == before


def test_real_fixtures_are_far_below_the_limits() -> None:
    """The limits must never refuse what the runners really write."""
    from benchledger.ledger.core.input_files import LEDGER_JSON_LIMIT, RUNNER_JSON_LIMIT

    sizes = [p.stat().st_size for p in FIXTURES_DIR.rglob("*.json")]
    assert sizes and max(sizes) * 16 < RUNNER_JSON_LIMIT
    assert 90 * 1024 * 1024 * 4 < LEDGER_JSON_LIMIT  # the 30,000-row loopx ledger is ~90 MB


# --------------------------------------------------------------------------- NUL characters


def test_harbor_text_holding_a_nul_is_refused_on_both_stores(env: Env) -> None:
    """PostgreSQL cannot store U+0000 in any text and SQLite can: refused up front, the same
    way on both, instead of ledgered on one and failing half-way on the other."""
    job = _harbor_job(env.root)
    trial = job / HARBOR_TRIAL / "result.json"
    data = json.loads(trial.read_text())
    data["task_name"] = data["task_name"] + "\u0000x"
    trial.write_text(json.dumps(data))
    line = _harbor(env, job)
    assert f"Harbor job file {HARBOR_TRIAL}/result.json" in line and "NUL" in line, line
    assert not (env.root / "benchmark-run-ledger.json").exists()


def test_a_record_holding_a_nul_is_refused(env: Env) -> None:
    run = compact_run("a", score=1, job="j")
    run["case_id"] = "case\u0000one"
    (env.root / "run.json").write_text(json.dumps(run))
    line = env.refused(
        "benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json", "--execute",
    )  # fmt: skip
    assert "NUL" in line, line
    run["case_id"] = "case\\u0000one"  # a backslash and the letters: an ordinary text
    (env.root / "run.json").write_text(json.dumps(run))
    result = env.run("benchmark", "run-ledger-upsert", "--benchmark-run-json", "run.json")
    assert "NUL" not in result.output, result.output


def test_benchflow_file_holding_a_nul_reads_as_unreadable() -> None:
    """As a lone surrogate does: text that could not be written back as it was read."""
    from benchledger.ledger.sources.benchflow.reading import _parse_object

    assert _parse_object(b'{"reward": 1, "task": "x\\u0000"}') is None
    plain = _parse_object(b'{"reward": 1, "task": "x\\\\u0000"}')  # a backslash, then letters
    assert plain == {"reward": 1, "task": "x\\u0000"}
