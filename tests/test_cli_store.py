"""Store commands through click's runner: output formats, errors as one line, sql read-only."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from tests.support_store import opened, upsert_event


def run(args, db_url=None):
    runner = CliRunner()
    prefix = ["--db", db_url] if db_url else []
    return runner.invoke(cli, [*prefix, *args], catch_exceptions=False)


def test_version_and_help():
    assert run(["--version"]).output.startswith("benchledger, version")
    result = run(["--help"])
    assert result.exit_code == 0 and "rebuild" in result.output


def test_events_list_show_verify_json(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a"), upsert_event("L", "b")])
    s.close()
    listed = json.loads(run(["events", "list", "--format", "json"], db_url).output)
    assert listed["count"] == 2 and listed["events"][1]["stream_version"] == 2
    shown = json.loads(run(["--format", "json", "events", "show", "2"], db_url).output)
    assert shown["event"]["payload"]["row"]["run_id"] == "b"
    verified = run(["verify", "--format", "json"], db_url)
    assert verified.exit_code == 0 and json.loads(verified.output)["verify"]["checked"] == 2
    md = run(["events", "list"], db_url).output
    assert md.startswith("# Events") and "| 2 |" in md


def test_missing_event_is_one_line_exit_1(db_url):
    result = run(["events", "show", "99", "--format", "json"], db_url)
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"] == "no event at 99"
    assert result.stderr.strip() == "error: no event at 99"


def test_usage_error_exits_2():
    assert run(["events", "list", "--limit", "x"]).exit_code == 2


def test_rebuild_and_verify_commands(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a")])
    s.close()
    out = json.loads(run(["rebuild", "--format", "json"], db_url).output)
    assert out["rebuild"]["events_replayed"] == 1
    out = json.loads(run(["rebuild", "--verify", "--format", "json"], db_url).output)
    assert out["ok"] and out["rebuild_verify"]["differences"] == []
    bad = run(["rebuild", "--projection", "nope"], db_url)
    assert bad.exit_code == 1 and "unknown projection" in bad.stderr


def test_sql_reads_views(db_url):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a", 0.25)])
    s.close()
    out = json.loads(
        run(
            ["sql", "SELECT run_id, official_score FROM ledger_runs_v", "--format", "json"], db_url
        ).output
    )
    assert out["columns"] == ["run_id", "official_score"]
    assert out["rows"][0][0] == "a" and float(out["rows"][0][1]) == 0.25
    out = json.loads(
        run(["sql", "SELECT count(*) FROM events_v", "--format", "json"], db_url).output
    )
    assert out["rows"] == [[1]]


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM rm_ledger_rows",
        "INSERT INTO projection_checkpoints VALUES ('x', 1)",
        "UPDATE rm_ledger_rows SET archived = 1",
        "DROP TABLE events",
        "SELECT 1; DELETE FROM rm_ledger_rows",
    ],
)
def test_sql_refuses_writes(db_url, statement):
    s = opened(db_url)
    s.store.append([upsert_event("L", "a")])
    s.close()
    result = run(["sql", statement], db_url)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and "\n" not in result.stderr.strip()
    s = opened(db_url)
    assert s.store.head_position() == 1
    assert s.projections.verify_rebuild(s.store).ok
    s.close()


def test_sql_connection_itself_is_read_only(db_url):
    """Even a statement that passes the keyword check cannot write through the connection."""
    s = opened(db_url)
    s.store.append([upsert_event("L", "a")])
    s.close()
    stmt = (
        "WITH x AS (SELECT 1) DELETE FROM rm_ledger_rows"
        if "postgres" in db_url
        else "WITH x AS (SELECT 1) DELETE FROM rm_ledger_rows"
    )
    result = run(["sql", stmt], db_url)
    assert result.exit_code == 1
    s = opened(db_url)
    with s.store.database.connect() as conn:
        assert conn.execute("SELECT count(*) FROM rm_ledger_rows").scalar() == 1
    s.close()


def test_db_current_and_upgrade(db_url):
    out = json.loads(run(["db", "current", "--format", "json"], db_url).output)
    assert out["revision"] is None and out["up_to_date"] is False
    out = json.loads(run(["db", "upgrade", "--format", "json"], db_url).output)
    assert out["from_revision"] is None and out["to_revision"] == out["head"]
    out = json.loads(run(["db", "current", "--format", "json"], db_url).output)
    assert out["up_to_date"] is True
