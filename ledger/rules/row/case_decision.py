"""A case's ``latest_decision`` (docs/formats/ledger_v0.md §7): what the case needs next, from its
active rows.

Only the latest baseline and the latest treatment drive a paired decision, so an old failure that
was since repaired no longer asks for repair. The taxonomy and its field shapes are loopx
0.4.8's, so an imported ledger decides exactly as loopx decides it; benchledger's additions are
the ``rerun_required`` suffix and the stored ``arm_role`` of rows it writes (§5.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchledger.ledger.rules.record.vocabulary import RUNNER_FAILURE_SCOPES
from benchledger.ledger.rules.row.ordering import row_sort_key
from benchledger.ledger.rules.row.product_mode_pair import (
    is_product_treatment,
    product_roles,
    review_pair,
)
from benchledger.ledger.rules.row.repair import loopx_repair_fields
from benchledger.ledger.rules.row.values import compact_text

_SUFFIX_BY_REPAIR_CLASS = {
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
}
_DEFAULT_SUFFIX = "runner_or_setup_repair_required"
_BRIDGE_LABEL = "worker_bridge_connected_official_score_failure"
_NO_UPLIFT_DECISIONS = frozenset(
    {"paired_no_score_uplift", "paired_no_score_uplift_case_research_required"}
)
_BASELINE, _TREATMENT = frozenset({"baseline"}), frozenset({"treatment"})
_BOTH, _NEITHER = _BASELINE | _TREATMENT, frozenset[str]()
_RESEARCH_KIND = {"case_timeout_research": "timeout", "case_exception_research": "exception"}

# [loopx-specific] case routing: wording kept from loopx so routed cases read the same.
_ROUTING_NEXT_ACTION = {
    "case_exception_research": "inspect compact exception attribution and form a case-level "
    "intervention hypothesis before rerunning this case",
    "timeout_tier_policy_candidate": "decide the timeout tier and continuation cadence before "
    "rerunning; separate setup timeout from solver timeout evidence",
    "case_timeout_research": "inspect compact timeout context and decide whether this case "
    "needs a private long-horizon timeout tier",
    "bridge_connected_no_uplift": "treat the bridge as connected and analyze case or solution "
    "quality; do not relaunch this case as a bridge repair",
}


def arm_roles(row: dict) -> frozenset[str]:
    """Which sides of a pair a row can stand for.

    A stored ``arm_role`` (rows benchledger writes) is the answer. Other rows are read as loopx
    reads them: ``baseline``/``treatment`` in the arm name, or the product-mode routes; a row
    may then count as both.
    """
    stored = row.get("arm_role")
    if stored in ("baseline", "treatment"):
        return frozenset({stored})
    if stored == "other":
        return frozenset()
    arm = str(row.get("arm_id", ""))
    product_baseline, product_treatment = product_roles(row)
    baseline = "baseline" in arm or product_baseline
    treatment = "treatment" in arm or product_treatment
    if baseline:
        return _BOTH if treatment else _BASELINE
    return _TREATMENT if treatment else _NEITHER


def arm_role(row: dict) -> str:
    """One role for display and filters: baseline, treatment or other."""
    roles = arm_roles(row)
    return "baseline" if "baseline" in roles else "treatment" if roles else "other"


def decide_case(case_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The case's ``latest_decision``: active rows decide, archived ones are only counted."""
    active = [r for r in case_rows if r.get("archive_state") != "archived"]
    return latest_decision(
        sorted(active, key=row_sort_key), archived_run_count=len(case_rows) - len(active)
    )


def latest_decision(active_rows_sorted: list[dict], *, archived_run_count: int = 0) -> dict:
    """Decide what a case needs next from its active rows (already in §6.3 order).

    ``archived_run_count`` only tells an archived-only case from an empty one.
    """
    return decision_from_facts(case_facts(active_rows_sorted, archived_run_count))


@dataclass
class CaseFacts:
    """What a case's decision reads of its rows: the latest active row, the latest baseline and
    treatment, and the routing counts. Why a type: a batch landing many rows on one case keeps
    these up to date row by row (``ledger.rules.row.case_landing``) instead of re-reading every
    row of the case after each one."""

    latest: dict | None = None
    baseline: dict | None = None
    treatment: dict | None = None
    exceptions: int = 0  # active rows routed to ``case_exception_research``
    timeouts: int = 0  # ... to ``case_timeout_research``
    bridged: int = 0  # active rows that are bridge-connected official-score failures
    archived: int = 0


def case_facts(active_rows_sorted: list[dict], archived_run_count: int = 0) -> CaseFacts:
    """The facts of a case's active rows, in §6.3 order (the last of each kind is the latest)."""
    facts = CaseFacts(archived=archived_run_count)
    for row in active_rows_sorted:
        roles = arm_roles(row)
        if "baseline" in roles:
            facts.baseline = row
        if "treatment" in roles:
            facts.treatment = row
        count_routing(facts, routing_marks(row), 1)
    facts.latest = active_rows_sorted[-1] if active_rows_sorted else None
    return facts


def routing_marks(row: dict) -> tuple[str, bool]:
    """[loopx-specific] what a row adds to its case's routing: its repair class, and whether it
    is a bridge-connected official-score failure."""
    labels = _labels(row.get("failure_labels")) or _labels(row.get("failure_attribution_labels"))
    failure_class = compact_text(row.get("failure_class"), 120)
    bridged = failure_class == _BRIDGE_LABEL or _BRIDGE_LABEL in labels
    return compact_text(row.get("repair_class"), 120), bridged


def count_routing(facts: CaseFacts, marks: tuple[str, bool], sign: int) -> None:
    """Add (``sign`` 1) or take away (-1) one active row's ``routing_marks``."""
    repair_class, bridged = marks
    if repair_class == "case_exception_research":
        facts.exceptions += sign
    elif repair_class == "case_timeout_research":
        facts.timeouts += sign
    if bridged:
        facts.bridged += sign


def decision_from_facts(facts: CaseFacts) -> dict:
    """§7 from the case's facts: a pair when both sides are there, else a baseline's decision,
    else the latest run; then the case-level routing."""
    if facts.latest is None:
        if facts.archived > 0:
            return {"decision": "archived_only", "archived_run_count": facts.archived}
        return {"decision": "no_runs_recorded"}
    baseline, treatment = facts.baseline, facts.treatment
    if baseline is not None and treatment is not None:
        decision = _paired_decision(baseline, treatment)
    elif baseline is not None:
        decision = _baseline_decision(baseline)
    else:
        decision = {
            "decision": "single_arm_recorded",
            "latest_run_id": facts.latest.get("run_id"),
        }
    routing = _case_routing(facts, decision)
    if routing is not None:
        decision["case_routing"] = routing
    return decision


def _paired_decision(baseline: dict, treatment: dict) -> dict:
    """§7 pair rules, first match; the order encodes which blocker must be cleared first."""
    review = review_pair(baseline, treatment) if is_product_treatment(treatment) else None
    if review is not None and review.get("main_table_claim_allowed") is not True:
        return {
            "decision": "product_mode_pair_incomplete",
            "baseline_run_id": baseline.get("run_id"),
            "treatment_run_id": treatment.get("run_id"),
            "product_mode_main_table_pair": review,
        }
    pair = _pair_fields(baseline, treatment)
    if review is not None:
        pair["product_mode_main_table_pair"] = review
    b_scope, t_scope = pair["baseline_failure_scope"], pair["treatment_failure_scope"]
    delta = pair["official_score_delta"]
    if "attribution_required" in (b_scope, t_scope):
        return {"decision": "paired_result_requires_attribution", **pair}
    if "verifier_or_infra" in (b_scope, t_scope):
        return {"decision": "paired_result_blocked_by_verifier_or_infra", **pair}
    if b_scope in RUNNER_FAILURE_SCOPES:
        return {"decision": "paired_baseline_" + _suffix(baseline), **pair, **_repair(baseline)}
    if t_scope in RUNNER_FAILURE_SCOPES:
        return {"decision": "paired_treatment_" + _suffix(treatment), **pair, **_repair(treatment)}
    if delta is None:
        return {"decision": "paired_result_needs_score_review", **pair}
    if delta > 0:
        return {"decision": "paired_treatment_improved", **pair}
    if delta < 0:
        return {"decision": "paired_treatment_regressed", **pair}
    return _no_uplift_decision(baseline, treatment, pair)


def _no_uplift_decision(baseline: dict, treatment: dict, pair: dict) -> dict:
    b_scope, t_scope = pair["baseline_failure_scope"], pair["treatment_failure_scope"]
    research = next(
        (
            row
            for row in (treatment, baseline)
            if compact_text(row.get("repair_priority"), 20) == "P1"
        ),
        None,
    )
    if b_scope == "case_or_solution" and t_scope == "case_or_solution" and research is not None:
        kind = _RESEARCH_KIND.get(compact_text(research.get("repair_class"), 120), "case")
        return {
            "decision": f"paired_no_score_uplift_{kind}_research_required",
            **pair,
            **_repair(research),
        }
    if b_scope == "passed" and t_scope == "passed":
        return {"decision": "paired_baseline_solved_treatment_preserved", **pair}
    return {"decision": "paired_no_score_uplift", **pair}


def _baseline_decision(baseline: dict) -> dict:
    base = {
        "baseline_run_id": baseline.get("run_id"),
        "failure_scope": baseline.get("failure_scope"),
    }
    scope = baseline.get("failure_scope")
    if baseline.get("official_passed") is True:
        return {"decision": "baseline_passed_not_current_treatment_priority", **base}
    if scope == "attribution_required":
        return {"decision": "baseline_failed_requires_attribution", **base, **_repair(baseline)}
    if scope == "case_or_solution":
        return {
            "decision": "baseline_failed_treatment_candidate",
            **base,
            **_case_route(baseline),
        }
    return {"decision": "baseline_" + _suffix(baseline), **base, **_repair(baseline)}


def _case_route(row: dict) -> dict:
    """The route a failed baseline's class has, with the row's own wording when it carries
    that route (loopx recomputes it here rather than reading the stored one)."""
    route = loopx_repair_fields(
        {
            **row,
            "round_success_observed": False,
            "first_success_round": None,
            "best_round_passed": False,
            "final_round_passed": False,
        }
    )
    if not route:
        return {}
    if route["repair_class"] == row.get("repair_class") and row.get("next_action"):
        route["next_action"] = row["next_action"]
    route["failure_class"] = compact_text(row.get("failure_class"), 120)
    return {key: value for key, value in route.items() if value}


def _pair_fields(baseline: dict, treatment: dict) -> dict:
    b_score, t_score = _score(baseline), _score(treatment)
    return {
        "baseline_run_id": baseline.get("run_id"),
        "treatment_run_id": treatment.get("run_id"),
        "official_score_delta": None if b_score is None or t_score is None else t_score - b_score,
        "baseline_failure_scope": compact_text(baseline.get("failure_scope"), 80),
        "treatment_failure_scope": compact_text(treatment.get("failure_scope"), 80),
    }


def _repair(row: dict) -> dict:
    """The row's repair fields as a decision shows them (empty ones left out)."""
    fields = {
        "repair_priority": compact_text(row.get("repair_priority"), 20),
        "repair_class": compact_text(row.get("repair_class"), 120),
        "failure_class": compact_text(row.get("failure_class"), 120),
        "next_action": compact_text(row.get("next_action"), 220),
    }
    return {key: value for key, value in fields.items() if value}


def _suffix(row: dict) -> str:
    return _SUFFIX_BY_REPAIR_CLASS.get(compact_text(row.get("repair_class"), 120), _DEFAULT_SUFFIX)


def _score(row: dict) -> float | int | None:
    value = row.get("official_score")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _case_routing(facts: CaseFacts, decision: dict) -> dict | None:
    """[loopx-specific] a case-level research route that outlives any single run."""
    if facts.exceptions:
        return _routing(
            "case_exception_research", f"case_exception_research_count={facts.exceptions}"
        )
    if facts.timeouts:
        kind = "timeout_tier_policy_candidate" if facts.timeouts >= 2 else "case_timeout_research"
        return _routing(kind, f"case_timeout_research_count={facts.timeouts}")
    no_uplift = decision.get("official_score_delta") == 0 or (
        compact_text(decision.get("decision"), 120) in _NO_UPLIFT_DECISIONS
    )
    if facts.bridged and no_uplift:
        return _routing(
            "bridge_connected_no_uplift",
            f"{_BRIDGE_LABEL}_runs={facts.bridged}; official_score_delta=0",
        )
    return None


def _labels(value: Any) -> list[str]:
    items = [compact_text(item) for item in value] if isinstance(value, list) else []
    return [item for item in items if item][:20]


def _routing(kind: str, evidence: str) -> dict:
    return {
        "class": kind,
        "priority": "P1",
        "evidence": evidence,
        "next_action": _ROUTING_NEXT_ACTION[kind],
    }
