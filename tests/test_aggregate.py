"""The current aggregate: buckets, selection policies, canonical and active sets, target
lanes (docs/formats/ledger_v0.md §11)."""

from __future__ import annotations

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.operations.aggregate import TargetLanes, aggregate
from benchledger.ledger.rules.operations.aggregate_buckets import BUCKET_PRECEDENCE, judge_row
from benchledger.ledger.rules.row.rows import document_rows
from tests.support_ledger_rows import stored_row
from tests.support_ledger_rules import load_fixture_ledger


@pytest.mark.parametrize(
    ("fields", "bucket"),
    [
        (
            {
                "official_score": 1.0,
                "official_passed": True,
                "score_status": "passed",
                "failure_class": "none",
            },
            "pass",
        ),
        ({"official_score": 0.4, "failure_class": "none"}, "partial"),
        ({}, "official_zero"),
        ({"official_score_attempt_countable": False}, "uncountable_official_score"),
        (
            {
                "official_score": None,
                "official_passed": None,
                "score_status": "missing",
                "failure_class": "verifier_timeout",
            },
            "verifier_no_reward",
        ),
        (
            {
                "official_score": None,
                "official_passed": None,
                "score_status": "missing",
                "failure_class": "x",
                "failure_labels": ["verifier_reward_missing"],
            },
            "verifier_no_reward",
        ),
        (
            {
                "official_score": None,
                "official_passed": None,
                "score_status": "missing",
                "failure_class": "skillsbench_docker_daemon_unavailable",
            },
            "setup_runner_infra",
        ),
        (
            {
                "official_score": 1.0,
                "official_passed": True,
                "official_score_bool_fallback_used": True,
                "case_attempt_countable": False,
                "failure_class": "runner_glitch",
            },
            "setup_runner_infra",
        ),
        (
            {
                "official_score": None,
                "official_passed": None,
                "score_status": "missing",
                "failure_class": "not_applicable_worker_materialization_probe",
            },
            "missing",
        ),
    ],
)
def test_bucket_table(fields: dict, bucket: str) -> None:
    assert judge_row(stored_row(**fields)).bucket == bucket


def _policy_rows() -> list[dict]:
    return [
        stored_row(
            run_id="pass-early",
            case_id="c1",
            recorded_at="2026-06-01T00:00:00Z",
            official_score=1.0,
            official_passed=True,
            score_status="passed",
            failure_class="none",
        ),
        stored_row(run_id="fail-late", case_id="c1", recorded_at="2026-06-09T00:00:00Z"),
        stored_row(
            run_id="infra",
            case_id="c2",
            official_score=None,
            official_passed=None,
            score_status="missing",
            failure_class="skillsbench_docker_daemon_unavailable",
        ),
        stored_row(run_id="half", case_id="c3", official_score=0.5, failure_class="none"),
        stored_row(run_id="gone", case_id="c4", archive_state="archived", archive_reason="x"),
    ]


def test_aggregate_best_of_n_prefers_a_pass_over_a_later_failure() -> None:
    payload = aggregate(_policy_rows(), benchmark_id="b@1")
    assert payload["case_best"]["c1"]["run_id"] == "pass-early"
    assert payload["selection_policy"]["selection"] == "best"
    assert (
        payload["selection_policy"]["rule"]
        == "prefer_countable_official_result_over_missing_or_infra_rows"
    )
    assert "best-of-N" in payload["selection_policy"]["description"]
    assert payload["selection_policy"]["bucket_precedence"] == list(BUCKET_PRECEDENCE)
    # archived-only case c4 is not in the default canonical set (gotcha #10)
    assert payload["canonical_total"] == 3
    assert (
        payload["distribution"]["pass"] == 1 and payload["distribution"]["setup_runner_infra"] == 1
    )
    summary = payload["countable_score_summary"]
    assert summary["countable_case_ids"] == ["c1", "c3"]
    assert summary["countable_score_mean"] == 0.75
    assert payload["blocked_uncountable_case_ids"] == ["c2"]
    assert payload["deduped_run_count"] == 4
    assert payload["case_best"]["c1"]["countable_score"] == 1.0


def test_aggregate_latest_countable_takes_the_latest_countable_run() -> None:
    payload = aggregate(_policy_rows(), benchmark_id="b@1", selection="latest-countable")
    assert payload["case_best"]["c1"]["run_id"] == "fail-late"
    assert payload["case_best"]["c1"]["bucket"] == "official_zero"
    assert payload["case_best"]["c2"]["run_id"] == "infra"  # no countable run: best run
    assert payload["selection_policy"]["rule"] == "latest_countable_official_result"
    with pytest.raises(InputError):
        aggregate(_policy_rows(), benchmark_id="b@1", selection="newest")


def test_aggregate_canonical_and_active_sets() -> None:
    payload = aggregate(
        _policy_rows(),
        benchmark_id="b@1",
        canonical_case_ids=["c2", "c1", "c9", "c2", "c4"],
        active_case_ids=["c4"],
    )
    assert payload["canonical_total"] == 4  # de-duplicated, first kept
    assert payload["missing_case_ids"] == ["c9", "c4"]
    assert payload["case_best"]["c9"] == {"bucket": "missing"}
    assert payload["runnable_missing_case_ids"] == ["c9"]
    assert payload["runnable_blocked_uncountable_case_ids"] == ["c2"]
    assert payload["runnable_case_ids"] == ["c2", "c9"]
    assert payload["canonical_covered"] == 2


def test_aggregate_target_lanes() -> None:
    rows = [
        stored_row(run_id="cur-zero", case_id="c1", run_group_id="current-wave"),
        stored_row(
            run_id="old-pass",
            case_id="c1",
            run_group_id="backfill-wave",
            official_score=1.0,
            official_passed=True,
            score_status="passed",
            failure_class="none",
        ),
        stored_row(
            run_id="old-pass2",
            case_id="c2",
            run_group_id="backfill-wave",
            official_score=1.0,
            official_passed=True,
            score_status="passed",
            failure_class="none",
        ),
        stored_row(
            run_id="cur-infra",
            case_id="c3",
            run_group_id="current-wave",
            official_score=None,
            official_passed=None,
            score_status="missing",
            failure_class="runner_error",
        ),
        stored_row(run_id="ignored", case_id="c4", run_group_id="unrelated"),
    ]
    lanes = TargetLanes(lane_id="wave-2", current=("CURRENT",), backfill=("backfill",))
    payload = aggregate(rows, benchmark_id="b@1", lanes=lanes)
    best = payload["case_best"]
    assert (best["c1"]["run_id"], best["c1"]["target_lane_source"]) == (
        "cur-zero",
        "current_countable",
    )
    assert (best["c2"]["run_id"], best["c2"]["target_lane_source"]) == (
        "old-pass2",
        "backfill_countable",
    )
    assert (best["c3"]["run_id"], best["c3"]["target_lane_source"]) == (
        "cur-infra",
        "current_noncountable",
    )
    assert best["c4"]["target_lane_source"] == "missing"
    lane = payload["selection_policy"]["target_lane"]
    assert lane["enabled"] is True and lane["lane_id"] == "wave-2"
    assert (
        payload["selection_policy"]["rule"]
        == "target_lane_current_countable_wins_backfill_fills_missing"
    )


def test_aggregate_on_fixture_ledger(fixtures_dir) -> None:
    rows = document_rows(load_fixture_ledger(fixtures_dir))
    payload = aggregate(rows, benchmark_id="terminal-bench@2.0")
    assert payload["canonical_total"] == sum(payload["distribution"].values())
    assert sorted(payload["case_best"]) == sorted(
        {
            r["case_id"]
            for r in rows
            if r["benchmark_id"] == "terminal-bench@2.0" and "archive_state" not in r
        }
    )
    summary = payload["countable_score_summary"]
    assert summary["countable_case_count"] == len(payload["accepted_case_ids"])
    assert summary["pass_count"] == payload["distribution"]["pass"]


def test_uncountable_numeric_counts_a_scored_setup_failure() -> None:
    """A chosen run with a numeric score that is not counted is listed whatever its bucket:
    here a runner glitch (setup_runner_infra) that still carries a score of 1.0."""
    scored_glitch = stored_row(
        run_id="glitch",
        official_score=1.0,
        official_passed=True,
        official_score_bool_fallback_used=True,
        case_attempt_countable=False,
        failure_class="runner_glitch",
    )
    payload = aggregate([scored_glitch], benchmark_id="b@1")
    assert payload["distribution"]["setup_runner_infra"] == 1
    summary = payload["countable_score_summary"]
    assert summary["countable_case_ids"] == []
    assert summary["uncountable_numeric_case_ids"] == ["c1"]
    assert summary["uncountable_numeric_case_count"] == 1
