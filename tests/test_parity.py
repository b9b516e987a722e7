"""parity-check payloads (docs/formats/history_registry_rollout.md §10)."""

from __future__ import annotations

import json

import pytest

from benchledger.ledger.handlers.source_planned import planned_run_options
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.rules.operations.parity import (
    is_product_mode,
    parity_check,
    parity_check_error_payload,
    parity_check_payload,
    render_parity_markdown,
)
from benchledger.ledger.sources.planned.records import build_planned_terminal_bench_record

R = BenchmarkRunRequest.from_options

FULL_CALLS = {
    "status": 1, "quota_should_run": 2, "todo_list": 1, "history": 1, "check": 1,
    "todo_claim": 1, "case_result": 1,
}  # fmt: skip


def product_record(**over) -> dict:
    record = {
        "schema_version": "benchmark_run_v0",
        "benchmark_id": "terminal-bench@2.0",
        "mode": "codex_loopx_treatment",
        "interaction_counters": {"loopx_cli_calls": dict(FULL_CALLS)},
        "product_mode_lifecycle_contract": {
            "case_active_state_path": "/app/.codex/goals/case-1/ACTIVE_GOAL_STATE.md",
            "case_active_state_initialized_before_agent": True,
        },
        "agent_activity": {"tool_call_count": 12},
    }
    record.update(over)
    return record


def test_full_product_evidence_allows_the_claim():
    check = parity_check(product_record())
    assert check["schema_version"] == "benchmark_codex_app_parity_posthoc_check_v0"
    assert check["parity_target"] == "codex_app_loopx_product_path"
    assert check["product_mode"] is True
    assert all(check["evidence_checks"].values())
    assert check["missing_evidence"] == [] and check["safety_failures"] == []
    assert check["claim_level"] == "full_product_path_evidence_present"
    assert check["full_product_claim_allowed"] is True
    assert check["loopx_cli_call_counts"]["total"] == 8
    assert check["stateful_lifecycle_counts"] == {"state_reads": 6, "state_writes": 2}
    assert check["case_goal_state"]["path_kind"] == "canonical_in_case_goal_state"


@pytest.mark.parametrize(
    ("change", "missing"),
    [
        ({"product_mode_lifecycle_contract": {}},
         ["canonical_case_active_state_path", "case_active_state_initialized_before_agent"]),
        ({"interaction_counters": {"loopx_cli_calls": {"status": 1}}},
         ["required_loopx_cli_calls_present", "stateful_loopx_lifecycle_observed"]),
        ({"interaction_counters": {}},
         ["loopx_cli_trace_present", "required_loopx_cli_calls_present",
          "stateful_loopx_lifecycle_observed"]),
        ({"agent_activity": None}, ["codex_cli_trajectory_summary_present"]),
    ],
)  # fmt: skip
def test_missing_evidence(change, missing):
    check = parity_check(product_record(**change))
    assert check["missing_evidence"] == missing
    assert check["claim_level"] == "product_mode_surrogate_missing_posthoc_evidence"
    assert check["full_product_claim_allowed"] is False


def test_list_calls_matched_by_substring_and_usage_floor():
    counters = {
        "loopx_cli_calls": ["loopx status --json", "loopx quota should-run quota_should_run",
                            "todo_list", "history", "check", "todo_claim x"],
        "loopx_cli_state_usage_counts": {"status": 4},
        "loopx_cli_call_total": 3,
    }  # fmt: skip
    check = parity_check(product_record(interaction_counters=counters))
    counts = check["loopx_cli_call_counts"]
    assert counts["status"] == 4 and counts["todo_claim"] == 1
    assert counts["total"] == 9  # sum of counts beats the list length and the declared total
    assert check["missing_required_cli_calls"] == []


def test_state_counters_raise_lifecycle_counts():
    counters = {"loopx_cli_calls": {"status": 1}, "loopx_case_state_write_count": 3,
                "loopx_cli_state_read_count": 9}  # fmt: skip
    check = parity_check(product_record(interaction_counters=counters))
    assert check["stateful_lifecycle_counts"] == {"state_reads": 9, "state_writes": 3}


@pytest.mark.parametrize(
    ("record", "product"),
    [
        ({"mode": "bare_codex_cli"}, False),
        ({"mode": "hardened_codex_baseline"}, False),
        ({"mode": "x", "route": "loopx-product-mode"}, False),  # hyphenated route name
        ({"mode": "skillsbench_loopx_product_mode_treatment"}, True),
        ({"source_runner": "loopx_terminal_bench_codex_loopx_cli_dry_run"}, True),
        ({"benchmark_loop_contract": {"route": "loopx_product_route"}}, True),
        ({"interaction_counters": {"product_mode": True}}, True),
        ({"episode_policy": {"product_mode": True}}, True),
    ],
)
def test_product_mode_detection(record, product):
    assert is_product_mode(record) is product


def test_baseline_has_no_claim_and_no_missing_evidence():
    check = parity_check({"benchmark_id": "b", "mode": "bare_codex_cli"})
    assert check["claim_level"] == "baseline_or_ablation_no_product_claim"
    assert check["missing_evidence"] == []
    assert check["case_goal_state"]["init_required"] is False


@pytest.mark.parametrize(
    ("change", "failure"),
    [
        ({"read_boundary": {"task_text_read": True}}, "raw_task_text_or_prompt_not_recorded"),
        ({"reward_feedback_forwarded": True}, "reward_feedback_not_forwarded"),
        ({"runner_failure": {"raw_error_recorded": True}}, "raw_verifier_output_not_recorded"),
        ({"validation": {"no_raw_trajectory_read": False}}, "raw_trajectory_or_trace_not_recorded"),
    ],
)
def test_safety_failures_win(change, failure):
    check = parity_check(product_record(**change))
    assert check["safety_failures"] == [failure]
    assert check["claim_level"] == "unsafe_or_leaky_artifact"
    assert check["full_product_claim_allowed"] is False


def test_goal_state_path_kinds():
    outside = product_record(
        product_mode_lifecycle_contract={
            "case_active_state_path": ".codex/goals/g/ACTIVE_GOAL_STATE.md"
        }
    )
    assert parity_check(outside)["case_goal_state"]["path_kind"] == "goal_state_outside_app_root"


def test_planned_fixture_record_is_product_mode_without_evidence():
    record = build_planned_terminal_bench_record(
        planned_run_options(R({"goal_id": "g", "mode": "codex-loopx", "fake_worker": True})),
        env={},
        which=lambda _n: None,
    )
    check = parity_check(record)
    assert check["product_mode"] is True
    assert "canonical_case_active_state_path" in check["missing_evidence"]
    assert check["loopx_cli_call_counts"]["total"] == 6


def test_payloads_and_markdown():
    ok = parity_check_payload(product_record())
    json.dumps(ok)
    text = render_parity_markdown(ok)
    assert text.startswith("# Codex App Parity Posthoc Check\n")
    assert "- claim_status: allowed" in text
    err = parity_check_error_payload(
        "--benchmark-run-json did not contain a compactable benchmark_run_v0 object"
    )
    assert err["ok"] is False
    assert err["codex_app_parity_posthoc_check"] == {
        "full_product_claim_allowed": False,
        "claim_level": "invalid_or_unreadable_compact_benchmark_run",
    }
    assert "- claim_status: not_allowed" in render_parity_markdown(err)
    assert "- error: --benchmark-run-json did not contain" in render_parity_markdown(err)
