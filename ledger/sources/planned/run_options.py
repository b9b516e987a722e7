"""What the planner reads of a ``benchmark run``: the values that shape a planned (or fixture)
Terminal-Bench record (docs/formats/cli.md §5.5, §6, §7).

Built once at the edge from the command's request, after its options were validated
(``ledger.requests.benchmark_run_rules``); the planner takes this frozen object and checks
nothing again. Field names are the request's (the click parameter names), so the edge copies
them by name and a renamed flag fails there, at import time.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from benchledger.ledger.sources.planned.timeout_policy import MULTIPLIER_KEYS


@dataclass(frozen=True, slots=True)
class PlannedRunOptions:
    """The planner's whole input besides the machine it probes (env, PATH, files)."""

    goal_id: str | None = None
    mode: str | None = None
    dataset: str | None = None
    include_task_name: tuple[str, ...] = ()
    agent: str | None = None
    model: str | None = None
    runner_ref: str | None = None
    job_name: str | None = None
    n_attempts: int | None = None
    n_concurrent: int | None = None
    arm_id: str | None = None
    arm_map: tuple[str, ...] = ()
    arm_role: str | None = None
    agent_kwarg: tuple[str, ...] = ()
    auth_env_name: tuple[str, ...] = ()
    timeout_multiplier: float | None = None
    agent_timeout_multiplier: float | None = None
    verifier_timeout_multiplier: float | None = None
    agent_setup_timeout_multiplier: float | None = None
    environment_build_timeout_multiplier: float | None = None
    timeout_preset: str | None = None
    codex_install_strategy: str | None = None
    codex_preflight_timeout_sec: int | None = None
    worker_codex_materialization_strategy: str | None = None
    worker_materialization_probe_only: bool = False
    setup_timeout_repair_profile: bool = False
    fake_worker: bool = False
    cli_bridge_contract: bool = False
    worker_cli_bridge_fixture: bool = False
    active_cli_bridge: bool = False
    active_user_assisted_treatment: bool = False
    active_user_observation_fixture: bool = False
    preflight_guard: bool = False
    require_task_material_ready: bool = False

    def multipliers(self) -> dict[str, float | None]:
        """The five timeout multipliers by key, ``None`` where not given."""
        return {key: getattr(self, key) for key in MULTIPLIER_KEYS}


PLANNED_OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(PlannedRunOptions))
