"""The ``classification`` label and the default ``recommended_action`` of a run append.

Both are envelope labels only, but downstream loopx tooling groups runs by the label, so the
names of docs/formats/history_registry_rollout.md §9 are kept verbatim. The label is also what an
error
payload reports, so it is derived from flags alone and never fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchledger.ledger.core.safety import is_public_safe

SKILLSBENCH_DEFAULT_ROUTE = "codex-cli-goal-baseline"
DEFAULT_RECOMMENDED_ACTION = "review the compact benchmark run before the next run"

_PREFLIGHT_GUARD_LABELS = {
    "codex-loopx": "terminal_bench_codex_loopx_preflight_guard_v0",
    "hardened-codex": "hardened_codex_baseline_preflight_guard_v0",
    "codex-goal-mode": "terminal_bench_codex_goal_mode_baseline_preflight_guard_v0",
}
_DRY_RUN_LABELS = {
    "codex-loopx": "terminal_bench_codex_loopx_dry_run_v0",
    "codex-goal-mode": "terminal_bench_codex_goal_mode_baseline_dry_run_v0",
}
# Flag name → label, checked in this order after the ingest paths (§9 table).
_FLAG_LABELS = (
    (
        "active_user_observation_fixture",
        "terminal_bench_active_user_assisted_observation_fixture_v0",
    ),
    (
        "active_user_assisted_treatment",
        "terminal_bench_active_user_assisted_treatment_preflight_v0",
    ),
    ("active_cli_bridge", "terminal_bench_codex_loopx_active_cli_bridge_preflight_v0"),
    ("worker_cli_bridge_fixture", "terminal_bench_codex_loopx_worker_cli_bridge_fixture_v0"),
    ("cli_bridge_contract", "terminal_bench_codex_loopx_cli_bridge_contract_runner_fixture_v0"),
)


@dataclass  # not frozen: cheaper to build and create; nothing hashes or mutates it
class ClassificationInput:
    """The flags the label depends on; everything else about the invocation is irrelevant."""

    benchmark: str
    mode: str = "loopx-managed-codex"
    classification: str | None = None
    skillsbench_route: str | None = None
    skillsbench_result: bool = False
    harbor_job_dir: bool = False
    active_user_observation_fixture: bool = False
    active_user_assisted_treatment: bool = False
    active_cli_bridge: bool = False
    worker_cli_bridge_fixture: bool = False
    cli_bridge_contract: bool = False
    preflight_guard: bool = False
    fake_worker: bool = False


def classification_label(flags: ClassificationInput) -> str:
    """First match of §9. An explicit label that fails the public-safety filter is dropped (the
    filter's rule for every free text), so the derived label is used instead."""
    explicit = (flags.classification or "").strip()
    if explicit and _public_safe(explicit):
        return explicit
    return derived_classification(flags)


def derived_classification(flags: ClassificationInput) -> str:
    if flags.benchmark == "skillsbench":
        if flags.skillsbench_result:
            return "skillsbench_official_benchflow_result_ingest_v0"
        route = flags.skillsbench_route or SKILLSBENCH_DEFAULT_ROUTE
        return f"skillsbench_{route.replace('-', '_')}_skeleton_v0"
    if flags.harbor_job_dir:
        return "terminal_bench_harbor_runner_result_ingest_v0"
    for flag_name, label in _FLAG_LABELS:
        if getattr(flags, flag_name):
            return label
    if flags.preflight_guard:
        return _PREFLIGHT_GUARD_LABELS.get(
            flags.mode, "terminal_bench_managed_real_run_preflight_guard_v0"
        )
    if flags.fake_worker:
        if flags.mode == "codex-loopx":
            return "terminal_bench_codex_loopx_fake_worker_v0"
        return "terminal_bench_cli_fake_worker_v0"
    return _DRY_RUN_LABELS.get(flags.mode, "terminal_bench_cli_dry_run_v0")


# --- recommended action (docs/formats/cli.md §5.6)
# ----------------------------------------------------------

_READY_BLOCKERS = {"", "none", "ready_for_launch"}
_RUN_STATUS_ACTIONS = {
    "running": "re-ingest the job directory after the runner finishes",
    "cancelled": "check why attempts were cancelled, then rerun the case",
    "incomplete": "check which attempts or results are missing, then rerun or re-ingest",
    "corrupt": "rerun the case: the runner's result file could not be read",
    "not_started": "check the runner setup: no attempt started",
}


def recommended_action(
    explicit: str | None,
    record: Mapping[str, Any] | None,
    *,
    adapter_default: str | None = None,
) -> str:
    """``--recommended-action`` wins; otherwise a sentence chosen from the record itself.

    loopx picked a fixed sentence per mode and ignored blockers, so a blocked planned run was
    told to launch; here the record's own status and first blocker decide.
    """
    text = " ".join((explicit or "").split())
    if text and _public_safe(text):
        return text
    derived = _action_from_record(record or {})
    return derived or adapter_default or DEFAULT_RECOMMENDED_ACTION


def _action_from_record(record: Mapping[str, Any]) -> str | None:
    status = record.get("run_status")
    if status == "planned":
        return _planned_action(record)
    if status in _RUN_STATUS_ACTIONS:
        return _RUN_STATUS_ACTIONS[status]
    if status == "completed":
        return _completed_action(record)
    return None


def _planned_action(record: Mapping[str, Any]) -> str:
    preflight = record.get("preflight")
    blocker = str(record.get("first_blocker") or "")
    if isinstance(preflight, Mapping) and "ready" in preflight:
        ready = preflight.get("ready") is True
    else:
        ready = blocker in _READY_BLOCKERS or blocker.startswith("ready_")
    if ready:
        return "launch the previewed command, then ingest its job directory"
    return f"resolve {blocker} before launching"


def _completed_action(record: Mapping[str, Any]) -> str | None:
    score = record.get("official_task_score")
    passed = (
        score.get("passed") if isinstance(score, Mapping) else record.get("official_score_passed")
    )
    if passed is True:
        return "compare with the other arm of this case before the next run"
    if passed is False:
        return "review the failure attribution before the next run"
    if "official_score" not in record:
        return "check why no official score was recorded before the next run"
    return None


def _public_safe(text: str) -> bool:
    return is_public_safe(text)
