"""Waits and limits (issue 36, item 5): a stuck lock holder, ``sql --timeout``, bootstrap."""

from __future__ import annotations

import time

import pytest

from benchledger.ledger.core.errors import InputError
from tests.support_store import opened, upsert_event


def test_a_writer_behind_a_stuck_lock_holder_gives_up_with_one_line(db_url, monkeypatch):
    """BENCHLEDGER_BUSY_TIMEOUT bounds the wait on both backends (PostgreSQL: lock_timeout)."""
    monkeypatch.setenv("BENCHLEDGER_BUSY_TIMEOUT", "1")
    holder, writer = opened(db_url), opened(db_url)
    try:
        with holder.store.transaction() as uow:
            uow.append([upsert_event("L", "held")])
            started = time.monotonic()
            with pytest.raises(InputError, match=r"locked.*BENCHLEDGER_BUSY_TIMEOUT"):
                writer.store.append([upsert_event("L", "waiting")])
            assert time.monotonic() - started < 15
        assert writer.store.head_position() == 1  # the holder's event only
    finally:
        writer.close()
        holder.close()
