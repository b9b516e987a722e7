"""``benchmark parity-check``: may a compact run back a "full loopx product path" claim? (§10)

[loopx-specific] A product-mode run claims that loopx itself drove the case (in-case goal state,
the loopx CLI lifecycle, a Codex trajectory). The claim is only as good as the compact evidence
that survived compaction, so this check reads the compacted record alone and says which evidence
is missing and which safety rule a leaky artifact broke. Pure: the caller resolves and compacts
the input (docs/formats/benchmark_run_v0.md §2) and passes the record in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchledger.ledger.core.read_boundary import LEDGER_READ_BOUNDARY as READ_BOUNDARY

SCHEMA_VERSION = "benchmark_codex_app_parity_posthoc_check_v0"
PARITY_TARGET = "codex_app_loopx_product_path"
INVALID_CLAIM_LEVEL = "invalid_or_unreadable_compact_benchmark_run"
MARKDOWN_TITLE = "Codex App Parity Posthoc Check"

REQUIRED_CALLS: tuple[str, ...] = ("status", "quota_should_run", "todo_list", "history", "check")
WRITE_CALLS: tuple[str, ...] = (
    "todo_claim",
    "todo_update",
    "refresh_state",
    "quota_spend",
    "case_result",
)
_PRODUCT_MARKERS = ("loopx_product", "codex_loopx")
_CANONICAL_STATE_PATH = re.compile(r"^/app/\.codex/goals/[^/\s]+/ACTIVE_GOAL_STATE\.md$")
_GOAL_STATE_SUFFIX = re.compile(r"\.codex/goals/[^/\s]+/ACTIVE_GOAL_STATE\.md$")
#: Nested blocks that may carry the in-case goal-state facts.
_STATE_BLOCKS = ("product_mode_lifecycle_contract", "episode_policy", "interaction_counters")


def _block(record: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = record.get(key)
    return value if isinstance(value, Mapping) else {}


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(0, int(value))


def route_of(record: Mapping[str, Any]) -> str:
    return str(record.get("route") or _block(record, "benchmark_loop_contract").get("route") or "")


def is_product_mode(record: Mapping[str, Any]) -> bool:
    """Declared by the counters or policy, or implied by the mode/route/runner name."""
    counters = _block(record, "interaction_counters")
    policy = _block(record, "episode_policy")
    if counters.get("product_mode") is True or policy.get("product_mode") is True:
        return True
    names = (record.get("mode"), route_of(record), record.get("source_runner"))
    return any(marker in str(name or "") for name in names for marker in _PRODUCT_MARKERS)


def _call_counts(counters: Mapping[str, Any]) -> tuple[dict[str, int], int]:
    """Per-call counts (a map of counts, or a list of call strings matched by substring)."""
    raw = counters.get("loopx_cli_calls")
    names = (*REQUIRED_CALLS, *WRITE_CALLS)
    if isinstance(raw, Mapping):
        counts = {name: _int(raw.get(name)) for name in names}
        observed = sum(_int(value) for value in raw.values())
    elif isinstance(raw, list):
        items = [str(item) for item in raw]
        counts = {name: sum(1 for item in items if name in item) for name in names}
        observed = len(items)
    else:
        counts, observed = dict.fromkeys(names, 0), 0
    usage = counters.get("loopx_cli_state_usage_counts")
    if isinstance(usage, Mapping):
        counts = {name: max(count, _int(usage.get(name))) for name, count in counts.items()}
    declared = max(_int(counters.get("loopx_cli_call_total")), _int(counters.get("total")))
    total = max(declared, observed, sum(counts.values()))
    return counts, total


def _state_counter(counters: Mapping[str, Any], kind: str, call_sum: int) -> int:
    """Max of the loopx state counters for ``kind`` (read/write) and the matching call sum."""
    keys = (
        f"loopx_state_{kind}s",
        f"loopx_state_{kind}_count",
        f"loopx_case_state_{kind}s",
        f"loopx_case_state_{kind}_count",
        f"loopx_cli_state_{kind}_count",
    )
    return max([call_sum, *(_int(counters.get(key)) for key in keys)])


def _state_facts(record: Mapping[str, Any]) -> tuple[str | None, bool]:
    """The in-case goal-state path and whether it was initialised before the agent started."""
    path, initialized = None, False
    for name in _STATE_BLOCKS:
        block = _block(record, name)
        for key in ("canonical_case_active_state_path", "case_active_state_path"):
            if path is None and isinstance(block.get(key), str):
                path = block[key]
        if block.get("case_active_state_initialized_before_agent") is True:
            initialized = True
    return path, initialized


def _path_kind(path: str | None) -> str:
    if not path:
        return "missing"
    if _CANONICAL_STATE_PATH.match(path):
        return "canonical_in_case_goal_state"
    return "goal_state_outside_app_root" if _GOAL_STATE_SUFFIX.search(path) else "noncanonical"


def _trajectory_summary_present(record: Mapping[str, Any]) -> bool:
    if _block(record, "interaction_counters").get("codex_cli_trajectory_summary_present") is True:
        return True
    if _block(record, "agent_activity"):
        return True
    trials = record.get("trials")
    return isinstance(trials, list) and any(
        isinstance(trial, Mapping) and trial.get("trajectory_present") is True for trial in trials
    )


def safety_checks(record: Mapping[str, Any]) -> dict[str, bool]:
    """True = safe. A compact record must never carry raw task text, feedback, verifier or trace."""
    boundary = _block(record, "read_boundary")
    validation = _block(record, "validation")
    failure = _block(record, "runner_failure")
    return {
        "raw_task_text_or_prompt_not_recorded": not (
            boundary.get("task_text_read") is True
            or validation.get("no_raw_task_text_read") is False
            or failure.get("raw_task_text_read") is True
        ),
        "reward_feedback_not_forwarded": record.get("reward_feedback_forwarded") is not True,
        "raw_verifier_output_not_recorded": not (
            boundary.get("raw_artifacts_read") is True or failure.get("raw_error_recorded") is True
        ),
        "raw_trajectory_or_trace_not_recorded": not (
            boundary.get("trajectory_read") is True
            or boundary.get("controller_trace_read") is True
            or validation.get("no_raw_trajectory_read") is False
            or failure.get("raw_trajectory_read") is True
        ),
    }


def _claim_level(product_mode: bool, missing: Sequence[str], unsafe: Sequence[str]) -> str:
    if unsafe:
        return "unsafe_or_leaky_artifact"
    if not product_mode:
        return "baseline_or_ablation_no_product_claim"
    if missing:
        return "product_mode_surrogate_missing_posthoc_evidence"
    return "full_product_path_evidence_present"


def parity_check(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``codex_app_parity_posthoc_check`` block for one compact record."""
    counters = _block(record, "interaction_counters")
    counts, total = _call_counts(counters)
    reads = _state_counter(counters, "read", sum(counts[name] for name in REQUIRED_CALLS))
    writes = _state_counter(counters, "write", sum(counts[name] for name in WRITE_CALLS))
    missing_calls = [name for name in REQUIRED_CALLS if counts[name] <= 0]
    path, initialized = _state_facts(record)
    kind = _path_kind(path)
    product_mode = is_product_mode(record)
    evidence = {
        "canonical_case_active_state_path": kind == "canonical_in_case_goal_state",
        "case_active_state_initialized_before_agent": initialized,
        "loopx_cli_trace_present": total > 0,
        "required_loopx_cli_calls_present": not missing_calls,
        "stateful_loopx_lifecycle_observed": reads > 0 and writes > 0,
        "codex_cli_trajectory_summary_present": _trajectory_summary_present(record),
    }
    missing = [name for name, ok in evidence.items() if not ok] if product_mode else []
    safety = safety_checks(record)
    unsafe = [name for name, ok in safety.items() if not ok]
    level = _claim_level(product_mode, missing, unsafe)
    return {
        "schema_version": SCHEMA_VERSION,
        "parity_target": PARITY_TARGET,
        "benchmark_id": record.get("benchmark_id"),
        "mode": record.get("mode"),
        "route": route_of(record) or None,
        "product_mode": product_mode,
        "evidence_checks": evidence,
        "safety_checks": safety,
        "loopx_cli_call_counts": {**counts, "total": total},
        "stateful_lifecycle_counts": {"state_reads": reads, "state_writes": writes},
        "missing_required_cli_calls": missing_calls,
        "case_goal_state": {
            "init_required": product_mode,
            "initialized_before_agent": initialized,
            "canonical_path_present": kind == "canonical_in_case_goal_state",
            "path_kind": kind,
        },
        "missing_evidence": missing,
        "safety_failures": unsafe,
        "full_product_claim_allowed": level == "full_product_path_evidence_present",
        "claim_level": level,
        "read_boundary": dict(READ_BOUNDARY),
    }


def parity_check_payload(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"ok": True, "codex_app_parity_posthoc_check": parity_check(record)}


def parity_check_error_payload(message: str) -> dict[str, Any]:
    """Exit-1 envelope when the input could not be read or compacted."""
    return {
        "ok": False,
        "codex_app_parity_posthoc_check": {
            "full_product_claim_allowed": False,
            "claim_level": INVALID_CLAIM_LEVEL,
        },
        "error": message,
    }


def render_parity_markdown(payload: Mapping[str, Any]) -> str:
    check = _block(payload, "codex_app_parity_posthoc_check")
    allowed = check.get("full_product_claim_allowed") is True
    lines = [
        f"# {MARKDOWN_TITLE}",
        "",
        f"- claim_status: {'allowed' if allowed else 'not_allowed'}",
        f"- claim_level: {check.get('claim_level')}",
        f"- benchmark_id: {check.get('benchmark_id') or '-'}",
        f"- mode: {check.get('mode') or '-'}",
        f"- missing_evidence: {', '.join(check.get('missing_evidence') or []) or 'none'}",
        f"- safety_failures: {', '.join(check.get('safety_failures') or []) or 'none'}",
    ]
    if payload.get("error"):
        lines.append(f"- error: {payload['error']}")
    return "\n".join(lines) + "\n"
