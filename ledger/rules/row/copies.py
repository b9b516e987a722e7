"""Fields a row copies from its compact record (docs/formats/ledger_v0.md §3 "Copies"): accounting,
attempt flags, native-goal facts and the loopx-specific fields.

A copy is not a derivation, but it is still written by benchledger, so texts are filtered and
cut like every row field and non-finite numbers are dropped; the tables name what is copied.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from benchledger.ledger.rules.row.comparison_facts import comparison_fields
from benchledger.ledger.rules.row.failure_class import setup_blockers
from benchledger.ledger.rules.row.identity import route_of
from benchledger.ledger.rules.row.values import as_mapping, first_bool, ledger_text, text_list

_ACCOUNTING_FIELDS = (
    ("attempt_lifecycle_phase", "lifecycle_phase"),
    ("attempt_failure_label", "failure_label"),
    ("attempt_failure_class", "failure_class"),
)
_ATTEMPT_BOOLS = (
    "launcher_attempt_countable",
    "case_attempt_countable",
    "solver_attempt_countable",
    "verifier_attempt_countable",
    "official_score_attempt_countable",
)
NATIVE_GOAL_FIELDS = (
    "native_goal_session_policy",
    "max_rounds_budget_applies_to",
    "native_goal_initial_turn_budget",
    "native_goal_same_thread_followup_budget",
    "native_goal_independent_attempt_budget",
    "native_goal_fresh_thread_per_independent_attempt",
    "native_goal_official_reward_feedback_forwarded_to_worker",
    "native_goal_verifier_output_forwarded_to_worker",
)
_LOOPX_COPIES = (
    "codex_acp_runtime_preflight_passed",
    "app_server_goal_round_semantics",
    "loopx_inside_case",
    "worker_bridge_status",
    "loopx_prompt_driven_lifecycle_observed",
    "worker_loopx_cli_call_total",
    "loopx_prompt_driven_case_cli_call_count",
    "product_mode_lifecycle_contract",
    "solution_quality_signals",
    "operator_simulator_run",
    "task_setup_preflight",
    "task_staging",
    "compose_setup_diagnostic",
    "post_launch_first_blocker",
    "compact_monitor_class",
    "job_active_without_trial_result",
    "job_stale_active_without_trial_result",
    "stale_active_reconcile_requested",
)


def _copy_value(value: Any, limit: int = 120) -> Any:
    if value is None:  # most of the 26 copied loopx fields, on a record from another runner
        return None
    if isinstance(value, str):
        return ledger_text(value, limit)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def copied_fields(record: Mapping[str, Any], *, post_launch: bool) -> dict[str, Any]:
    """Straight copies from the record (§3 'Copies'), texts filtered and cut."""
    model = as_mapping(record.get("model_control"))
    aggregation = as_mapping(record.get("score_aggregation"))
    out: dict[str, Any] = {
        "mode": ledger_text(record.get("mode"), 120),
        "route": ledger_text(route_of(record), 120),
        "job_name": ledger_text(record.get("job_name"), 160),
        "planned_run_key": ledger_text(record.get("planned_run_key"), 200),
        "runner_return_status": ledger_text(record.get("runner_return_status"), 120),
        "score_failure_attribution": ledger_text(record.get("score_failure_attribution"), 120),
        "failure_labels": text_list(record.get("failure_attribution_labels"), 8),
        "setup_blockers": text_list(setup_blockers(record), 4),
        "agent_model": ledger_text(as_mapping(record.get("agent")).get("model"), 120),
        "model_control_status": ledger_text(model.get("control_status"), 120),
        "actual_model_verified": first_bool(model, "actual_model_verified"),
        "model_warning_labels": text_list(
            model.get("warning_labels") or record.get("runner_warning_labels"), 6
        ),
        "submit_eligible": first_bool(record, "submit_eligible"),
        "leaderboard_evidence": first_bool(record, "leaderboard_evidence"),
        "source_event_schema": ledger_text(record.get("schema_version"), 120),
        "attempt_count": aggregation.get("attempt_count"),
        "scored_attempt_count": aggregation.get("scored_attempt_count"),
        "unscored_attempt_count": aggregation.get("unscored_attempt_count"),
        "score_missing_reason": ledger_text(aggregation.get("primary_score_missing_reason")),
        "pass_at_k": record.get("pass_at_k") if isinstance(record.get("pass_at_k"), dict) else None,
    }
    out.update(_accounting_copies(record))
    out.update(comparison_fields(record, ledger_text))
    out.update(_loopx_copies(record))
    if post_launch:
        out.update(_post_launch_copies(record))
    return out


def _accounting_copies(record: Mapping[str, Any]) -> dict[str, Any]:
    accounting = as_mapping(record.get("attempt_accounting"))
    out: dict[str, Any] = {
        row_key: ledger_text(accounting.get(key), 120) for row_key, key in _ACCOUNTING_FIELDS
    }
    for key in _ATTEMPT_BOOLS:
        value = accounting.get(key)
        out[key] = value if isinstance(value, bool) else first_bool(record, key)
    return out


def _loopx_copies(record: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: _copy_value(record.get(key)) for key in _LOOPX_COPIES}
    semantics = as_mapping(record.get("app_server_goal_round_semantics"))
    contract = as_mapping(record.get("native_goal_worker_contract"))
    use_contract = route_of(record) == "codex-app-server-goal-baseline" or contract.get(
        "required"
    ) in (True, "required")
    for key in NATIVE_GOAL_FIELDS:
        value = record.get(key, semantics.get(key))
        if value is None and use_contract:
            value = contract.get(key)
        out[key] = _copy_value(value)
    return out


def _post_launch_copies(record: Mapping[str, Any]) -> dict[str, Any]:
    marker = as_mapping(record.get("compact_failure_marker"))
    out: dict[str, Any] = {
        "compact_failure_evidence_kind": ledger_text(marker.get("evidence_kind"), 120),
        "ledger_attempt_kind": ledger_text(marker.get("ledger_attempt_kind"), 120),
    }
    for key in ("terminal_closeout", "case_attempt_countable", "benchmark_budget_countable"):
        value = marker.get(key)
        if isinstance(value, bool):
            out[key] = value
    return out
