"""Fast replay keeps replay semantics: buffered rebuilds equal incremental read models, reads
by several event types stay in position order, and rebuild restores what it tunes."""

from __future__ import annotations

import dataclasses
import gc
import json

import pytest

from benchledger.ledger.store.event_rows import EVENT_COLUMNS
from benchledger.ledger.store.events import (
    LEDGER_RUNS_ARCHIVED,
    LEDGER_UPSERTED,
    RUN_APPENDED,
    RUN_BUILT,
    NewEvent,
    StoredEvent,
)
from benchledger.ledger.store.schema import events as events_table
from benchledger.projections.read_models import tables
from tests.support_store import opened, table_rows

READ_MODELS = (tables.LEDGERS, tables.LEDGER_ROWS, tables.GOAL_RUNS, tables.ROLLOUT_EVENTS)


def _fixture_rows(fixtures_dir) -> list[dict]:
    path = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    doc = json.loads(path.read_text())
    return [
        row
        for benchmark in doc["benchmarks"].values()
        for case in benchmark["cases"].values()
        for row in case["runs"]
    ]


def _upsert(ledger: str, row: dict, run_id: str, stamp: int, **extra) -> NewEvent:
    payload = {
        "ledger_id": ledger,
        "row": {**row, "run_id": run_id, "recorded_at": f"2026-06-01T00:00:{stamp % 60:02d}Z"},
        "updated_at": f"2026-06-01T00:{stamp // 60 % 60:02d}:{stamp % 60:02d}Z",
        **extra,
    }
    return NewEvent(f"ledger/{ledger}", LEDGER_UPSERTED, payload)


def _appended(goal: str, i: int) -> NewEvent:
    payload = {
        "goal_id": goal,
        "stem": f"stem-{i:04d}",
        "run_key": f"key-{i}",
        "record": {"i": i, "score": None},
        "rollout_event": {"event_id": f"ro-{i}", "event_kind": "benchmark_run", "status": "ok"},
    }
    return NewEvent(f"goal/{goal}", RUN_APPENDED, payload)


def _history(rows: list[dict]) -> list[list[NewEvent]]:
    """Commands that rewrite a few run ids many times across two ledgers, archive some, and
    change a ledger's path and policy midway: everything the buffered replay must get right."""
    commands: list[list[NewEvent]] = []
    for i in range(120):
        ledger = "team/a" if i % 3 else "team/b"
        extra = {}
        if i == 0:
            extra["update_policy"] = {"mode": "replace"}
        if i == 7:
            extra["ledger_path"] = "moved/a.json"
        if i == 50:
            extra["update_policy"] = {"mode": "ignored: policy is kept once set"}
        batch = [_upsert(ledger, rows[i % len(rows)], f"run-{i % 11}", i, **extra)]
        if i % 4 == 0:
            batch.append(_appended(f"g{i % 2}", i))
        if i % 5 == 0:
            batch.append(NewEvent("goal/g0", RUN_BUILT, {"not": "projected"}))
        commands.append(batch)
    archived = {**rows[0], "run_id": "run-3", "archive_state": "archived"}
    commands.append(
        [
            NewEvent(
                "ledger/team/a", LEDGER_RUNS_ARCHIVED, {"ledger_id": "team/a", "rows": [archived]}
            )
        ]
    )
    commands.append([_upsert("team/a", rows[1], "run-4", 999)])
    return commands


def _snapshot(conn) -> dict[str, list[tuple]]:
    return {t.name: table_rows(conn, t) for t in READ_MODELS}


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_buffered_rebuild_equals_incremental_read_models(db_url, fixtures_dir, monkeypatch):
    import benchledger.projections.read_models.ledger_rows as ledger_rows
    import benchledger.projections.read_models.replay_feed as replay_feed

    s = opened(db_url)
    for command in _history(_fixture_rows(fixtures_dir)):
        s.store.append(command, metadata={"actor": "t"})
    with s.store.database.connect() as conn:
        incremental = _snapshot(conn)
    assert len(incremental["rm_ledger_rows"]) == 22  # 11 run ids in each of two ledgers
    assert incremental["rm_ledgers"][0][1] == "moved/a.json"
    # tiny batches and a tiny buffer: many flushes, duplicates across batch boundaries
    monkeypatch.setattr(replay_feed, "REPLAY_BATCH", 7)
    monkeypatch.setattr(ledger_rows, "REPLAY_BUFFER_BYTES", 5000)
    report = s.projections.rebuild(s.store)
    assert report.events_replayed == s.store.head_position() - 24  # run_built not replayed
    with s.store.database.connect() as conn:
        assert _snapshot(conn) == incremental
    monkeypatch.setattr(ledger_rows, "REPLAY_BUFFER_BYTES", 1 << 30)  # one flush at the end
    s.projections.rebuild(s.store)
    with s.store.database.connect() as conn:
        assert _snapshot(conn) == incremental
    assert s.projections.verify_rebuild(s.store).ok
    s.close()


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_read_by_several_types_is_in_position_order_across_batches(db_url):
    s = opened(db_url)
    s.store.listener = None  # payloads here are not real ledger rows
    for i in range(40):
        kind = (LEDGER_UPSERTED, RUN_APPENDED, RUN_BUILT)[i % 3]
        s.store.append([NewEvent(f"s/{i % 4}", kind, {"i": i})], metadata={"n": i})
    wanted = [LEDGER_UPSERTED, RUN_BUILT]
    everything = list(s.store.read())
    expected = [e for e in everything if e.event_type in wanted]
    got = list(s.store.read(event_types=wanted, batch_size=4))
    assert got == expected
    assert [e.payload["i"] for e in got] == [i for i in range(40) if i % 3 != 1]
    assert [e.metadata["n"] for e in got] == [e.payload["i"] for e in got]
    assert (
        list(s.store.read(event_types=wanted, from_position=10, limit=5, batch_size=2))
        == [e for e in expected if e.position >= 10][:5]
    )
    assert list(s.store.read(event_types=wanted, to_position=20, batch_size=3)) == [
        e for e in expected if e.position <= 20
    ]
    batches = list(s.store.read_batches(event_types=[RUN_APPENDED], batch_size=5))
    assert [len(b) for b in batches] == [5, 5, 3]
    s.close()


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_events_of_one_command_share_its_metadata(db_url):
    s = opened(db_url)
    s.store.append([NewEvent("s", "a", {"i": 1}), NewEvent("s", "a", {"i": 2})], metadata={"c": 1})
    s.store.append([NewEvent("s", "a", {"i": 3})], metadata={"c": 2})
    back = list(s.store.read())
    assert [e.metadata["c"] for e in back] == [1, 1, 2]
    assert back[0].metadata["correlation_id"] == back[0].correlation_id
    assert back[2].metadata["correlation_id"] == back[2].correlation_id
    s.close()


@pytest.mark.synthetic_events  # hand-made payloads on purpose
def test_rebuild_restores_cache_size_and_the_collector(db_url):
    s = opened(db_url)
    s.store.append([_appended("g", 1)])
    assert gc.isenabled()
    with s.store.database.connect() as conn:
        before = conn.execute("PRAGMA cache_size").scalar() if "sqlite" in db_url else 0
    s.projections.rebuild(s.store)
    assert gc.isenabled()
    if "sqlite" in db_url:
        with s.store.database.connect() as conn:
            assert conn.execute("PRAGMA cache_size").scalar() == before
    with s.store.database.connect() as conn:
        assert conn.execute("SELECT count(*) FROM rm_goal_runs").scalar() == 1
    s.close()


def test_event_columns_match_the_table_and_the_stored_event():
    assert tuple(c.name for c in events_table.columns) == EVENT_COLUMNS
    assert tuple(f.name for f in dataclasses.fields(StoredEvent)) == EVENT_COLUMNS
