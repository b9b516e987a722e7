"""The as-of replay engine on a random ledger history (runs rescored, moved between cases,
archived and restored), on SQLite and PostgreSQL: a replay from a snapshot equals a replay
from position 1, and the head equals the live read models."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.events import LEDGER_RUNS_ARCHIVED, LEDGER_RUNS_RESTORED, NewEvent
from benchledger.projections.history.as_of import parse_as_of, read_models_as_of
from benchledger.projections.history.snapshots import create_snapshot
from benchledger.projections.read_models.diff import compare_read_models
from tests.support_store import opened
from tests.test_as_of import scored

# Histories here are hand-made event payloads (replay plumbing), not what the handlers write.
pytestmark = pytest.mark.synthetic_events

EVENTS = 40


def random_history(seed: int) -> list[NewEvent]:
    rng = random.Random(seed)
    current: dict[str, dict] = {}
    out: list[NewEvent] = []
    while len(out) < EVENTS:
        run = f"r{rng.randrange(10)}"
        roll = rng.random()
        if roll < 0.7 or run not in current:
            event = scored("L", run, round(rng.random(), 2), f"c{rng.randrange(4)}")
            event.payload["row"]["arm_id"] = rng.choice(["baseline", "treatment"])
            current[run] = dict(event.payload["row"])
            out.append(event)
        elif roll < 0.85:
            row = {**current[run], "archive_state": "archived", "archive_reason": "x"}
            current[run] = row
            out.append(NewEvent("ledger/L", LEDGER_RUNS_ARCHIVED, {"ledger_id": "L",
                                                                    "rows": [row]}))  # fmt: skip
        else:
            row = {k: v for k, v in current[run].items() if not k.startswith("archive_")}
            current[run] = row
            out.append(NewEvent("ledger/L", LEDGER_RUNS_RESTORED, {"ledger_id": "L",
                                                                    "rows": [row]}))  # fmt: skip
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_snapshot_tail_replay_equals_replay_from_position_1(db_url, tmp_path, seed):
    with opened(db_url) as s:
        for event in random_history(seed):
            s.store.append([event])
        snaps = tmp_path / "snaps"
        for at in ("7", "23"):
            create_snapshot(s.store, s.projections, snaps, at)
        for at in (7, 8, 15, 23, 30, EVENTS):
            with read_models_as_of(s.store, s.projections, str(at), snapshot_dir=snaps) as fast, \
                 read_models_as_of(s.store, s.projections, str(at)) as slow:  # fmt: skip
                assert fast.snapshot_position == (23 if at >= 23 else 7)
                assert (
                    compare_read_models(
                        s.projections, checked=fast.database, reference=slow.database
                    )
                    == []
                ), at
        with read_models_as_of(s.store, s.projections, str(EVENTS)) as head:
            live = compare_read_models(s.projections, checked=s.store.database,
                                       reference=head.database)  # fmt: skip
            assert live == []


def test_parse_as_of_reads_times_as_utc_and_positions_as_digits():
    assert parse_as_of(" 42 ") == 42
    assert parse_as_of("2026-05-02T12:00:00+02:00") == "2026-05-02T10:00:00.000000Z"
    assert parse_as_of("2026-05-02T10:00:00") == "2026-05-02T10:00:00.000000Z"
    assert parse_as_of("2026-05-02") == "2026-05-02T00:00:00.000000Z"
    assert parse_as_of("2026-05-02T10:00:00.5Z") == "2026-05-02T10:00:00.500000Z"
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert parse_as_of(stamp) == stamp  # a recorded_at as events list prints it
    for bad in ("-3", "1.5", "", "last week"):
        with pytest.raises(InputError, match="expected an event position or an ISO 8601 time"):
            parse_as_of(bad)
