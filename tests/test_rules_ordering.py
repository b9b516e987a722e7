"""One timestamp parser and one run order for the write side and the projections (§6.3, §13 #7).

loopx 0.4.8 never parses ``recorded_at``: it sorts the strings. Comparing instants is
benchledger's deliberate fix, so the whitespace rule is ours; it is the one ``utc_timestamp``
already applies to ``--recorded-at``: a padded value is the same instant, not an unreadable one.
"""

from __future__ import annotations

import math

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.ledger.rules.row.ordering import row_sort_key, sort_rows
from benchledger.ledger.rules.row.timestamps import earlier_timestamp, instant, utc_timestamp
from benchledger.ledger.rules.row.upsert import upsert_row
from benchledger.projections.publishing.ledger_v0 import build_document


def test_instant_ignores_surrounding_whitespace_like_the_input_parser() -> None:
    plain = instant("2026-06-14T17:00:00Z")
    assert instant(" 2026-06-14T17:00:00Z\n") == plain
    assert instant("\t2026-06-15T01:00:00+08:00 ") == plain
    assert utc_timestamp(" 2026-06-15T01:00:00+08:00 ") == "2026-06-14T17:00:00Z"


def test_instant_reads_naive_values_as_utc() -> None:
    assert instant("2026-06-14T17:00:00") == instant("2026-06-14T17:00:00+00:00")


@pytest.mark.parametrize("value", [None, "", "   ", "yesterday", 1718384400, ["2026"], {"a": 1}])
def test_unreadable_values_sort_first(value: object) -> None:
    assert instant(value) == -math.inf


def test_bad_recorded_at_input_is_one_clear_error() -> None:
    with pytest.raises(InputError, match="--recorded-at must be an ISO 8601 timestamp"):
        utc_timestamp("soon")


def test_earlier_timestamp_keeps_the_original_spelling() -> None:
    assert earlier_timestamp("2026-06-14T18:00:00Z", " 2026-06-15T01:00:00+08:00") == (
        " 2026-06-15T01:00:00+08:00"
    )
    assert earlier_timestamp(None, "2026-06-14T18:00:00Z") == "2026-06-14T18:00:00Z"


def _row(run_id: object, recorded_at: object, **extra: object) -> dict:
    return {
        "run_id": run_id,
        "benchmark_id": "bench",
        "case_id": "case",
        "arm_id": "codex_goal_mode_baseline",
        "recorded_at": recorded_at,
        "status": "completed",
        "failure_scope": "case_or_solution",
        **extra,
    }


ROWS = [
    _row("d", " 2026-06-14T18:00:00Z "),  # padded: read as 18:00Z
    _row("a", "2026-06-15T01:00:00+08:00"),  # 17:00Z
    _row("c", "not a time"),  # unreadable: first
    _row("b", "2026-06-14T17:00:00Z"),  # same instant as "a": run_id breaks the tie
    _row(None, "2026-06-14T19:00:00Z"),  # a missing run_id sorts as ""
]


def test_run_order_is_instant_then_run_id() -> None:
    assert [r["run_id"] for r in sort_rows(ROWS)] == ["c", "a", "b", "d", None]
    assert row_sort_key(_row(None, "x")) == (-math.inf, "")


def test_projection_orders_runs_as_the_write_side_does() -> None:
    """The rendered document and the upsert's "latest" must use the same order."""
    doc = build_document(ROWS, updated_at="t", update_policy=None)
    rendered = doc["benchmarks"]["bench"]["cases"]["case"]["runs"]
    assert [r["run_id"] for r in rendered] == [r["run_id"] for r in sort_rows(ROWS)]
    upserted = upsert_row(ROWS[:-1], _row("e", "2026-06-14T17:30:00Z"))
    assert [r["run_id"] for r in upserted.rows] == ["c", "a", "b", "e", "d"]


@pytest.mark.parametrize(
    ("state", "archived"),
    [("archived", True), ("active", False), (None, False), ("ARCHIVED", False)],
)
def test_archived_means_exactly_the_archived_state(state: object, archived: bool) -> None:
    assert is_archived({"archive_state": state}) is archived
