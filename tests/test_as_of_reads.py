"""What an ``--as-of`` read replays and where: only the read models the reader reads, and a
snapshot read in place (an overlay whose changes never reach the file) unless it cannot be."""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.store.events import EXPORT_WRITTEN, NewEvent
from benchledger.ledger.store.sqlite_overlay import open_overlay
from benchledger.projections.history.as_of import read_models_as_of
from benchledger.projections.history.as_of_sql import projections_read_by
from benchledger.projections.history.snapshots import list_snapshots
from tests.support_store import opened
from tests.test_as_of import archive_event, scored
from tests.test_database_fold import _appended

pytestmark = pytest.mark.synthetic_events


def run(args: list[str], url: str):
    return CliRunner().invoke(cli, ["--db", url, *args], catch_exceptions=False)


def ok_json(args: list[str], url: str) -> dict:
    result = run([*args, "--format", "json"], url)
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def mixed_url(db_url, tmp_path, monkeypatch):
    """A store whose history feeds every read model: goal runs, ledger rows, exports."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BENCHLEDGER_SNAPSHOT_DIR", str(tmp_path / "snaps"))
    s = opened(db_url)
    export = {"path": "L.json", "kind": "ledger_json", "sha256": "0" * 64, "bytes": 1}
    for events in (
        [_appended("s1"), _appended("s2")],  # 1, 2
        [scored("L", "a", 0.1, "c1")],  # 3
        [NewEvent("exports", EXPORT_WRITTEN, {"files": [export]})],  # 4
        [_appended("s3"), scored("L", "b", 0.0, "c2")],  # 5, 6
        [archive_event("L", "b")],  # 7
    ):
        s.store.append(events)
    s.close()
    return db_url


QUERIES = {
    "SELECT count(*) FROM rm_goal_runs": ["goal_runs"],
    "SELECT count(*), sum(archived) FROM ledger_runs_v": ["ledger_rows"],
    "SELECT count(*) FROM events_v": [],
    "SELECT (SELECT count(*) FROM rm_exports), (SELECT count(*) FROM rm_ledger_rows)": [
        "exports",
        "ledger_rows",
    ],
}


@pytest.mark.parametrize("at", ["2", "5", "7"])
@pytest.mark.parametrize("statement", sorted(QUERIES))
def test_sql_as_of_replays_only_what_the_statement_reads_and_answers_as_a_full_replay(
    mixed_url, statement, at
):
    out = ok_json(["sql", "--as-of", at, statement], mixed_url)
    assert out["as_of"]["read_models"] == QUERIES[statement]
    # the same statement over every read model replayed to that moment
    with opened(mixed_url) as s:
        with read_models_as_of(s.store, s.projections, at) as full:
            assert full.as_dict()["read_models"] == "all"
            with full.database.connect() as conn:
                if "events" in statement:
                    expected = [[int(at)]]
                else:
                    expected = [list(r) for r in conn.execute(statement).all()]
    assert out["rows"] == expected


def test_a_statement_that_does_not_compile_replays_everything_and_fails_in_one_line(mixed_url):
    with opened(mixed_url) as s:
        assert projections_read_by(s.projections, "SELECT nope FROM nowhere") is None
    result = run(["sql", "--as-of", "3", "SELECT nope FROM nowhere"], mixed_url)
    assert result.exit_code == 1
    assert result.stderr.strip() == "error: query failed: no such table: nowhere"


def _snapshot_file(url: str):
    with opened(url) as s:
        from benchledger.projections.history.snapshots import default_snapshot_dir

        (found,) = list_snapshots(default_snapshot_dir(s.location))
    return found.db_path


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_as_of_reads_a_snapshot_in_place_and_never_changes_it(mixed_url):
    without = {q: ok_json(["sql", "--as-of", "7", q], mixed_url)["rows"] for q in QUERIES}
    aggregate_args = ["benchmark", "run-ledger-aggregate", "--ledger-id", "L",
                      "--benchmark-id", "b", "--as-of", "7"]  # fmt: skip
    aggregate = ok_json(aggregate_args, mixed_url)
    ok_json(["snapshot", "create", "--at", "3"], mixed_url)
    path = _snapshot_file(mixed_url)
    before = _digest(path)
    for statement, rows in without.items():
        out = ok_json(["sql", "--as-of", "7", statement], mixed_url)
        assert out["as_of"]["built_from"] == "snapshot at position 3"
        assert out["rows"] == rows, statement
    from_snapshot = ok_json(aggregate_args, mixed_url)
    assert from_snapshot.pop("as_of")["built_from"] == "snapshot at position 3"
    aggregate.pop("as_of")
    assert from_snapshot == aggregate
    # a write smuggled past the keyword check is refused by the overlay's connection too
    sneaky = run(["sql", "--as-of", "7", "WITH x AS (SELECT 1) DELETE FROM rm_ledger_rows"],
                 mixed_url)  # fmt: skip
    assert sneaky.exit_code == 1 and "query failed" in sneaky.stderr
    assert _digest(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(
        [path.name, path.with_suffix(".json").name]
    )  # no journal left beside it


def test_a_snapshot_another_reader_holds_is_copied_instead(mixed_url):
    ok_json(["snapshot", "create", "--at", "3"], mixed_url)
    path = _snapshot_file(mixed_url)
    expected = ok_json(["sql", "--as-of", "7", "SELECT count(*) FROM rm_goal_runs"], mixed_url)
    held = open_overlay(path)
    assert held is not None
    try:
        with held.begin() as conn:  # the holder's uncommitted change, seen only by itself
            conn.execute("DELETE FROM rm_goal_runs")
            conn.commit()  # an overlay's users cannot commit
        assert open_overlay(path) is None
        out = ok_json(["sql", "--as-of", "7", "SELECT count(*) FROM rm_goal_runs"], mixed_url)
        assert out == expected and out["rows"] == [[3]]
    finally:
        held.dispose()
    with opened(mixed_url) as s:  # what the holder deleted never reached the file
        with read_models_as_of(s.store, s.projections, "3") as fresh:
            with fresh.database.connect() as conn:
                assert conn.execute("SELECT count(*) FROM rm_goal_runs").scalar() == 2
    out = ok_json(["sql", "--as-of", "3", "SELECT count(*) FROM rm_goal_runs"], mixed_url)
    assert out["as_of"]["built_from"] == "snapshot at position 3" and out["rows"] == [[2]]


def test_replaying_no_read_model_reads_no_event(mixed_url):
    with opened(mixed_url) as s:
        with read_models_as_of(s.store, s.projections, "7", names=[]) as view:
            assert view.events_replayed == 0
            with view.database.connect() as conn:
                assert conn.execute("SELECT count(*) FROM rm_goal_runs").scalar() == 0


def _without(out: dict) -> dict:
    """A command's JSON output but for how its past read models were built."""
    return {k: v for k, v in out.items() if k != "as_of"}


READ_COMMANDS = {
    "render": ["render", "--ledger-id", "L"],
    "aggregate": ["benchmark", "run-ledger-aggregate", "--ledger-id", "L", "--benchmark-id", "b"],
    "compare": ["compare", "--ledger-id", "L", "--benchmark-id", "b"],
    "events": ["events", "list"],
    "sql": ["sql", "SELECT run_id, archived FROM ledger_runs_v ORDER BY run_id"],
}


@pytest.mark.parametrize("name", sorted(READ_COMMANDS))
def test_every_read_command_answers_the_same_from_a_snapshot(mixed_url, name):
    args = [*READ_COMMANDS[name], "--as-of", "7"]
    replayed = ok_json(args, mixed_url)
    ok_json(["snapshot", "create", "--at", "3"], mixed_url)
    from_snapshot = ok_json(args, mixed_url)
    if name != "events":  # (events list replays nothing)
        assert from_snapshot["as_of"]["built_from"] == "snapshot at position 3"
    assert _without(from_snapshot) == _without(replayed)


def test_diff_and_report_from_a_snapshot(mixed_url, tmp_path):
    diff_args = ["diff", "--ledger-id", "L", "--from", "4", "--to", "7"]
    replayed = ok_json(diff_args, mixed_url)
    ok_json(["snapshot", "create", "--at", "3"], mixed_url)
    from_snapshot = ok_json(diff_args, mixed_url)
    assert from_snapshot["diff"].pop("built_from") == "snapshot at position 3"
    replayed["diff"].pop("built_from")
    assert from_snapshot == replayed
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    past = ok_json(["report", "--ledger-id", "L", "--as-of", "7",
                    "--out", str(tmp_path / "past")], mixed_url)  # fmt: skip
    assert past["as_of"]["built_from"] == "snapshot at position 3"
    assert (tmp_path / "past" / "index.html").is_file()


def test_a_long_span_or_tail_replays_into_a_copy_not_the_overlay(mixed_url, monkeypatch):
    """The overlay keeps what it replays in memory, so past ``OVERLAY_MAX_TAIL`` events (the
    tail of an ``--as-of``, or ``diff``'s whole span from the snapshot) a copy is used."""
    import benchledger.ledger.store.sqlite_overlay
    import benchledger.projections.read_models.scratch

    diff_args = ["diff", "--ledger-id", "L", "--from", "4", "--to", "7"]
    sql_args = ["sql", "--as-of", "7", "SELECT count(*) FROM rm_goal_runs"]
    ok_json(["snapshot", "create", "--at", "3"], mixed_url)
    expected = [ok_json(diff_args, mixed_url), ok_json(sql_args, mixed_url)]
    monkeypatch.setattr(benchledger.projections.read_models.scratch, "OVERLAY_MAX_TAIL", 2)

    def refused(path):
        raise AssertionError(f"overlay opened for a long replay: {path}")

    monkeypatch.setattr(benchledger.ledger.store.sqlite_overlay, "open_overlay", refused)
    assert [ok_json(diff_args, mixed_url), ok_json(sql_args, mixed_url)] == expected
