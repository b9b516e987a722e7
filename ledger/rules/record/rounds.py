"""Round rewards of a multi-round run (docs/formats/ledger_v0.md §5.14,
docs/formats/benchmark_run_v0.md §4.10).

A traced summary value wins over one derived from the round records, because the trace is what
the runner itself reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.rules.row.values import (
    as_mapping,
    drop_empty,
    first_bool,
    is_number,
    is_pos_int,
    ledger_text,
)


def _round_records(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    by_round: dict[int, dict[str, Any]] = {}
    for item in trace.get("records") or []:
        record = as_mapping(item)
        number = record.get("agent_round")
        if not is_pos_int(number) or number in by_round:
            continue
        clean: dict[str, Any] = {"agent_round": number}
        for key in ("reward_present", "passed"):
            if isinstance(record.get(key), bool):
                clean[key] = record[key]
        if is_number(record.get("reward")):
            clean["reward"] = float(record["reward"])
        tool_calls = record.get("tool_calls")
        if isinstance(tool_calls, int) and not isinstance(tool_calls, bool) and tool_calls >= 0:
            clean["tool_calls"] = tool_calls
        by_round[number] = clean
    return [by_round[key] for key in sorted(by_round)][:32]


def _record_passed(record: Mapping[str, Any]) -> bool:
    if isinstance(record.get("passed"), bool):
        return record["passed"]
    return record.get("reward", 0) >= 1


def round_fields(src: Mapping[str, Any]) -> dict[str, Any]:
    """Round-level facts of a multi-round run (§5.14); trace values win over derivations."""
    trace = as_mapping(src.get("round_reward_trace"))
    semantics = as_mapping(src.get("app_server_goal_round_semantics"))
    out: dict[str, Any] = {"agent_declared_done": trace.get("agent_declared_done") is True}
    budget = trace.get("max_rounds_budget", semantics.get("benchflow_max_rounds_budget"))
    if budget is None:
        budget = src.get("max_rounds_budget")
    if is_number(budget):
        out["max_rounds_budget"] = budget
    for key in ("official_feedback_blinded", "reward_feedback_forwarded"):
        value = first_bool(trace, key)
        out[key] = value if value is not None else first_bool(src, key)
    if not trace:
        return drop_empty(out)
    records = _round_records(trace)
    out.update(_round_summary(trace, records))
    for key in ("declared_done_round", "declared_done_score"):
        if is_number(trace.get(key)):
            out[key] = trace[key]
    if records:
        out["loop_score_policy"] = ledger_text(trace.get("loop_score_policy")) or (
            "best_round_for_offline_controller_analysis"
        )
        out["official_score_policy"] = ledger_text(trace.get("official_score_policy")) or (
            "final_workspace_official_result"
        )
    return drop_empty(out)


def _round_summary(trace: Mapping[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"round_rewards": records, "round_reward_count": len(records)}
    first = trace.get("first_success_round")
    if not is_pos_int(first):
        first = next(
            (
                r["agent_round"]
                for r in records
                if ("reward" in r or "passed" in r) and _record_passed(r)
            ),
            None,
        )
    if first is not None:
        out["first_success_round"] = first
    observed = trace.get("success_observed")
    out["round_success_observed"] = observed if isinstance(observed, bool) else first is not None
    scored = [r for r in records if "reward" in r]
    final = scored[-1] if scored else None
    best = max(scored, key=lambda r: (r["reward"], -r["agent_round"])) if scored else None
    _put(out, "final_round", trace.get("final_round"), final and final["agent_round"])
    _put(out, "final_round_reward", trace.get("final_round_reward"), final and final["reward"])
    _put(
        out, "final_round_passed", trace.get("final_round_passed"), final and _record_passed(final)
    )
    _put(out, "best_reward_round", trace.get("best_reward_round"), best and best["agent_round"])
    _put(out, "best_round_reward", trace.get("best_round_reward"), best and best["reward"])
    _put(out, "best_round_passed", trace.get("best_round_passed"), best and _record_passed(best))
    is_final = trace.get("best_round_is_final")
    if (
        not isinstance(is_final, bool)
        and "final_round_reward" in out
        and "best_round_reward" in out
    ):
        is_final = out["final_round_reward"] == out["best_round_reward"]
    if isinstance(is_final, bool):
        out["best_round_is_final"] = is_final
    return out


def _put(out: dict[str, Any], key: str, traced: Any, derived: Any) -> None:
    if traced is not None and not isinstance(traced, (dict, list)):
        out[key] = float(traced) if key.endswith("_reward") and is_number(traced) else traced
    elif derived is not None:
        out[key] = derived
