"""Field tables of the ``benchmark_run_v0`` record (docs/formats/benchmark_run_v0.md §4).

Declarative (field -> kind) so the code reads like the spec's tables and compaction stays a
handful of dict look-ups per field: it runs on every ingested and re-read run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.core.safety import ctext_status
from benchledger.ledger.rules.record.kinds import (
    BOOL,
    ENUM,
    FLOAT,
    GENERIC,
    INT,
    KEYED,
    LIST,
    LIST_OF,
    MAX_LIST_ITEMS,
    NNINT,
    NNNUM,
    NUM,
    NUMMAP,
    OBJ,
    POSNUM,
    TEXT_OR_NUM,
    Drops,
    Kind,
    T,
    _rows,
    shape,
)
from benchledger.ledger.rules.record.vocabulary import (
    ARM_ROLES,
    MULTIPLIER_KEYS,
    RUN_STATUSES,
    TRIAL_STATUSES,
)

RECORD_SCHEMA_VERSION = "benchmark_run_v0"
MAX_TRIALS = 256
MAX_ATTEMPT_CANDIDATES = 20
MAX_DROPPED_FIELDS = 10
MAX_TIMING_KEYS = 12


T40, T60, T80, T100, T120, T140, T160, T200 = (
    T(40),
    T(60),
    T(80),
    T(100),
    T(120),
    T(140),
    T(160),
    T(200),
)
L5 = LIST()
METRIC_KEYS = ("input_tokens", "cache_tokens", "output_tokens", "cost_usd")
PROGRESS_KEYS = (
    "n_total_trials",
    "n_completed_trials",
    "n_errored_trials",
    "n_running_trials",
    "n_pending_trials",
    "n_cancelled_trials",
    "n_retries",
)
ATTEMPT_PHASES = ("launcher", "case", "solver", "verifier", "official_score")
SECONDS_MAP = KEYED(NNNUM, key_limit=60, cap=MAX_TIMING_KEYS)

IDENTITY_SPEC: dict[str, Kind] = {
    "source_runner": T120,
    "benchmark_id": T120,
    "job_name": T120,
    "mode": T120,
}
IDENTITY_TAIL_SPEC: dict[str, Kind] = {
    "run_key": T200,
    "run_status": ENUM(RUN_STATUSES),
    "arm_id": T120,
    "arm_role": ENUM(ARM_ROLES),
    "run_group_id": T160,
    "planned_run_key": T200,
}

AGENT_SPEC: dict[str, Kind] = {
    "name": T120,
    "import_path": T120,
    "model": T120,
    "version": T80,
}

MODEL_CONTROL_SPEC: dict[str, Kind] = {
    "schema_version": T140,
    "requested_model": T140,
    "reported_model": T140,
    "control_method": T140,
    "control_status": T140,
    "actual_model_source": T140,
    "actual_model_verified": BOOL,
    "warning_labels": L5,
}

OFFICIAL_TASK_SCORE_SPEC: dict[str, Kind] = {
    "kind": T80,
    "value": NUM,
    "passed": BOOL,
    "source": T140,
}

SCORE_AGGREGATION_SPEC: dict[str, Kind] = {
    "policy": ENUM(frozenset({"single_result", "mean_of_scored_attempts"})),
    "primary_reward_key": T60,
    "planned_attempt_count": NNINT,
    "attempt_count": NNINT,
    "scored_attempt_count": NNINT,
    "unscored_attempt_count": NNINT,
    "passed_attempt_count": NNINT,
    "unscored_reasons": KEYED(NNINT, key_limit=60),
    "binary_rewards": BOOL,
    "runner_equivalent_mean": NUM,
    "primary_score_missing_reason": T120,
}

RUNNER_FAILURE_SPEC: dict[str, Kind] = {
    "schema_version": T140,
    "exception_type": T140,
    "failure_class": T140,
    "raw_error_recorded": BOOL,
    "raw_logs_read": BOOL,
    "raw_task_text_read": BOOL,
    "raw_trajectory_read": BOOL,
}

ATTEMPT_ACCOUNTING_SPEC: dict[str, Kind] = {
    "schema_version": T140,
    "lifecycle_phase": T140,
    "failure_label": T140,
    "failure_class": T140,
    "launcher_attempt_countable": BOOL,
    "case_attempt_countable": BOOL,
    "solver_attempt_countable": BOOL,
    "verifier_attempt_countable": BOOL,
    "official_score_attempt_countable": BOOL,
    "attempts": OBJ(
        {phase: OBJ({"attempted": BOOL, "countable": BOOL}) for phase in ATTEMPT_PHASES}
    ),
}

TIMEOUT_POLICY_SPEC: dict[str, Kind] = {
    "multipliers": OBJ({key: POSNUM for key in MULTIPLIER_KEYS}),
    "effective_multipliers": OBJ({key: POSNUM for key in MULTIPLIER_KEYS}),
    "official_comparable": BOOL,
    "source": T80,
    "agent_timeout_seconds_base": NNNUM,
    "agent_timeout_seconds_effective": NNNUM,
    "agent_timeout_overrides": LIST(MAX_LIST_ITEMS, 80),
}

ENVIRONMENT_SETUP_CONTEXT = GENERIC

OFFICIAL_ZERO_OBSERVATION_SPEC: dict[str, Kind] = {
    "schema_version": TEXT_OR_NUM(80),
    "reward_value": TEXT_OR_NUM(80),
    **{
        key: BOOL
        for key in (
            "detected",
            "exception_present",
            "environment_setup_completed",
            "agent_setup_completed",
            "agent_execution_completed",
            "verifier_completed",
            "raw_logs_read",
            "raw_trace_recorded",
            "task_text_read",
        )
    },
}

TRIAL_SPEC: dict[str, Kind] = {
    "task_id": T140,
    "trial_name": T140,
    "source": T140,
    "attempt_index": lambda v, d, p: v if INT(v, d, p) is not None and v >= 1 else None,
    "status": ENUM(TRIAL_STATUSES),
    "exception_type": T140,
    "failure_cause": T60,
    "worker_start_status": T140,
    "reward": NUMMAP(),
    "primary_reward": NUM,
    "passed": BOOL,
    "unscored_reason": T60,
    "runner_verdict": T40,
    "error_category": T60,
    "verifier_error_category": T60,
    "task_digest": T80,
    "metrics": NUMMAP(METRIC_KEYS),
    "timing": SECONDS_MAP,
    "trajectory_present": BOOL,
    "verifier_reward_present": BOOL,
    "artifact_manifest_present": BOOL,
    "trial_result_present": BOOL,
    "verifier_reward_file_present": BOOL,
    "agent_failure_attribution_labels": L5,
    "verifier_failure_attribution_labels": L5,
    "verifier_failure_attribution": T140,
    "environment_setup_failure_context": ENVIRONMENT_SETUP_CONTEXT,
    "official_zero_observation": OBJ(OFFICIAL_ZERO_OBSERVATION_SPEC),
}
_TRIAL_ROWS = _rows(TRIAL_SPEC)


def _round_records(value: Any, drops: Drops, path: str) -> list[dict] | None:
    """Per-round rewards: one per positive, unique ``agent_round``, sorted by round (§4.10)."""
    if not isinstance(value, list):
        return None
    by_round: dict[int, dict] = {}
    for item in value:
        if not isinstance(item, Mapping):
            continue
        agent_round = INT(item.get("agent_round"), drops, path)
        if agent_round is None or agent_round <= 0 or agent_round in by_round:
            continue
        by_round[agent_round] = {"agent_round": agent_round} | shape(
            item,
            {"reward_present": BOOL, "passed": BOOL, "reward": FLOAT, "tool_calls": NNINT},
            drops,
            path + ".",
        )
    return [by_round[key] for key in sorted(by_round)]


ROUND_REWARD_TRACE_SPEC: dict[str, Kind] = {
    **{
        key: T100
        for key in (
            "schema_version",
            "source",
            "round_index_origin",
            "loop_score_policy",
            "official_score_policy",
        )
    },
    **{
        key: BOOL
        for key in (
            "success_observed",
            "official_feedback_returned_to_agent",
            "official_feedback_blinded",
            "reward_feedback_forwarded",
            "agent_declared_done",
            "agent_declared_no_remaining_goals",
            "official_score_recovered_from_controller_trace",
            "final_round_passed",
            "best_round_passed",
            "best_round_is_final",
        )
    },
    **{
        key: NNINT
        for key in (
            "first_success_round",
            "declared_done_round",
            "max_rounds_budget",
            "final_round",
            "best_reward_round",
            "official_score_recovered_round",
        )
    },
    **{key: FLOAT for key in ("final_round_reward", "best_round_reward", "declared_done_score")},
    "records": _round_records,
}

READ_BOUNDARY_SPEC: dict[str, Kind] = {
    key: BOOL
    for key in (
        "compact_only",
        "raw_artifacts_read",
        "task_text_read",
        "trajectory_read",
        "controller_trace_read",
        "local_paths_recorded",
        "docker_invoked",
        "model_api_invoked",
        "upload_invoked",
    )
}

RUNNER_JOB_SPEC: dict[str, Kind] = {
    "runner": ENUM(frozenset({"harbor", "benchflow", "inspect"})),
    "runner_version": T40,
    "job_id": T80,
    "job_name": T120,
    "job_status": ENUM(RUN_STATUSES),
    "started_at": T40,
    "finished_at": T40,
    "timestamps_timezone": ENUM(frozenset({"naive_local", "utc"})),
    "n_total_trials": NNINT,
    "n_retries": NNINT,
    "unattributed_attempt_count": NNINT,
    "arm_count": NNINT,
    "case_count": NNINT,
    "evals_key": T160,
    "runner_metric": NUMMAP(),
    "runner_pass_at_k": NUMMAP(),
}

SELECTION_SPEC: dict[str, Kind] = {
    "policy": T80,
    "tie_breaker": T80,
    "candidate_count": NNINT,
    "ignored_reviewer_count": NNINT,
    "ignored_nested_count": NNINT,
    "selected_relative_path": T200,
    "candidates": LIST_OF(
        {"relative_path": T200, "scored": BOOL, "verdict": T40, "mtime": T40},
        MAX_ATTEMPT_CANDIDATES,
    ),
}

RESULT_DISCOVERY_SPEC: dict[str, Kind] = {
    "status": T140,
    "policy": T140,
    "tie_breaker": T140,
    "selected_relative_to_root": T(180),
    "selected_relative_to_job": T(180),
    "candidate_count": NNINT,
    "matched_candidate_count": NNINT,
    "top_score_candidate_count": NNINT,
    "raw_logs_read": BOOL,
    "raw_task_text_read": BOOL,
    "raw_trajectory_read": BOOL,
    "selection_reasons": L5,
}


def _argv(value: Any, drops: Drops, path: str) -> list[str] | None:
    """A preview command line is kept whole or not at all: a partial argv would mislead."""
    if not isinstance(value, list) or not value:
        return None
    args: list[str] = []
    for item in value[:256]:
        text, unsafe = ctext_status(item, 400)
        if text is None:
            if unsafe:
                drops.append(path)
            return None
        args.append(text)
    return args


LAUNCH_PREVIEW_SPEC: dict[str, Kind] = {
    "schema_version": T80,
    "runner": T40,
    "runner_ref": T120,
    "argv": _argv,
    "command": T(4000),
    "job_name": T120,
    "jobs_dir": T200,
    "placeholders": LIST(32, 120),
    "env_names": LIST(32, 120),
    "allowed_environment_hosts": LIST(32, 200),
    "agent_kwargs": KEYED(TEXT_OR_NUM(200), key_limit=120, cap=64),
    "forbidden_flags_absent": BOOL,
    "agent_setup_profile": T120,
    "mounts": LIST_OF({"source": T200, "target": T200, "read_only": BOOL}, 16),
}

PREFLIGHT_SPEC: dict[str, Kind] = {
    "schema_version": T80,
    "ready": BOOL,
    "first_blocker": T140,
    "checks": LIST_OF(
        {"name": T80, "ok": BOOL, "blocking": BOOL, "blocker": T140, "detail": T160}, 32
    ),
}

AGENT_ACTIVITY_SPEC: dict[str, Kind] = {
    "tool_call_count": NNINT,
    "trajectory_steps": NNINT,
    "prompt_count": NNINT,
}

CLAIM_FLAGS = (
    "real_run",
    "submit_eligible",
    "leaderboard_evidence",
    "official_score_comparable_to_native_codex",
    "official_score_comparable_to_loopx_treatment",
    "case_semantics_changed_by_harness",
    "model_plus_harness_pair",
    "control_plane_score_applicable",
    "official_feedback_blinded",
    "reward_feedback_forwarded",
    "blind_loop",
    "product_mode",
    "codex_acp_protocol_used",
)
LOOPX_TEXTS = (
    "worker_mode",
    "trace_publicness",
    "validation_scope",
    "worker_bridge_materialization_status",
    "skillsbench_route_semantics",
    "native_goal_mode_confirmation_status",
    "loopx_counter_scope",
)
LOOPX_BOOLS = (
    "loopx_inside_case",
    "loopx_prompt_driven_lifecycle_observed",
    "historical_route_read_only",
    "native_goal_worker_connected",
    "hardened_install_surface",
    "hardened_install_baseline",
    "loopx_cli_bridge_contract_available",
    "loopx_cli_bridge_trace_observed",
    "loopx_worker_cli_bridge_available",
    "loopx_worker_cli_bridge_trace_observed",
    "assisted_collaboration_claim_allowed",
    "official_score_claim_allowed",
    "curated_skills_visible",
    "worker_materialization_probe_only",
)
# Counters of worker/official disagreements; all zero is one of the failure-class rules' inputs.
WORKER_MISMATCH_COUNTERS = (
    "worker_self_validation_official_score_mismatch_count",
    "worker_validation_scope_ambiguous_official_score_failure_count",
    "worker_submit_eligible_mismatch_count",
    "worker_bridge_writeback_loss_count",
    "worker_startup_blocker_count",
    "environment_setup_failure_before_worker_count",
    "pre_worker_agent_setup_failure_count",
)
LOOPX_INTS = (
    "worker_loopx_cli_call_total",
    "runner_loopx_cli_call_total",
    "planned_worker_loopx_cli_call_total",
    "required_worker_loopx_cli_call_total_min",
    "loopx_prompt_driven_case_cli_call_count",
    *WORKER_MISMATCH_COUNTERS,
    "max_rounds_budget",
    "round_reward_count",
)
LOOPX_NESTED = (
    "interaction_counters",
    "episode_policy",
    "benchmark_loop_contract",
    "claim_boundary",
    "claim_gate",
    "native_goal_worker_contract",
    "app_server_goal_round_semantics",
    "product_mode_lifecycle_contract",
    "operator_simulator_run",
    "runner_prerequisites",
    "task_setup_preflight",
    "task_staging",
    "compose_setup_diagnostic",
    "overhead_attribution_counters",
    "worker_bridge_outcome",
    "preflight_guard",
    "private_runner_launch_summary",
    "setup_timeout_repair_profile",
)

# Everything after the identity block, in spec order (§4.2 – §4.14). Fields that compaction
# derives (case_id, case_ids, trials, validation, pass_at_k, solution_quality_signals,
# public_safety) are derived in ``benchledger.ledger.rules.record.compaction``.
BODY_SPEC: dict[str, Kind] = {
    "agent": OBJ(AGENT_SPEC),
    "model_control": OBJ(MODEL_CONTROL_SPEC),
    "official_score": NUM,
    "official_score_source": T140,
    "official_score_status": T140,
    "official_task_score": OBJ(OFFICIAL_TASK_SCORE_SPEC),
    "runner_verdict": T40,
    "score_aggregation": OBJ(SCORE_AGGREGATION_SPEC),
    "score_failure_attribution": T140,
    "first_blocker": T140,
    "failure_attribution_labels": L5,
    "runner_warning_labels": L5,
    "worker_startup_blockers": L5,
    "worker_setup_diagnostic_blockers": L5,
    "runner_return_status": T140,
    "runner_failure": OBJ(RUNNER_FAILURE_SPEC),
    "ingest_warnings": LIST(10),
    "attempt_accounting": OBJ(ATTEMPT_ACCOUNTING_SPEC),
    "progress": NUMMAP(PROGRESS_KEYS),
    "metrics": NUMMAP(METRIC_KEYS),
    "metrics_coverage": OBJ({"attempts_with_usage": NNINT, "attempts_total": NNINT}),
    "wall_time_seconds": NNNUM,
    "timing": SECONDS_MAP,
    "timeout_policy": OBJ(TIMEOUT_POLICY_SPEC),
    "round_reward_trace": OBJ(ROUND_REWARD_TRACE_SPEC),
    "read_boundary": OBJ(READ_BOUNDARY_SPEC),
    "evidence_files": L5,
    "resume_or_inspect_commands": L5,
    "stop_conditions": L5,
    **{key: BOOL for key in CLAIM_FLAGS},
    "runner_job": OBJ(RUNNER_JOB_SPEC),
    "selection": OBJ(SELECTION_SPEC),
    "result_discovery": OBJ(RESULT_DISCOVERY_SPEC),
    "launch_preview": OBJ(LAUNCH_PREVIEW_SPEC),
    "preflight": OBJ(PREFLIGHT_SPEC),
    "agent_activity": OBJ(AGENT_ACTIVITY_SPEC),
    **{key: T140 for key in LOOPX_TEXTS},
    **{key: BOOL for key in LOOPX_BOOLS},
    **{key: INT for key in LOOPX_INTS},
    **{key: GENERIC for key in LOOPX_NESTED},
}

NEUTRAL_CHECKS = frozenset(
    {
        "case_success_claimed",
        "case_solution_not_required_for_probe",
        "official_case_success",
        "official_verifier_validation_present",
        "leaderboard_claim_allowed",
        "official_score_claim_allowed",
        "probe_contract_result_present",
        "assisted_collaboration_claim_allowed",
    }
)
NEUTRAL_CHECK_PREFIXES = ("native_goal_worker_", "remote_command_file_bridge_")
VALIDATION_KEPT_BOOLS = (
    "official_verifier_validation_present",
    "official_case_success",
    "no_leaderboard_upload_requested",
    "no_raw_logs_read",
    "no_raw_task_text_read",
    "no_raw_trajectory_read",
)
VALIDATION_DERIVED = frozenset({"all_passed", "failed_checks"})
