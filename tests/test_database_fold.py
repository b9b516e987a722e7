"""The database replay (``projections/read_models/database_fold.py``) leaves every read model
exactly as the
Python replay and the live listener do, whatever the payloads hold: text SQLite must copy byte
for byte, the ``or`` fallbacks of the Python code, and events outside the contracts' types,
which go back to Python."""

from __future__ import annotations

import pytest

import benchledger.projections.read_models.database_fold as fold_module
from benchledger.ledger.store.events import (
    EXPORT_WRITTEN,
    LEDGER_RUNS_ARCHIVED,
    LEDGER_UPSERTED,
    RUN_APPENDED,
    NewEvent,
)
from benchledger.projections.history.as_of import advance
from benchledger.projections.read_models import tables
from benchledger.projections.read_models.diff import compare_read_models
from benchledger.projections.read_models.scratch import scratch_database
from tests.support_store import opened, table_rows

READ_MODELS = (
    tables.LEDGERS,
    tables.LEDGER_ROWS,
    tables.GOAL_RUNS,
    tables.ROLLOUT_EVENTS,
    tables.EXPORTS,
    tables.GLOBAL_REGISTRY,
)
SHA = "0" * 64
# Values whose JSON text SQLite must hand back exactly as orjson wrote it.
ODD = {
    "unicode": "données ✓ 日本 😀",
    "escapes": 'quote " backslash \\ tab \t bell \x07 line\n',
    "floats": [1e-07, 1.5e300, -0.0, 0.1, 123456789.125],
    "ints": [2**63 - 1, -(2**63), 0],
    "nested": {"z": [], "a": {}, "m": [None, True, False]},
}


def _appended(name: str, goal: str = "g", **payload) -> NewEvent:
    """A run appended under stem ``name`` (``payload`` may override any key, the stem too)."""
    stem = name
    body = {
        "goal_id": goal,
        "stem": stem,
        "run_key": f"k-{stem}",
        "generated_at": f"2026-06-01T00:00:{len(stem):02d}Z",
        "record": {"stem": stem, **ODD},
        "rollout_event": {"event_id": f"ev-{stem}", "event_kind": "run", "status": "ok", **ODD},
        **payload,
    }
    return NewEvent(f"goal/{goal}", RUN_APPENDED, body)


def _upsert(ledger: str, run_id: str, **row) -> NewEvent:
    body = {
        "ledger_id": ledger,
        "ledger_path": f"{ledger}.json",
        "row": {"run_id": run_id, "benchmark_id": "b", "case_id": "c", **ODD, **row},
    }
    return NewEvent(f"ledger/{ledger}", LEDGER_UPSERTED, body)


def _export(*files: dict) -> NewEvent:
    return NewEvent("exports", EXPORT_WRITTEN, {"files": list(files)})


def _clean_history() -> list[list[NewEvent]]:
    """Payloads within the contracts' types, with every fallback the Python code takes."""
    return [
        [_appended("s1"), _appended("s2", run_key=None, generated_at="")],
        [_appended("s3", rollout_event={}), _appended("s4", rollout_event=None)],
        [_appended("s5", rollout_event={"event_kind": "", "kind": "k", "goal_id": "g"})],
        [_appended("s6", rollout_event={"event_id": "", "kind": ""})],
        [_appended("s1", goal="h"), _appended("s1")],  # the same run again: the later wins
        [_upsert("L", "r1"), _upsert("L", "r2", benchmark_id=None, archive_state="archived")],
        [_upsert("L", "r3", recorded_at=""), _upsert("L", "r1", case_id="c2")],
        [
            NewEvent(
                "ledger/L",
                LEDGER_RUNS_ARCHIVED,
                {
                    "ledger_id": "L",
                    "rows": [
                        {
                            "run_id": "r3",
                            "benchmark_id": "b",
                            "case_id": "c",
                            "archive_state": "archived",
                        }
                    ],
                },
            )
        ],  # fmt: skip
        [_upsert("M", "r1"), _upsert("L", "r4")],
        [
            _export(
                {"path": "a", "kind": "ledger_json", "sha256": SHA}, {"path": "b", "sha256": SHA}
            )
        ],
        [_export({"path": "a", "sha256": SHA}, {"path": "a", "kind": "x", "sha256": "1" * 64})],
        [NewEvent("exports", EXPORT_WRITTEN, {})],
    ]


def _unclean_history() -> list[list[NewEvent]]:
    """Types the contracts do not admit: the database replay must leave these to Python."""
    return [
        [_appended("u1", run_key=7), _appended("u2", generated_at=5)],
        [_appended("u3", rollout_event={"event_id": "ev-u3", "status": 3})],
        [_upsert("L", "u4", case_id=9), _upsert("L", "u5")],
        [_export({"path": "a", "kind": 3, "sha256": SHA}, {"path": "c", "sha256": SHA})],
    ]


def _snapshot(s) -> dict[str, list[tuple]]:
    with s.store.database.connect() as conn:
        return {t.name: table_rows(conn, t) for t in READ_MODELS}


@pytest.mark.synthetic_events  # hand-made payloads on purpose
@pytest.mark.parametrize("unclean", [False, True], ids=["clean", "unclean"])
def test_database_replay_equals_python_replay_and_the_listener(db_url, monkeypatch, unclean):
    s = opened(db_url)
    history = _clean_history() + (_unclean_history() if unclean else [])
    for command in history:
        s.store.append(command, metadata={"actor": "t"})
    live = _snapshot(s)
    rounds: list[set[int]] = []
    real_run = fold_module._Folding.run

    def spy(self, *args, **kwargs):
        found = real_run(self, *args, **kwargs)
        rounds.append(found)
        return found

    monkeypatch.setattr(fold_module._Folding, "run", spy)
    report = s.projections.rebuild(s.store)
    in_database = _snapshot(s)
    s.projections.rebuild(s.store, in_database=False)
    in_python = _snapshot(s)
    assert in_database == in_python == live
    assert report.events_replayed == sum(
        1 for command in history for e in command if e.event_type != "run_built"
    )
    if s.store.database.dialect == "sqlite":
        # goal runs, rollout events, exports and ledger rows each ran their folds ...
        assert len([r for r in rounds if not r]) >= 4 - (3 if unclean else 0)
        # ... and an unclean event sent its projection round again, with it left to Python.
        assert any(rounds) == unclean
    else:
        assert rounds == []  # PostgreSQL replays in Python
    goal_runs = {(r[0], r[1]): r for r in live["rm_goal_runs"]}
    assert goal_runs[("g", "s2")][3] != ""  # generated_at '' fell back to recorded_at
    assert goal_runs[("g", "s1")][4].startswith('{"escapes":"quote \\" backslash')
    assert s.projections.verify_rebuild(s.store).ok
    # --as-of from position 1 (the live SQLite file attached to a scratch database) too
    with scratch_database("test-as-of") as scratch:
        advance(s.store, s.projections, scratch, 0, s.store.head_position())
        assert compare_read_models(s.projections, checked=scratch, reference=s.store.database) == []
    s.close()
