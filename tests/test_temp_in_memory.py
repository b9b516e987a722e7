"""A write transaction may keep SQLite's temporary files in memory (``temp_in_memory``), and
``benchmark run`` asks for it: its multi-row event INSERTs go through a temporary table and a
statement journal, which otherwise became files under /var/tmp (bench/README.md, issue 18).
The setting is the transaction's own: the pooled connection goes back to the default after it,
so a later rebuild's sorts are not held in memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchledger.ledger.store.sqlite import SqliteDatabase
from benchledger.services.store_session import OpenStore
from tests.support_harbor_ingest_cli import copy_job, ingest, load_manifest
from tests.support_store import opened

_MEMORY = 2  # PRAGMA temp_store: 0 default, 1 file, 2 memory


def _temp_store(conn) -> int:  # noqa: ANN001 - a SqliteConnection
    return conn.raw.execute("PRAGMA temp_store").fetchone()[0]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[OpenStore]:
    with opened(f"sqlite:///{tmp_path / 'ledger.db'}") as s:
        yield s


def test_temp_in_memory_lasts_for_the_transaction_only(store: OpenStore):
    database = store.store.database
    assert isinstance(database, SqliteDatabase)
    with database.begin(temp_in_memory=True) as conn:
        assert _temp_store(conn) == _MEMORY
        raw = conn.raw
    with database.begin() as conn:
        assert conn.raw is raw  # the same pooled connection, back at the default
        assert _temp_store(conn) == 0


def test_temp_in_memory_is_reset_when_the_transaction_fails(store: OpenStore):
    database = store.store.database
    with pytest.raises(RuntimeError), database.begin(temp_in_memory=True):
        raise RuntimeError("handler failed")
    with database.connect() as conn:
        assert _temp_store(conn) == 0


def test_store_transaction_passes_it_on(store: OpenStore):
    with store.store.transaction(temp_in_memory=True) as uow:
        assert _temp_store(uow.conn) == _MEMORY
    with store.store.transaction() as uow:
        assert _temp_store(uow.conn) == 0


def test_benchmark_run_appends_with_temp_files_in_memory(
    fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The ingest's own transaction (the one that appends its events) asks for it."""
    seen: list[bool] = []
    begin = SqliteDatabase.begin

    def spy(self, *, attach=None, temp_in_memory=False):  # noqa: ANN001, ANN202
        seen.append(temp_in_memory)
        return begin(self, attach=attach, temp_in_memory=temp_in_memory)

    monkeypatch.setattr(SqliteDatabase, "begin", spy)
    manifest = load_manifest(fixtures_dir)
    job = next(j for j in manifest["jobs"] if j["key"] == "16_two_agents_one_job")
    job_dir = copy_job(fixtures_dir, manifest, job, tmp_path)
    monkeypatch.chdir(tmp_path)
    call = ingest(job_dir, db=f"sqlite:///{tmp_path / 'ledger.db'}", runtime_root=tmp_path / "rt")
    assert call.payload and call.payload["ok"], call.stdout
    # the append transaction only: creating the store and the render after it keep the default
    assert seen.count(True) == 1 and len(seen) > 1
