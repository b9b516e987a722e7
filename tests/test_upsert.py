"""Upsert and backfill of one row into its case, row order (docs/formats/ledger_v0.md §6.1,
§6.3)."""

from __future__ import annotations

import pytest

from benchledger.ledger.rules.row.build import build_row
from benchledger.ledger.rules.row.ordering import sort_rows
from benchledger.ledger.rules.row.upsert import upsert_row
from tests.support_ledger_rows import stored_row
from tests.support_ledger_rules import NOW, bare_record


def test_upsert_appends_a_new_run() -> None:
    result = upsert_row([stored_row()], stored_row(run_id="r1", job_name="job2"))
    assert (result.action, result.touched_run_id) == ("appended", None)
    assert [r["run_id"] for r in result.rows] == ["r0", "r1"]


def test_upsert_replaces_same_run_id_keeping_first_recorded_at() -> None:
    stored = stored_row(recorded_at="2026-06-01T08:00:00+08:00", notes="old")
    new = stored_row(recorded_at="2026-06-02T00:00:00Z", notes="new", official_score=1.0)
    result = upsert_row([stored], new)
    assert (result.action, result.touched_run_id) == ("replaced", "r0")
    assert result.row["notes"] == "new" and result.row["official_score"] == 1.0
    assert result.row["recorded_at"] == "2026-06-01T08:00:00+08:00"  # earlier instant, as stored


def test_upsert_archived_row_stays_archived() -> None:
    stored = stored_row(
        archive_state="archived",
        archive_reason="old batch",
        archive_batch_id="abc",
        archived_at="2026-06-03T00:00:00Z",
    )
    result = upsert_row([stored], stored_row(notes="re-ingested"))
    assert result.action == "archived_kept"
    assert result.row["archive_state"] == "archived"
    assert result.row["archive_batch_id"] == "abc"
    assert result.row["notes"] == "re-ingested"


def test_upsert_archived_row_kept_drops_empty_keys() -> None:
    """As loopx 0.4.8 rebuilds a re-landed archived row: None, "" and [] go, {} and 0 stay."""
    stored = stored_row(archive_state="archived", archive_reason="", archive_batch_id="abc")
    new = {**stored_row(), "setup_blockers": [], "failure_class": None, "notes": ""}
    new.update(extra={}, round_reward_count=0)
    result = upsert_row([stored], new)
    assert result.action == "archived_kept"
    for gone in ("setup_blockers", "failure_class", "notes", "archive_reason"):
        assert gone not in result.row, gone
    assert result.row["extra"] == {} and result.row["round_reward_count"] == 0
    assert result.row["archive_batch_id"] == "abc"


def test_upsert_replace_of_an_active_row_keeps_empty_keys() -> None:
    result = upsert_row([stored_row()], {**stored_row(), "setup_blockers": [], "notes": ""})
    assert result.action == "replaced"
    assert result.row["setup_blockers"] == [] and result.row["notes"] == ""


def test_upsert_new_row_with_archive_state_wins() -> None:
    stored = stored_row(archive_state="archived", archive_reason="x", archive_batch_id="b")
    new = stored_row(archive_state="archived", archive_reason="y", archive_batch_id="c")
    result = upsert_row([stored], new)
    assert result.action == "replaced" and result.row["archive_reason"] == "y"


def test_upsert_logical_backfill_fills_only_empty_fields() -> None:
    stored = stored_row(run_id="legacy", recorded_at="2026-05-01T00:00:00Z", max_rounds_budget=4)
    stored["task_staging"] = {}
    new = stored_row(
        run_id="fresh",
        recorded_at="2026-06-05T00:00:00Z",
        artifact_refs={"compact_artifact_ref": "runs/x.compact.json"},
        max_rounds_budget=9,
        run_key="harbor:job1:c1",
        task_staging={"staged": True},
        notes="not a backfill field",
    )
    result = upsert_row([stored], new)
    assert (result.action, result.touched_run_id) == ("backfilled", "legacy")
    assert result.row["run_id"] == "legacy"
    assert result.row["recorded_at"] == "2026-05-01T00:00:00Z"
    assert result.row["artifact_refs"] == {"compact_artifact_ref": "runs/x.compact.json"}
    assert result.row["run_key"] == "harbor:job1:c1"
    assert result.row["task_staging"] == {"staged": True}
    assert result.row["max_rounds_budget"] == 4  # not empty: kept
    assert "notes" not in result.row
    assert len(result.rows) == 1


@pytest.mark.parametrize(
    "change",
    [{"official_score": 1.0, "official_passed": True}, {"failure_class": "x"}, {"mode": None}],
)
def test_upsert_backfill_needs_same_logical_run(change: dict) -> None:
    result = upsert_row([stored_row(run_id="legacy")], stored_row(run_id="fresh", **change))
    assert result.action == "appended"


def test_upsert_skips_non_terminal_rows() -> None:
    planned, _ = build_row(bare_record(case_id="c1", run_status="planned"), now=NOW)
    result = upsert_row([stored_row()], planned)
    assert (result.action, result.updated) == ("skipped", False)
    assert result.skip_reason == "benchmark_run_not_terminal_for_public_ledger"
    assert result.rows == [stored_row()]


def test_sort_rows_by_instant_then_run_id() -> None:
    rows = [
        stored_row(run_id="b", recorded_at="2026-06-01T09:00:00+08:00"),  # 01:00Z
        stored_row(run_id="a", recorded_at="2026-06-01T02:00:00Z"),
        stored_row(run_id="c", recorded_at="2026-06-01T01:00:00Z"),
    ]
    assert [r["run_id"] for r in sort_rows(rows)] == ["b", "c", "a"]
