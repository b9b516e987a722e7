"""[loopx-specific] Main-table review of a product-mode pair (docs/formats/ledger_v0.md §7,
loopx-compat.md).

A case whose latest treatment runs loopx in product mode may be claimed in a main results table
only when the latest baseline is the raw Codex autonomous max-5 route, both ran blind (no
official feedback, no reward forwarding) under the same round budget of at least 5, both carry
compact round metrics, and the treatment shows loopx actually ran inside the case. Every unmet
condition is a named claim blocker; the blockers are joined with ``,`` in the order checked.
"""

from __future__ import annotations

from typing import Any

from benchledger.ledger.rules.row.values import compact_text

REVIEW_SCHEMA = "benchmark_product_mode_comparison_v0"
COMPARISON_ID = "skillsbench_product_mode_main_table_v0"
DEFAULT_BENCHMARK = "skillsbench@1.1"
MIN_ROUNDS = 5
BASELINE_TOKENS = (
    "raw-codex-autonomous-max5",
    "raw_codex_autonomous_max5",
    "skillsbench_raw_codex_autonomous_max5",
)
TREATMENT_TOKENS = ("loopx-product-mode", "loopx_product_mode", "skillsbench_loopx_product_mode")
HEADLINE_METRICS = ("best_score", "final_score", "first_success_round", "declared_done_score")
# What the compact review keeps, in loopx's field set.
_REVIEW_FIELDS = (
    "schema_version",
    "comparison_id",
    "main_table_claim_allowed",
    "product_mode_pair_complete",
    "claim_blocker",
    "benchmark_id",
    "case_id",
    "max_rounds_budget",
    "baseline_route_valid",
    "treatment_route_valid",
    "treatment_loopx_lifecycle_observed",
    "official_feedback_blinded",
)


def _identity_tokens(row: dict, *, contract_fields: tuple[str, ...]) -> list[str]:
    """Lower-cased arm, mode, route and loop-contract texts, as loopx compacts them (160)."""
    contract = row.get("benchmark_loop_contract")
    values = [row.get("arm_id"), row.get("mode"), row.get("route")]
    if isinstance(contract, dict):
        values += [contract.get(key) for key in contract_fields]
    tokens = []
    for value in values:
        if value is None:
            continue
        text = value if type(value) is str and len(value) <= 160 else compact_text(value)
        if text:
            tokens.append(text.lower())
    return tokens


def _matches(tokens: list[str], needles: tuple[str, ...]) -> bool:
    return any(needle in token for needle in needles for token in tokens)


def product_roles(row: dict) -> tuple[bool, bool]:
    """(names the raw-Codex max-5 baseline route, names loopx's product-mode route)."""
    tokens = _identity_tokens(row, contract_fields=("route", "protocol_id"))
    return _matches(tokens, BASELINE_TOKENS), _matches(tokens, TREATMENT_TOKENS)


def is_product_treatment(row: dict) -> bool:
    """The row names loopx's product-mode route (arm, mode, route or loop contract)."""
    return product_roles(row)[1]


def _route_matches(row: dict, needles: tuple[str, ...]) -> bool:
    """The pair review's own route check: the loop contract's route, not its protocol id."""
    return _matches(_identity_tokens(row, contract_fields=("route",)), needles)


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _round_budget(row: dict) -> int | None:
    contract = _dict(row.get("benchmark_loop_contract"))
    for value in (contract.get("max_rounds_budget"), row.get("max_rounds_budget")):
        if _positive_int(value):
            return value
    return _positive_int(_dict(row.get("round_reward_trace")).get("max_rounds_budget"))


def _pair_budget(baseline: dict, treatment: dict) -> int:
    """The budget the pair is judged at: both rows' equal budget when it is at least 5."""
    budgets = [_round_budget(baseline), _round_budget(treatment)]
    if budgets[0] is not None and budgets[0] == budgets[1] and budgets[0] >= MIN_ROUNDS:
        return budgets[0]
    return MIN_ROUNDS


def _feedback_blinded(row: dict) -> bool:
    if row.get("official_feedback_blinded") is True:
        return True
    trace = row.get("round_reward_trace")
    if isinstance(trace, dict):
        return trace.get("official_feedback_blinded") is True
    return _dict(row.get("benchmark_loop_contract")).get("official_feedback_blinded") is True


def _reward_forwarded(row: dict) -> bool | None:
    for value in (
        row.get("reward_feedback_forwarded"),
        _dict(row.get("round_reward_trace")).get("reward_feedback_forwarded"),
        _dict(row.get("benchmark_loop_contract")).get("official_feedback_forwarded"),
    ):
        if isinstance(value, bool):
            return value
    return None


def _has_round_metrics(row: dict) -> bool:
    for key in ("best_round_reward", "final_round_reward"):
        value = row.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return True
    rewards = row.get("round_rewards")
    if isinstance(rewards, list) and rewards:
        return True
    trace = row.get("round_reward_trace")
    if isinstance(trace, dict):
        records = trace.get("records")
        return isinstance(records, list) and bool(records)
    return False


def lifecycle_observed(row: dict) -> bool:
    """Evidence that loopx itself ran inside the case (contract, prompt trace or CLI calls)."""
    contract = row.get("product_mode_lifecycle_contract")
    if isinstance(contract, dict) and (
        contract.get("satisfied") is True and contract.get("countable_treatment") is not False
    ):
        return True
    if row.get("loopx_prompt_driven_lifecycle_observed") is True:
        return True
    for key in (
        "worker_loopx_cli_call_total",
        "loopx_cli_command_count",
        "loopx_prompt_driven_command_count",
    ):
        if _positive_int(row.get(key)):
            return True
    if _positive_int(_dict(row.get("solution_phase_counters")).get("loopx_cli_command_count")):
        return True
    trace = row.get("loopx_prompt_driven_trace")
    return isinstance(trace, dict) and trace.get("lifecycle_observed") is True


def _case_of(row: dict) -> str:
    case_id = compact_text(row.get("case_id"))
    if case_id:
        return case_id
    case_ids = row.get("case_ids")
    for item in case_ids if isinstance(case_ids, list) else []:
        text = compact_text(item)
        if text:
            return text
    return ""


def claim_blockers(baseline: dict, treatment: dict, benchmark_id: str, budget: int) -> list[str]:
    """Every reason the pair cannot be claimed, in the order they are checked."""
    blockers: list[str] = []
    b_case, t_case = _case_of(baseline), _case_of(treatment)
    if not b_case or not t_case or b_case != t_case:
        blockers.append("case_id_mismatch_or_missing")
    b_bench = compact_text(baseline.get("benchmark_id")) or benchmark_id
    t_bench = compact_text(treatment.get("benchmark_id")) or benchmark_id
    if b_bench != t_bench:
        blockers.append("benchmark_id_mismatch")
    if b_bench != benchmark_id:
        blockers.append("unexpected_benchmark_id")
    if not _route_matches(baseline, BASELINE_TOKENS):
        blockers.append("baseline_not_raw_codex_autonomous_max5")
    if not _route_matches(treatment, TREATMENT_TOKENS):
        blockers.append("treatment_not_loopx_product_mode")
    budgets = {}
    for label, row in (("baseline", baseline), ("treatment", treatment)):
        observed = _round_budget(row)
        if observed is not None:
            budgets[label] = observed
            if observed < MIN_ROUNDS:
                blockers.append(f"{label}_max_rounds_below_{MIN_ROUNDS}")
            elif observed != budget:
                blockers.append(f"{label}_max_rounds_not_{budget}")
        if not _feedback_blinded(row):
            blockers.append(f"{label}_official_feedback_not_blinded")
        if _reward_forwarded(row) is not False:
            blockers.append(f"{label}_reward_feedback_forwarding_not_disabled")
        if not _has_round_metrics(row):
            blockers.append(f"{label}_compact_metrics_missing")
    if len(budgets) == 2 and budgets["baseline"] != budgets["treatment"]:
        blockers.append("max_rounds_budget_mismatch")
    if treatment.get("loopx_inside_case") is not True:
        blockers.append("treatment_loopx_inside_case_not_confirmed")
    if not lifecycle_observed(treatment):
        blockers.append("treatment_loopx_lifecycle_not_observed")
    return blockers


def review_pair(baseline: dict, treatment: dict) -> dict[str, Any]:
    """The compact main-table review stored in the case decision."""
    benchmark_id = (
        compact_text(baseline.get("benchmark_id") or treatment.get("benchmark_id") or "", 120)
        or DEFAULT_BENCHMARK
    )
    budget = _pair_budget(baseline, treatment)
    blockers = claim_blockers(baseline, treatment, benchmark_id, budget)
    allowed = not blockers
    review = {
        "schema_version": REVIEW_SCHEMA,
        "comparison_id": COMPARISON_ID,
        "main_table_claim_allowed": allowed,
        "product_mode_pair_complete": allowed,
        "claim_blocker": "none" if allowed else ",".join(blockers),
        "benchmark_id": compact_text(baseline.get("benchmark_id")) or benchmark_id,
        "case_id": _case_of(baseline) or _case_of(treatment),
        "max_rounds_budget": budget,
        "baseline_route_valid": "baseline_not_raw_codex_autonomous_max5" not in blockers,
        "treatment_route_valid": "treatment_not_loopx_product_mode" not in blockers,
        "treatment_loopx_lifecycle_observed": lifecycle_observed(treatment),
        "official_feedback_blinded": _feedback_blinded(baseline) and _feedback_blinded(treatment),
    }
    compact = {key: review[key] for key in _REVIEW_FIELDS if review[key] not in (None, "", [])}
    compact["headline_metrics"] = list(HEADLINE_METRICS)
    return compact


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}
