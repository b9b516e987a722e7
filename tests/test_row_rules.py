"""Row derivation rules (docs/formats/ledger_v0.md §4-§5, §6.4), table-driven from the spec."""

from __future__ import annotations

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.record.rounds import round_fields
from benchledger.ledger.rules.row.build import RULES_VERSION, build_row, normalize_row
from benchledger.ledger.rules.row.countability import countability
from benchledger.ledger.rules.row.failure_class import derive_failure_class, derive_failure_scope
from benchledger.ledger.rules.row.identity import (
    HISTORICAL_ARM,
    derive_case_ids,
    parse_terminal_bench_case,
)
from benchledger.ledger.rules.row.refs import check_relative_ref, history_ref_for, public_ref
from benchledger.ledger.rules.row.repair import repair_fields
from benchledger.ledger.rules.row.scoring import (
    derive_score,
    derive_score_status,
    derive_status,
    is_terminal,
)
from tests.support_ledger_rules import NOW, bare_record, fixture_rows, load_fixture_ledger, record

# ---------------------------------------------------------------------------------------------
# §5.2 case ids
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"case_id": "a", "case_ids": ["b", "a", "c"]}, ["a", "b", "c"]),
        ({"case_ids": ["b", "b"]}, ["b"]),
        ({"trials": [{"task_id": "t1"}, {"task_id": "t2"}, {"task_id": "t1"}]}, ["t1", "t2"]),
        (
            {"job_name": "terminal_bench_04_hello_world_hardened_codex_baseline"},
            ["hello-world"],
        ),
        ({"job_name": "my-job"}, ["my-job"]),
        ({}, ["unknown-case"]),
    ],
)
def test_case_ids_first_non_empty_source(fields: dict, expected: list[str]) -> None:
    assert derive_case_ids(bare_record(**fields), "x@1") == expected


@pytest.mark.parametrize(
    ("job", "benchmark", "expected"),
    [
        ("terminal_bench_04_hello_world_hardened_codex_baseline", "x", "hello-world"),
        (
            "terminal_bench_2_0_build_cython_ext_codex_goal_mode_baseline_real",
            "x",
            "build-cython-ext",
        ),
        ("terminal_bench_make_doom_for_mips_codex_loopx_treatment", "x", "make-doom-for-mips"),
        ("fix_git_treatment", "terminal-bench@2.0", "fix-git"),
        ("fix_git_treatment", "skillsbench@1.1", None),
        ("terminal_bench_baseline", "x", None),  # marker at position 0 is not a case
    ],
)
def test_terminal_bench_job_name_parse(job: str, benchmark: str, expected: str | None) -> None:
    assert parse_terminal_bench_case(job, benchmark) == expected


# ---------------------------------------------------------------------------------------------
# §5.3-5.4 arm and role
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "arm"),
    [
        ({"route": "loopx-blind-loop-treatment"}, HISTORICAL_ARM),
        ({"mode": "skillsbench_loopx_blind_loop_treatment"}, HISTORICAL_ARM),
        ({"mode": "x", "historical_route_read_only": True}, HISTORICAL_ARM),
        ({"mode": "skillsbench_codex_app_server_goal_baseline"}, "codex_app_server_goal_baseline"),
        ({"mode": "codex_goal_mode_baseline"}, "codex_goal_mode_baseline"),
        ({"mode": "hardened-codex"}, "hardened_codex_baseline"),
        ({"mode": "skillsbench_loopx_automation_loop_x"}, "loopx_automation_loop_treatment"),
        ({"mode": "with_curated_skills"}, "curated_skills_baseline"),
        ({"mode": "skillsbench_no_skills_baseline"}, "no_skills_baseline"),
        ({"mode": "codex_loopx"}, "codex_loopx_treatment"),
        (
            {"job_name": "a_hardened_codex_baseline_codex_loopx_treatment"},
            "hardened_codex_baseline",
        ),
        ({"job_name": "tb2_fix_baseline"}, "baseline"),
        ({"job_name": "tb2_treatment_run"}, "treatment"),
        ({"mode": "bare_codex_cli", "job_name": "j"}, "bare_codex_cli"),
        ({"job_name": "j"}, "unknown_arm"),
    ],
)
def test_arm_inference_table(fields: dict, arm: str) -> None:
    row, _ = build_row(bare_record(benchmark_id="b", case_id="c", **fields), now=NOW)
    assert row["arm_id"] == arm
    assert row["arm_source"] == ("unknown" if arm == "unknown_arm" else "inferred")


@pytest.mark.parametrize("explicit", ["baseline", "treatment", "my-arm"])
def test_explicit_arm_is_always_kept(explicit: str) -> None:
    rec = bare_record(case_id="c", mode="codex_goal_mode_baseline", arm_id="adapter-arm")
    row, warnings = build_row(rec, arm_id=explicit, now=NOW)
    assert (row["arm_id"], row["arm_source"], warnings) == (explicit, "explicit", [])
    # re-reading never rewrites an explicit arm (gotcha #3)
    assert normalize_row(row)["arm_id"] == explicit


def test_explicit_arm_on_historical_route_keeps_arm_role_other() -> None:
    rec = bare_record(case_id="c", mode="skillsbench_loopx_blind_loop_treatment")
    row, warnings = build_row(rec, arm_id="treatment", now=NOW)
    assert row["arm_id"] == "treatment"
    assert row["arm_role"] == "other"
    assert warnings == ["explicit_arm_on_historical_route"] == row["warnings"]


def test_adapter_arm_wins_over_inference() -> None:
    row, _ = build_row(bare_record(case_id="c", arm_id="a1", mode="codex_loopx"), now=NOW)
    assert (row["arm_id"], row["arm_source"]) == ("a1", "adapter")


@pytest.mark.parametrize(
    ("fields", "explicit_role", "role"),
    [
        ({"arm_id": "x_baseline"}, None, "baseline"),
        ({"arm_id": "x_treatment"}, None, "treatment"),
        ({"arm_id": "x", "arm_role": "treatment"}, None, "treatment"),
        ({"arm_id": "x_baseline"}, "treatment", "treatment"),
        ({"arm_id": "x", "route": "raw-codex-autonomous-max5"}, None, "baseline"),
        (
            {"arm_id": "x", "benchmark_loop_contract": {"protocol_id": "loopx-product-mode"}},
            None,
            "treatment",
        ),
        ({"arm_id": "x"}, None, "other"),
    ],
)
def test_arm_role(fields: dict, explicit_role: str | None, role: str) -> None:
    row, _ = build_row(bare_record(case_id="c", **fields), arm_role=explicit_role, now=NOW)
    assert row["arm_role"] == role


# ---------------------------------------------------------------------------------------------
# §5.6-5.8 score, score status, status
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"official_task_score": {"value": 0.5, "passed": True}}, (0.5, True, False)),
        ({"official_task_score": {"value": 1}}, (1, True, False)),
        ({"official_score": 0.25}, (0.25, False, False)),
        # bool-only fallback, allowed
        ({"official_task_score": {"passed": True}}, (1.0, True, True)),
        ({"official_task_score": {"passed": False}}, (0.0, False, True)),
        # numeric strings count as numeric: no fallback candidate
        ({"official_task_score": {"passed": True}, "official_score": "0.5"}, (0.5, False, False)),
        # (a) the official-score attempt did not count
        (
            {"official_task_score": {"passed": True}, "official_score_attempt_countable": False},
            (None, None, False),
        ),
        (
            {
                "official_task_score": {"passed": True},
                "attempt_accounting": {"official_score_attempt_countable": False},
            },
            (None, None, False),
        ),
        # (b) post-success finalization label
        (
            {
                "official_task_score": {"passed": True},
                "failure_attribution_labels": ["skillsbench_codex_acp_post_success_finalization"],
            },
            (None, None, False),
        ),
        # (c) missing status + transport label + observed round success
        (
            {
                "official_task_score": {"passed": True},
                "official_score_status": "missing",
                "first_blocker": "acp_jsonrpc_closed",
                "round_reward_trace": {"success_observed": True},
            },
            (None, None, False),
        ),
        ({"official_passed": True}, (None, None, False)),  # not a candidate on its own
        ({}, (None, None, False)),
    ],
)
def test_score_and_guarded_bool_fallback(fields: dict, expected: tuple) -> None:
    assert derive_score(bare_record(**fields)) == expected


def test_stored_fallback_row_is_a_candidate_and_is_rechecked() -> None:
    stored = {
        "official_score_bool_fallback_used": True,
        "official_passed": True,
        "official_score": 1.0,
        "score_status": "passed",
        "status": "completed",
        "failure_scope": "passed",
    }
    assert countability(stored, status="completed", scope="passed")[:2] == (
        True,
        "countable_official_score",
    )
    blocked = {**stored, "official_score_attempt_countable": False}
    assert countability(blocked, status="completed", scope="passed")[:2] == (
        False,
        "official_score_bool_fallback_not_allowed",
    )


@pytest.mark.parametrize(
    ("status_in", "score", "passed", "expected"),
    [
        (None, None, None, "missing"),
        (None, 1.0, True, "passed"),
        ("completed", 0.0, False, "failed"),
        ("error", 0.0, False, "error"),
        ("provisional", 0.5, False, "provisional"),
        ("missing", 1.0, True, "passed"),
        ("missing", None, None, "missing"),
    ],
)
def test_score_status(status_in: str | None, score, passed, expected: str) -> None:
    rec = bare_record(official_score_status=status_in) if status_in else bare_record()
    assert derive_score_status(rec, score, passed, post_launch=False) == expected


def test_score_status_post_launch_is_missing() -> None:
    assert derive_score_status(bare_record(), 1.0, True, post_launch=True) == "missing"


@pytest.mark.parametrize(
    ("fields", "score", "expected"),
    [
        ({"run_status": "planned"}, None, "planned"),
        ({"run_status": "fixture"}, None, "fixture"),
        ({"run_status": "cancelled"}, 1.0, "cancelled"),
        ({"run_status": "corrupt"}, None, "corrupt"),
        ({"progress": {"n_running_trials": 2}}, 1.0, "running"),
        ({}, 0.0, "completed"),
        ({"runner_return_status": "failed"}, None, "completed"),
        ({"run_status": "completed"}, None, "recorded"),
    ],
)
def test_status(fields: dict, score, expected: str) -> None:
    assert derive_status(bare_record(**fields), score, post_launch=False) == expected


@pytest.mark.parametrize("status", ["planned", "fixture", "running"])
def test_non_terminal_rows(status: str) -> None:
    row, _ = build_row(bare_record(case_id="c", run_status=status), now=NOW)
    assert row["status"] == status
    assert not is_terminal(row)


def test_post_launch_status_and_class() -> None:
    post = {
        "schema_version": "terminal_bench_post_launch_materialization_v0",
        "job_name": "terminal_bench_multi_source_data_merger_codex_goal_mode_baseline_x",
        "ready_for_compact_failure_marker": True,
        "compact_failure_marker": {
            "failure_class": "stale_active_job_without_trial_result",
            "evidence_kind": "compact_stale_active_job_reconciliation",
            "terminal_closeout": True,
        },
    }
    row, _ = build_row(post, now=NOW)
    assert row["benchmark_id"] == "terminal-bench@2.0"
    assert row["case_id"] == "multi-source-data-merger"
    assert (row["status"], row["score_status"]) == ("blocked", "missing")
    assert row["failure_class"] == "stale_active_job_without_trial_result"
    assert row["repair_class"] == "runner_result_finalization"
    assert row["compact_failure_evidence_kind"] == "compact_stale_active_job_reconciliation"
    assert row["terminal_closeout"] is True


# ---------------------------------------------------------------------------------------------
# §5.9-5.10 failure class and scope
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "status", "score", "expected"),
    [
        ({}, "incomplete", None, "run_incomplete"),
        ({}, "not_started", None, "run_not_started"),
        ({}, "completed", 0.5, "none"),
        (
            {
                "mode": "skillsbench_codex_app_server_goal_baseline",
                "compose_setup_diagnostic": {"status": "compose_setup_blocked_before_agent_rounds"},
            },
            "recorded",
            None,
            "skillsbench_compose_setup_blocked_before_agent_rounds",
        ),
        (
            {"worker_setup_diagnostic_blockers": ["none", "codex_cli_not_on_path"]},
            "completed",
            0,
            "codex_cli_not_on_path",
        ),
        (
            {
                "failure_attribution_labels": [
                    "official_verifier_solution_failure",
                    "worker_bridge_connected_official_score_failure",
                ],
                "worker_bridge_materialization_status": "verified",
            },
            "completed",
            0,
            "official_verifier_solution_failure",
        ),
        (
            {
                "failure_attribution_labels": [
                    "x",
                    "agent_timeout_before_solution_completion",
                    "environment_setup_failed_before_worker",
                ]
            },
            "completed",
            0,
            "environment_setup_failed_before_worker",
        ),
        ({"score_failure_attribution": "my_free_class"}, "completed", 0, "my_free_class"),
        (
            {"trials": [{"exception_type": "AgentSetupTimeoutError"}]},
            "completed",
            0,
            "agent_setup_timeout_before_worker_start",
        ),
        (
            {"trials": [{"exception_type": "AgentSetupError"}]},
            "completed",
            0,
            "agent_setup_exception_before_solution_attempt",
        ),
        (
            {"trials": [{"exception_type": "AgentTimeoutError"}]},
            "completed",
            0,
            "agent_timeout_before_solution_completion",
        ),
        (
            {"trials": [{"exception_type": "RuntimeError"}]},
            "completed",
            0,
            "agent_exception_before_solution_completion",
        ),
        ({"first_blocker": "harbor_not_installed"}, "recorded", None, "harbor_not_installed"),
        ({}, "completed", 0, "score_failure_unattributed"),
        ({}, "recorded", None, "score_missing"),
    ],
)
def test_failure_class_order(fields: dict, status: str, score, expected: str) -> None:
    got = derive_failure_class(bare_record(**fields), status=status, score=score, post_launch=False)
    assert got == expected


@pytest.mark.parametrize(
    ("cls", "passed", "has_score", "scope"),
    [
        ("none", True, True, "passed"),
        ("not_applicable_worker_materialization_probe", False, False, "startup_surface"),
        ("run_cancelled", False, True, "runner_or_setup"),
        ("verifier_timeout", False, False, "verifier_or_infra"),
        ("skillsbench_docker_daemon_unavailable", False, False, "runner_or_setup"),
        ("codex_model_access_unsupported_for_account", False, False, "runner_or_setup"),
        ("something_odd", False, False, "score_missing"),
        ("score_failure_unattributed", False, True, "attribution_required"),
        ("agent_idle_timeout_before_solution_completion", False, True, "case_or_solution"),
        ("none", False, True, "case_or_solution"),
        ("verifier_parse_error", False, True, "verifier_or_infra"),
        ("codex_cli_not_on_path", False, True, "runner_or_setup"),
    ],
)
def test_failure_scope(cls: str, passed: bool, has_score: bool, scope: str) -> None:
    assert derive_failure_scope(cls, passed=passed, has_score=has_score) == scope


# ---------------------------------------------------------------------------------------------
# §5.11 countability
# ---------------------------------------------------------------------------------------------

_SCORED = {"official_score": 0.5, "official_score_status": "completed", "official_passed": False}


@pytest.mark.parametrize(
    ("fields", "status", "scope", "expected"),
    [
        (_SCORED, "cancelled", "runner_or_setup", (False, "run_not_completed")),
        ({}, "completed", "score_missing", (False, "score_missing")),
        (
            {**_SCORED, "official_task_score": {"kind": "skillsbench_verifier_reward_missing"}},
            "completed",
            "case_or_solution",
            (False, "official_score_attempt_not_countable"),
        ),
        (
            {**_SCORED, "official_score_attempt_countable": False},
            "completed",
            "case_or_solution",
            (False, "official_score_attempt_not_countable"),
        ),
        (
            {
                **_SCORED,
                "attempt_lifecycle_phase": "runner_accepted_args",
                "failure_class": "runner_x",
            },
            "completed",
            "runner_or_setup",
            (False, "official_score_attempt_not_countable"),
        ),
        (
            _SCORED,
            "completed",
            "verifier_or_infra",
            (False, "official_score_attempt_not_countable"),
        ),
        (
            {
                **_SCORED,
                "official_score_attempt_countable": True,
                "attempt_lifecycle_phase": "verifier_scored",
            },
            "completed",
            "verifier_or_infra",
            (True, "countable_official_score"),
        ),
        (
            {**_SCORED, "official_score_status": "provisional"},
            "completed",
            "case_or_solution",
            (False, "official_score_status_not_countable"),
        ),
        (
            {**_SCORED, "failure_labels": ["x_uncountable_y"]},
            "completed",
            "case_or_solution",
            (False, "uncountable_attribution"),
        ),
        (
            {
                "official_score": 1.0,
                "official_score_status": "completed",
                "official_passed": True,
                "official_score_attempt_countable": False,
                "solution_quality_signals": {
                    "worker_activity": {"task_facing_activity_observed": True}
                },
            },
            "completed",
            "passed",
            (True, "countable_completed_task_attempt_pass"),
        ),
        (
            {
                **_SCORED,
                "score_aggregation": {"scored_attempt_count": 2, "unscored_attempt_count": 1},
            },
            "completed",
            "case_or_solution",
            (True, "countable_partial_attempt_coverage"),
        ),
        (_SCORED, "recorded", "case_or_solution", (True, "countable_official_score")),
    ],
)
def test_countability_checks_in_order(
    fields: dict, status: str, scope: str, expected: tuple
) -> None:
    assert countability(fields, status=status, scope=scope)[:2] == expected


# ---------------------------------------------------------------------------------------------
# §5.12 repair route
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "scope", "extra", "priority", "repair_class"),
    [
        ("codex_cli_not_on_path", "runner_or_setup", {}, "P0", "runner_codex_cli_materialization"),
        (
            "worker_install_failed_x",
            "runner_or_setup",
            {},
            "P0",
            "runner_codex_cli_materialization",
        ),
        (
            "environment_setup_failed_before_worker",
            "runner_or_setup",
            {},
            "P0",
            "benchmark_environment_setup_contract",
        ),
        (
            "agent_setup_exception_before_solution_attempt",
            "runner_or_setup",
            {},
            "P0",
            "runner_setup_timeout",
        ),
        (
            "model_provider_failure_before_solution_attempt",
            "runner_or_setup",
            {},
            "P0",
            "runner_model_access",
        ),
        (
            "skillsbench_codex_acp_jsonrpc_internal_error",
            "score_missing",
            {"codex_acp_runtime_preflight_passed": True, "round_success_observed": True},
            "P0",
            "skillsbench_codex_acp_post_success_finalization",
        ),
        (
            "skillsbench_codex_acp_launch_failed",
            "score_missing",
            {},
            "P0",
            "skillsbench_codex_acp_runtime_preflight",
        ),
        (
            "skillsbench_docker_apt_setup_risk_preflight_blocked",
            "runner_or_setup",
            {},
            "P1",
            "skillsbench_setup_preflight_selection",
        ),
        (
            "skillsbench_verifier_bootstrap_risk_preflight_blocked",
            "runner_or_setup",
            {},
            "P1",
            "skillsbench_verifier_bootstrap_preflight_selection",
        ),
        (
            "skillsbench_runner_setup_blocked_before_agent_rounds",
            "runner_or_setup",
            {"score_failure_attribution": "skillsbench_task_source_preflight_blocked"},
            "P1",
            "skillsbench_task_source_preflight_selection",
        ),
        (
            "skillsbench_task_source_excluded",
            "runner_or_setup",
            {},
            "P1",
            "skillsbench_task_source_excluded",
        ),
        ("run_result_corrupt", "runner_or_setup", {}, "P0", "runner_result_materialization"),
        ("score_missing", "score_missing", {}, "P0", "runner_result_materialization"),
        (
            "detached_worker_ended_without_trial_result",
            "runner_or_setup",
            {},
            "P0",
            "runner_result_finalization",
        ),
        (
            "score_failure_unattributed",
            "attribution_required",
            {},
            "P0",
            "verifier_attribution_required",
        ),
        (
            "worker_bridge_connected_official_score_failure",
            "runner_or_setup",
            {},
            "P0",
            "worker_verifier_alignment",
        ),
        ("verifier_timeout", "verifier_or_infra", {}, "P0", "verifier_or_infra_repair"),
        (
            "agent_idle_timeout_before_solution_completion",
            "case_or_solution",
            {},
            "P1",
            "case_timeout_research",
        ),
        ("agent_refused_task", "case_or_solution", {}, "P1", "case_exception_research"),
        ("run_cancelled", "runner_or_setup", {}, "P1", "run_rerun_required"),
        ("skillsbench_runner_error", "runner_or_setup", {}, "P1", "runner_or_setup_triage"),
        ("official_verifier_solution_failure", "case_or_solution", {}, "", ""),
        ("none", "passed", {}, "", ""),
    ],
)
def test_repair_route_table(
    cls: str, scope: str, extra: dict, priority: str, repair_class: str
) -> None:
    fields = repair_fields(cls, scope, {"mode": "codex_loopx", **extra})
    assert (fields.get("repair_priority", ""), fields.get("repair_class", "")) == (
        priority,
        repair_class,
    )
    if repair_class:
        assert 0 < len(fields["next_action"]) <= 220


def test_loopx_profiles_only_for_codex_or_loopx_modes() -> None:
    loopx = repair_fields(
        "agent_setup_timeout_before_worker_start",
        "runner_or_setup",
        {"mode": "codex_goal_mode_baseline"},
    )
    other = repair_fields(
        "agent_setup_timeout_before_worker_start", "runner_or_setup", {"mode": "terminus"}
    )
    assert (
        loopx["repair_profile"]["required_launch_overrides"]["agent_setup_timeout_multiplier"] == 8
    )
    assert "repair_profile" not in other
    assert other["repair_class"] == "runner_setup_timeout"
    # the environment-setup profile is not loopx-specific
    env = repair_fields(
        "environment_setup_failed_before_worker", "runner_or_setup", {"mode": "terminus"}
    )
    assert env["repair_profile"]["schema_version"] == "benchmark_repair_profile_v0"


@pytest.mark.parametrize(
    ("blocked", "recommended"),
    [("gpt-4o", "gpt-5.5"), ("gpt-5.5", "current_local_codex_config_model_after_probe")],
)
def test_model_access_profile(blocked: str, recommended: str) -> None:
    fields = repair_fields(
        "codex_model_access_unsupported_for_account",
        "runner_or_setup",
        {"mode": "codex_goal_mode_baseline", "agent_model": blocked},
    )
    profile = fields["repair_profile"]
    assert (profile["blocked_model_route"], profile["recommended_model_route"]) == (
        blocked,
        recommended,
    )


# ---------------------------------------------------------------------------------------------
# §5.14 rounds
# ---------------------------------------------------------------------------------------------


def test_round_rewards_spec_example() -> None:
    trace = {
        "records": [
            {"agent_round": 1, "reward": 0, "reward_present": True},
            {"agent_round": 2, "reward": 1, "reward_present": True},
            {"agent_round": 3, "reward": 0.5, "reward_present": True},
            {"agent_round": 3, "reward": 0.9},  # repeated round skipped
            {"agent_round": 0, "reward": 1},  # bad round skipped
        ]
    }
    fields = round_fields({"round_reward_trace": trace})
    assert [r["agent_round"] for r in fields["round_rewards"]] == [1, 2, 3]
    assert all(isinstance(r["reward"], float) for r in fields["round_rewards"])
    assert fields["round_reward_count"] == 3
    assert fields["first_success_round"] == 2
    assert fields["round_success_observed"] is True
    assert (fields["best_reward_round"], fields["best_round_reward"]) == (2, 1.0)
    assert (fields["final_round"], fields["final_round_reward"]) == (3, 0.5)
    assert fields["best_round_is_final"] is False
    assert fields["best_round_passed"] is True and fields["final_round_passed"] is False
    assert fields["loop_score_policy"] == "best_round_for_offline_controller_analysis"
    assert fields["official_score_policy"] == "final_workspace_official_result"
    assert fields["agent_declared_done"] is False


def test_round_first_success_and_trace_values_win() -> None:
    trace = {
        "records": [
            {"agent_round": 1, "reward": 0.0},
            {"agent_round": 2, "reward": 1.0, "passed": True},
        ],
        "final_round": 5,
        "max_rounds_budget": 8,
        "agent_declared_done": True,
    }
    fields = round_fields({"round_reward_trace": trace})
    assert fields["first_success_round"] == 2
    assert fields["round_success_observed"] is True
    assert fields["final_round"] == 5
    assert fields["max_rounds_budget"] == 8
    assert fields["agent_declared_done"] is True


# ---------------------------------------------------------------------------------------------
# §5.13 refs, §5.15 run_id, §4 safety and §5.16 times
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("runs/job/benchmark_run.compact.json", "runs/job/benchmark_run.compact.json"),
        ("./runs/result.json", "runs/result.json"),
        ("/srv/bench/runs/result.json", None),
        ("../outside/result.json", None),
        ("runs/.hidden/result.json", None),
        ("runs/tmp/result.json", None),
        ("Private/result.json", None),
        ("runs/logs/x.json", None),
        ("runs/trajectory.json", None),
        ("runs/task.md", None),
        ("runs/x.local.json", None),
        ("runs/x.private.json", None),
        ("C:/runs/x.json", None),
        ("~/runs/x.json", None),
    ],
)
def test_relative_ref_policy(ref: str, expected: str | None) -> None:
    assert check_relative_ref(ref) == expected


def test_refs_relative_to_root(tmp_path) -> None:
    inside = tmp_path / "jobs" / "run" / "result.json"
    assert public_ref(str(inside), root=tmp_path) == "jobs/run/result.json"
    assert public_ref("jobs/run/result.json", root=tmp_path) == "jobs/run/result.json"
    assert public_ref(str(tmp_path.parent / "elsewhere.json"), root=tmp_path) is None


def test_history_ref_from_any_spelling() -> None:
    assert history_ref_for("goals/g/runs/2026.json") == "goals/g/runs/2026.json"
    assert (
        history_ref_for("/home/u/.benchledger/goals/g/runs/2026.json") == "goals/g/runs/2026.json"
    )
    assert history_ref_for("somewhere/else.json") is None


def test_run_id_is_stable_and_ignores_paths_times_notes(tmp_path) -> None:
    rec = record(run_key=None)
    first, _ = build_row(rec, now=NOW, compact_artifact_ref="a/b.compact.json", notes="one")
    second, _ = build_row(
        rec,
        now="2027-01-01T00:00:00Z",
        compact_artifact_ref=str(tmp_path / "x" / "b.compact.json"),
        ref_root=tmp_path,
        notes="two",
        recorded_at="2026-01-01T00:00:00+08:00",
    )
    assert first["run_id"] == second["run_id"]
    assert first["artifact_refs"] != second["artifact_refs"]
    assert "run_key" not in first  # content identity is not stored as a run key


def test_run_id_depends_on_identity() -> None:
    base, _ = build_row(record(), now=NOW)
    assert build_row(record(), run_key="k2", now=NOW)[0]["run_id"] != base["run_id"]
    assert build_row(record(), arm_id="other", now=NOW)[0]["run_id"] != base["run_id"]
    assert build_row(record(), run_group_id="g2", now=NOW)[0]["run_id"] != base["run_id"]
    # the record's own run_key is the identity: a changed score under the same key keeps the id
    assert build_row(record(official_score=0.9), now=NOW)[0]["run_id"] == base["run_id"]
    # without a run key the content decides
    no_key = record(run_key=None)
    assert (
        build_row(no_key, now=NOW)[0]["run_id"]
        != build_row({**no_key, "official_score": 0.9}, now=NOW)[0]["run_id"]
    )


def test_run_group_fallbacks() -> None:
    assert build_row(record(), now=NOW)[0]["run_group_id"] == "2026-05-03__08-00-41"
    assert (
        build_row(record(run_group_id="adapter-group"), now=NOW)[0]["run_group_id"]
        == "adapter-group"
    )
    assert build_row(record(), run_group_id="cli-group", now=NOW)[0]["run_group_id"] == "cli-group"
    row, _ = build_row(bare_record(case_id="c"), now=NOW)
    assert row["run_group_id"] == row["run_id"]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("run_group_id", "--run-group-id is not public-safe"),
        ("arm_id", "--arm-id is not public-safe"),
    ],
)
def test_unsafe_identity_inputs_are_errors(option: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        build_row(record(), now=NOW, **{option: "/Users/alice/private-run"})
    assert str(caught.value) == message


def test_unsafe_note_is_dropped_with_warning() -> None:
    row, warnings = build_row(record(), notes="see /Users/alice/run.log", now=NOW)
    assert "notes" not in row
    assert warnings == ["note_dropped_public_safety"]
    long_row, _ = build_row(record(), notes="x" * 300, now=NOW)
    assert len(long_row["notes"]) == 220 and long_row["notes"].endswith("...")


def test_recorded_at_is_utc_and_validated() -> None:
    row, _ = build_row(record(), recorded_at="2026-06-14T18:15:12+08:00", now=NOW)
    assert row["recorded_at"] == "2026-06-14T10:15:12Z"
    assert row["last_upserted_at"] == NOW
    with pytest.raises(InputError, match="--recorded-at must be an ISO 8601 timestamp"):
        build_row(record(), recorded_at="yesterday", now=NOW)


def test_built_row_drops_empties_and_carries_rules_version() -> None:
    row, _ = build_row(record(), now=NOW)
    assert row["rules_version"] == RULES_VERSION
    assert all(value not in (None, "", []) for value in row.values())
    assert row["agent_declared_done"] is False


# ---------------------------------------------------------------------------------------------
# §6.4 normalisation against loopx's normaliser on the real ledger
# ---------------------------------------------------------------------------------------------

REPAIR_AND_COUNTABILITY = (
    "repair_priority",
    "repair_class",
    "repair_profile",
    "next_action",
    "official_score_countable",
    "official_score_countability_reason",
    "countable_score",
)


def _deliberate_difference(field: str, loopx_row: dict, ours: dict) -> str | None:
    """Name the spec rule that makes benchledger differ from loopx 0.4.8, or None."""
    if field == "official_score_countability_reason" and ours["status"] not in (
        "completed",
        "recorded",
    ):
        return "§5.11 check 0: run_not_completed"
    if field in ("repair_priority", "repair_class", "next_action") and (
        ours.get("repair_class") == "runner_or_setup_triage" and "repair_class" not in loopx_row
    ):
        return "§5.12 runner_or_setup_triage (gotcha #9)"
    return None


def test_normalising_fixture_matches_loopx_except_named_differences(fixtures_dir) -> None:
    raw = load_fixture_ledger(fixtures_dir)
    loopx = {
        row["run_id"]: row
        for _, row in fixture_rows(
            load_fixture_ledger(fixtures_dir, "benchmark-run-ledger.loopx-normalized.json")
        )
    }
    named: dict[str, int] = {}
    for benchmark_key, stored in fixture_rows(raw):
        ours = normalize_row(stored, benchmark_key=benchmark_key)
        theirs = loopx[stored["run_id"]]
        assert ours["arm_id"] == theirs["arm_id"]
        for field in REPAIR_AND_COUNTABILITY:
            if ours.get(field) == theirs.get(field):
                continue
            reason = _deliberate_difference(field, theirs, ours)
            assert reason, (stored["run_id"], field, theirs.get(field), ours.get(field))
            named[reason] = named.get(reason, 0) + 1
    assert named == {
        "§5.11 check 0: run_not_completed": 6,
        "§5.12 runner_or_setup_triage (gotcha #9)": 225,  # 75 rows x 3 fields
    }


def test_fixture_countability_totals(fixtures_dir) -> None:
    raw = load_fixture_ledger(fixtures_dir)
    reasons: dict[str, int] = {}
    for benchmark_key, stored in fixture_rows(raw):
        row = normalize_row(stored, benchmark_key=benchmark_key)
        reasons[row["official_score_countability_reason"]] = (
            reasons.get(row["official_score_countability_reason"], 0) + 1
        )
        assert ("countable_score" in row) is row["official_score_countable"]
    assert reasons == {
        "countable_official_score": 217,
        "score_missing": 78,
        "run_not_completed": 6,
        "official_score_attempt_not_countable": 2,
    }


def test_fixture_scope_recomputed_for_no_score_rows(fixtures_dir) -> None:
    """Deliberate difference (§5.10 rule 4, gotcha #8/#13): loopx kept `score_missing` scope on
    no-score runner/setup rows; benchledger recomputes it from the class on load."""
    rows = {r["run_id"]: (k, r) for k, r in fixture_rows(load_fixture_ledger(fixtures_dir))}
    runner_error = next(
        (k, r)
        for k, r in rows.values()
        if r["failure_class"] == "skillsbench_runner_error"
        and r["failure_scope"] == "score_missing"
    )
    assert (
        normalize_row(runner_error[1], benchmark_key=runner_error[0])["failure_scope"]
        == "runner_or_setup"
    )
    verifier = next(
        r for _, r in rows.values() if r["failure_class"] == "verifier_infrastructure_failure"
    )
    assert normalize_row(verifier)["failure_scope"] == "verifier_or_infra"


def test_legacy_arm_rules_match_loopx_reresolution(fixtures_dir) -> None:
    """Legacy rows (no arm_source) keep their arm unless the route is historical (as loopx)."""
    raw = load_fixture_ledger(fixtures_dir)
    changed = [
        (row["arm_id"], normalize_row(row)["arm_id"])
        for _, row in fixture_rows(raw)
        if normalize_row(row)["arm_id"] != row["arm_id"]
    ]
    assert len(changed) == 25
    assert {after for _, after in changed} == {HISTORICAL_ARM}


def test_normalize_row_housekeeping() -> None:
    row = {
        "run_id": "r1",
        "case_id": "terminal_bench_fix_git_baseline",
        "job_name": "terminal_bench_fix_git_baseline",
        "arm_id": "tb2",
        "arm_source": "inferred",
        "status": "completed",
        "score_status": "failed",
        "official_score": 0.0,
        "official_passed": False,
        "failure_class": "score_failure_unattributed",
        "archive_reason": "stale field without archive_state",
        "artifact_refs": {
            "result_ref": "/Users/a/result.json",
            "compact_artifact_ref": "r/x.compact.json",
        },
    }
    out = normalize_row(row, benchmark_key="terminal-bench@2.0")
    assert out["benchmark_id"] == "terminal-bench@2.0"
    assert out["case_id"] == "fix-git" and out["case_ids"] == ["fix-git"]
    assert out["arm_id"] == "baseline" and out["arm_role"] == "baseline"
    assert "archive_reason" not in out
    assert out["artifact_refs"] == {"compact_artifact_ref": "r/x.compact.json"}
    assert out["failure_scope"] == "attribution_required"
    assert out["repair_class"] == "verifier_attribution_required"
    assert out["rules_version"] == RULES_VERSION
    assert normalize_row(out) == out  # idempotent
