"""Row derivation rules of the public run ledger (ledger_v0.md §3-§5, §6.4).

Every rule that turns a compact ``benchmark_run_v0`` record, or a stored ledger row, into ledger
facts lives here and is versioned by ``RULES_VERSION``: an upserted row carries the rule set that
decided it, so replaying events never re-derives history with newer rules.

Inputs are already-compacted records (``ledger.record.compact_run`` is the caller's job). The
public-safety filter comes from ``ledger.safety`` when that module exists; until then a private
fallback that implements benchmark_run_v0.md §3 is used (see ``_safety``).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import ChainMap
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ledger.comparison_facts import comparison_fields
from ledger.errors import InputError
from ledger.safety import is_public_safe
from ledger.safety import ledger_text as _safety_ledger_text

RULES_VERSION = "benchledger-ledger-rules-1"
POST_LAUNCH_SCHEMA = "terminal_bench_post_launch_materialization_v0"
HISTORICAL_ARM = "historical_nonproduct_invalid_for_comparison"
NON_TERMINAL_STATUSES = frozenset({"planned", "fixture", "running"})
COUNTABLE_STATUSES = frozenset({"completed", "recorded"})
ARCHIVE_FIELDS = ("archive_state", "archive_reason", "archive_batch_id", "archived_at")
REPAIR_FIELDS = ("repair_priority", "repair_class", "next_action", "repair_profile")
COUNTABILITY_FIELDS = (
    "official_score_countable",
    "official_score_countability_reason",
    "countable_score",
)
SKIP_REASON_NON_TERMINAL = "benchmark_run_not_terminal_for_public_ledger"
MAX_ROW_WARNINGS = 8

# ---------------------------------------------------------------------------------------------
# Small value helpers
# ---------------------------------------------------------------------------------------------


def _is_empty(value: Any) -> bool:
    """Rows drop null, "" and []; ``{}`` and ``False``/``0`` are facts and stay (§3)."""
    return value is None or value == "" or value == []


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _as_number(value: Any) -> int | float | None:
    """Numbers, and numeric strings (the fallback rules count them as numeric, §5.6)."""
    if _is_number(value):
        return value
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            parsed: int | float = float(text) if "." in text or "e" in text.lower() else int(text)
        except ValueError:
            return None
        return parsed if math.isfinite(parsed) else None
    return None


def _is_pos_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _first_bool(src: Mapping[str, Any], *keys: str) -> bool | None:
    for key in keys:
        value = src.get(key)
        if isinstance(value, bool):
            return value
    return None


def _drop_empty(row: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in row.items() if not _is_empty(value)}


# ---------------------------------------------------------------------------------------------
# Public-safety filter and ledger text compaction
# ---------------------------------------------------------------------------------------------

def ledger_text(value: Any, limit: int = 120) -> str | None:
    """The shared filter's ledger text compaction (``ledger.safety``); containers and bools
    are never text."""
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    return _safety_ledger_text(value, limit)


def _text_list(value: Any, max_items: int, limit: int = 120) -> list[str]:
    items = value if isinstance(value, list) else ([value] if value is not None else [])
    out: list[str] = []
    for item in items:
        text = ledger_text(item, limit)
        if text is not None and text not in out:
            out.append(text)
        if len(out) >= max_items:
            break
    return out


# ---------------------------------------------------------------------------------------------
# Timestamps
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=200_000)
def instant(value: str | None) -> float:
    """Seconds since the epoch; naive legacy values read as UTC; unparsable sort first (§6.3)."""
    if not value or not isinstance(value, str):
        return float("-inf")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return float("-inf")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def utc_timestamp(value: str, *, what: str = "--recorded-at") -> str:
    """ISO input (Z or any offset) as ``YYYY-MM-DDTHH:MM:SSZ``; bad input is a user error."""
    try:
        parsed = datetime.fromisoformat(str(value).strip())
    except ValueError:
        raise InputError(f"{what} must be an ISO 8601 timestamp") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def earlier_timestamp(first: str | None, second: str | None) -> str | None:
    """The earlier instant of two stored values, keeping its original spelling."""
    if not first:
        return second
    if not second:
        return first
    return second if instant(second) < instant(first) else first


# ---------------------------------------------------------------------------------------------
# §5.1-5.5 identity: benchmark, case, arm, role, run group
# ---------------------------------------------------------------------------------------------

_TB_MARKERS = (
    "_codex_goal_mode_baseline",
    "_codex_loopx_treatment",
    "_codex_loopx",
    "_hardened_codex_baseline",
    "_baseline",
    "_treatment",
)


def derive_benchmark_id(record: Mapping[str, Any], *, post_launch: bool = False) -> str:
    text = ledger_text(record.get("benchmark_id"), 120)
    if text:
        return text
    return "terminal-bench@2.0" if post_launch else "unknown-benchmark"


def parse_terminal_bench_case(job_name: str | None, benchmark_id: str | None) -> str | None:
    """[loopx-specific] recover the case from a Terminal-Bench job name (§5.2 step 3)."""
    job = _str(job_name)
    if not job or not (benchmark_id == "terminal-bench@2.0" or job.startswith("terminal_bench_")):
        return None
    if job.startswith("terminal_bench_"):
        job = job[len("terminal_bench_") :]
    segments = job.split("_")
    while segments and segments[0].isdigit():
        segments.pop(0)
    name = "_".join(segments)
    for marker in _TB_MARKERS:
        position = name.find(marker)
        if position > 0:
            return name[:position].replace("_", "-")
    return None


def derive_case_ids(record: Mapping[str, Any], benchmark_id: str) -> list[str]:
    """First non-empty source of case ids, ``case_id`` always first (§5.2)."""
    direct = [record.get("case_id")]
    listed = record.get("case_ids")
    direct.extend(listed if isinstance(listed, list) else [listed])
    ids = _text_list([item for item in direct if item is not None], 64, 140)
    if not ids:
        trials = record.get("trials") if isinstance(record.get("trials"), list) else []
        ids = _text_list([_dict(trial).get("task_id") for trial in trials], 64, 140)
    if not ids:
        parsed = parse_terminal_bench_case(record.get("job_name"), benchmark_id)
        ids = _text_list([parsed], 1, 140)
    if not ids:
        ids = _text_list([record.get("job_name")], 1, 140)
    return ids or ["unknown-case"]


_HISTORICAL_ROUTES = frozenset({"loopx-blind-loop-treatment", "loopx-prompt-polling-test"})
_HISTORICAL_MODES = frozenset(
    {
        "skillsbench_loopx_blind_loop_treatment",
        "skillsbench_loopx_prompt_polling_test",
        "loopx_prompt_polling_test",
    }
)
_JOB_ARM_TOKENS = (
    "codex_app_server_goal_baseline",
    "codex_goal_mode_baseline",
    "hardened_codex_baseline",
    "codex_loopx_treatment",
    "loopx_automation_loop_treatment",
)


def _route_of(src: Mapping[str, Any]) -> str:
    return _str(src.get("route")) or _str(_dict(src.get("benchmark_loop_contract")).get("route"))


def infer_arm(src: Mapping[str, Any]) -> str | None:
    """[loopx-specific] arm inference from mode, route and job name (§5.3 table)."""
    mode, route, job = _str(src.get("mode")), _route_of(src), _str(src.get("job_name"))
    if (
        route in _HISTORICAL_ROUTES
        or mode in _HISTORICAL_MODES
        or src.get("historical_route_read_only") is True
        or src.get("skillsbench_route_semantics") == HISTORICAL_ARM
    ):
        return HISTORICAL_ARM
    by_mode = _arm_from_mode(mode)
    if by_mode:
        return by_mode
    for token in _JOB_ARM_TOKENS:
        if token in job:
            return token
    if job.endswith("_baseline") or "_baseline_" in job:
        return "baseline"
    if job.endswith("_treatment") or "_treatment_" in job:
        return "treatment"
    return ledger_text(mode, 120)


def _arm_from_mode(mode: str) -> str | None:
    if mode == "skillsbench_codex_app_server_goal_baseline":
        return "codex_app_server_goal_baseline"
    if mode == "codex_goal_mode_baseline":
        return "codex_goal_mode_baseline"
    if mode in ("hardened_codex_baseline", "hardened-codex"):
        return "hardened_codex_baseline"
    if "automation_loop" in mode and "loopx" in mode:
        return "loopx_automation_loop_treatment"
    if "curated_skills" in mode:
        return "curated_skills_baseline"
    if mode in ("no_skills_baseline", "skillsbench_no_skills_baseline"):
        return "no_skills_baseline"
    if "loopx" in mode:
        return "codex_loopx_treatment"
    return None


def resolve_arm(src: Mapping[str, Any], explicit: str | None) -> tuple[str, str, list[str]]:
    """(arm, arm_source, warnings): an explicit arm is always respected (§5.3 decision)."""
    inferred = infer_arm(src)
    if explicit:
        warnings = ["explicit_arm_on_historical_route"] if inferred == HISTORICAL_ARM else []
        return explicit, "explicit", warnings
    adapter = ledger_text(src.get("arm_id"), 120)
    if adapter:
        return adapter, "adapter", []
    if inferred:
        return inferred, "inferred", []
    return "unknown_arm", "unknown", []


def derive_arm_role(src: Mapping[str, Any], arm_id: str, explicit: str | None = None) -> str:
    """baseline / treatment / other, used by decisions instead of arm-name guessing (§5.4)."""
    if explicit:
        return explicit
    stored = src.get("arm_role")
    if stored in ("baseline", "treatment", "other"):
        return stored
    if "baseline" in arm_id:
        return "baseline"
    if "treatment" in arm_id:
        return "treatment"
    contract = _dict(src.get("benchmark_loop_contract"))
    haystack = " ".join(
        [
            arm_id,
            _str(src.get("mode")),
            _str(src.get("route")),
            _str(contract.get("route")),
            _str(contract.get("protocol_id")),
        ]
    )
    if "raw-codex-autonomous-max5" in haystack:
        return "baseline"
    if "loopx-product-mode" in haystack:
        return "treatment"
    return "other"


def derive_run_id(
    *,
    benchmark_id: str,
    case_id: str,
    arm_id: str,
    run_group_id: str,
    job_name: str,
    identity_key: str,
) -> str:
    """Stable id: identity fields and a run key or content digest, never paths or times (§5.15)."""
    material = "|".join([benchmark_id, case_id, arm_id, run_group_id, job_name, identity_key])
    return hashlib.sha1(material.encode("utf-8")).hexdigest()[:12]


def content_identity_key(record: Mapping[str, Any]) -> str:
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "content:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# §5.6-5.8 score, score status, status
# ---------------------------------------------------------------------------------------------


def _attempt_flag(src: Mapping[str, Any], name: str) -> bool | None:
    """A boolean attempt flag: top level first, then ``attempt_accounting`` (§3 copies)."""
    value = src.get(name)
    if isinstance(value, bool):
        return value
    value = _dict(src.get("attempt_accounting")).get(name)
    return value if isinstance(value, bool) else None


def _label_list(src: Mapping[str, Any]) -> list[str]:
    items: list[str] = []
    for key in ("failure_labels", "failure_attribution_labels", "setup_blockers"):
        value = src.get(key)
        items.extend(str(item) for item in (value if isinstance(value, list) else []))
    return items


def _lower_labels(src: Mapping[str, Any]) -> list[str]:
    """The label set of the fallback guard (§5.6): named texts plus the label lists."""
    labels = [
        _str(src.get(key)).lower()
        for key in (
            "repair_class",
            "score_failure_attribution",
            "failure_class",
            "first_blocker",
            "runner_return_status",
        )
    ]
    labels.extend(item.lower() for item in _label_list(src))
    return [label for label in labels if label]


def round_success_observed(src: Mapping[str, Any]) -> bool:
    trace = _dict(src.get("round_reward_trace"))
    if trace.get("success_observed") is True:
        return True
    for key in ("first_success_round", "best_round_passed", "final_round_passed"):
        value = trace.get(key)
        if value is True or _is_pos_int(value):
            return True
    for item in trace.get("records") or []:
        record = _dict(item)
        reward = record.get("reward")
        if record.get("passed") is True or (_is_number(reward) and reward >= 1):
            return True
    if src.get("round_success_observed") is True:
        return True
    return _is_number(src.get("first_success_round"))


def _score_status_input(src: Mapping[str, Any]) -> str:
    return _str(src.get("official_score_status")) or _str(src.get("score_status"))


def fallback_candidate(src: Mapping[str, Any]) -> bool:
    ots = _dict(src.get("official_task_score"))
    if (
        isinstance(ots.get("passed"), bool)
        and _as_number(ots.get("value")) is None
        and _as_number(src.get("official_score")) is None
    ):
        return True
    return src.get("official_score_bool_fallback_used") is True and isinstance(
        _first_bool(src, "official_passed", "passed"), bool
    )


def fallback_allowed(src: Mapping[str, Any]) -> bool:
    """Guard against recording a bool verdict as a score when the attempt did not count."""
    if not fallback_candidate(src):
        return False
    if _attempt_flag(src, "official_score_attempt_countable") is False:
        return False
    labels = _lower_labels(src)
    if "skillsbench_codex_acp_post_success_finalization" in labels:
        return False
    transport = any(
        "jsonrpc" in label or "transport" in label or "finalization" in label for label in labels
    )
    return not (_score_status_input(src) == "missing" and transport and round_success_observed(src))


def derive_score(src: Mapping[str, Any]) -> tuple[int | float | None, bool | None, bool]:
    """(score, passed, bool_fallback_used) per §5.6."""
    ots = _dict(src.get("official_task_score"))
    allowed = fallback_allowed(src)
    value = _as_number(ots.get("value"))
    if value is not None:
        passed = ots.get("passed") if isinstance(ots.get("passed"), bool) else value >= 1
        return value, passed, allowed
    top = _as_number(src.get("official_score"))
    if top is not None:
        return top, top >= 1, allowed
    if allowed:
        verdict = _fallback_verdict(src, ots)
        if verdict is not None:
            return (1.0 if verdict else 0.0), verdict, True
    return None, None, False


def _fallback_verdict(src: Mapping[str, Any], ots: Mapping[str, Any]) -> bool | None:
    if isinstance(ots.get("passed"), bool):
        return ots["passed"]
    status_ok = _score_status_input(src) in ("completed", "passed", "failed")
    if status_ok and src.get("runner_return_status") != "failed_before_official_result":
        return _first_bool(src, "official_passed", "passed")
    return None


def derive_score_status(
    src: Mapping[str, Any], score: Any, passed: bool | None, *, post_launch: bool
) -> str:
    if post_launch:
        return "missing"
    explicit = _str(src.get("official_score_status"))
    if explicit and explicit != "completed":
        if explicit == "missing" and score is not None and isinstance(passed, bool):
            return "passed" if passed else "failed"
        return ledger_text(explicit, 120) or "missing"
    if score is None:
        return "missing"
    return "passed" if passed else "failed"


_PASSTHROUGH_RUN_STATUS = frozenset(
    {"planned", "fixture", "running", "cancelled", "incomplete", "corrupt", "not_started"}
)


def derive_status(src: Mapping[str, Any], score: Any, *, post_launch: bool) -> str:
    if post_launch:
        if src.get("ready_for_compact_failure_marker") is True:
            return "blocked"
        if src.get("job_active_without_trial_result") is True:
            return "running"
        return "recorded"
    run_status = src.get("run_status")
    if run_status in _PASSTHROUGH_RUN_STATUS:
        return run_status
    running = _as_number(_dict(src.get("progress")).get("n_running_trials"))
    if running is not None and running > 0:
        return "running"
    if score is not None or _str(src.get("runner_return_status")):
        return "completed"
    return "recorded"


def is_terminal(row: Mapping[str, Any]) -> bool:
    """Planned, fixture and running rows never enter the public ledger (§5.8, §6.2)."""
    return row.get("status") not in NON_TERMINAL_STATUSES


# ---------------------------------------------------------------------------------------------
# §5.9-5.10 failure class and scope
# ---------------------------------------------------------------------------------------------

_STATUS_CLASSES = {
    "cancelled": "run_cancelled",
    "incomplete": "run_incomplete",
    "corrupt": "run_result_corrupt",
    "not_started": "run_not_started",
}
_PRIORITY_LABELS = (
    "codex_model_access_unsupported_for_account",
    "codex_model_access_failure_before_solution_attempt",
    "agent_setup_timeout_before_worker_start",
    "agent_setup_failed_before_worker_start",
    "environment_setup_failed_before_worker",
    "worker_self_validation_official_score_mismatch",
    "worker_validation_scope_ambiguous_official_score_failure",
    "worker_bridge_connected_official_score_failure",
    "verifier_dependency_install_failure",
    "verifier_platform_probe_failure",
    "agent_timeout_before_solution_completion",
)
_MISMATCH_COUNTERS = (
    "worker_self_validation_official_score_mismatch_count",
    "worker_validation_scope_ambiguous_official_score_failure_count",
    "worker_submit_eligible_mismatch_count",
    "worker_bridge_writeback_loss_count",
    "worker_startup_blocker_count",
    "environment_setup_failure_before_worker_count",
    "pre_worker_agent_setup_failure_count",
)
_COMPOSE_CLASSES = {
    "compose_setup_blocked_before_agent_rounds": (
        "skillsbench_compose_setup_blocked_before_agent_rounds"
    ),
    "runner_setup_blocked_before_agent_rounds": (
        "skillsbench_runner_setup_blocked_before_agent_rounds"
    ),
}


def _setup_blockers(src: Mapping[str, Any]) -> list[str]:
    for key in ("worker_setup_diagnostic_blockers", "worker_startup_blockers", "setup_blockers"):
        value = src.get(key)
        if isinstance(value, list) and value:
            return [str(item) for item in value]
    return []


def _labels_for_class(src: Mapping[str, Any]) -> list[str]:
    value = src.get("failure_attribution_labels")
    if not isinstance(value, list):
        value = src.get("failure_labels")
    return [str(item) for item in value] if isinstance(value, list) else []


def derive_failure_class(
    src: Mapping[str, Any], *, status: str, score: Any, post_launch: bool
) -> str:
    """First matching class of §5.9 (loopx vocabulary)."""
    if status in _STATUS_CLASSES:
        return _STATUS_CLASSES[status]
    if post_launch:
        marker = _dict(src.get("compact_failure_marker"))
        for value in (src.get("compact_failure_class"), marker.get("failure_class")):
            if ledger_text(value):
                return ledger_text(value) or ""
        return ledger_text(src.get("first_blocker")) or "post_launch_compact_result_missing"
    if score is not None and score != 0:
        return "none"
    found = _class_before_labels(src, score)
    if found:
        return found
    labels = _labels_for_class(src)
    for label in _PRIORITY_LABELS:
        if label in labels:
            return label
    attribution = ledger_text(src.get("score_failure_attribution"))
    if attribution and attribution != "none":
        return attribution
    from_trials = _class_from_trials(src)
    if from_trials:
        return from_trials
    blocker = ledger_text(src.get("first_blocker"))
    if blocker:
        return blocker
    return "score_failure_unattributed" if score is not None else "score_missing"


def _class_before_labels(src: Mapping[str, Any], score: Any) -> str | None:
    """Steps 3-5 of §5.9: SkillsBench pre-agent setup, worker blockers, bridge verifier."""
    if score is None and (
        src.get("mode") == "skillsbench_codex_app_server_goal_baseline"
        or _route_of(src) == "codex-app-server-goal-baseline"
    ):
        diagnostic = _dict(src.get("compose_setup_diagnostic"))
        started = diagnostic.get("agent_rounds_started", src.get("agent_rounds_started"))
        mapped = _COMPOSE_CLASSES.get(_str(diagnostic.get("status")))
        if mapped and started is not True:
            return mapped
    for blocker in _setup_blockers(src):
        if blocker != "none":
            return ledger_text(blocker)
    labels = _labels_for_class(src)
    if (
        "official_verifier_solution_failure" in labels
        and "worker_bridge_connected_official_score_failure" in labels
        and src.get("worker_bridge_materialization_status") == "verified"
        and all((_as_number(src.get(name)) or 0) == 0 for name in _MISMATCH_COUNTERS)
    ):
        return "official_verifier_solution_failure"
    return None


def _class_from_trials(src: Mapping[str, Any]) -> str | None:
    trials = src.get("trials") if isinstance(src.get("trials"), list) else []
    kinds = [
        _str(_dict(trial).get("exception_type")).lower()
        for trial in trials
        if _str(_dict(trial).get("exception_type")) not in ("", "none")
    ]
    if not kinds:
        return None
    if any("setup" in kind and "timeout" in kind for kind in kinds):
        return "agent_setup_timeout_before_worker_start"
    if any("setup" in kind for kind in kinds):
        return "agent_setup_exception_before_solution_attempt"
    if any("timeout" in kind for kind in kinds):
        return "agent_timeout_before_solution_completion"
    return "agent_exception_before_solution_completion"


_PROBE_CLASSES = frozenset(
    {
        "not_applicable_worker_materialization_probe",
        "not_applicable_worker_materialization_probe_no_trial_result",
    }
)
_RUNNER_CLASSES = frozenset(
    {
        "run_cancelled",
        "run_incomplete",
        "run_result_corrupt",
        "run_not_started",
        "stale_active_job_without_trial_result",
        "detached_worker_ended_active_without_trial_result",
        "detached_worker_ended_without_trial_result",
        "post_launch_compact_result_missing",
    }
)
_NO_SCORE_RUNNER_TOKENS = (
    "setup",
    "runner",
    "preflight",
    "docker",
    "compose",
    "environment",
    "model_access",
    "model_provider",
    "install",
    "materializ",
)
_CASE_CLASSES = frozenset(
    {
        "none",
        "official_verifier_solution_failure",
        "official_score_zero_case_failure",
        "model_solution_failure",
        "agent_solution_failure",
        "task_solution_failure",
        "solution_incorrect",
        "agent_timeout_before_solution_completion",
        "agent_exception_before_solution_completion",
        "agent_budget_exhausted_before_solution_completion",
        "agent_idle_timeout_before_solution_completion",
        "agent_refused_task",
    }
)


def derive_failure_scope(failure_class: str, *, passed: Any, has_score: bool) -> str:
    """Closed set of scopes (§5.10); no-score rows are refined by class (gotcha #8)."""
    if passed is True:
        return "passed"
    if failure_class in _PROBE_CLASSES:
        return "startup_surface"
    if failure_class in _RUNNER_CLASSES:
        return "runner_or_setup"
    if not has_score:
        if failure_class.startswith("verifier_"):
            return "verifier_or_infra"
        if any(token in failure_class for token in _NO_SCORE_RUNNER_TOKENS):
            return "runner_or_setup"
        return "score_missing"
    if failure_class == "score_failure_unattributed":
        return "attribution_required"
    if failure_class in _CASE_CLASSES:
        return "case_or_solution"
    if failure_class.startswith("verifier_"):
        return "verifier_or_infra"
    return "runner_or_setup"


# ---------------------------------------------------------------------------------------------
# §5.11 countability
# ---------------------------------------------------------------------------------------------

_NOT_COUNTABLE_PHASES = frozenset({"not_started", "runner_accepted_args"})
_ATTEMPT_CLASS_TOKENS = ("runner", "setup", "preflight", "docker", "compose")
_UNCOUNTABLE_TEXT_KEYS = (
    "score_failure_attribution",
    "failure_class",
    "attempt_failure_label",
    "attempt_failure_class",
    "first_blocker",
    "runner_return_status",
)


def countability(
    src: Mapping[str, Any], *, status: str, scope: str
) -> tuple[bool, str, int | float | None]:
    """(countable, reason, score) — the reason is the first failed check of §5.11."""
    if status not in COUNTABLE_STATUSES:
        return False, "run_not_completed", None
    ots = _dict(src.get("official_task_score"))
    allowed = fallback_allowed(src)
    score = _as_number(src.get("official_score"))
    if score is None:
        score = _as_number(ots.get("value"))
    if score is None and allowed:
        verdict = _fallback_verdict(src, ots)
        score = None if verdict is None else (1.0 if verdict else 0.0)
    if score is None:
        return False, "score_missing", None
    if fallback_candidate(src) and not allowed:
        return False, "official_score_bool_fallback_not_allowed", None
    completed_pass = _completed_task_pass(src, score, ots)
    if not completed_pass and _attempt_not_countable(src, scope, ots, allowed):
        return False, "official_score_attempt_not_countable", None
    score_status = _score_status_input(src)
    if score_status == "missing" and allowed:
        score_status = "passed" if _first_bool(src, "official_passed") else "failed"
    if score_status not in ("completed", "passed", "failed"):
        return False, "official_score_status_not_countable", None
    if not completed_pass and _mentions_uncountable(src):
        return False, "uncountable_attribution", None
    return True, _countable_reason(src, completed_pass), score


def _completed_task_pass(src: Mapping[str, Any], score: float, ots: Mapping[str, Any]) -> bool:
    activity = _dict(_dict(src.get("solution_quality_signals")).get("worker_activity"))
    return (
        _score_status_input(src) in ("completed", "passed")
        and score >= 1
        and (src.get("official_passed") is True or ots.get("passed") is True)
        and activity.get("task_facing_activity_observed") is True
    )


def _attempt_not_countable(
    src: Mapping[str, Any], scope: str, ots: Mapping[str, Any], allowed: bool
) -> bool:
    if ots.get("kind") == "skillsbench_verifier_reward_missing" and ots.get("value") is None:
        return True
    flag = _attempt_flag(src, "official_score_attempt_countable")
    if flag is False and not allowed:
        return True
    accounting = _dict(src.get("attempt_accounting"))
    phase = _str(src.get("attempt_lifecycle_phase")) or _str(accounting.get("lifecycle_phase"))
    if flag is True and phase == "verifier_scored":
        return False
    if scope == "verifier_or_infra":
        return True
    if scope != "runner_or_setup" or phase not in _NOT_COUNTABLE_PHASES:
        return False
    attempt_class = _first_class_text(src, accounting)
    return any(token in attempt_class for token in _ATTEMPT_CLASS_TOKENS)


def _first_class_text(src: Mapping[str, Any], accounting: Mapping[str, Any]) -> str:
    for value in (
        src.get("score_failure_attribution"),
        src.get("failure_class"),
        src.get("attempt_failure_class") or accounting.get("failure_class"),
        src.get("attempt_failure_label") or accounting.get("failure_label"),
    ):
        text = _str(value).lower()
        if text and text not in ("none", "null"):
            return text
    return ""


def _mentions_uncountable(src: Mapping[str, Any]) -> bool:
    accounting = _dict(src.get("attempt_accounting"))
    texts = [_str(src.get(key)) for key in _UNCOUNTABLE_TEXT_KEYS]
    texts += [_str(accounting.get("failure_label")), _str(accounting.get("failure_class"))]
    texts += _label_list(src)
    return any("uncountable" in text.lower() for text in texts)


def _countable_reason(src: Mapping[str, Any], completed_pass: bool) -> str:
    if completed_pass:
        return "countable_completed_task_attempt_pass"
    aggregation = _dict(src.get("score_aggregation"))
    scored = src.get("scored_attempt_count", aggregation.get("scored_attempt_count"))
    unscored = src.get("unscored_attempt_count", aggregation.get("unscored_attempt_count"))
    if _is_pos_int(scored) and _is_pos_int(unscored):
        return "countable_partial_attempt_coverage"
    return "countable_official_score"


def countability_fields(src: Mapping[str, Any], *, status: str, scope: str) -> dict[str, Any]:
    countable, reason, score = countability(src, status=status, scope=scope)
    fields: dict[str, Any] = {
        "official_score_countable": countable,
        "official_score_countability_reason": reason,
    }
    if countable:
        fields["countable_score"] = score
    return fields


# ---------------------------------------------------------------------------------------------
# §5.12 repair route
# ---------------------------------------------------------------------------------------------

_PRE_AGENT_CLASSES = frozenset(_COMPOSE_CLASSES.values())
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
_NEXT_ACTIONS = {
    "runner_codex_cli_materialization": (
        "make an existing Codex CLI available to the worker (no runtime install) and rerun with "
        "a setup diagnostic that shows the Codex preflight passed"
    ),
    "benchmark_environment_setup_contract": (
        "prove the benchmark environment comes up before the worker starts (readiness "
        "preflight), then rerun this case"
    ),
    "runner_setup_timeout": (
        "fix the agent setup path (existing Codex, longer setup timeout) and rerun with a "
        "setup-readiness preflight"
    ),
    "runner_model_access": (
        "rerun on a model route that a minimal model probe shows this account can use"
    ),
    "skillsbench_codex_acp_post_success_finalization": (
        "repair ACP finalization after a successful round so the official result is written, "
        "then rerun"
    ),
    "skillsbench_codex_acp_runtime_preflight": (
        "prove the Codex ACP runtime starts inside the SkillsBench sandbox (dependency and "
        "launch preflights) before rerunning"
    ),
    "skillsbench_setup_preflight_selection": (
        "pick a task without Docker package-bootstrap risk, or repair the Docker setup route "
        "before rerunning this task"
    ),
    "skillsbench_verifier_bootstrap_preflight_selection": (
        "pick a task whose verifier bootstrap passes the preflight, or repair the verifier "
        "bootstrap first"
    ),
    "skillsbench_task_source_preflight_selection": (
        "resolve the task source preflight (canonical task present) before rerunning"
    ),
    "skillsbench_task_source_excluded": (
        "task source is excluded from formal scoring; do not count or rerun it as a canonical case"
    ),
    "runner_result_materialization": (
        "find out why the runner wrote no official result and rerun once results are written"
    ),
    "runner_result_finalization": (
        "repair runner/worker finalization so the job closes with a trial result or a terminal "
        "marker; an active job is not a result"
    ),
    "verifier_attribution_required": (
        "attribute the zero score (solution, verifier or infrastructure) before comparing arms"
    ),
    "worker_verifier_alignment": (
        "align the worker's own validation with what the official verifier checks, then repeat"
    ),
    "verifier_or_infra_repair": (
        "repair the verifier or infrastructure failure before comparing arms"
    ),
    "case_timeout_research": (
        "review the timeout context and decide whether this case needs a longer timeout tier"
    ),
    "case_exception_research": (
        "review the compact exception attribution and form a case-level hypothesis"
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
        "codex_acp_post_success_finalization_preflight",
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
_PRIORITY = {"P0", "P1"}


def _route_class(failure_class: str, src: Mapping[str, Any]) -> str:
    if failure_class in _PRE_AGENT_CLASSES:
        attribution = _str(src.get("score_failure_attribution"))
        if attribution in _PREFLIGHT_ATTRIBUTIONS:
            return attribution
    return failure_class


def repair_class_for(failure_class: str, scope: str, src: Mapping[str, Any]) -> tuple[str, str]:
    """(priority, repair_class), or ("", "") when the class has no repair route (§5.12)."""
    cls = _route_class(failure_class, src)
    if cls.startswith("codex_cli_") or cls.startswith("worker_install_failed"):
        return "P0", "runner_codex_cli_materialization"
    if cls == "environment_setup_failed_before_worker":
        return "P0", "benchmark_environment_setup_contract"
    if cls in _SETUP_TIMEOUT_CLASSES:
        return "P0", "runner_setup_timeout"
    if cls in _MODEL_ACCESS_CLASSES:
        return "P0", "runner_model_access"
    if cls.startswith("skillsbench_codex_acp_"):
        if round_success_observed(src) and src.get("codex_acp_runtime_preflight_passed") is True:
            return "P0", "skillsbench_codex_acp_post_success_finalization"
        return "P0", "skillsbench_codex_acp_runtime_preflight"
    return _repair_class_tail(cls, scope)


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
    if scope in ("runner_or_setup", "score_missing"):
        return "P1", "runner_or_setup_triage"
    return "", ""


def _repair_profile(repair_class: str, src: Mapping[str, Any]) -> dict[str, Any] | None:
    loopx_mode = any(token in _str(src.get("mode")) for token in ("codex", "loopx"))
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
        blocked = ledger_text(src.get("agent_model"), 120)
        if blocked:
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
    if not repair_class:
        return {}
    fields: dict[str, Any] = {
        "repair_priority": priority,
        "repair_class": repair_class,
        "next_action": _NEXT_ACTIONS[repair_class],
    }
    profile = _repair_profile(repair_class, src)
    if profile is not None:
        fields["repair_profile"] = profile
    return fields


# ---------------------------------------------------------------------------------------------
# §5.14 round rewards
# ---------------------------------------------------------------------------------------------


def _round_records(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    by_round: dict[int, dict[str, Any]] = {}
    for item in trace.get("records") or []:
        record = _dict(item)
        number = record.get("agent_round")
        if not _is_pos_int(number) or number in by_round:
            continue
        clean: dict[str, Any] = {"agent_round": number}
        for key in ("reward_present", "passed"):
            if isinstance(record.get(key), bool):
                clean[key] = record[key]
        if _is_number(record.get("reward")):
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
    trace = _dict(src.get("round_reward_trace"))
    semantics = _dict(src.get("app_server_goal_round_semantics"))
    out: dict[str, Any] = {"agent_declared_done": trace.get("agent_declared_done") is True}
    budget = trace.get("max_rounds_budget", semantics.get("benchflow_max_rounds_budget"))
    if budget is None:
        budget = src.get("max_rounds_budget")
    if _is_number(budget):
        out["max_rounds_budget"] = budget
    for key in ("official_feedback_blinded", "reward_feedback_forwarded"):
        value = _first_bool(trace, key)
        out[key] = value if value is not None else _first_bool(src, key)
    if not trace:
        return _drop_empty(out)
    records = _round_records(trace)
    out.update(_round_summary(trace, records))
    for key in ("declared_done_round", "declared_done_score"):
        if _is_number(trace.get(key)):
            out[key] = trace[key]
    if records:
        out["loop_score_policy"] = ledger_text(trace.get("loop_score_policy")) or (
            "best_round_for_offline_controller_analysis"
        )
        out["official_score_policy"] = ledger_text(trace.get("official_score_policy")) or (
            "final_workspace_official_result"
        )
    return _drop_empty(out)


def _round_summary(trace: Mapping[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"round_rewards": records, "round_reward_count": len(records)}
    first = trace.get("first_success_round")
    if not _is_pos_int(first):
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
        out[key] = float(traced) if key.endswith("_reward") and _is_number(traced) else traced
    elif derived is not None:
        out[key] = derived


# ---------------------------------------------------------------------------------------------
# §5.13 artifact refs
# ---------------------------------------------------------------------------------------------

_PRIVATE_SEGMENTS = frozenset(
    {
        ".local",
        "private",
        "private-benchmark-jobs",
        "users",
        "volumes",
        "var",
        "tmp",
        "logs",
        "raw",
        "sessions",
        "screenshots",
    }
)
_PRIVATE_BASENAMES = frozenset({"trajectory.json", "instruction.md", "task.md"})
REF_KEYS = ("artifact_ref", "result_ref", "compact_artifact_ref", "history_ref")


def _looks_absolute(text: str) -> bool:
    return text.startswith(("/", "~", "\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", text))


def check_relative_ref(text: str) -> str | None:
    """Directory policy for a ref already relative to its root (§5.13)."""
    if not text or _looks_absolute(text):
        return None
    parts = [part for part in text.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts:
        return None
    for part in parts:
        if part.startswith(".") or part.lower() in _PRIVATE_SEGMENTS:
            return None
    base = parts[-1].lower()
    if base in _PRIVATE_BASENAMES or base.endswith((".local.json", ".private.json")):
        return None
    rel = "/".join(parts)
    return rel if is_public_safe(rel) else None


def public_ref(value: Any, *, root: str | Path | None = None) -> str | None:
    """A ref as a POSIX path relative to the ref root, or None when policy drops it."""
    text = _str(value).strip()
    if not text:
        return None
    if root is None:
        return check_relative_ref(text)
    root_path = Path(root).expanduser().resolve()
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = root_path / path
    try:
        rel = path.resolve().relative_to(root_path)
    except ValueError:
        return None
    return check_relative_ref(rel.as_posix())


def history_ref_for(value: Any, *, runtime_root: str | Path | None = None) -> str | None:
    """``goals/<goal>/runs/<file>`` whatever spelling the index used (absolute in loopx)."""
    text = _str(value).strip().replace("\\", "/")
    if not text:
        return None
    parts = [part for part in text.split("/") if part]
    for index in range(len(parts) - 4, -1, -1):
        if parts[index] == "goals" and parts[index + 2] == "runs":
            return check_relative_ref("/".join(parts[index : index + 4]))
    if runtime_root is not None:
        return public_ref(text, root=runtime_root)
    return None


def artifact_refs(
    *,
    artifact_ref: Any = None,
    result_ref: Any = None,
    compact_artifact_ref: Any = None,
    history_ref: Any = None,
    ref_root: str | Path | None = None,
    runtime_root: str | Path | None = None,
) -> dict[str, str]:
    refs = {
        "artifact_ref": public_ref(artifact_ref, root=ref_root),
        "result_ref": public_ref(result_ref, root=ref_root),
        "compact_artifact_ref": public_ref(compact_artifact_ref, root=ref_root),
        "history_ref": history_ref_for(history_ref, runtime_root=runtime_root),
    }
    return {key: value for key, value in refs.items() if value}


def recheck_refs(refs: Any) -> dict[str, str]:
    if not isinstance(refs, Mapping):
        return {}
    out = {key: check_relative_ref(_str(refs[key])) for key in REF_KEYS if refs.get(key)}
    return {key: value for key, value in out.items() if value}


# ---------------------------------------------------------------------------------------------
# §3 copies
# ---------------------------------------------------------------------------------------------

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
_NATIVE_GOAL_FIELDS = (
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
    if isinstance(value, str):
        return ledger_text(value, limit)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def copied_fields(record: Mapping[str, Any], *, post_launch: bool) -> dict[str, Any]:
    """Straight copies from the record (§3 'Copies'), texts filtered and cut."""
    model = _dict(record.get("model_control"))
    aggregation = _dict(record.get("score_aggregation"))
    out: dict[str, Any] = {
        "mode": ledger_text(record.get("mode"), 120),
        "route": ledger_text(_route_of(record), 120),
        "job_name": ledger_text(record.get("job_name"), 160),
        "planned_run_key": ledger_text(record.get("planned_run_key"), 200),
        "runner_return_status": ledger_text(record.get("runner_return_status"), 120),
        "score_failure_attribution": ledger_text(record.get("score_failure_attribution"), 120),
        "failure_labels": _text_list(record.get("failure_attribution_labels"), 8),
        "setup_blockers": _text_list(_setup_blockers(record), 4),
        "agent_model": ledger_text(_dict(record.get("agent")).get("model"), 120),
        "model_control_status": ledger_text(model.get("control_status"), 120),
        "actual_model_verified": _first_bool(model, "actual_model_verified"),
        "model_warning_labels": _text_list(
            model.get("warning_labels") or record.get("runner_warning_labels"), 6
        ),
        "submit_eligible": _first_bool(record, "submit_eligible"),
        "leaderboard_evidence": _first_bool(record, "leaderboard_evidence"),
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
    accounting = _dict(record.get("attempt_accounting"))
    out: dict[str, Any] = {
        row_key: ledger_text(accounting.get(key), 120) for row_key, key in _ACCOUNTING_FIELDS
    }
    for key in _ATTEMPT_BOOLS:
        value = accounting.get(key)
        out[key] = value if isinstance(value, bool) else _first_bool(record, key)
    return out


def _loopx_copies(record: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: _copy_value(record.get(key)) for key in _LOOPX_COPIES}
    semantics = _dict(record.get("app_server_goal_round_semantics"))
    contract = _dict(record.get("native_goal_worker_contract"))
    use_contract = _route_of(record) == "codex-app-server-goal-baseline" or contract.get(
        "required"
    ) in (True, "required")
    for key in _NATIVE_GOAL_FIELDS:
        value = record.get(key, semantics.get(key))
        if value is None and use_contract:
            value = contract.get(key)
        out[key] = _copy_value(value)
    return out


def _post_launch_copies(record: Mapping[str, Any]) -> dict[str, Any]:
    marker = _dict(record.get("compact_failure_marker"))
    out: dict[str, Any] = {
        "compact_failure_evidence_kind": ledger_text(marker.get("evidence_kind"), 120),
        "ledger_attempt_kind": ledger_text(marker.get("ledger_attempt_kind"), 120),
    }
    for key in ("terminal_closeout", "case_attempt_countable", "benchmark_budget_countable"):
        value = marker.get(key)
        if isinstance(value, bool):
            out[key] = value
    return out


# ---------------------------------------------------------------------------------------------
# build_row / normalize_row
# ---------------------------------------------------------------------------------------------


def _checked_identity_text(value: Any, limit: int, flag: str) -> str | None:
    """Identity inputs are refused (not dropped) when unsafe: silently changing them moves ids."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = " ".join(str(value).split())
    if not is_public_safe(text):
        raise InputError(f"{flag} is not public-safe")
    return ledger_text(text, limit)


def build_row(
    record: dict,
    *,
    run_group_id: str | None = None,
    arm_id: str | None = None,
    arm_role: str | None = None,
    run_key: str | None = None,
    notes: str | None = None,
    recorded_at: str | None = None,
    artifact_ref: str | None = None,
    result_ref: str | None = None,
    compact_artifact_ref: str | None = None,
    history_ref: str | None = None,
    now: str,
    ref_root: str | Path | None = None,
    runtime_root: str | Path | None = None,
) -> tuple[dict, list[str]]:
    """One ledger row from one compact record plus the command's options (§4-§5).

    ``ref_root`` is the project root refs must lie in (§5.13); without it, only relative refs
    are kept (checked against the directory policy as they are).
    """
    post_launch = record.get("schema_version") == POST_LAUNCH_SCHEMA
    group = _checked_identity_text(run_group_id, 160, "--run-group-id")
    explicit_arm = _checked_identity_text(arm_id, 120, "--arm-id")
    explicit_key = _checked_identity_text(run_key, 200, "--run-key")
    if arm_role is not None and arm_role not in ("baseline", "treatment", "other"):
        raise InputError("--arm-role must be one of baseline, treatment, other")
    warnings: list[str] = []
    note_text = ledger_text(notes, 220) if notes else None
    if notes and not note_text and " ".join(str(notes).split()):
        warnings.append("note_dropped_public_safety")
    row = _identity_part(record, group, explicit_arm, arm_role, explicit_key, post_launch, warnings)
    row.update(_outcome_part(record, row, post_launch))
    flags = score_flags(row.get("official_score"))
    if flags:
        row["score_flags"] = flags
        warnings.append("official_score_out_of_range")
    row["recorded_at"] = utc_timestamp(recorded_at) if recorded_at else now
    row["last_upserted_at"] = now
    row["notes"] = note_text
    row["artifact_refs"] = (
        artifact_refs(
            artifact_ref=artifact_ref,
            result_ref=result_ref,
            compact_artifact_ref=compact_artifact_ref,
            history_ref=history_ref,
            ref_root=ref_root,
            runtime_root=runtime_root,
        )
        or None
    )
    row["warnings"] = warnings[:MAX_ROW_WARNINGS]
    row["rules_version"] = RULES_VERSION
    return _drop_empty(row), list(warnings)


def score_flags(score: Any) -> list[str] | None:
    """``["out_of_range"]`` for a score outside 0..1, the scale every score rule here reads
    (pass = score >= 1). Such a score is kept as the runner reported it, never clamped, but a
    reader of the row must be able to see that it is not a fraction."""
    if isinstance(score, int | float) and not isinstance(score, bool):
        if not 0.0 <= score <= 1.0:
            return ["out_of_range"]
    return None


def _identity_part(
    record: Mapping[str, Any],
    group: str | None,
    explicit_arm: str | None,
    explicit_role: str | None,
    explicit_key: str | None,
    post_launch: bool,
    warnings: list[str],
) -> dict[str, Any]:
    benchmark_id = derive_benchmark_id(record, post_launch=post_launch)
    case_ids = derive_case_ids(record, benchmark_id)
    arm, arm_source, arm_warnings = resolve_arm(record, explicit_arm)
    warnings.extend(arm_warnings)
    role = derive_arm_role(record, arm, explicit_role)
    if arm_warnings and not explicit_role:
        role = "other"
    group = (
        group
        or ledger_text(record.get("run_group_id"), 160)
        or ledger_text(record.get("job_name"), 160)
    )
    record_key = ledger_text(record.get("run_key"), 200)
    identity_key = explicit_key or record_key or content_identity_key(record)
    job_name = ledger_text(record.get("job_name"), 160) or ""
    run_id = derive_run_id(
        benchmark_id=benchmark_id,
        case_id=case_ids[0],
        arm_id=arm,
        run_group_id=group or "",
        job_name=job_name,
        identity_key=identity_key,
    )
    return {
        "run_id": run_id,
        "benchmark_id": benchmark_id,
        "case_id": case_ids[0],
        "case_ids": case_ids,
        "run_group_id": group or run_id,
        "arm_id": arm,
        "arm_source": arm_source,
        "arm_role": role,
        "run_key": explicit_key or record_key,
        **copied_fields(record, post_launch=post_launch),
    }


def _outcome_part(
    record: Mapping[str, Any], row: Mapping[str, Any], post_launch: bool
) -> dict[str, Any]:
    src = ChainMap(dict(row), record)  # type: ignore[arg-type]
    score, passed, fallback_used = derive_score(src)
    if post_launch:
        score, passed, fallback_used = None, None, False
    status = derive_status(record, score, post_launch=post_launch)
    score_status = derive_score_status(record, score, passed, post_launch=post_launch)
    failure_class = derive_failure_class(src, status=status, score=score, post_launch=post_launch)
    scope = derive_failure_scope(failure_class, passed=passed, has_score=score is not None)
    out: dict[str, Any] = {
        "status": status,
        "score_status": score_status,
        "official_score": score,
        "official_passed": passed,
        "official_score_bool_fallback_used": True if fallback_used else None,
        "failure_class": failure_class,
        "failure_scope": scope,
    }
    out.update(round_fields(record))
    decided = ChainMap(out, dict(row), record)  # type: ignore[arg-type]
    out.update(repair_fields(failure_class, scope, decided))
    out.update(countability_fields(ChainMap(out, dict(row), record), status=status, scope=scope))  # type: ignore[arg-type]
    return out


def _renormalised_arm(row: dict[str, Any]) -> None:
    """§6.4 arm rule: explicit and adapter arms are never rewritten.

    A legacy row (no ``arm_source``) keeps its stored arm unless inference marks the route as
    historical — exactly what loopx's normaliser does, so imported ledgers keep their arms.
    """
    source = row.get("arm_source")
    if source in ("explicit", "adapter"):
        return
    inferred = infer_arm(row)
    if source == "inferred":
        row["arm_id"] = inferred or "unknown_arm"
        row["arm_source"] = "inferred" if inferred else "unknown"
    elif inferred == HISTORICAL_ARM or not _str(row.get("arm_id")):
        row["arm_id"] = inferred or "unknown_arm"
        row["arm_source"] = "inferred" if inferred else "unknown"


def normalize_row(row: dict, *, benchmark_key: str | None = None) -> dict:
    """Per-row part of §6.4: re-derive what depends on rules, keep what was decided."""
    out = dict(row)
    if not _str(out.get("benchmark_id")) and benchmark_key:
        out["benchmark_id"] = benchmark_key
    _renormalised_case(out)
    _renormalised_arm(out)
    if out.get("arm_role") not in ("baseline", "treatment", "other"):
        out["arm_role"] = derive_arm_role({**out, "arm_role": None}, _str(out.get("arm_id")))
    has_score = _as_number(out.get("official_score")) is not None
    failure_class = _str(out.get("failure_class")) or ("score_missing" if not has_score else "none")
    out["failure_class"] = failure_class
    scope = derive_failure_scope(
        failure_class, passed=out.get("official_passed"), has_score=has_score
    )
    out["failure_scope"] = scope
    _renormalised_repair(out, failure_class, scope)
    for key in COUNTABILITY_FIELDS:
        out.pop(key, None)
    out.update(countability_fields(out, status=_str(out.get("status")), scope=scope))
    if out.get("archive_state") != "archived":
        for key in ARCHIVE_FIELDS:
            out.pop(key, None)
    refs = recheck_refs(out.get("artifact_refs"))
    out["artifact_refs"] = refs or None
    out["rules_version"] = RULES_VERSION
    return _drop_empty(out)


def _renormalised_case(row: dict[str, Any]) -> None:
    case_id = _str(row.get("case_id"))
    if case_id and case_id != "unknown-case" and not case_id.startswith("terminal_bench_"):
        return
    parsed = parse_terminal_bench_case(row.get("job_name"), _str(row.get("benchmark_id")))
    if not parsed:
        if not case_id:
            row["case_id"] = "unknown-case"
            row["case_ids"] = ["unknown-case"]
        return
    rest = [item for item in row.get("case_ids") or [] if item not in (parsed, case_id)]
    row["case_id"] = parsed
    row["case_ids"] = [parsed, *rest]


def _renormalised_repair(row: dict[str, Any], failure_class: str, scope: str) -> None:
    """Recompute the route; keep stored next-action wording when the class did not change
    (wording is not part of the contract, and rewriting it would churn every imported row)."""
    stored_class = row.get("repair_class")
    stored_action = row.get("next_action")
    for key in REPAIR_FIELDS:
        row.pop(key, None)
    fields = repair_fields(failure_class, scope, row)
    if fields and fields["repair_class"] == stored_class and _str(stored_action):
        fields["next_action"] = stored_action
    row.update(fields)


def drift_signature(row: Mapping[str, Any]) -> tuple[str, ...]:
    """Logical identity used by the drift check (§12): run group and refs left out on purpose."""
    score = row.get("official_score")
    score_text = "" if score is None else repr(float(score)) if _is_number(score) else str(score)
    return (
        _str(row.get("benchmark_id")),
        _str(row.get("case_id")),
        _str(row.get("arm_id")),
        _str(row.get("mode")),
        _str(row.get("job_name")),
        _str(row.get("score_status")),
        score_text,
        _str(row.get("failure_class")),
    )


def labels_of(row: Mapping[str, Any]) -> list[str]:
    """Row label lists (failure labels, setup blockers), for aggregate bucket signals."""
    return _label_list(row)


def iter_text(values: Iterable[Any]) -> list[str]:
    return [value for value in values if isinstance(value, str) and value]
