"""After the commit: a render that fails is an error that says the events are safe and how to
finish; files a failed or killed render left behind are ``stale`` to ``verify --files`` until
``benchledger render`` repairs them; temp files of dead writers are swept by the next render.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support_faults import (
    LEDGER,
    RUNTIME_ROOT,
    cli_in_process,
    harbor_copy,
    ingest,
    ingest_in_process,
    job_dir,
)

PRIOR = "14_dash_named_baseline"
TARGET = "01_all_pass"


@pytest.fixture(scope="module")
def harbor(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harbor_copy(fixtures_dir, tmp_path_factory.mktemp("after-commit-fixtures"))


@pytest.fixture
def prior(db_url: str, tmp_path: Path, harbor: Path) -> Path:
    work = tmp_path / "work"
    code, _, err = ingest_in_process(db_url, work, job_dir(harbor, PRIOR))
    assert code == 0, err
    return work


def _files_verdict(db_url: str, work: Path) -> tuple[int, dict]:
    code, verdict, err = cli_in_process(db_url, "verify", "--files", cwd=work)
    assert verdict is not None, err
    return code, verdict["verify"]


def test_a_render_failure_is_an_error_on_stderr_and_verify_files_says_so(db_url, prior, harbor):
    work = prior
    markdown = (work / LEDGER).with_suffix(".md")
    markdown.unlink()
    markdown.mkdir()  # the Markdown ledger cannot be replaced: the render fails after commit
    code, payload, err = ingest_in_process(db_url, work, job_dir(harbor, TARGET))
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: events committed"), err
    assert "benchledger render" in lines[0]
    assert payload["ok"] is False and payload["appended"] is True

    code, verdict = _files_verdict(db_url, work)
    assert code == 1 and verdict["ok"] is False
    assert verdict["first_bad_position"] is None  # the chain is fine; the files are behind
    assert verdict["files"], "verify --files must not report an empty, passing file list"
    assert verdict["exports"]["ok"] is False
    assert "benchledger render" in verdict["exports"]["reason"]
    statuses = {f["kind"]: f["status"] for f in verdict["files"]}
    assert statuses["ledger_markdown"] == "missing"  # a directory stands where it was
    assert statuses["ledger_json"] == "changed"  # rendered before the Markdown failed
    assert statuses["run_index"] in ("stale", "changed")
    assert "match" not in statuses.values()

    markdown.rmdir()
    code, _, err = cli_in_process(db_url, "render", cwd=work)
    assert code == 0, err
    code, verdict = _files_verdict(db_url, work)
    assert code == 0, verdict
    assert verdict["files"] and {f["status"] for f in verdict["files"]} == {"match"}


def test_a_kill_between_commit_and_render_leaves_files_flagged_stale(db_url, prior, harbor):
    work = prior
    code, payload, _ = ingest(db_url, work, job_dir(harbor, TARGET), fault="after_commit")
    assert code == -signal.SIGKILL and payload is None
    code, verdict = _files_verdict(db_url, work)
    assert code == 1
    stale = {f["kind"] for f in verdict["files"] if f["status"] == "stale"}
    assert {"ledger_json", "ledger_markdown", "run_index"} <= stale

    code, _, err = cli_in_process(db_url, "render", cwd=work)
    assert code == 0, err
    code, verdict = _files_verdict(db_url, work)
    assert code == 0, verdict
    runs = work / RUNTIME_ROOT / "goals"
    index_lines = sum(len(p.read_text().splitlines()) for p in runs.rglob("index.jsonl"))
    code, listed, _ = cli_in_process(db_url, "sql", "SELECT count(*) FROM goal_runs_v", cwd=work)
    assert index_lines == listed["rows"][0][0]  # the killed command's runs were rendered too


def test_a_rerun_after_a_render_without_changes_appends_nothing(db_url, prior):
    code, listed, _ = cli_in_process(db_url, "events", "list", cwd=prior)
    before = listed["count"]
    code, _, err = cli_in_process(db_url, "render", "--run-ledger-path", LEDGER, cwd=prior)
    assert code == 0, err
    code, listed, _ = cli_in_process(db_url, "events", "list", cwd=prior)
    assert listed["count"] == before


def test_temp_files_of_dead_writers_are_swept_by_the_next_render(tmp_path, harbor):
    db = f"sqlite:///{tmp_path / 'store' / 'ledger.db'}"
    work = tmp_path / "work"
    code, _, err = ingest_in_process(db, work, job_dir(harbor, PRIOR))
    assert code == 0, err
    ledger_dir = (work / LEDGER).parent
    runs_dir = next((work / RUNTIME_ROOT).rglob("index.jsonl")).parent
    with subprocess.Popen(["sleep", "60"]) as live:
        dead = _dead_pid()
        gone = [
            ledger_dir / f".benchmark-run-ledger.json.{dead}.tmp",
            runs_dir / f".index.jsonl.{dead}.tmp",
            ledger_dir / f".benchmark-run-ledger.md.{live.pid}.tmp",  # live but two hours old
        ]
        kept = [
            ledger_dir / f".benchmark-run-ledger.md.{live.pid}.tmp.x",  # not a temp name
            runs_dir / f".index.jsonl.{live.pid}.tmp",  # a live writer, just now
            ledger_dir / "notes.tmp",
        ]
        for path in gone + kept:
            path.write_bytes(b'{"torn": ')
        two_hours_ago = time.time() - 7200
        os.utime(gone[2], (two_hours_ago, two_hours_ago))
        try:
            code, _, err = ingest_in_process(db, work, job_dir(harbor, TARGET))
        finally:
            live.kill()
    assert code == 0, err
    assert not [p for p in gone if p.exists()]
    assert all(p.exists() for p in kept)


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid
