"""Repair route of a failed row (docs/formats/ledger_v0.md §5.12): priority, class, next action,
profile.

The route tables are loopx's content; the routing is here so a new failure class needs one
table entry, and rows read from a loopx ledger are re-routed the way loopx routes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.rules.record.vocabulary import RUNNER_FAILURE_SCOPES
from benchledger.ledger.rules.row.failure_class import COMPOSE_CLASSES
from benchledger.ledger.rules.row.scoring import round_success_observed
from benchledger.ledger.rules.row.values import as_str, compact_text

REPAIR_FIELDS = ("repair_priority", "repair_class", "next_action", "repair_profile")


_PRE_AGENT_CLASSES = frozenset(COMPOSE_CLASSES.values())
_PREFLIGHT_ATTRIBUTIONS = frozenset(
    {
        "skillsbench_docker_apt_setup_risk_preflight_blocked",
        "skillsbench_dockerfile_package_bootstrap_risk_preflight_blocked",
        "skillsbench_verifier_bootstrap_risk_preflight_blocked",
        "skillsbench_task_source_preflight_blocked",
    }
)
_SETUP_TIMEOUT_CLASSES = frozenset(
    {
        "agent_setup_timeout_before_worker_start",
        "agent_setup_failed_before_worker_start",
        "agent_setup_exception_before_solution_attempt",
    }
)
_MODEL_ACCESS_CLASSES = frozenset(
    {
        "codex_model_access_unsupported_for_account",
        "codex_model_access_failure_before_solution_attempt",
        "model_provider_failure_before_solution_attempt",
    }
)
_FINALIZATION_CLASSES = frozenset(
    {
        "stale_active_job_without_trial_result",
        "detached_worker_ended_active_without_trial_result",
        "detached_worker_ended_without_trial_result",
        "post_launch_compact_result_missing",
    }
)
_ALIGNMENT_CLASSES = frozenset(
    {
        "worker_self_validation_official_score_mismatch",
        "worker_validation_scope_ambiguous_official_score_failure",
        "worker_bridge_connected_official_score_failure",
    }
)
# loopx 0.4.8's sentence for each of its routes, word for word (a backlog reader compares them
# across tools); the last two routes are benchledger's own (§5.12 "(new)").
_NEXT_ACTIONS = {
    "runner_codex_cli_materialization": (
        "materialize an existing Codex CLI on the worker PATH or provide an equivalent launcher "
        "before rerunning; require a compact setup diagnostic that proves the Codex preflight "
        "reached ok instead of only a generic pre-worker agent failure"
    ),
    "benchmark_environment_setup_contract": (
        "repair or preflight the benchmark environment setup layer before rerunning this case; "
        "the failure occurred before Codex/worker startup, so require compact environment "
        "setup readiness evidence instead of treating it as an adapter startup issue"
    ),
    "runner_setup_timeout": (
        "repair the Codex worker setup path before rerunning this case; do not rely on runtime "
        "Codex install inside Harbor setup; use a materialized launcher or "
        "require_existing_codex fail-fast probe with compact setup-readiness proof"
    ),
    "runner_model_access": (
        "rerun only after selecting a Codex model route proven usable for this account"
    ),
    "skillsbench_codex_acp_post_success_finalization": (
        "separate post-success Codex ACP transport/finalization closeout from runtime startup "
        "preflight: preserve the blinded round reward trace, keep official-score status "
        "separate, and rerun only after the compact finalization classifier is corrected"
    ),
    "skillsbench_codex_acp_runtime_preflight": (
        "prove the Codex ACP runtime can start inside the SkillsBench sandbox before rerunning "
        "or launching treatment; require compact dependency and launch preflight evidence "
        "instead of a generic ACP launch failure"
    ),
    "skillsbench_setup_preflight_selection": (
        "select a SkillsBench task without Docker package-bootstrap setup risk for the next "
        "full baseline/treatment pair, or repair the Docker setup route before rerunning this "
        "task"
    ),
    "skillsbench_verifier_bootstrap_preflight_selection": (
        "select a SkillsBench task whose verifier does not require network/package bootstrap, "
        "or repair/cache the verifier bootstrap route before spending another full arm"
    ),
    "skillsbench_task_source_preflight_selection": (
        "select a SkillsBench task from the canonical tasks source, or use an explicit "
        "sanity-source runner before spending a full baseline/treatment arm"
    ),
    "skillsbench_task_source_excluded": (
        "exclude this noncanonical SkillsBench source from formal 87-case scoring, or rerun it "
        "only through an explicit sanity/source-extra runner"
    ),
    "runner_result_materialization": (
        "repair or ignore the incomplete runner materialization before treating this as case "
        "evidence"
    ),
    "runner_result_finalization": (
        "repair Harbor/worker finalization or rerun after proving the worker can close with a "
        "compact trial result; do not treat connectivity or active job state as case success"
    ),
    "verifier_attribution_required": (
        "collect finer compact failure attribution before launching treatment"
    ),
    "worker_verifier_alignment": (
        "align worker self-validation with verifier-facing compact evidence before repeating"
    ),
    "verifier_or_infra_repair": "repair verifier or infra attribution before comparing arms",
    "case_timeout_research": (
        "inspect compact timeout context and decide whether the run needs a private "
        "long-horizon timeout tier"
    ),
    "case_exception_research": (
        "inspect compact exception attribution and form a case-level intervention hypothesis"
    ),
    "run_rerun_required": "the run was cancelled; rerun it before drawing conclusions",
    "runner_or_setup_triage": (
        "triage the runner or setup failure (no official score was produced) and rerun"
    ),
}
_PREFLIGHTS = {
    "runner_codex_cli_materialization": [
        "codex_cli_existing_in_worker_or_fail_fast_blocker",
        "worker_setup_diagnostic.schema_ok",
        "worker_setup_diagnostic.first_blocker_or_ok",
    ],
    "benchmark_environment_setup_contract": [
        "environment_setup_readiness_preflight_before_repeat",
        "compact_environment_setup_failure_context",
        "worker_not_started_before_environment_ready",
    ],
    "runner_setup_timeout": [
        "private_runner_launch_summary.agent_setup_readiness",
        "private_runner_launch_summary.timeout_multiplier_policy",
        "codex_cli_existing_in_worker_or_fail_fast_blocker",
    ],
    "runner_model_access": ["codex_cli_minimal_model_probe"],
    "skillsbench_codex_acp_post_success_finalization": [
        "round_reward_trace.success_observed",
        "codex_acp_runtime_launch_preflight",
        "skillsbench_compact_failure_class",
    ],
    "skillsbench_codex_acp_runtime_preflight": [
        "codex_acp_runtime_dependency_preflight",
        "codex_acp_runtime_launch_preflight",
        "skillsbench_compact_failure_class",
    ],
    "skillsbench_setup_preflight_selection": [
        "skillsbench_task_setup_preflight",
        "task_staging.bootstrap_light_preflight_blocked",
    ],
    "skillsbench_verifier_bootstrap_preflight_selection": [
        "skillsbench_task_setup_preflight",
        "verifier_bootstrap_risk_detected",
        "task_staging.verifier_bootstrap_risk_preflight_blocked",
    ],
    "skillsbench_task_source_preflight_selection": [
        "skillsbench_task_setup_preflight",
        "canonical_task_present",
        "nearest_canonical_task_ids",
    ],
    "skillsbench_task_source_excluded": [
        "skillsbench_task_setup_preflight",
        "task_excluded_from_formal_tasks",
        "registry_source_kind=tasks_extra",
        "registry_excluded=true",
    ],
    "runner_result_finalization": [
        "post_launch_compact_polling_contract",
        "stale_active_job_reconciliation_marker",
        "worker_closes_with_trial_result_or_terminal_marker",
    ],
}
# Profiles whose content is particular to loopx's Codex experiments ([loopx] in §5.12).
_LOOPX_PROFILES = frozenset(
    {
        "runner_codex_cli_materialization",
        "runner_setup_timeout",
        "skillsbench_codex_acp_post_success_finalization",
        "skillsbench_codex_acp_runtime_preflight",
        "skillsbench_setup_preflight_selection",
    }
)


def _route_class(failure_class: str, src: Mapping[str, Any]) -> str:
    if failure_class in _PRE_AGENT_CLASSES:
        attribution = compact_text(src.get("score_failure_attribution"), 120)
        if attribution in _PREFLIGHT_ATTRIBUTIONS:
            return attribution
    return failure_class


# Routes benchledger adds to loopx's table (§5.12 "(new)"): loopx 0.4.8 leaves these unrouted.
_BENCHLEDGER_ROUTED_CLASSES = frozenset(
    {
        "model_provider_failure_before_solution_attempt",
        "run_incomplete",
        "run_result_corrupt",
        "agent_idle_timeout_before_solution_completion",
        "agent_budget_exhausted_before_solution_completion",
        "agent_refused_task",
        "run_cancelled",
    }
)


def repair_class_for(
    failure_class: str,
    scope: str,
    src: Mapping[str, Any],
    *,
    loopx_only: bool = False,
    round_success: bool | None = None,
) -> tuple[str, str]:
    """(priority, repair_class), or ("", "") when the class has no repair route (§5.12).

    ``loopx_only``: loopx 0.4.8's table, without the routes benchledger adds.
    ``round_success``: whether a round succeeded, when the caller has already read it.
    """
    cls = _route_class(failure_class, src)
    if loopx_only and cls in _BENCHLEDGER_ROUTED_CLASSES:
        cls = ""
    if cls.startswith("codex_cli_") or cls.startswith("worker_install_failed"):
        return "P0", "runner_codex_cli_materialization"
    if cls == "environment_setup_failed_before_worker":
        return "P0", "benchmark_environment_setup_contract"
    if cls in _SETUP_TIMEOUT_CLASSES:
        return "P0", "runner_setup_timeout"
    if cls in _MODEL_ACCESS_CLASSES:
        return "P0", "runner_model_access"
    if cls.startswith("skillsbench_codex_acp_"):
        succeeded = round_success_observed(src) if round_success is None else round_success
        if succeeded and src.get("codex_acp_runtime_preflight_passed") is True:
            return "P0", "skillsbench_codex_acp_post_success_finalization"
        return "P0", "skillsbench_codex_acp_runtime_preflight"
    priority, repair_class = _repair_class_tail(cls, scope)
    if loopx_only and repair_class == "runner_or_setup_triage":
        return "", ""
    return priority, repair_class


def _repair_class_tail(cls: str, scope: str) -> tuple[str, str]:
    if cls in (
        "skillsbench_docker_apt_setup_risk_preflight_blocked",
        "skillsbench_dockerfile_package_bootstrap_risk_preflight_blocked",
    ):
        return "P1", "skillsbench_setup_preflight_selection"
    if cls == "skillsbench_verifier_bootstrap_risk_preflight_blocked":
        return "P1", "skillsbench_verifier_bootstrap_preflight_selection"
    if cls == "skillsbench_task_source_preflight_blocked":
        return "P1", "skillsbench_task_source_preflight_selection"
    if cls == "skillsbench_task_source_excluded":
        return "P1", "skillsbench_task_source_excluded"
    if cls in ("score_missing", "run_incomplete", "run_result_corrupt"):
        return "P0", "runner_result_materialization"
    if cls in _FINALIZATION_CLASSES:
        return "P0", "runner_result_finalization"
    if cls == "score_failure_unattributed" or scope == "attribution_required":
        return "P0", "verifier_attribution_required"
    if cls in _ALIGNMENT_CLASSES:
        return "P0", "worker_verifier_alignment"
    if cls.startswith("verifier_") or scope == "verifier_or_infra":
        return "P0", "verifier_or_infra_repair"
    if cls in (
        "agent_timeout_before_solution_completion",
        "agent_idle_timeout_before_solution_completion",
    ):
        return "P1", "case_timeout_research"
    if cls in (
        "agent_exception_before_solution_completion",
        "agent_budget_exhausted_before_solution_completion",
        "agent_refused_task",
    ):
        return "P1", "case_exception_research"
    if cls == "run_cancelled":
        return "P1", "run_rerun_required"
    if scope in RUNNER_FAILURE_SCOPES:
        return "P1", "runner_or_setup_triage"
    return "", ""


def _repair_profile(
    repair_class: str, src: Mapping[str, Any], *, loopx_reading: bool = False
) -> dict[str, Any] | None:
    """The structured profile of a route; ``loopx_reading`` emits loopx's Codex-specific
    profiles whatever the mode, as loopx does on load."""
    mode = as_str(src.get("mode"))
    loopx_mode = loopx_reading or "codex" in mode or "loopx" in mode
    if repair_class in _LOOPX_PROFILES and not loopx_mode:
        return None
    if repair_class not in _PREFLIGHTS:
        return None
    profile: dict[str, Any] = {
        "schema_version": "benchmark_repair_profile_v0",
        "repair_class": repair_class,
        "required_preflight": list(_PREFLIGHTS[repair_class]),
        "raw_logs_required": False,
        "raw_task_text_required": False,
        "rerun_allowed_after_profile_applied": True,
    }
    if repair_class in ("runner_codex_cli_materialization", "runner_setup_timeout"):
        required: dict[str, Any] = {"codex_install_strategy": "require_existing_codex"}
        if repair_class == "runner_setup_timeout":
            required["agent_setup_timeout_multiplier"] = 8
            required["agent_timeout_multiplier"] = 8
        profile["required_launch_overrides"] = required
        profile["disallowed_launch_overrides"] = {
            "codex_install_strategy": "runtime_install_if_missing"
        }
    if repair_class == "runner_model_access":
        blocked = compact_text(src.get("agent_model"), 120)
        profile["blocked_model_route"] = blocked
        if loopx_mode:
            profile["recommended_model_route"] = (
                "current_local_codex_config_model_after_probe"
                if blocked == "gpt-5.5"
                else "gpt-5.5"
            )
    if repair_class == "runner_result_finalization":
        profile["trajectory_required"] = False
    return profile


def repair_fields(failure_class: str, scope: str, src: Mapping[str, Any]) -> dict[str, Any]:
    priority, repair_class = repair_class_for(failure_class, scope, src)
    return _route_fields(priority, repair_class, src)


def _route_fields(
    priority: str, repair_class: str, src: Mapping[str, Any], *, loopx_reading: bool = False
) -> dict[str, Any]:
    if not repair_class:
        return {}
    fields: dict[str, Any] = {
        "repair_priority": priority,
        "repair_class": repair_class,
        # loopx stores its sentence whole; rows of ours hold it to the §5.12 limit, the same cut
        # every rendering of a next action makes.
        "next_action": _NEXT_ACTIONS[repair_class]
        if loopx_reading
        else compact_text(_NEXT_ACTIONS[repair_class], 220),
    }
    profile = _repair_profile(repair_class, src, loopx_reading=loopx_reading)
    if profile is not None:
        fields["repair_profile"] = profile
    return fields


def loopx_repair_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """The route loopx recomputes when it loads a stored row: from the stored class and scope,
    loopx's table only, a round success read from the row's own round fields."""
    round_success = (
        row.get("round_success_observed") is True
        or row.get("first_success_round") is not None
        or row.get("best_round_passed") is True
        or row.get("final_round_passed") is True
    )
    priority, repair_class = repair_class_for(
        compact_text(row.get("failure_class"), 120),
        compact_text(row.get("failure_scope"), 80),
        row,
        loopx_only=True,
        round_success=round_success,
    )
    return _route_fields(priority, repair_class, row, loopx_reading=True)
