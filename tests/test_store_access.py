"""Opening the store: a store this user may read but not write still answers every read
command, and what cannot be opened (not a database, not a file, a newer schema, a lock held
too long) is one sentence on stderr, never an internal error.

Tests run as root, whom ``chmod`` does not stop, so the read-only store is a read-only bind
mount in a private mount namespace (``unshare -m``): the kernel refuses root's writes there.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support_faults import LEDGER, child_env, cli, harbor_copy, ingest, job_dir
from tests.support_store import opened, upsert_event


@pytest.fixture(scope="module")
def harbor(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harbor_copy(fixtures_dir, tmp_path_factory.mktemp("access-fixtures"))


def _can_bind_read_only(probe: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe.mkdir(parents=True, exist_ok=True)
    script = f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe} && touch {probe}/x"
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True)
    return done.returncode != 0 and b"Read-only" in done.stderr


def _read_only(store_dir: Path, db: str, *args: str, cwd: Path) -> tuple[int, dict | None, str]:
    """``benchledger --db DB --format json ARGS`` with ``store_dir`` mounted read-only."""
    argv = " ".join(
        subprocess.list2cmdline([a])
        for a in [
            sys.executable,
            "-m",
            "benchledger.commands.cli",
            "--db",
            db,
            "--format",
            "json",
            *args,
        ]
    )
    script = (
        f"mount --bind {store_dir} {store_dir} && mount -o remount,bind,ro {store_dir} "
        f"&& cd {cwd} && exec {argv}"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], env=child_env(), capture_output=True, timeout=120
    )
    payload = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, payload, done.stderr.decode(errors="replace")


@pytest.fixture
def read_only_store(tmp_path: Path, harbor: Path) -> tuple[Path, str, Path]:
    if not _can_bind_read_only(tmp_path / "probe"):
        pytest.skip("no private mount namespace here (unshare -m): cannot make a store read-only")
    store_dir = tmp_path / "store"
    db = str(store_dir / "ledger.db")
    work = tmp_path / "work"
    code, payload, err = ingest(db, work, job_dir(harbor, "14_dash_named_baseline"))
    assert code == 0, err
    return store_dir, db, work


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ("events", "list"),
        ("verify",),
        ("verify", "--files"),
        ("db", "current"),
        ("sql", "SELECT count(*) FROM events_v"),
        ("rebuild", "--verify"),
        # compare keeps no facts there (``projections.read_models.compare_facts.keep_facts``)
        ("compare", "--benchmark-id", "terminal-bench", "--run-ledger-path", LEDGER),
        # nor does the aggregate (``projections.read_models.aggregate_facts.keep_aggregate_facts``)
        (
            "benchmark",
            "run-ledger-aggregate",
            "--benchmark-id",
            "terminal-bench@2.0",
            "--run-ledger-path",
            LEDGER,
        ),
    ],
)
def test_read_commands_work_on_a_read_only_store(read_only_store, args):
    store_dir, db, work = read_only_store
    code, payload, err = _read_only(store_dir, db, *args, cwd=work)
    assert code == 0, err
    assert payload["ok"] is True
    assert not list(store_dir.glob("*-shm")), "a read created files beside the store"


def test_read_only_store_with_a_write_ahead_log_is_read_with_it(read_only_store):
    """A -wal kept by a writer that is still open holds committed events the main file may
    lack; a reader that cannot use it must say so, never show a shorter chain."""
    store_dir, db, work = read_only_store
    holder = sqlite3.connect(db)  # open: the WAL is not folded in and removed at the end
    holder.execute("SELECT count(*) FROM events").fetchall()
    s = opened(f"sqlite:///{db}")
    s.store.append([upsert_event("L", "late")])
    head = s.store.head_position()
    s.close()
    try:
        assert Path(f"{db}-wal").stat().st_size > 0
        code, payload, err = _read_only(store_dir, db, "verify", cwd=work)
    finally:
        holder.close()
    if code == 0:
        assert payload["verify"]["head_position"] == head
    else:
        assert "write-ahead log" in _one_line(err)


def test_a_dry_run_ingest_works_on_a_read_only_store(read_only_store, harbor):
    store_dir, db, work = read_only_store
    before = (store_dir / "ledger.db").read_bytes()
    code, payload, err = _read_only(
        store_dir, db,
        "--runtime-root", "rt", "benchmark", "run", "terminal-bench", "--goal-id", "g",
        "--harbor-job-dir", str(job_dir(harbor, "01_all_pass")), "--update-run-ledger",
        "--run-ledger-path", LEDGER, "--no-global-sync",
        cwd=work,
    )  # fmt: skip
    assert code == 0, err
    assert payload["dry_run"] is True
    assert (store_dir / "ledger.db").read_bytes() == before


def test_a_write_on_a_read_only_store_says_why_and_changes_nothing(read_only_store, harbor):
    store_dir, db, work = read_only_store
    before = (store_dir / "ledger.db").read_bytes()
    code, _, err = _read_only(
        store_dir, db,
        "--runtime-root", "rt", "benchmark", "run", "terminal-bench", "--goal-id", "g",
        "--harbor-job-dir", str(job_dir(harbor, "01_all_pass")), "--update-run-ledger",
        "--run-ledger-path", LEDGER, "--execute", "--no-global-sync",
        cwd=work,
    )  # fmt: skip
    assert code == 1
    assert "read-only" in _one_line(err)
    assert (store_dir / "ledger.db").read_bytes() == before


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.write_text("just text, no database here\n" * 10), "not a SQLite database"),
        (lambda p: None, "not a regular file"),
    ],
    ids=["text-file", "dev-null"],
)
def test_what_is_not_a_store_is_named(tmp_path, make, words):
    target = tmp_path / "text.db"
    make(target)
    db = str(target) if target.exists() else "/dev/null"
    before = target.read_bytes() if target.exists() else None
    for args in (("events", "list"), ("verify",), ("sql", "SELECT 1")):
        code, _, err = cli(db, *args, cwd=tmp_path)
        assert code == 1
        assert words in _one_line(err)
    if before is not None:
        assert target.read_bytes() == before


def test_a_store_written_by_a_newer_benchledger_says_upgrade_benchledger(db_url, tmp_path):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a")])
    with s.store.database.begin() as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
    s.close()
    for args in (("events", "list"), ("db", "upgrade"), ("sql", "SELECT 1")):
        code, _, err = cli(db_url, *args, cwd=tmp_path)
        assert code == 1
        line = _one_line(err)
        assert "newer benchledger" in line and "upgrade benchledger" in line
    code, payload, err = cli(db_url, "db", "current", cwd=tmp_path)
    assert code == 0 and payload["revision"] == "0099_from_the_future", err


def test_a_writer_blocked_past_the_busy_timeout_names_the_lock(tmp_path, fixtures_dir):
    db = tmp_path / "store" / "ledger.db"
    s = opened(f"sqlite:///{db}")
    s.store.append([upsert_event("L", "a")])
    s.close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        env = {**child_env(), "BENCHLEDGER_BUSY_TIMEOUT": "0.5"}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "commands.cli", "--db", str(db), "import", "loopx-ledger",
             str(_loopx_ledger(fixtures_dir, tmp_path)), "--execute"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert time.monotonic() - started < 30
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert "locked" in line and "another benchledger process" in line
    assert "BENCHLEDGER_BUSY_TIMEOUT" in line
    s = opened(f"sqlite:///{db}")
    assert s.store.head_position() == 1
    s.close()


def test_a_bad_busy_timeout_is_refused(tmp_path):
    env = {**child_env(), "BENCHLEDGER_BUSY_TIMEOUT": "soon"}
    done = subprocess.run(
        [sys.executable, "-m", "commands.cli", "--db", str(tmp_path / "s.db"), "events", "list"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and "BENCHLEDGER_BUSY_TIMEOUT" in _one_line(done.stderr)


def _loopx_ledger(fixtures_dir: Path, tmp_path: Path) -> Path:
    fixtures = sorted((fixtures_dir / "loopx-ledger").rglob("*.json"))
    ledger = next(p for p in fixtures if "ledger" in p.name)
    target = tmp_path / "imported" / "benchmark-run-ledger.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ledger, target)
    return target


def test_an_unreachable_postgresql_server_is_one_sentence_without_the_password(tmp_path):
    code, _, err = cli("postgresql://alice:hunter2pass@127.0.0.1:9/nowhere", "events", "list",
                       cwd=tmp_path)  # fmt: skip
    assert code == 1
    line = _one_line(err)
    assert "cannot connect to the store" in line and "hunter2pass" not in line
