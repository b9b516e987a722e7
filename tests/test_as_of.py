"""``--as-of`` on every read command, snapshots and ``diff``, on SQLite and PostgreSQL.

The store in each test: run a scored 0.1 (case c1), run b scored 0 (case c2), run a rescored
1.0, run b archived: positions 1 to 4.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchledger.commands.cli import cli
from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.events import LEDGER_RUNS_ARCHIVED, NewEvent
from benchledger.ledger.store.tables import PROJECTION_CHECKPOINTS
from tests.support_store import opened, table_rows, upsert_event

# Histories here are hand-made event payloads (replay plumbing), not what the handlers write.
pytestmark = pytest.mark.synthetic_events


def run(args, db_url):
    return CliRunner().invoke(cli, ["--db", db_url, *args], catch_exceptions=False)


def ok_json(args, db_url) -> dict:
    result = run([*args, "--format", "json"], db_url)
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)


def scored(ledger: str, run_id: str, score: float, case: str) -> NewEvent:
    """An upsert of a completed run (so its score is countable)."""
    event = upsert_event(ledger, run_id, score, case)
    event.payload["row"].update(status="completed", score_status="completed")
    return event


def archive_event(ledger: str, run_id: str, case: str = "c2") -> NewEvent:
    row = scored(ledger, run_id, 0.0, case).payload["row"]
    row = {**row, "archive_state": "archived", "archive_reason": "flaky host"}
    return NewEvent(f"ledger/{ledger}", LEDGER_RUNS_ARCHIVED, {"ledger_id": ledger, "rows": [row]})


@pytest.fixture
def store_url(db_url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BENCHLEDGER_SNAPSHOT_DIR", str(tmp_path / "snaps"))
    s = opened(db_url)
    for events in (
        [scored("L", "a", 0.1, "c1")],
        [scored("L", "b", 0.0, "c2")],
        [scored("L", "a", 1.0, "c1")],
        [archive_event("L", "b")],
    ):
        s.store.append(events)
    s.close()
    return db_url


def live_state(url: str) -> list:
    """Every live read-model row, every checkpoint and the event count."""
    with opened(url) as s:
        with s.store.database.connect() as conn:
            tables = [t for p in s.projections.projections.values() for t in p.tables]
            state = [table_rows(conn, t) for t in [*tables, PROJECTION_CHECKPOINTS]]
            state.append(conn.execute("SELECT count(*) FROM events").scalar())
    return state


def scores(url: str, at: str) -> list:
    out = ok_json(["sql", "--as-of", at, "SELECT run_id, official_score, archived FROM "
                   "ledger_runs_v ORDER BY run_id"], url)  # fmt: skip
    return [[r[0], float(r[1]), r[2]] for r in out["rows"]]


def test_sql_as_of_each_position_leaves_live_untouched(store_url):
    before = live_state(store_url)
    assert scores(store_url, "1") == [["a", 0.1, 0]]
    assert scores(store_url, "2") == [["a", 0.1, 0], ["b", 0.0, 0]]
    assert scores(store_url, "3") == [["a", 1.0, 0], ["b", 0.0, 0]]
    assert scores(store_url, "4") == [["a", 1.0, 0], ["b", 0.0, 1]]
    events = ok_json(["sql", "--as-of", "2", "SELECT max(position), count(*) FROM events_v"],
                     store_url)  # fmt: skip
    assert events["rows"] == [[2, 2]] and events["as_of"]["position"] == 2
    assert live_state(store_url) == before


def test_events_list_as_of_stops_at_the_position(store_url):
    out = ok_json(["events", "list", "--as-of", "3"], store_url)
    assert [e["position"] for e in out["events"]] == [1, 2, 3]
    assert out["as_of"]["position"] == 3
    capped = ok_json(["events", "list", "--as-of", "3", "--to", "2"], store_url)
    assert capped["count"] == 2


def test_as_of_an_iso_time_is_the_last_event_at_or_before_it(store_url):
    listed = ok_json(["events", "list"], store_url)["events"]
    second = listed[1]["recorded_at"]
    assert scores(store_url, second) == [["a", 0.1, 0], ["b", 0.0, 0]]
    assert ok_json(["events", "list", "--as-of", second], store_url)["count"] == 2


def test_a_time_before_the_store_says_times_are_recording_times(store_url):
    """``diff --from 2026-05-01`` (the day the runs ran) was refused as "before the first
    event" with no word on what the time means (issue 34)."""
    result = run(["events", "list", "--as-of", "2001-01-01T00:00:00Z"], store_url)
    assert result.exit_code == 1
    assert "times are when events were recorded in this store, not when the runs ran" in (
        result.stderr
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("5", "--as-of 5: beyond the last event (position 4)"),
        ("0", "--as-of: positions start at 1 (the head is 4)"),
        ("2001-01-01T00:00:00Z", "--as-of 2001-01-01T00:00:00Z: before the first event"),
        ("yesterday", "--as-of: expected an event position or an ISO 8601 time, got 'yesterday'"),
    ],
)
@pytest.mark.parametrize("command", [["sql", "SELECT 1"], ["events", "list"],
                                     ["render", "--ledger-id", "L"]])  # fmt: skip
def test_bad_as_of_is_one_line_and_exit_1(store_url, value, message, command):
    before = live_state(store_url)
    result = run([*command, "--as-of", value], store_url)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {message}")
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert live_state(store_url) == before


def test_render_as_of_prints_or_writes_only_an_explicit_path(store_url, tmp_path):
    rendered = ok_json(["render", "--ledger-id", "L"], store_url)["rendered"]
    live_json = rendered[0]["path"]
    live_bytes = open(live_json, "rb").read()
    before = live_state(store_url)

    past = ok_json(["render", "--ledger-id", "L", "--as-of", "1"], store_url)
    runs = [r for b in past["benchmark_run_ledger"]["benchmarks"].values()
            for c in b["cases"].values() for r in c["runs"]]  # fmt: skip
    assert [(r["run_id"], r["official_score"]) for r in runs] == [("a", 0.1)]
    markdown = run(["render", "--ledger-id", "L", "--as-of", "1"], store_url).stdout
    assert "c1" in markdown and "c2" not in markdown

    out = tmp_path / "past" / "ledger-at-2.json"
    written = ok_json(["render", "--ledger-id", "L", "--as-of", "2", "--output-json", str(out)],
                      store_url)  # fmt: skip
    assert {f["path"] for f in written["rendered"]} == {str(out), str(out.with_suffix(".md"))}
    assert json.loads(out.read_text())["benchmarks"]
    refused = run(["render", "--ledger-id", "L", "--as-of", "2", "--output-json", live_json],
                  store_url)  # fmt: skip
    assert refused.exit_code == 1 and "published file of the live store" in refused.stderr
    assert open(live_json, "rb").read() == live_bytes
    assert live_state(store_url) == before  # no export recorded, nothing replayed live


def test_aggregate_as_of(store_url):
    def distribution(*extra):
        out = ok_json(["benchmark", "run-ledger-aggregate", "--ledger-id", "L",
                       "--benchmark-id", "b", *extra], store_url)  # fmt: skip
        return out["aggregate"]["distribution"], out.get("as_of")

    now, moment = distribution()
    assert moment is None and now["pass"] == 1 and now["official_zero"] == 0
    then, moment = distribution("--as-of", "2")
    assert moment["position"] == 2
    assert then["partial"] == 1 and then["official_zero"] == 1 and then["pass"] == 0


def test_snapshot_as_of_equals_replay_from_position_1(store_url, tmp_path):
    from benchledger.projections.history.as_of import read_models_as_of
    from benchledger.projections.read_models.diff import compare_read_models

    made = ok_json(["snapshot", "create", "--at", "2"], store_url)
    assert made["created"] and made["snapshot"]["position"] == 2
    assert not ok_json(["snapshot", "create", "--at", "2"], store_url)["created"]
    listed = ok_json(["snapshot", "list"], store_url)["snapshots"]
    assert [(s["position"], s["matches_store"]) for s in listed] == [(2, True)]
    assert ok_json(["snapshot", "verify"], store_url)["ok"]

    with opened(store_url) as s:
        for at in ("2", "3", "4"):
            with read_models_as_of(s.store, s.projections, at,
                                   snapshot_dir=tmp_path / "snaps") as fast, \
                 read_models_as_of(s.store, s.projections, at) as slow:  # fmt: skip
                assert fast.snapshot_position == 2 and slow.snapshot_position is None
                assert fast.events_replayed == int(at) - 2
                assert (
                    compare_read_models(
                        s.projections, checked=fast.database, reference=slow.database
                    )
                    == []
                )
    assert "snapshot at position 2" in ok_json(["sql", "--as-of", "4", "SELECT 1"],
                                               store_url)["as_of"]["built_from"]  # fmt: skip


def test_a_snapshot_of_another_store_is_never_used(store_url, tmp_path):
    other = f"sqlite:///{tmp_path / 'other' / 'ledger.db'}"
    s = opened(other)
    s.store.append([upsert_event("L", "zzz", 0.5, "c9")])
    s.store.append([upsert_event("L", "yyy", 0.5, "c9")])
    s.close()
    ok_json(["snapshot", "create"], other)  # the same directory, the other chain
    listed = ok_json(["snapshot", "list"], store_url)["snapshots"]
    assert [s["matches_store"] for s in listed] == [False]
    assert scores(store_url, "2") == [["a", 0.1, 0], ["b", 0.0, 0]]
    out = ok_json(["sql", "--as-of", "2", "SELECT 1"], store_url)
    assert out["as_of"]["built_from"] == "replay from position 1"


def test_diff_names_each_change_and_its_positions(store_url):
    doc = ok_json(["diff", "--ledger-id", "L", "--from", "2", "--to", "4"], store_url)["diff"]
    assert doc["schema_version"] == "benchmark_ledger_diff_v0"
    assert (doc["from"]["position"], doc["to"]["position"]) == (2, 4)
    cases = {c["case_id"]: c for c in doc["cases"]}
    assert set(cases) == {"c1", "c2"}
    c1 = {c["kind"]: c for c in cases["c1"]["changes"]}
    assert c1["run_updated"]["run_id"] == "a" and c1["run_updated"]["positions"] == [3]
    assert c1["run_updated"]["official_score"] == {"from": 0.1, "to": 1.0}
    assert (c1["bucket_changed"]["from"], c1["bucket_changed"]["to"]) == ("partial", "pass")
    assert (c1["score_changed"]["from"], c1["score_changed"]["to"]) == (0.1, 1.0)
    c2 = {c["kind"]: c for c in cases["c2"]["changes"]}
    assert c2["run_archived"]["positions"] == [4] and c2["run_archived"]["reason"] == "flaky host"
    assert c2["bucket_changed"]["to"] == "missing"
    assert cases["c2"]["after"]["archived_run_count"] == 1
    assert doc["summary"]["cases_changed"] == 2 and doc["summary"]["run_archived"] == 1

    added = ok_json(["diff", "--ledger-id", "L", "--from", "1", "--to", "2"], store_url)["diff"]
    [case] = added["cases"]
    assert case["before"] is None and case["changes"][0] == {
        "kind": "run_added", "run_id": "b", "arm_id": None, "official_score": 0.0,
        "positions": [2]}  # fmt: skip
    assert ok_json(["diff", "--ledger-id", "L", "--from", "3", "--to", "3"],
                   store_url)["diff"]["cases"] == []  # fmt: skip
    markdown = run(["diff", "--ledger-id", "L", "--from", "2"], store_url).stdout
    assert "run archived `b`" in markdown and "(position 4)" in markdown
    only = ok_json(["diff", "--ledger-id", "L", "--from", "2", "--benchmark-id", "x"], store_url)
    assert only["diff"]["cases"] == []


def test_diff_refuses_backwards_and_bad_moments(store_url):
    backwards = run(["diff", "--ledger-id", "L", "--from", "3", "--to", "1"], store_url)
    assert backwards.exit_code == 1
    assert backwards.stderr.strip() == ("error: --from (position 3) is after --to (position 1)")
    beyond = run(["diff", "--ledger-id", "L", "--from", "1", "--to", "9"], store_url)
    assert beyond.stderr.strip() == "error: --to 9: beyond the last event (position 4)"


def test_compare_as_of(db_url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = opened(db_url)
    for arm, run_id, score, case in [("base", "a", 0.1, "c1"), ("treat", "b", 0.5, "c1"),
                                     ("base", "c", 0.0, "c2"), ("treat", "d", 1.0, "c2"),
                                     ("treat", "b", 0.9, "c1")]:  # fmt: skip
        event = scored("L", run_id, score, case)
        event.payload["row"]["arm_id"] = arm
        s.store.append([event])
    s.close()

    def means(*extra):
        out = ok_json(["compare", "--ledger-id", "L", "--benchmark-id", "b", *extra], db_url)
        return {a["arm_id"]: a["mean"] for a in out["compare"]["arms"]}, out.get("as_of")

    now, moment = means()
    assert moment is None and now["treat"] == pytest.approx(0.95)
    before = live_state(db_url)  # taken after the live compare has kept its facts
    then, moment = means("--as-of", "4")
    assert moment["position"] == 4 and then["treat"] == pytest.approx(0.75)
    assert then["base"] == pytest.approx(0.05)
    markdown = run(["compare", "--ledger-id", "L", "--benchmark-id", "b", "--as-of", "4"], db_url)
    assert markdown.stdout.startswith("_As of position 4 (")
    assert live_state(db_url) == before


def test_snapshot_verify_names_a_tampered_snapshot(store_url, tmp_path):
    import sqlite3

    made = ok_json(["snapshot", "create", "--at", "3"], store_url)["snapshot"]
    path = tmp_path / "snaps" / made["file"]
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("UPDATE rm_ledger_rows SET archived = 1 WHERE run_id = 'a'")
    raw.close()  # the last connection folds the WAL back into the file
    result = run(["snapshot", "verify", "--format", "json"], store_url)
    assert result.exit_code == 1
    [report] = json.loads(result.stdout)["snapshots"]
    assert not report["ok"]
    assert report["differences"][0]["table"] == "rm_ledger_rows"
    assert report["differences"][0]["columns"] == ["archived"]


def test_build_diff_follows_a_run_that_moves_to_another_case(db_url, tmp_path):
    from benchledger.projections.reports.diff import build_diff

    with opened(db_url) as s:
        s.store.append([scored("M", "a", 0.5, "c1")])
        s.store.append([scored("M", "keep", 0.0, "c1")])
        s.store.append([scored("M", "a", 0.5, "c2")])
        doc = build_diff(s.store, s.projections, "M", "2", "3")
        with pytest.raises(InputError, match="no ledger nope in the store at --to"):
            build_diff(s.store, s.projections, "nope", "1", "3")
    cases = {c["case_id"]: c for c in doc["cases"]}
    assert [(c["kind"], c["run_id"], c["positions"]) for c in cases["c1"]["changes"]
            if "run_id" in c] == [("run_moved_out", "a", [3])]  # fmt: skip
    assert cases["c1"]["after"]["active_run_count"] == 1
    moved_in = cases["c2"]["changes"][0]
    assert (moved_in["kind"], moved_in["positions"]) == ("run_moved_in", [3])
    assert cases["c2"]["before"] is None and cases["c2"]["after"]["bucket"] == "partial"
    assert doc["summary"]["run_moved_out"] == 1 and doc["summary"]["run_moved_in"] == 1


def test_report_as_of_writes_a_past_report_and_records_nothing(store_url, tmp_path):
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    ok_json(["report", "--ledger-id", "L", "--out", str(tmp_path / "live")], store_url)
    before = live_state(store_url)
    past = ok_json(["report", "--ledger-id", "L", "--as-of", "2",
                    "--out", str(tmp_path / "past")], store_url)  # fmt: skip
    assert past["as_of"]["position"] == 2
    assert (tmp_path / "past" / "index.html").read_bytes() != (
        tmp_path / "live" / "index.html"
    ).read_bytes()
    refused = run(["report", "--ledger-id", "L", "--as-of", "2", "--out", str(tmp_path / "live")],
                  store_url)  # fmt: skip
    assert refused.exit_code == 1 and "live store's published report" in refused.stderr
    assert live_state(store_url) == before


def test_sql_as_of_stays_read_only(store_url):
    before = live_state(store_url)
    refused = run(["sql", "--as-of", "2", "DELETE FROM rm_ledger_rows"], store_url)
    assert refused.exit_code == 1
    assert refused.stderr.strip() == (
        "error: benchledger sql is read-only: DELETE statements are refused"
    )
    sneaky = run(["sql", "--as-of", "2", "WITH x AS (SELECT 1) DELETE FROM rm_ledger_rows"],
                 store_url)  # fmt: skip
    assert sneaky.exit_code == 1 and "query failed" in sneaky.stderr
    assert live_state(store_url) == before
