"""``open_store`` as a context manager: the store is closed however the block ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchledger.services.store_session import open_store
from tests.support_store import upsert_event


def test_the_store_is_closed_when_the_block_raises(db_url, monkeypatch):
    closed: list[str] = []
    with pytest.raises(RuntimeError, match="handler failed"):
        with open_store(db_url) as opened:
            database = opened.store.database
            monkeypatch.setattr(database, "dispose", lambda: closed.append("disposed"))
            raise RuntimeError("handler failed")
    assert closed == ["disposed"]


def test_the_store_is_closed_when_the_block_returns(db_url, monkeypatch):
    closed: list[str] = []

    def head() -> int:
        with open_store(db_url) as opened:
            monkeypatch.setattr(opened.store.database, "dispose", lambda: closed.append("x"))
            return opened.store.head_position()

    assert head() == 0
    assert closed == ["x"]


def test_leaving_the_block_releases_the_sqlite_file(tmp_path: Path):
    """The last connection's close folds the write-ahead log back into the file, so the
    ``-wal`` file is gone once the block is left, even by an exception."""
    path = tmp_path / "ledger.db"
    with pytest.raises(RuntimeError):
        with open_store(f"sqlite:///{path}") as opened:
            opened.store.append([upsert_event("L", "a")])
            assert Path(f"{path}-wal").exists()
            raise RuntimeError("after the commit")
    assert not Path(f"{path}-wal").exists()
    with open_store(f"sqlite:///{path}") as opened:
        assert opened.store.head_position() == 1
