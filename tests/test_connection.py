"""The SQL layer both databases share: parameter styles, password-free URLs, and a private
in-memory SQLite store (one connection, no second one for a rebuild's key scan)."""

from __future__ import annotations

import pytest

from benchledger.ledger.store.connection import to_pyformat
from benchledger.ledger.store.database import StoreLocation
from tests.support_store import opened, upsert_event


@pytest.mark.parametrize(
    ("sql", "has_params", "expected"),
    [
        ("WHERE b = ? AND c IN (?, ?)", True, "WHERE b = %s AND c IN (%s, %s)"),
        ("SET p = :p WHERE q = :q_2", True, "SET p = %(p)s WHERE q = %(q_2)s"),
        ("SELECT (x)::jsonb ->> 'k' WHERE y = ?", True, "SELECT (x)::jsonb ->> 'k' WHERE y = %s"),
        ("SELECT '?', ':x', \"a?b\" WHERE z = ?", True, "SELECT '?', ':x', \"a?b\" WHERE z = %s"),
        ("SELECT 'it''s ?' WHERE a LIKE '5%' AND b = ?", True,
         "SELECT 'it''s ?' WHERE a LIKE '5%%' AND b = %s"),
        ("SELECT 'it''s ?' WHERE a LIKE '5%'", False, "SELECT 'it''s ?' WHERE a LIKE '5%'"),
        ("SELECT 10 % 3 WHERE a = ?", True, "SELECT 10 %% 3 WHERE a = %s"),
        ("SELECT 10 % 3", False, "SELECT 10 % 3"),
    ],
)  # fmt: skip
def test_to_pyformat(sql, has_params, expected):
    assert to_pyformat(sql, has_params=has_params) == expected


def test_pyformat_sql_runs_on_postgresql(db_url):
    """Quotes, casts and a literal ``%`` reach PostgreSQL as written, next to parameters."""
    with opened(db_url) as s:
        with s.store.database.connect() as conn:
            sql = "SELECT '5%' LIKE '5%', ('{\"k\": \"?\"}')::text, ? || ':x', ?"
            if conn.dialect == "sqlite":
                sql = sql.replace("::text", "")
            row = conn.execute(sql, ("a", "b")).first()
        assert tuple(row) == (1 if conn.dialect == "sqlite" else True, '{"k": "?"}', "a:x", "b")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://bob:s3cr%40t@db:5432/x?options=-c", "postgresql://bob:***@db:5432/x?options=-c"),
        ("postgresql+psycopg://bob@db/x", "postgresql+psycopg://bob@db/x"),
        ("postgresql+psycopg://db/x", "postgresql+psycopg://db/x"),
        ("sqlite:////tmp/p:w@x/ledger.db", "sqlite:////tmp/p:w@x/ledger.db"),
    ],
)  # fmt: skip
def test_display_hides_the_password(url, shown):
    assert StoreLocation(url, None).display() == shown


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_store_works_end_to_end(url):
    with opened(url) as s:
        s.store.append([upsert_event("L", "a"), upsert_event("L", "b")])
        assert s.store.head_position() == 2
        assert s.store.verify().ok
        report = s.projections.rebuild(s.store)
        assert report.events_replayed == 2
        assert s.projections.verify_rebuild(s.store).ok
        with s.store.database.connect() as conn:
            assert conn.execute("SELECT count(*) FROM rm_ledger_rows").scalar() == 2
        with s.store.transaction() as uow:  # a nested reader joins, never rolls back, the write
            uow.append([upsert_event("L", "c")])
            assert s.store.head_position() == 3
            uow.append([upsert_event("L", "d")])
        assert s.store.head_position() == 4 and s.store.verify().ok


def test_a_background_checkpoint_overlaps_writes_and_loses_nothing(tmp_path):
    """``checkpoint_soon`` runs beside the command's next writes (as the file rendering after
    an ingest does); everything committed before and after is there and the chain verifies."""
    path = tmp_path / "store" / "ledger.db"
    s = opened(f"sqlite:///{path}")
    s.store.append([upsert_event("L", f"r{i}") for i in range(200)])
    s.store.database.checkpoint_soon()
    for i in range(20):
        s.store.append([upsert_event("L", f"late{i}")])
    s.close()
    assert s.store.database._checkpoint is None  # joined by dispose
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # the last close finished the job
    with opened(f"sqlite:///{path}") as s:
        assert s.store.head_position() == 220
        assert s.store.verify().ok
        assert s.projections.verify_rebuild(s.store).ok
