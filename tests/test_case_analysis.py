"""case-analysis-candidates payloads (docs/formats/history_registry_rollout.md §11) on the loopx
ledger."""

from __future__ import annotations

import json

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.operations.case_analysis import (
    analysis_id,
    build_candidate_report,
    classify_decision,
    find_candidates,
    render_analysis_markdown,
    render_candidates_markdown,
    validate_case_analysis_options,
)


@pytest.fixture(scope="module")
def ledger(fixtures_dir):
    path = fixtures_dir / "loopx-ledger" / "benchmark-run-ledger.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("decision", "runs", "cls", "prio"),
    [
        ("paired_no_score_uplift", 2, "paired_no_uplift_candidate", "P1"),
        ("paired_baseline_solved_treatment_preserved", 2,
         "baseline_solved_non_regression_candidate", "P2"),
        ("paired_treatment_worker_verifier_alignment_required", 2,
         "infrastructure_alignment_candidate", "P1"),
        ("paired_treatment_preflight_required", 1, "infrastructure_alignment_candidate", "P1"),
        ("baseline_failed_treatment_candidate", 1, "baseline_failure_treatment_candidate", "P1"),
        ("baseline_runner_or_setup_repair_required", 1, "setup_or_runner_gap_defer", "P2"),
        ("paired_baseline_environment_setup_repair_required", 2, "setup_or_runner_gap_defer", "P2"),
        ("baseline_passed_not_current_treatment_priority", 1,
         "baseline_solved_control_candidate", "P2"),
        ("single_arm_recorded", 2, "single_arm_coverage_or_baseline_candidate", "P1"),
        ("single_arm_recorded", 1, "single_arm_coverage_or_baseline_candidate", "P2"),
        ("paired_treatment_regressed", 2, "needs_manual_classification", "P1"),
    ],
)  # fmt: skip
def test_classification_table(decision, runs, cls, prio):
    assert classify_decision(decision, runs) == (cls, prio)


def test_candidates_from_loopx_ledger(ledger):
    candidates = find_candidates(ledger, {"cases": []})
    decisions = [
        c["latest_decision"]["decision"]
        for b in ledger["benchmarks"].values()
        for c in b["cases"].values()
    ]
    assert len(candidates) == sum(1 for d in decisions if d not in ("", "no_runs_recorded"))
    order = [(c["promotion_priority"], c["candidate_class"], c["benchmark_id"], c["case_id"])
             for c in candidates]  # fmt: skip
    assert order == sorted(order)
    cobol = next(c for c in candidates if c["case_id"] == "cobol-modernization")
    assert cobol["candidate_class"] == "baseline_solved_non_regression_candidate"
    assert cobol["run_count"] == 2 and cobol["recent_run_ids"] == ["5d2bb1d5974a", "a14ad9487f8a"]
    assert cobol["raw_logs_recorded"] is False
    # Archived rows are not counted: 3d-scan-calc has 1 active of 13 runs.
    scan = next(c for c in candidates if c["case_id"] == "3d-scan-calc")
    assert scan["run_count"] == 1 and len(scan["recent_run_ids"]) == 1


def test_already_keyed_cases_are_skipped(ledger):
    analysis = {
        "cases": [{"benchmark_id": "terminal-bench@2.0", "case_id": "cobol-modernization"}],
        "terminal_bench_current_protocol_coverage": {"rows": [{"case_id": "build-cython-ext"}]},
    }
    keys = {(c["benchmark_id"], c["case_id"]) for c in find_candidates(ledger, analysis)}
    assert ("terminal-bench@2.0", "cobol-modernization") not in keys
    assert ("terminal-bench@2.0", "build-cython-ext") not in keys
    assert ("skillsbench@1.1", "3d-scan-calc") in keys


def test_proposal_only_accepts_nothing(ledger):
    report, updated = build_candidate_report(ledger, {"cases": []}, include_proposed_records=True)
    assert updated is None
    assert report["schema_version"] == "benchmark_case_analysis_candidate_report_v0"
    assert report["accepted_record_count"] == 0
    assert report["proposed_record_count"] == report["candidate_count"]
    first = report["proposed_records"][0]
    assert first["schema_version"] == "benchmark_case_analysis_upsert_proposal_v0"
    assert first["acceptance_policy"]["status"] == "proposal_only_not_applied"
    assert first["analysis_id"] == analysis_id(
        first["benchmark_id"], first["case_id"], first["candidate_class"]
    )


def test_generated_safe_apply(ledger):
    analysis = {"cases": [{"benchmark_id": "x", "case_id": "y"}]}
    report, updated = build_candidate_report(
        ledger, analysis, acceptance_policy="generated-safe", apply=True
    )
    accepted = [p for p in report["proposed_records"] if p["acceptance_policy"]["accepted"]]
    assert {p["candidate_class"] for p in accepted} <= {
        "paired_no_uplift_candidate",
        "baseline_solved_non_regression_candidate",
        "baseline_solved_control_candidate",
    }
    assert report["accepted_upsert"]["added_count"] == len(accepted) > 0
    assert report["accepted_upsert"]["skipped_count"] == len(report["proposed_records"]) - len(
        accepted
    )
    assert analysis == {"cases": [{"benchmark_id": "x", "case_id": "y"}]}  # input untouched
    added = updated["cases"][1:]
    assert all(c["evidence_status"] == "generated_from_compact_benchmark_run_ledger" for c in added)
    cobol = next(c for c in added if c["case_id"] == "cobol-modernization")
    assert cobol["classification"] == "generated_baseline_solved_non_regression_asset"
    manual = [p for p in report["proposed_records"] if not p["acceptance_policy"]["accepted"]]
    reasons = {r for p in manual for r in p["acceptance_policy"]["reason_codes"]}
    assert "candidate_class_requires_manual_review" in reasons


def test_paired_candidate_needs_two_runs():
    one_run = {
        "benchmarks": {
            "b": {"cases": {"c": {"latest_decision": {"decision": "paired_no_score_uplift"},
                                  "runs": [{"run_id": "r1"}]}}}
        }
    }  # fmt: skip
    report, _ = build_candidate_report(one_run, {}, acceptance_policy="generated-safe",
                                       include_proposed_records=True)  # fmt: skip
    verdict = report["proposed_records"][0]["acceptance_policy"]
    assert verdict["accepted"] is False
    assert verdict["reason_codes"] == ["paired_candidate_needs_two_runs"]


def test_proposal_limit(ledger):
    report, _ = build_candidate_report(ledger, {}, include_proposed_records=True, proposal_limit=2)
    assert report["proposed_record_count"] == 2
    assert report["candidate_count"] > 2


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ({"apply_accepted": True}, "--apply-accepted requires --acceptance-policy generated-safe"),
        ({"apply_accepted": True, "acceptance_policy": "generated-safe"},
         "--apply-accepted requires --output-case-analysis-path"),
    ],
)  # fmt: skip
def test_option_rules(opts, message):
    with pytest.raises(InputError) as err:
        validate_case_analysis_options(opts)
    assert err.value.message == message


def test_markdown(ledger):
    report, _ = build_candidate_report(ledger, {})
    text = render_candidates_markdown({"ok": True, "report": report})
    assert text.startswith("# Benchmark Case Analysis Candidates\n")
    assert (
        "| Priority | Class | Benchmark | Case | Decision | Runs | Recommended Handling |" in text
    )
    assert text.count("\n| P1 |") + text.count("\n| P2 |") == report["candidate_count"]
    analysis = {"cases": [{"benchmark_id": "b", "case_id": "c", "decision": "d",
                           "scores": {"baseline_official_score": 0.0}}]}  # fmt: skip
    old = "# Old\n\n## Treatment Policy Control Set\n\nhand-written\n"
    md = render_analysis_markdown(analysis, old)
    assert "| `0.0` |" in md
    assert md.endswith("## Treatment Policy Control Set\n\nhand-written\n")
