"""Every decision of the §7 latest_decision taxonomy, on small hand-made cases.

Rows carry only the fields the taxonomy reads (arm, scope, score, repair fields); their order in
the list is the §6.3 order the caller guarantees.
"""

from __future__ import annotations

import pytest

from benchledger.ledger.rules.row.case_decision import arm_role, latest_decision

_SUFFIXES = {
    "runner_setup_timeout": "setup_timeout_repair_required",
    "benchmark_environment_setup_contract": "environment_setup_repair_required",
    "runner_model_access": "model_access_repair_required",
    "runner_result_materialization": "result_materialization_repair_required",
    "runner_result_finalization": "result_finalization_repair_required",
    "skillsbench_codex_acp_runtime_preflight": "codex_acp_runtime_preflight_required",
    "skillsbench_codex_acp_post_success_finalization": (
        "codex_acp_post_success_finalization_required"
    ),
    "skillsbench_setup_preflight_selection": "setup_preflight_selection_required",
    "skillsbench_verifier_bootstrap_preflight_selection": (
        "verifier_bootstrap_preflight_selection_required"
    ),
    "skillsbench_task_source_preflight_selection": "task_source_preflight_selection_required",
    "skillsbench_task_source_excluded": "task_source_excluded_from_formal_scoring",
    "worker_verifier_alignment": "worker_verifier_alignment_required",
    "verifier_or_infra_repair": "verifier_or_infra_repair_required",
    "run_rerun_required": "rerun_required",
    "runner_or_setup_triage": "runner_or_setup_repair_required",
    "something_else": "runner_or_setup_repair_required",
}


def base(run_id: str = "b1", scope: str = "passed", score: float | None = 1.0, **kw) -> dict:
    return _make(run_id, "codex_goal_mode_baseline", scope, score, kw)


def treat(run_id: str = "t1", scope: str = "passed", score: float | None = 1.0, **kw) -> dict:
    return _make(run_id, "codex_loopx_treatment", scope, score, kw)


def _make(run_id: str, arm: str, scope: str, score: float | None, extra: dict) -> dict:
    row = {"run_id": run_id, "arm_id": arm, "failure_scope": scope, **extra}
    if score is not None:
        row["official_score"] = score
    return row


def repair(cls: str, priority: str = "P0", failure: str = "some_failure") -> dict:
    return {
        "repair_class": cls,
        "repair_priority": priority,
        "failure_class": failure,
        "next_action": "do the thing",
    }


def pair(b: dict, t: dict, delta: float | None) -> dict:
    return {
        "baseline_run_id": b["run_id"],
        "treatment_run_id": t["run_id"],
        "official_score_delta": delta,
        "baseline_failure_scope": b["failure_scope"],
        "treatment_failure_scope": t["failure_scope"],
    }


# --- no active rows ---------------------------------------------------------------------------


def test_archived_only() -> None:
    assert latest_decision([], archived_run_count=3) == {
        "decision": "archived_only",
        "archived_run_count": 3,
    }


def test_no_runs_recorded() -> None:
    assert latest_decision([]) == {"decision": "no_runs_recorded"}


# --- paired -----------------------------------------------------------------------------------


def _max5_pair(**treatment_changes) -> tuple[dict, dict]:
    """A product-mode pair that satisfies every main-table condition, then ``treatment_changes``."""
    blind = {
        "case_id": "c1",
        "benchmark_id": "skillsbench@1.1",
        "max_rounds_budget": 5,
        "official_feedback_blinded": True,
        "reward_feedback_forwarded": False,
        "best_round_reward": 1.0,
    }
    b = _make("b1", "raw_codex_autonomous_max5_baseline", "passed", 1.0, dict(blind))
    t = _make(
        "t1",
        "loopx_product_mode_treatment",
        "passed",
        1.0,
        {
            **blind,
            "loopx_inside_case": True,
            "product_mode_lifecycle_contract": {"satisfied": True},
            **treatment_changes,
        },
    )
    return b, t


def test_product_mode_pair_incomplete_names_every_blocker_in_order() -> None:
    b = base()
    t = treat(mode="skillsbench_loopx_product_mode_treatment")
    decision = latest_decision([b, t])
    assert decision["decision"] == "product_mode_pair_incomplete"
    assert decision["baseline_run_id"] == "b1" and decision["treatment_run_id"] == "t1"
    review = decision["product_mode_main_table_pair"]
    assert review["main_table_claim_allowed"] is False
    assert review["claim_blocker"].split(",") == [
        "case_id_mismatch_or_missing",
        "baseline_not_raw_codex_autonomous_max5",
        "baseline_official_feedback_not_blinded",
        "baseline_reward_feedback_forwarding_not_disabled",
        "baseline_compact_metrics_missing",
        "treatment_official_feedback_not_blinded",
        "treatment_reward_feedback_forwarding_not_disabled",
        "treatment_compact_metrics_missing",
        "treatment_loopx_inside_case_not_confirmed",
        "treatment_loopx_lifecycle_not_observed",
    ]
    assert review["baseline_route_valid"] is False and review["treatment_route_valid"] is True


@pytest.mark.parametrize(
    ("treatment_changes", "blocker"),
    [
        (
            {"product_mode_lifecycle_contract": {"satisfied": False}},
            "treatment_loopx_lifecycle_not_observed",
        ),
        (
            {"product_mode_lifecycle_contract": {"satisfied": True, "countable_treatment": False}},
            "treatment_loopx_lifecycle_not_observed",
        ),
        ({"official_feedback_blinded": False}, "treatment_official_feedback_not_blinded"),
        ({"reward_feedback_forwarded": True}, "treatment_reward_feedback_forwarding_not_disabled"),
        ({"max_rounds_budget": 3}, "treatment_max_rounds_below_5,max_rounds_budget_mismatch"),
        ({"loopx_inside_case": False}, "treatment_loopx_inside_case_not_confirmed"),
        ({"case_id": "c2"}, "case_id_mismatch_or_missing"),
    ],
)
def test_product_mode_claim_blockers(treatment_changes: dict, blocker: str) -> None:
    decision = latest_decision(list(_max5_pair(**treatment_changes)))
    assert decision["decision"] == "product_mode_pair_incomplete"
    assert decision["product_mode_main_table_pair"]["claim_blocker"] == blocker


def test_product_mode_pair_ready_keeps_the_ordinary_decision() -> None:
    decision = latest_decision(list(_max5_pair()))
    assert decision["decision"] == "paired_baseline_solved_treatment_preserved"
    review = decision["product_mode_main_table_pair"]
    assert review["main_table_claim_allowed"] is True and review["claim_blocker"] == "none"
    assert review["max_rounds_budget"] == 5


def test_paired_result_requires_attribution() -> None:
    b, t = base(scope="attribution_required", score=0.0), treat(scope="runner_or_setup", score=0.0)
    assert latest_decision([b, t]) == {
        "decision": "paired_result_requires_attribution",
        **pair(b, t, 0.0),
    }


def test_paired_result_blocked_by_verifier_or_infra() -> None:
    b, t = base(scope="runner_or_setup", score=None), treat(scope="verifier_or_infra", score=None)
    assert latest_decision([b, t]) == {
        "decision": "paired_result_blocked_by_verifier_or_infra",
        **pair(b, t, None),
    }


@pytest.mark.parametrize(("repair_class", "suffix"), sorted(_SUFFIXES.items()))
def test_paired_baseline_repair(repair_class: str, suffix: str) -> None:
    b = base(scope="runner_or_setup", score=0.0, **repair(repair_class))
    t = treat(scope="score_missing", score=None, **repair("runner_result_materialization"))
    assert latest_decision([b, t]) == {
        "decision": f"paired_baseline_{suffix}",
        **pair(b, t, None),
        **repair(repair_class),
    }


@pytest.mark.parametrize(("repair_class", "suffix"), sorted(_SUFFIXES.items()))
def test_paired_treatment_repair(repair_class: str, suffix: str) -> None:
    b = base(scope="case_or_solution", score=0.0)
    t = treat(scope="score_missing", score=None, **repair(repair_class))
    assert latest_decision([b, t]) == {
        "decision": f"paired_treatment_{suffix}",
        **pair(b, t, None),
        **repair(repair_class),
    }


def test_paired_repair_without_route_uses_generic_suffix_and_omits_empty_fields() -> None:
    b = base(scope="score_missing", score=None, failure_class="skillsbench_runner_error")
    t = treat()
    assert latest_decision([b, t]) == {
        "decision": "paired_baseline_runner_or_setup_repair_required",
        **pair(b, t, None),
        "failure_class": "skillsbench_runner_error",
    }


def test_paired_result_needs_score_review() -> None:
    b, t = base(scope="case_or_solution", score=None), treat(scope="case_or_solution", score=0.5)
    assert latest_decision([b, t]) == {
        "decision": "paired_result_needs_score_review",
        **pair(b, t, None),
    }


def test_paired_treatment_improved() -> None:
    b, t = base(scope="case_or_solution", score=0.25), treat(scope="passed", score=1.0)
    assert latest_decision([b, t]) == {"decision": "paired_treatment_improved", **pair(b, t, 0.75)}


def test_paired_treatment_regressed() -> None:
    b, t = base(scope="passed", score=1.0), treat(scope="case_or_solution", score=0.0)
    assert latest_decision([b, t]) == {
        "decision": "paired_treatment_regressed",
        **pair(b, t, -1.0),
    }


@pytest.mark.parametrize(
    ("repair_class", "decision"),
    [
        ("case_timeout_research", "paired_no_score_uplift_timeout_research_required"),
        ("case_exception_research", "paired_no_score_uplift_exception_research_required"),
        ("other_case_research", "paired_no_score_uplift_case_research_required"),
    ],
)
def test_paired_no_uplift_research(repair_class: str, decision: str) -> None:
    b = base(scope="case_or_solution", score=0.0)
    t = treat(scope="case_or_solution", score=0.0, **repair(repair_class, "P1"))
    result = latest_decision([b, t])
    assert {k: v for k, v in result.items() if k != "case_routing"} == {
        "decision": decision,
        **pair(b, t, 0.0),
        **repair(repair_class, "P1"),
    }


def test_paired_no_uplift_research_falls_back_to_the_baseline_route() -> None:
    b = base(scope="case_or_solution", score=0.0, **repair("case_timeout_research", "P1"))
    t = treat(scope="case_or_solution", score=0.0)
    result = latest_decision([b, t])
    assert result["decision"] == "paired_no_score_uplift_timeout_research_required"
    assert result["repair_class"] == "case_timeout_research"


def test_paired_baseline_solved_treatment_preserved() -> None:
    b, t = base(), treat()
    assert latest_decision([b, t]) == {
        "decision": "paired_baseline_solved_treatment_preserved",
        **pair(b, t, 0.0),
    }


def test_paired_no_score_uplift() -> None:
    b, t = base(scope="case_or_solution", score=0.0), treat(scope="case_or_solution", score=0.0)
    assert latest_decision([b, t]) == {"decision": "paired_no_score_uplift", **pair(b, t, 0.0)}


def test_only_the_latest_of_each_arm_counts() -> None:
    old_failure = base("b0", scope="runner_or_setup", score=0.0, **repair("runner_setup_timeout"))
    rows = [old_failure, treat("t0", scope="case_or_solution", score=0.0), base(), treat()]
    assert latest_decision(rows)["decision"] == "paired_baseline_solved_treatment_preserved"


# --- baseline only ----------------------------------------------------------------------------


def test_baseline_passed() -> None:
    assert latest_decision([base(official_passed=True)]) == {
        "decision": "baseline_passed_not_current_treatment_priority",
        "baseline_run_id": "b1",
        "failure_scope": "passed",
    }


def test_baseline_failed_requires_attribution() -> None:
    b = base(scope="attribution_required", score=0.0, **repair("verifier_attribution_required"))
    assert latest_decision([b]) == {
        "decision": "baseline_failed_requires_attribution",
        "baseline_run_id": "b1",
        "failure_scope": "attribution_required",
        **repair("verifier_attribution_required"),
    }


def test_baseline_failed_treatment_candidate_without_route() -> None:
    b = base(
        scope="case_or_solution", score=0.0, failure_class="official_verifier_solution_failure"
    )
    assert latest_decision([b]) == {
        "decision": "baseline_failed_treatment_candidate",
        "baseline_run_id": "b1",
        "failure_scope": "case_or_solution",
    }


def test_baseline_failed_treatment_candidate_with_route() -> None:
    """The route comes from the failure class (as loopx recomputes it), with the row's own
    next action when the row carries that same route."""
    failure = "agent_exception_before_solution_completion"
    b = base(
        scope="case_or_solution", score=0.0, **repair("case_exception_research", "P1", failure)
    )
    result = latest_decision([b])
    assert {k: v for k, v in result.items() if k != "case_routing"} == {
        "decision": "baseline_failed_treatment_candidate",
        "baseline_run_id": "b1",
        "failure_scope": "case_or_solution",
        **repair("case_exception_research", "P1", failure),
    }


def test_baseline_scope_passed_without_official_pass_is_not_a_pass() -> None:
    """loopx reads a baseline pass from ``official_passed`` alone."""
    assert latest_decision([base()])["decision"] == "baseline_runner_or_setup_repair_required"


@pytest.mark.parametrize(("repair_class", "suffix"), sorted(_SUFFIXES.items()))
def test_baseline_repair(repair_class: str, suffix: str) -> None:
    b = base(scope="runner_or_setup", score=0.0, **repair(repair_class))
    assert latest_decision([b]) == {
        "decision": f"baseline_{suffix}",
        "baseline_run_id": "b1",
        "failure_scope": "runner_or_setup",
        **repair(repair_class),
    }


# --- single arm -------------------------------------------------------------------------------


def test_single_arm_treatment_only() -> None:
    rows = [treat("t0"), {"run_id": "o1", "arm_id": "loopx_managed_codex"}]
    assert latest_decision(rows) == {"decision": "single_arm_recorded", "latest_run_id": "o1"}


def test_single_arm_other_arms_only() -> None:
    rows = [{"run_id": "o1", "arm_id": "oracle"}, {"run_id": "o2", "arm_id": "harbor_observed"}]
    assert latest_decision(rows) == {"decision": "single_arm_recorded", "latest_run_id": "o2"}


# --- case routing -----------------------------------------------------------------------------


def test_case_routing_exception_research_wins() -> None:
    rows = [
        base(scope="case_or_solution", score=0.0, **repair("case_timeout_research", "P1")),
        treat(scope="case_or_solution", score=0.0, **repair("case_exception_research", "P1")),
    ]
    assert latest_decision(rows)["case_routing"] == {
        "class": "case_exception_research",
        "priority": "P1",
        "evidence": "case_exception_research_count=1",
        "next_action": "inspect compact exception attribution and form a case-level "
        "intervention hypothesis before rerunning this case",
    }


@pytest.mark.parametrize(
    ("count", "kind"), [(1, "case_timeout_research"), (3, "timeout_tier_policy_candidate")]
)
def test_case_routing_timeouts(count: int, kind: str) -> None:
    rows = [
        base(f"b{i}", scope="case_or_solution", score=0.0, **repair("case_timeout_research", "P1"))
        for i in range(count)
    ]
    routing = latest_decision(rows)["case_routing"]
    assert routing["class"] == kind
    assert routing["evidence"] == f"case_timeout_research_count={count}"
    assert routing["priority"] == "P1" and routing["next_action"]


def test_case_routing_bridge_connected_needs_zero_delta() -> None:
    bridged = {"failure_labels": ["worker_bridge_connected_official_score_failure"]}
    rows = [
        base(scope="case_or_solution", score=0.0),
        treat(
            "t0",
            scope="runner_or_setup",
            score=0.0,
            failure_class="worker_bridge_connected_official_score_failure",
        ),
        treat(scope="case_or_solution", score=0.0, **bridged),
    ]
    routing = latest_decision(rows)["case_routing"]
    assert routing["class"] == "bridge_connected_no_uplift"
    assert routing["evidence"] == (
        "worker_bridge_connected_official_score_failure_runs=2; official_score_delta=0"
    )
    improved = rows[:2] + [treat(scope="passed", score=1.0, **bridged)]
    assert "case_routing" not in latest_decision(improved)


# --- arm roles --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "role"),
    [
        ({"arm_id": "codex-app-server-goal-baseline"}, "baseline"),
        ({"arm_id": "swe_marathon_loopx_prompt_polling_treatment_10800"}, "treatment"),
        ({"arm_id": "loopx-managed-codex"}, "other"),
        ({"arm_id": "x", "route": "raw-codex-autonomous-max5"}, "baseline"),
        (
            {"arm_id": "x", "benchmark_loop_contract": {"protocol_id": "loopx-product-mode"}},
            "treatment",
        ),
        ({"arm_id": "codex_goal_mode_baseline", "arm_role": "treatment"}, "treatment"),
        ({}, "other"),
    ],
)
def test_arm_role(row: dict, role: str) -> None:
    assert arm_role(row) == role
