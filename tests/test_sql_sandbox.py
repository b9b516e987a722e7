"""``benchledger sql`` cannot run away or act: a deadline, Ctrl-C, one real statement, and on
PostgreSQL a reader role that sees the documented views and nothing else, even when
benchledger connects as a superuser."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.sql_query import single_statement
from tests.support_store import opened, upsert_event

RUNAWAY = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"


def run(db_url: str, *args: str):
    return CliRunner().invoke(cli, ["--db", db_url, *args], catch_exceptions=False)


@pytest.fixture
def store(db_url: str) -> str:
    s = opened(db_url)
    s.store.append([upsert_event("L", "a", 0.5)])
    s.close()
    return db_url


def _one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("SELECT ';'", "SELECT ';'"),
        ("SELECT 1;", "SELECT 1"),
        ("SELECT 1; -- done\n", "SELECT 1"),
        ('SELECT "a;b" FROM t', 'SELECT "a;b" FROM t'),
        ("SELECT 1 /* ; */", "SELECT 1 /* ; */"),
    ],
)
def test_semicolons_inside_text_are_not_statement_ends(text, statement):
    assert single_statement(text) == statement


@pytest.mark.parametrize("text", ["SELECT 1; SELECT 2", "SELECT ';'; DELETE FROM x", ";", "  "])
def test_a_second_statement_or_none_is_refused(text):
    with pytest.raises(InputError):
        single_statement(text)


def test_select_semicolon_string_runs(store):
    result = run(store, "sql", "SELECT ';' AS s", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["rows"] == [[";"]]


def test_runaway_query_stops_at_the_timeout(store):
    started = time.monotonic()
    result = run(store, "sql", RUNAWAY, "--timeout", "0.5")
    assert time.monotonic() - started < 10
    assert result.exit_code == 1
    line = _one_error_line(result)
    assert "stopped after 0.5 s" in line and "--timeout" in line


def test_timeout_must_be_positive(store):
    assert run(store, "sql", "SELECT 1", "--timeout", "0").exit_code == 2


def test_ctrl_c_stops_a_runaway_query(store, tmp_path):
    env = {**os.environ, "BENCHLEDGER_DATABASE_URL": store}
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchledger.commands.cli", "sql", RUNAWAY, "--timeout", "120"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)  # started and deep in the query
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("benchledger sql ignored Ctrl-C")
    assert proc.returncode in (1, 130)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0], err


def _postgres_only(db_url: str) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("PostgreSQL roles and admin functions")


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT pg_terminate_backend(pg_backend_pid())",
        "SELECT pg_read_file('/etc/hostname')",
        "SELECT pg_reload_conf()",
        "SELECT lo_import('/etc/hostname')",
        "SELECT count(*) FROM events",
        "SELECT count(*) FROM rm_ledger_rows",
        "SELECT set_config('role', 'postgres', true)",
        "SELECT set_config('statement_timeout', '0', true)",
        "RESET ROLE",
        "SELECT 1; RESET ROLE",
        "SELECT $a$'$a$; RESET ROLE; SELECT pg_read_file('/etc/hostname') --'",
        "SELECT * FROM pg_ls_dir('.')",
    ],
)
def test_postgres_reader_role_refuses_admin_functions_and_raw_tables(store, statement):
    _postgres_only(store)
    result = run(store, "sql", statement)
    assert result.exit_code == 1, result.stdout
    _one_error_line(result)


def test_postgres_reader_sees_the_views_as_the_reader_role(store):
    _postgres_only(store)
    result = run(store, "sql", "SELECT current_user, count(*) FROM events_v", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["rows"] == [["benchledger_reader", 1]]
    for view in ("ledger_runs_v", "goal_runs_v", "rollout_events_v"):
        assert run(store, "sql", f"SELECT count(*) FROM {view}").exit_code == 0


def test_postgres_terminate_cannot_reach_another_session(store):
    """The attack of the report: kill another backend. The victim must survive."""
    _postgres_only(store)
    import psycopg

    from tests.conftest import PG_BASE_URL

    with psycopg.connect(PG_BASE_URL.replace("postgresql+psycopg", "postgresql")) as victim:
        pid = victim.info.backend_pid
        result = run(store, "sql", f"SELECT pg_terminate_backend({pid})")
        assert result.exit_code == 1
        assert victim.execute("SELECT 1").fetchone() == (1,)
