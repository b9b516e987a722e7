"""The ``benchmark_run_v0`` record (spec: docs/formats/benchmark_run_v0.md §4), as compaction
writes it.

Every field but ``schema_version`` is optional, since compaction omits what a source did not
report. The format is open: an input may carry fields benchledger does not keep (loopx wrote
some 250), which compaction drops, so unknown keys are allowed here at every level; a named
field with the wrong type is not.
"""

from __future__ import annotations

from typing import Literal

from benchledger.ledger.contracts.base import (
    Count,
    JsonObject,
    NonNegative,
    Number,
    NumberMap,
    Open,
    Positive,
    optional,
)
from benchledger.ledger.rules.record.vocabulary import ArmRole, RunStatus, TrialStatus

# An object with producer-chosen keys (timing phases), each a number of seconds >= 0.
Seconds = dict[str, NonNegative]


class Agent(Open):
    name: str = optional()
    import_path: str = optional()
    model: str = optional()
    version: str = optional()
    kwargs_keys: list[str] = optional()


class ModelControl(Open):
    schema_version: str = optional()
    requested_model: str = optional()
    reported_model: str = optional()
    control_method: str = optional()
    control_status: str = optional()
    actual_model_source: str = optional()
    actual_model_verified: bool = optional()
    warning_labels: list[str] = optional()


class OfficialTaskScore(Open):
    kind: str = optional()
    value: Number = optional()
    passed: bool = optional()
    source: str = optional()


class ScoreAggregation(Open):
    policy: Literal["single_result", "mean_of_scored_attempts"] = optional()
    primary_reward_key: str = optional()
    planned_attempt_count: Count = optional()
    attempt_count: Count = optional()
    scored_attempt_count: Count = optional()
    unscored_attempt_count: Count = optional()
    passed_attempt_count: Count = optional()
    unscored_reasons: dict[str, Count] = optional()
    binary_rewards: bool = optional()
    runner_equivalent_mean: Number = optional()
    primary_score_missing_reason: str = optional()


class RunnerFailure(Open):
    schema_version: str = optional()
    exception_type: str = optional()
    failure_class: str = optional()
    raw_error_recorded: bool = optional()
    raw_logs_read: bool = optional()
    raw_task_text_read: bool = optional()
    raw_trajectory_read: bool = optional()


class PhaseAttempt(Open):
    attempted: bool = optional()
    countable: bool = optional()


class PhaseAttempts(Open):
    launcher: PhaseAttempt = optional()
    case: PhaseAttempt = optional()
    solver: PhaseAttempt = optional()
    verifier: PhaseAttempt = optional()
    official_score: PhaseAttempt = optional()


class AttemptAccounting(Open):
    schema_version: str = optional()
    lifecycle_phase: str = optional()
    failure_label: str = optional()
    failure_class: str = optional()
    launcher_attempt_countable: bool = optional()
    case_attempt_countable: bool = optional()
    solver_attempt_countable: bool = optional()
    verifier_attempt_countable: bool = optional()
    official_score_attempt_countable: bool = optional()
    attempts: PhaseAttempts = optional()


class MetricsCoverage(Open):
    attempts_with_usage: Count = optional()
    attempts_total: Count = optional()


class Multipliers(Open):
    timeout_multiplier: Positive = optional()
    agent_timeout_multiplier: Positive = optional()
    verifier_timeout_multiplier: Positive = optional()
    agent_setup_timeout_multiplier: Positive = optional()
    environment_build_timeout_multiplier: Positive = optional()


class TimeoutPolicy(Open):
    multipliers: Multipliers = optional()
    effective_multipliers: Multipliers = optional()
    official_comparable: bool = optional()
    source: str = optional()
    agent_timeout_seconds_base: NonNegative = optional()
    agent_timeout_seconds_effective: NonNegative = optional()
    agent_timeout_overrides: list[str] = optional()


class OfficialZeroObservation(Open):
    schema_version: str | Number = optional()
    reward_value: str | Number = optional()
    detected: bool = optional()
    exception_present: bool = optional()
    environment_setup_completed: bool = optional()
    agent_setup_completed: bool = optional()
    agent_execution_completed: bool = optional()
    verifier_completed: bool = optional()
    raw_logs_read: bool = optional()
    raw_trace_recorded: bool = optional()
    task_text_read: bool = optional()


class Trial(Open):
    """One attempt (§4.8)."""

    task_id: str = optional()
    trial_name: str = optional()
    source: str = optional()
    attempt_index: Count = optional()
    status: TrialStatus = optional()
    exception_type: str = optional()
    failure_cause: str = optional()
    worker_start_status: str = optional()
    reward: NumberMap = optional()
    primary_reward: Number = optional()
    passed: bool = optional()
    unscored_reason: str = optional()
    runner_verdict: str = optional()
    error_category: str = optional()
    verifier_error_category: str = optional()
    task_digest: str = optional()
    metrics: NumberMap = optional()
    timing: Seconds = optional()
    trajectory_present: bool = optional()
    verifier_reward_present: bool = optional()
    artifact_manifest_present: bool = optional()
    trial_result_present: bool = optional()
    verifier_reward_file_present: bool = optional()
    agent_failure_attribution_labels: list[str] = optional()
    verifier_failure_attribution_labels: list[str] = optional()
    verifier_failure_attribution: str = optional()
    environment_setup_failure_context: JsonObject = optional()
    official_zero_observation: OfficialZeroObservation = optional()


class RoundRecord(Open):
    agent_round: Count
    reward_present: bool = optional()
    passed: bool = optional()
    reward: Number = optional()
    tool_calls: Count = optional()


class RoundRewardTrace(Open):
    schema_version: str = optional()
    source: str = optional()
    round_index_origin: str = optional()
    loop_score_policy: str = optional()
    official_score_policy: str = optional()
    success_observed: bool = optional()
    official_feedback_returned_to_agent: bool = optional()
    official_feedback_blinded: bool = optional()
    reward_feedback_forwarded: bool = optional()
    agent_declared_done: bool = optional()
    agent_declared_no_remaining_goals: bool = optional()
    official_score_recovered_from_controller_trace: bool = optional()
    final_round_passed: bool = optional()
    best_round_passed: bool = optional()
    best_round_is_final: bool = optional()
    first_success_round: Count = optional()
    declared_done_round: Count = optional()
    max_rounds_budget: Count = optional()
    final_round: Count = optional()
    best_reward_round: Count = optional()
    official_score_recovered_round: Count = optional()
    final_round_reward: Number = optional()
    best_round_reward: Number = optional()
    declared_done_score: Number = optional()
    records: list[RoundRecord] = optional()


class ReadBoundary(Open):
    compact_only: bool = optional()
    raw_artifacts_read: bool = optional()
    task_text_read: bool = optional()
    trajectory_read: bool = optional()
    controller_trace_read: bool = optional()
    local_paths_recorded: bool = optional()
    docker_invoked: bool = optional()
    model_api_invoked: bool = optional()
    upload_invoked: bool = optional()


class Validation(Open):
    all_passed: bool = optional()
    failed_checks: list[str] = optional()
    validation_scope: str = optional()
    official_verifier_status: str = optional()
    official_verifier_validation_present: bool = optional()
    official_case_success: bool = optional()
    no_leaderboard_upload_requested: bool = optional()
    no_raw_logs_read: bool = optional()
    no_raw_task_text_read: bool = optional()
    no_raw_trajectory_read: bool = optional()


class PublicSafety(Open):
    dropped_field_count: Count = optional()
    dropped_fields: list[str] = optional()


class RunnerJob(Open):
    runner: Literal["harbor", "benchflow", "inspect"] = optional()
    runner_version: str = optional()
    job_id: str = optional()
    job_name: str = optional()
    job_status: RunStatus = optional()
    started_at: str = optional()
    finished_at: str = optional()
    timestamps_timezone: Literal["naive_local", "utc"] = optional()
    n_total_trials: Count = optional()
    n_retries: Count = optional()
    unattributed_attempt_count: Count = optional()
    arm_count: Count = optional()
    case_count: Count = optional()
    evals_key: str = optional()
    runner_metric: NumberMap = optional()
    runner_pass_at_k: NumberMap = optional()


class SelectionCandidate(Open):
    relative_path: str = optional()
    scored: bool = optional()
    verdict: str = optional()
    mtime: str = optional()


class Selection(Open):
    policy: str = optional()
    tie_breaker: str = optional()
    candidate_count: Count = optional()
    ignored_reviewer_count: Count = optional()
    ignored_nested_count: Count = optional()
    selected_relative_path: str = optional()
    candidates: list[SelectionCandidate] = optional()


class ResultDiscovery(Open):
    status: str = optional()
    policy: str = optional()
    tie_breaker: str = optional()
    selected_relative_to_root: str = optional()
    selected_relative_to_job: str = optional()
    candidate_count: Count = optional()
    matched_candidate_count: Count = optional()
    top_score_candidate_count: Count = optional()
    raw_logs_read: bool = optional()
    raw_task_text_read: bool = optional()
    raw_trajectory_read: bool = optional()
    selection_reasons: list[str] = optional()


class Mount(Open):
    source: str = optional()
    target: str = optional()
    read_only: bool = optional()


class LaunchPreview(Open):
    """A planned run's exact runner command line (docs/formats/cli.md §7.2)."""

    schema_version: str = optional()
    runner: str = optional()
    runner_ref: str = optional()
    argv: list[str] = optional()
    command: str = optional()
    job_name: str = optional()
    jobs_dir: str = optional()
    placeholders: list[str] = optional()
    env_names: list[str] = optional()
    allowed_environment_hosts: list[str] = optional()
    agent_kwargs: dict[str, str | Number] = optional()
    forbidden_flags_absent: bool = optional()
    agent_setup_profile: str = optional()
    mounts: list[Mount] = optional()


class PreflightCheck(Open):
    name: str = optional()
    ok: bool = optional()
    blocking: bool = optional()
    blocker: str = optional()
    detail: str = optional()


class Preflight(Open):
    """A planned run's preflight checks (docs/formats/cli.md §7.4)."""

    schema_version: str = optional()
    ready: bool = optional()
    first_blocker: str = optional()
    checks: list[PreflightCheck] = optional()


class AgentActivity(Open):
    tool_call_count: Count = optional()
    trajectory_steps: Count = optional()
    prompt_count: Count = optional()


class WorkerActivity(Open):
    task_facing_activity_observed: bool = optional()
    worker_turn_or_bridge_observed: bool = optional()
    tool_call_count: Count = optional()
    bridge_task_facing_operation_count: Count = optional()
    bridge_task_facing_success_count: Count = optional()


class SolutionQualitySignals(Open):
    """Derived by compaction from the record itself (§4.13)."""

    schema_version: Literal["skillsbench_solution_quality_signals_v0"] = optional()
    source: str = optional()
    outcome_class: str = optional()
    solution_action_labels: list[str] = optional()
    rubric_miss_labels: list[str] = optional()
    rubric_miss_label_status: str = optional()
    worker_activity: WorkerActivity = optional()
    public_limits: list[str] = optional()


class BenchmarkRunV0(Open):
    """One compact benchmark run: one case, one arm, any number of attempts."""

    schema_version: Literal["benchmark_run_v0"]
    # identity (§4.1)
    source_runner: str = optional()
    benchmark_id: str = optional()
    job_name: str = optional()
    mode: str = optional()
    case_id: str = optional()
    case_ids: list[str] = optional()
    run_key: str = optional()
    run_status: RunStatus = optional()
    arm_id: str = optional()
    arm_role: ArmRole = optional()
    run_group_id: str = optional()
    planned_run_key: str = optional()
    # agent and model (§4.2)
    agent: Agent = optional()
    model_control: ModelControl = optional()
    # score (§4.3, §4.4)
    official_score: Number = optional()
    official_score_source: str = optional()
    official_score_status: str = optional()
    official_task_score: OfficialTaskScore = optional()
    runner_verdict: str = optional()
    score_aggregation: ScoreAggregation = optional()
    pass_at_k: NumberMap = optional()
    pass_at_k_basis: Literal["scored_attempts_only"] = optional()
    # failure and attribution (§4.5, §4.6)
    score_failure_attribution: str = optional()
    first_blocker: str = optional()
    failure_attribution_labels: list[str] = optional()
    runner_warning_labels: list[str] = optional()
    worker_startup_blockers: list[str] = optional()
    worker_setup_diagnostic_blockers: list[str] = optional()
    runner_return_status: str = optional()
    runner_failure: RunnerFailure = optional()
    ingest_warnings: list[str] = optional()
    attempt_accounting: AttemptAccounting = optional()
    # progress, metrics, timing (§4.7)
    progress: NumberMap = optional()
    metrics: NumberMap = optional()
    metrics_coverage: MetricsCoverage = optional()
    wall_time_seconds: NonNegative = optional()
    timing: Seconds = optional()
    timeout_policy: TimeoutPolicy = optional()
    # trials (§4.8)
    trial_count: Count = optional()
    trials_truncated: bool = optional()
    trials: list[Trial] = optional()
    # rounds, validation, read boundary (§4.10, §4.11)
    round_reward_trace: RoundRewardTrace = optional()
    validation: Validation = optional()
    read_boundary: ReadBoundary = optional()
    evidence_files: list[str] = optional()
    resume_or_inspect_commands: list[str] = optional()
    stop_conditions: list[str] = optional()
    public_safety: PublicSafety = optional()
    real_run: bool = optional()
    submit_eligible: bool = optional()
    leaderboard_evidence: bool = optional()
    official_score_comparable_to_native_codex: bool = optional()
    official_score_comparable_to_loopx_treatment: bool = optional()
    case_semantics_changed_by_harness: bool = optional()
    model_plus_harness_pair: bool = optional()
    control_plane_score_applicable: bool = optional()
    official_feedback_blinded: bool = optional()
    reward_feedback_forwarded: bool = optional()
    blind_loop: bool = optional()
    product_mode: bool = optional()
    codex_acp_protocol_used: bool = optional()
    # discovery and planning blocks (§4.12)
    runner_job: RunnerJob = optional()
    selection: Selection = optional()
    result_discovery: ResultDiscovery = optional()
    launch_preview: LaunchPreview = optional()
    preflight: Preflight = optional()
    agent_activity: AgentActivity = optional()
    # derived (§4.13)
    solution_quality_signals: SolutionQualitySignals = optional()
    # [loopx-specific] retained fields (§4.14); nested blocks hold scalars and string lists
    worker_mode: str = optional()
    trace_publicness: str = optional()
    validation_scope: str = optional()
    worker_bridge_materialization_status: str = optional()
    skillsbench_route_semantics: str = optional()
    native_goal_mode_confirmation_status: str = optional()
    loopx_counter_scope: str = optional()
    loopx_inside_case: bool = optional()
    loopx_prompt_driven_lifecycle_observed: bool = optional()
    historical_route_read_only: bool = optional()
    native_goal_worker_connected: bool = optional()
    hardened_install_surface: bool = optional()
    hardened_install_baseline: bool = optional()
    loopx_cli_bridge_contract_available: bool = optional()
    loopx_cli_bridge_trace_observed: bool = optional()
    loopx_worker_cli_bridge_available: bool = optional()
    loopx_worker_cli_bridge_trace_observed: bool = optional()
    assisted_collaboration_claim_allowed: bool = optional()
    official_score_claim_allowed: bool = optional()
    curated_skills_visible: bool = optional()
    worker_materialization_probe_only: bool = optional()
    worker_loopx_cli_call_total: int = optional()
    runner_loopx_cli_call_total: int = optional()
    planned_worker_loopx_cli_call_total: int = optional()
    required_worker_loopx_cli_call_total_min: int = optional()
    loopx_prompt_driven_case_cli_call_count: int = optional()
    worker_self_validation_official_score_mismatch_count: int = optional()
    worker_validation_scope_ambiguous_official_score_failure_count: int = optional()
    worker_submit_eligible_mismatch_count: int = optional()
    worker_bridge_writeback_loss_count: int = optional()
    worker_startup_blocker_count: int = optional()
    environment_setup_failure_before_worker_count: int = optional()
    pre_worker_agent_setup_failure_count: int = optional()
    max_rounds_budget: int = optional()
    round_reward_count: int = optional()
    interaction_counters: JsonObject = optional()
    episode_policy: JsonObject = optional()
    benchmark_loop_contract: JsonObject = optional()
    claim_boundary: JsonObject = optional()
    claim_gate: JsonObject = optional()
    native_goal_worker_contract: JsonObject = optional()
    app_server_goal_round_semantics: JsonObject = optional()
    product_mode_lifecycle_contract: JsonObject = optional()
    operator_simulator_run: JsonObject = optional()
    runner_prerequisites: JsonObject = optional()
    task_setup_preflight: JsonObject = optional()
    task_staging: JsonObject = optional()
    compose_setup_diagnostic: JsonObject = optional()
    overhead_attribution_counters: JsonObject = optional()
    worker_bridge_outcome: JsonObject = optional()
    preflight_guard: JsonObject = optional()
    private_runner_launch_summary: JsonObject = optional()
    setup_timeout_repair_profile: JsonObject = optional()
