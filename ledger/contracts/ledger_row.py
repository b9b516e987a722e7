"""One run of the ``benchmark_run_ledger_v0`` document (spec: docs/formats/ledger_v0.md §3).

A row is flat apart from a few named objects. ``run_id``, ``benchmark_id`` and ``case_id`` are
what every ledger operation keys on, so they are required; everything else is optional because
row building drops empties. Rows imported from loopx keep fields benchledger no longer writes
(§3's loopx-specific list and older ones), so the row is open to unknown keys.
"""

from __future__ import annotations

from benchledger.ledger.contracts.base import Count, JsonObject, Number, NumberMap, Open, optional
from benchledger.ledger.rules.record.vocabulary import ArmRole


class ArtifactRefs(Open):
    artifact_ref: str = optional()
    result_ref: str = optional()
    compact_artifact_ref: str = optional()
    history_ref: str = optional()


class RoundReward(Open):
    agent_round: Count
    reward_present: bool = optional()
    passed: bool = optional()
    reward: Number = optional()
    tool_calls: Count = optional()


class LedgerRowV0(Open):
    # identity
    run_id: str
    benchmark_id: str
    case_id: str
    recorded_at: str = optional()
    last_upserted_at: str = optional()
    case_ids: list[str] = optional()
    run_group_id: str = optional()
    arm_id: str = optional()
    arm_source: str = optional()
    arm_role: ArmRole = optional()
    mode: str = optional()
    route: str = optional()
    job_name: str = optional()
    run_key: str = optional()
    source_event_schema: str = optional()
    notes: str = optional()
    artifact_refs: ArtifactRefs = optional()
    warnings: list[str] = optional()
    rules_version: str = optional()
    # outcome
    status: str = optional()
    score_status: str = optional()
    official_score: Number = optional()
    official_passed: bool = optional()
    official_score_bool_fallback_used: bool = optional()
    official_score_countable: bool = optional()
    official_score_countability_reason: str = optional()
    countable_score: Number = optional()
    score_missing_reason: str = optional()
    attempt_count: Count = optional()
    scored_attempt_count: Count = optional()
    unscored_attempt_count: Count = optional()
    pass_at_k: NumberMap = optional()
    # failure
    failure_class: str = optional()
    failure_scope: str = optional()
    score_failure_attribution: str = optional()
    failure_labels: list[str] = optional()
    runner_return_status: str = optional()
    setup_blockers: list[str] = optional()
    # repair
    repair_priority: str = optional()
    repair_class: str = optional()
    next_action: str = optional()
    repair_profile: JsonObject = optional()
    # rounds
    round_rewards: list[RoundReward] = optional()
    round_reward_count: Count = optional()
    round_success_observed: bool = optional()
    first_success_round: Count = optional()
    final_round: Count = optional()
    final_round_reward: Number = optional()
    final_round_passed: bool = optional()
    best_reward_round: Count = optional()
    best_round_reward: Number = optional()
    best_round_passed: bool = optional()
    best_round_is_final: bool = optional()
    agent_declared_done: bool = optional()
    declared_done_round: Count = optional()
    declared_done_score: Number = optional()
    max_rounds_budget: Count = optional()
    loop_score_policy: str = optional()
    official_score_policy: str = optional()
    official_feedback_blinded: bool = optional()
    reward_feedback_forwarded: bool = optional()
    # model and claims
    agent_model: str = optional()
    model_control_status: str = optional()
    actual_model_verified: bool = optional()
    model_warning_labels: list[str] = optional()
    submit_eligible: bool = optional()
    leaderboard_evidence: bool = optional()
    # attempt accounting
    attempt_lifecycle_phase: str = optional()
    attempt_failure_label: str = optional()
    attempt_failure_class: str = optional()
    launcher_attempt_countable: bool = optional()
    case_attempt_countable: bool = optional()
    solver_attempt_countable: bool = optional()
    verifier_attempt_countable: bool = optional()
    official_score_attempt_countable: bool = optional()
    # archive (§9)
    # "archived" is the only state benchledger writes; a loopx ledger's rows keep whatever they
    # held (its loader reads any other text as active), verbatim in ledger_imported.
    archive_state: str = optional()
    archive_reason: str = optional()
    archive_batch_id: str = optional()
    archived_at: str = optional()
    # [loopx-specific], among them
    solution_quality_signals: JsonObject = optional()
