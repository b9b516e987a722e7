"""The modes of a planned Terminal-Bench run (docs/formats/cli.md §6.2) and the readers of the
request that
every part of the planned record shares (mode, agent, model, tasks, runner ref).

One table per mode, so the event mode, first blocker, contract flags and arm a mode implies
are read in one row instead of being re-decided by each block of the record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchledger.ledger.sources.planned.options import (
    DEFAULT_AGENT,
    DEFAULT_MODE,
    DEFAULT_MODEL,
    DEFAULT_RUNNER_REF,
    MODE_CODEX_LOOPX,
    MODE_GOAL,
    MODE_HARDENED,
    MODE_LOOPX_MANAGED,
    MODE_PASSIVE,
    TERMINAL_BENCH_DEFAULT_TASK,
)
from benchledger.ledger.sources.planned.run_options import PlannedRunOptions

SOURCE_RUNNER = "benchledger_planner"
TRACE_PUBLICNESS = "public_cli_dry_run"
LOOPX_AGENT_IMPORT_PATH = "loopx.terminal_bench_agent:GoalHarnessManagedCodex"
LOOPX_PROFILE_NAME = "loopx_managed_codex"
LOOPX_POLICY_VERSION = "loopx_terminal_bench_policy_v0"

#: Hosts a runtime Codex install needs inside the task container (docs/formats/cli.md §6.3).
RUNTIME_INSTALL_HOSTS: tuple[str, ...] = (
    "registry.npmjs.org",
    "raw.githubusercontent.com",
    "github.com",
    "nodejs.org",
    "deb.debian.org",
    "security.debian.org",
    "archive.ubuntu.com",
    "dl-cdn.alpinelinux.org",
    "download.fedoraproject.org",
    "mirror.stream.centos.org",
)

CONTRACT_KEYS: tuple[str, ...] = (
    "loopx_inside_case",
    "case_semantics_changed_by_harness",
    "official_score_comparable_to_native_codex",
    "official_score_comparable_to_loopx_treatment",
    "model_plus_harness_pair",
    "control_plane_score_applicable",
)

FAKE_CLI_CALLS = (
    "status",
    "quota_should_run",
    "todo_list",
    "history",
    "check",
    "append_benchmark_run",
)


@dataclass(frozen=True)
class ModeSpec:
    """One row of docs/formats/cli.md §6.2, plus the loopx agent kwargs and arm the mode implies."""

    event_mode: str
    first_blocker: str
    contract: tuple[bool, bool, bool, bool, bool, bool]
    worker_mode: str
    arm_id: str
    arm_role: str
    loopx_mode: str
    ablation_mode: str
    preflight_event_mode: str | None
    extra: Mapping[str, Any] = field(default_factory=dict)


T, F = True, False
MODES: dict[str, ModeSpec] = {
    MODE_LOOPX_MANAGED: ModeSpec(
        "loopx_managed_codex_cli_dry_run", "managed_cli_skeleton_only_no_real_case",
        (T, T, F, F, T, T), "loopx_managed_codex_cli", "codex_loopx_treatment", "treatment",
        "loopx_managed_codex", "loopx_managed", "loopx_managed_codex_real_run_preflight_guard",
    ),
    MODE_CODEX_LOOPX: ModeSpec(
        "codex_loopx_cli_dry_run", "codex_loopx_cli_skeleton_only_no_real_case",
        (T, T, F, F, T, T), "codex_loopx_cli", "codex_loopx_treatment", "treatment",
        "codex_loopx", "codex_loopx", "codex_loopx_no_upload_preflight_guard",
    ),
    MODE_HARDENED: ModeSpec(
        "hardened_codex_baseline_cli_dry_run",
        "hardened_codex_baseline_cli_skeleton_only_no_real_case",
        (F, F, F, T, F, F), "hardened_codex_baseline", "hardened_codex_baseline", "baseline",
        "hardened_codex_baseline", "hardened_codex_baseline",
        "hardened_codex_baseline_preflight_guard",
        {"hardened_install_surface": True, "hardened_install_baseline": True},
    ),
    MODE_GOAL: ModeSpec(
        "codex_goal_mode_baseline_cli_dry_run",
        "codex_goal_mode_baseline_cli_skeleton_only_no_real_case",
        (F, F, F, T, F, F), "codex_goal_mode_baseline", "codex_goal_mode_baseline", "baseline",
        "codex_goal_mode_baseline", "codex_goal_mode_baseline",
        "codex_goal_mode_baseline_preflight_guard",
    ),
    MODE_PASSIVE: ModeSpec(
        "passive_observed_codex_cli_dry_run", "passive_cli_skeleton_only_no_real_case",
        (F, F, T, F, F, T), "passive_observed_codex_cli", "passive_observed_codex", "other",
        "passive_observed_codex", "passive_observed_codex", None,
    ),
}  # fmt: skip


# --- small readers of the request ----------------------------------------------------------


def task_names(opts: PlannedRunOptions) -> list[str]:
    value = opts.include_task_name
    names = [value] if isinstance(value, str) else list(value or [])
    names = [name for name in names if name]
    return list(dict.fromkeys(names)) or [TERMINAL_BENCH_DEFAULT_TASK]


def as_list(value: Sequence[str] | str | None) -> list[str]:
    return [value] if isinstance(value, str) else [item for item in (value or []) if item]


def mode_of(opts: PlannedRunOptions) -> str:
    return opts.mode or DEFAULT_MODE


def agent_of(opts: PlannedRunOptions) -> str:
    return opts.agent or DEFAULT_AGENT


def model_of(opts: PlannedRunOptions) -> str:
    return opts.model or DEFAULT_MODEL


def runner_ref_of(opts: PlannedRunOptions) -> str | None:
    """``--runner-ref ''`` means "use ``harbor`` from PATH"; unset means the pinned default."""
    value = opts.runner_ref
    return DEFAULT_RUNNER_REF if value is None else (value or None)


def uses_loopx_profile(opts: PlannedRunOptions) -> bool:
    """The loopx custom agent wraps Codex only, and passive mode has no launch at all."""
    return agent_of(opts) == "codex" and mode_of(opts) != MODE_PASSIVE
