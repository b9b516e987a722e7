"""Reading ahead on a second connection (``projections/read_models/prefetch.py``): same items, same
order,
the reader's error raised where the items are used, and no thread left behind by a consumer
that stops early."""

from __future__ import annotations

import threading

import pytest

from benchledger.projections.read_models.prefetch import read_ahead
from tests.support_store import opened


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate()}


def test_read_ahead_yields_every_batch_in_order(db_url):
    s = opened(db_url)
    seen_dialects: list[str] = []

    def batches(conn):
        seen_dialects.append(conn.dialect)
        for i in range(7):
            yield [i, conn.execute("SELECT 1").scalar()]

    with s.store.database.connect() as conn:
        assert list(read_ahead(s.store, conn, batches)) == [[i, 1] for i in range(7)]
    assert seen_dialects == [s.store.database.dialect]
    assert "benchledger-read-ahead" not in _threads()
    s.close()


def test_a_reader_error_is_raised_to_the_consumer(db_url):
    s = opened(db_url)

    def batches(conn):
        yield 1
        raise ValueError("reader failed")

    with s.store.database.connect() as conn:
        items = read_ahead(s.store, conn, batches)
        assert next(items) == 1
        with pytest.raises(ValueError, match="reader failed"):
            next(items)
    assert "benchledger-read-ahead" not in _threads()
    s.close()


def test_a_consumer_that_stops_early_leaves_no_reader_behind(db_url):
    s = opened(db_url)

    def batches(conn):
        i = 0
        while True:  # endless: only the consumer's stop ends it
            i += 1
            yield i

    with s.store.database.connect() as conn:
        items = read_ahead(s.store, conn, batches)
        assert [next(items) for _ in range(3)] == [1, 2, 3]
        items.close()
    assert "benchledger-read-ahead" not in _threads()
    s.close()
