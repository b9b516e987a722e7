"""Hostile input at the store's edge (issue 36, item 9): keys, URLs, numbers."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from tests.support_store import opened, upsert_event
from tests.test_store import _drop_update_trigger


@pytest.mark.synthetic_events  # edits a key behind the triggers' back
def test_verify_tells_an_empty_idempotency_key_from_none(db_url):
    """The hash covers NULL as "": an edit of NULL to '' must still fail verify."""
    s = opened(db_url)
    s.store.append([upsert_event("L", str(i)) for i in range(3)])
    with s.store.database.begin() as conn:
        _drop_update_trigger(conn)
        conn.execute("UPDATE events SET idempotency_key = '' WHERE position = 2")
    report = s.store.verify()
    assert not report.ok
    assert report.first_bad_position == 2
    assert "idempotency_key" in report.reason
    s.close()


def test_append_refuses_an_empty_idempotency_key(db_url):
    s = opened(db_url)
    with pytest.raises(ValueError, match="must not be empty"):
        s.store.append([upsert_event("L", "a")], idempotency_key="")
    assert s.store.head_position() == 0
    s.close()


@pytest.mark.parametrize(
    "url",
    [
        "host=127.0.0.1 dbname=test password=hunter2",
        "postgresql+psycopg2://u@127.0.0.1:5432/test",
        "postgresql+asyncpg://u@127.0.0.1:5432/test",
        "mysql://u:hunter2@127.0.0.1/test",
        "sqlite+pysqlite:///x.db",
        "postgresql://u:hunter2@127.0.0.1:notaport/test",
    ],
)
def test_store_url_mistakes_are_one_line_and_create_nothing(tmp_path, url):

    from click.testing import CliRunner

    from benchledger.commands.cli import cli

    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["--db", url, "events", "list"], catch_exceptions=False)
    finally:
        os.chdir(before)
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "internal error" not in result.stderr
    assert "hunter2" not in result.output + result.stderr
    assert list(tmp_path.iterdir()) == []  # no SQLite file named after the string


def test_a_search_path_naming_no_schema_is_one_line(postgres_ok):
    if not postgres_ok:
        pytest.skip("PostgreSQL not reachable")
    from tests.conftest import PG_BASE_URL

    url = f"{PG_BASE_URL}?options=-csearch_path%3Dno_such_schema_h6"
    for args in (["events", "list"], ["verify"], ["sql", "SELECT 1"]):
        result = CliRunner().invoke(cli, ["--db", url, *args], catch_exceptions=False)
        assert result.exit_code == 1, result.output
        assert "internal error" not in result.stderr, result.stderr
        assert "no_such_schema_h6" in result.stderr and "CREATE SCHEMA" in result.stderr
