"""Skipping interpreter teardown after ``benchmark run`` (``benchledger.commands.quick_exit``) loses
nothing: exit functions run, output is flushed, the store is closed, and it is refused
whenever shutdown still has work to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from benchledger.commands import quick_exit

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("benchledger")


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "OUT": str(tmp_path)},
    )  # fmt: skip


def test_exit_functions_run_and_output_is_flushed(tmp_path: Path) -> None:
    done = _python(
        """
        import atexit, os, sys
        from benchledger.commands import quick_exit
        atexit.register(lambda: open(os.environ["OUT"] + "/atexit", "w").write("ran"))
        sys.stdout.write("x" * 100000)  # buffered, no newline
        sys.stderr.write("err")
        quick_exit.allow()
        quick_exit.exit_now(3)
        print("not reached")
        """,
        tmp_path,
    )
    assert done.returncode == 3
    assert done.stdout == "x" * 100000
    assert done.stderr == "err"
    assert (tmp_path / "atexit").read_text() == "ran"


def test_refused_unless_allowed_and_alone() -> None:
    quick_exit.reset()
    quick_exit.exit_now(0)  # not allowed: returns
    quick_exit.allow()
    quick_exit.exit_now("a message")  # SystemExit would print it: returns
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        quick_exit.exit_now(0)  # another thread alive: shutdown would wait for it
    finally:
        release.set()
        other.join()
        quick_exit.reset()


@pytest.mark.skipif(not SCRIPT.exists(), reason="benchledger is not installed in this venv")
def test_an_ingest_that_skipped_teardown_left_a_closed_verified_store(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    job = fixtures_dir / "harbor/tb2-pilot-20260502/jobs/2026-05-02__09-14-07"
    env = {k: v for k, v in os.environ.items() if k != "BENCHLEDGER_DATABASE_URL"}
    env["HOME"] = str(tmp_path)

    def run(*argv: str) -> dict:
        out = subprocess.run([str(SCRIPT), "--runtime-root", "rt", "--format", "json", *argv],
                             cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)  # the whole payload was flushed

    payload = run("benchmark", "run", "terminal-bench", "--goal-id", "g", "--harbor-job-dir",
                  str(job), "--update-run-ledger", "--no-global-sync", "--execute")
    assert payload["ok"] and payload["rendered_files"] > 0
    store = tmp_path / ".benchledger"
    assert not (store / "ledger.db-wal").exists()  # every connection was closed first
    assert run("verify", "--files")["ok"]


@pytest.mark.skipif(not SCRIPT.exists(), reason="benchledger is not installed in this venv")
def test_an_upsert_skips_teardown_after_the_old_ledger_file_is_gone(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    """``run-ledger-upsert`` waits for the old JSON's unlink (a thread shutdown would have
    waited for), then ends with ``os._exit``: the store is closed and the files verify."""
    env = {k: v for k, v in os.environ.items() if k != "BENCHLEDGER_DATABASE_URL"}
    env["HOME"] = str(tmp_path)
    (tmp_path / ".benchledger").mkdir()
    ledger = tmp_path / "benchmark-run-ledger.json"
    ledger.write_bytes((fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json").read_bytes())
    run = {
        "schema_version": "benchmark_run_v0", "source_runner": "harbor",
        "benchmark_id": "terminal-bench@2.0", "job_name": "tb_quick_exit", "mode": "codex_loopx",
        "case_id": "fix-git", "official_score_status": "completed",
        "runner_return_status": "completed", "agent": {"name": "codex", "model": "gpt-5.5"},
        "progress": {"n_total_trials": 1, "n_completed_trials": 1, "n_running_trials": 0},
        "official_task_score": {"kind": "verifier_reward", "value": 1, "passed": True},
    }  # fmt: skip
    (tmp_path / "run.json").write_text(json.dumps(run))

    def cli(*argv: str) -> dict:
        out = subprocess.run([str(SCRIPT), "--format", "json", *argv], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=True)  # fmt: skip
        return json.loads(out.stdout)

    cli("import", "loopx-ledger", ledger.name, "--execute")
    code = """
        import os, sys, threading
        import benchledger.projections.publishing.file_swap as swap
        swap.SWAP_MIN_BYTES = 1  # the fixture ledger is under 1 MiB: swap it in, unlink the old
        real_exit = os._exit
        def recorded_exit(code):
            alive = [t.name for t in threading.enumerate()]
            open(os.environ["OUT"] + "/exit", "w").write(f"{code} {alive}")
            real_exit(code)
        os._exit = recorded_exit
        from benchledger.commands.cli import main
        sys.argv = ["benchledger", "--format", "json", "benchmark", "run-ledger-upsert",
                    "--benchmark-run-json", "run.json", "--execute"]
        main()
        """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path, capture_output=True, text=True, env={**env, "OUT": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)  # flushed before the exit
    upserted = payload["benchmark_run_ledger"]
    assert upserted["updated"] and upserted["rendered"]
    assert (tmp_path / "exit").read_text() == "0 ['MainThread']"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # old file gone
    assert not (tmp_path / ".benchledger" / "ledger.db-wal").exists()
    assert cli("verify", "--files")["ok"]
