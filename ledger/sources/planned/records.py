"""Planned (no-run) Terminal-Bench records and the ``benchmark_cli`` block (docs/formats/cli.md
§5.5, §6, §7).

``benchmark run terminal-bench`` without ``--harbor-job-dir`` runs nothing. loopx 0.4.8 still
emitted a "trial" with reward 0 for it, which its ledger then counted as a broken case. Here the
record says what it is: ``run_status`` ``planned`` (or ``fixture`` for the fake/bridge fixtures),
one record per planned case, carrying the exact launch preview, the timeout policy, and with
``--preflight-guard`` one check list whose ``first_blocker`` is the record's ``first_blocker``.
Nothing in it is a trial, a reward, progress or metrics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.sources.planned.launch_preview import build_launch_preview, default_job_name
from benchledger.ledger.sources.planned.modes import (
    CONTRACT_KEYS,
    FAKE_CLI_CALLS,
    LOOPX_AGENT_IMPORT_PATH,
    LOOPX_POLICY_VERSION,
    LOOPX_PROFILE_NAME,
    MODES,
    RUNTIME_INSTALL_HOSTS,
    SOURCE_RUNNER,
    TRACE_PUBLICNESS,
    ModeSpec,
    agent_of,
    as_list,
    mode_of,
    model_of,
    runner_ref_of,
    task_names,
    uses_loopx_profile,
)
from benchledger.ledger.sources.planned.options import (
    DEFAULT_AUTH_ENV_NAMES,
    DEFAULT_CODEX_INSTALL_STRATEGY,
    DEFAULT_N_ATTEMPTS,
    DEFAULT_N_CONCURRENT,
    INSTALL_REQUIRE_EXISTING,
    INSTALL_RUNTIME_IF_MISSING,
    MATERIALIZATION_EXTENDED_SETUP,
    MATERIALIZATION_PREPROVISIONED,
    MODE_CODEX_LOOPX,
    MODE_GOAL,
    MODE_PASSIVE,
    REPAIR_PROFILE_PREFLIGHT_TIMEOUT_SEC,
    TERMINAL_BENCH_DEFAULT_DATASET,
)
from benchledger.ledger.sources.planned.preflight import (
    build_preflight,
    make_run_probe,
    task_material_status,
)
from benchledger.ledger.sources.planned.run_options import PlannedRunOptions
from benchledger.ledger.sources.planned.timeout_policy import resolve_timeout_policy

# --- event mode, status and first blocker ------------------------------------------------------


@dataclass(frozen=True)
class EventShape:
    """What the flags make of the record: its event mode, status and (fixture) blocker token."""

    event_mode: str
    run_status: str
    fixed_blocker: str | None
    trace_publicness: str = TRACE_PUBLICNESS


def event_shape(opts: PlannedRunOptions) -> EventShape:
    """The most specific flag wins, in the order of docs/formats/history_registry_rollout.md §9."""
    spec = MODES[mode_of(opts)]
    if opts.active_user_observation_fixture:
        return EventShape(
            "codex_loopx_active_user_assisted_observation_fixture",
            "fixture",
            "real_assisted_worker_observation_fixture_only_no_real_case",
        )
    if opts.active_user_assisted_treatment:
        return EventShape("codex_loopx_active_user_assisted_treatment_preflight", "planned", None)
    if opts.active_cli_bridge:
        return EventShape("codex_loopx_active_cli_bridge_preflight", "planned", None)
    if opts.worker_cli_bridge_fixture:
        return EventShape(
            "codex_loopx_worker_cli_bridge_fixture",
            "fixture",
            "worker_cli_bridge_fixture_only_no_real_case",
        )
    if opts.cli_bridge_contract:
        return EventShape(
            "codex_loopx_cli_bridge_contract_fixture",
            "fixture",
            "cli_bridge_contract_fixture_only_no_real_case",
        )
    if opts.preflight_guard:
        return EventShape(spec.preflight_event_mode or spec.event_mode, "planned", None)
    if opts.fake_worker:
        if mode_of(opts) == MODE_CODEX_LOOPX:
            return EventShape(
                "codex_loopx_fake_worker_wrapper",
                "fixture",
                "fake_codex_loopx_worker_only_no_real_case",
                "public_fake_codex_loopx_wrapper",
            )
        return EventShape(
            "loopx_managed_codex_fake_worker_wrapper",
            "fixture",
            "fake_managed_worker_only_no_real_case",
            "public_fake_managed_wrapper",
        )
    return EventShape(spec.event_mode, "planned", spec.first_blocker)


# --- Codex setup (docs/formats/cli.md §6.6)
# -----------------------------------------------------------------


@dataclass(frozen=True)
class CodexSetup:
    """Effective Codex install options after the repair profile, and the setup ladder verdict."""

    install_strategy: str
    preflight_timeout_sec: int | None
    materialization_strategy: str | None
    blocker: str
    blocks_launch: bool


def codex_setup(opts: PlannedRunOptions) -> CodexSetup:
    explicit_install = opts.codex_install_strategy
    seconds = opts.codex_preflight_timeout_sec
    strategy = opts.worker_codex_materialization_strategy
    if opts.setup_timeout_repair_profile:
        return _repair_profile_setup(explicit_install, seconds, strategy)
    install = explicit_install or DEFAULT_CODEX_INSTALL_STRATEGY
    if strategy == MATERIALIZATION_EXTENDED_SETUP:
        token, blocks = "ready_for_runtime_codex_materialization_probe", False
    elif install == INSTALL_RUNTIME_IF_MISSING:
        token, blocks = "runtime_codex_install_can_exceed_setup_budget", False
    elif seconds is None:
        token, blocks = "codex_preflight_timeout_missing", True
    elif strategy is None:
        token, blocks = "codex_worker_materialization_strategy_missing", True
    else:
        token, blocks = "ready_for_fail_fast_codex_setup_probe", False
    return CodexSetup(install, seconds, strategy, token, blocks)


def _repair_profile_setup(
    explicit_install: str | None, seconds: int | None, strategy: str | None
) -> CodexSetup:
    """The profile forces the fail-fast path unless the worker installs Codex during setup."""
    if strategy == MATERIALIZATION_EXTENDED_SETUP:
        install = explicit_install or DEFAULT_CODEX_INSTALL_STRATEGY
        token = "ready_for_runtime_codex_materialization_probe"
        return CodexSetup(install, seconds, strategy, token, False)
    seconds = REPAIR_PROFILE_PREFLIGHT_TIMEOUT_SEC
    if explicit_install == INSTALL_RUNTIME_IF_MISSING:
        token = "setup_timeout_repair_profile_runtime_install_disallowed"
        return CodexSetup(explicit_install, seconds, strategy, token, True)
    if strategy == MATERIALIZATION_PREPROVISIONED:
        token, blocks = "ready_for_fail_fast_codex_setup_probe", False
    else:
        token, blocks = "codex_worker_materialization_strategy_missing", True
    return CodexSetup(INSTALL_REQUIRE_EXISTING, seconds, strategy, token, blocks)


def repair_profile_block(setup: CodexSetup) -> dict[str, Any]:
    """What the profile requires of the launch, so a reviewer can check the real command."""
    overrides = ["agent_timeout_multiplier=8", "agent_setup_timeout_multiplier=8"]
    disallowed: list[str] = []
    if setup.materialization_strategy == MATERIALIZATION_EXTENDED_SETUP:
        overrides.append(f"worker_codex_materialization_strategy={MATERIALIZATION_EXTENDED_SETUP}")
    else:
        overrides += [
            f"codex_install_strategy={INSTALL_REQUIRE_EXISTING}",
            f"codex_preflight_timeout_sec={REPAIR_PROFILE_PREFLIGHT_TIMEOUT_SEC}",
        ]
        disallowed.append(f"codex_install_strategy={INSTALL_RUNTIME_IF_MISSING}")
    return {
        "enabled": True,
        "materialization_strategy": setup.materialization_strategy or "none",
        "required_launch_overrides": overrides,
        "disallowed_launch_overrides": disallowed,
        "raw_logs_required": False,
        "setup_blocker": setup.blocker,
    }


# --- agent setup profile (docs/formats/cli.md §7.5)
# ---------------------------------------------------------


@dataclass
class AgentProfile:
    """How the agent is started: Harbor ``--agent`` value, kwargs, env, hosts and mounts."""

    agent_arg: str
    name: str | None = None
    import_path: str | None = None
    kwargs: list[tuple[str, str]] = field(default_factory=list)
    env: list[tuple[str, str]] = field(default_factory=list)
    allowed_hosts: list[str] = field(default_factory=list)
    mounts: list[dict[str, Any]] = field(default_factory=list)


def _user_kwargs(opts: PlannedRunOptions) -> list[tuple[str, str]]:
    """``--agent-kwarg k=v`` (repeatable); the value is kept for the preview only."""
    pairs = []
    for entry in as_list(opts.agent_kwarg):
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise InputError(f"invalid --agent-kwarg entry: {entry}")
        pairs.append((key.strip(), value))
    return pairs


def _auth_env_names(opts: PlannedRunOptions) -> tuple[list[str], bool]:
    explicit = as_list(opts.auth_env_name)
    if explicit:
        return list(dict.fromkeys(explicit)), True
    return list(DEFAULT_AUTH_ENV_NAMES.get(agent_of(opts), ())), False


def agent_profile(opts: PlannedRunOptions, setup: CodexSetup) -> AgentProfile:
    """The loopx managed-Codex profile for loopx modes, else the agent as named.

    Auth variables are forwarded as ``NAME=${NAME}`` templates, never values. The loopx agent
    reads Codex auth itself (``CODEX_FORCE_AUTH_JSON=true``), so only explicitly named extra
    variables are forwarded to it.
    """
    names, explicit = _auth_env_names(opts)
    if not uses_loopx_profile(opts):
        env = [(name, "${" + name + "}") for name in names]
        return AgentProfile(agent_arg=agent_of(opts), kwargs=_user_kwargs(opts), env=env)
    spec = MODES[mode_of(opts)]
    env = [("CODEX_FORCE_AUTH_JSON", "true")]
    if explicit:
        env += [(name, "${" + name + "}") for name in names if name != "CODEX_FORCE_AUTH_JSON"]
    hosts = (
        list(RUNTIME_INSTALL_HOSTS) if setup.install_strategy == INSTALL_RUNTIME_IF_MISSING else []
    )
    return AgentProfile(
        agent_arg=LOOPX_AGENT_IMPORT_PATH,
        name=LOOPX_PROFILE_NAME,
        import_path=LOOPX_AGENT_IMPORT_PATH,
        kwargs=_loopx_kwargs(opts, spec, setup) + _user_kwargs(opts),
        env=env,
        allowed_hosts=hosts,
        mounts=_loopx_mounts(opts),
    )


def _loopx_kwargs(
    opts: PlannedRunOptions, spec: ModeSpec, setup: CodexSetup
) -> list[tuple[str, str]]:
    kwargs = [
        ("loopx_policy_version", LOOPX_POLICY_VERSION),
        ("loopx_behavior_spec_id", f"terminal_bench_{spec.loopx_mode}_v0"),
        ("loopx_mode", spec.loopx_mode),
        ("loopx_goal_id", str(opts.goal_id or "<goal-id>")),
        ("loopx_ablation_mode", spec.ablation_mode),
        ("loopx_codex_install_strategy", setup.install_strategy),
    ]
    if setup.preflight_timeout_sec is not None:
        kwargs.append(("loopx_codex_preflight_timeout_sec", str(setup.preflight_timeout_sec)))
    if setup.materialization_strategy:
        kwargs.append(
            ("loopx_worker_codex_materialization_strategy", setup.materialization_strategy)
        )
    if opts.worker_materialization_probe_only:
        kwargs.append(("loopx_worker_materialization_probe_only", "true"))
    if opts.worker_cli_bridge_fixture or opts.active_cli_bridge:
        kwargs.append(("loopx_cli_bridge_enabled", "true"))
    if opts.active_user_assisted_treatment:
        kwargs.append(("loopx_active_user_assisted_treatment", "true"))
    return kwargs


def _loopx_mounts(opts: PlannedRunOptions) -> list[dict[str, Any]]:
    """[loopx-specific] mounts the custom agent sets up; Harbor 0.25 has no mount flag."""
    mounts: list[dict[str, Any]] = []
    if opts.worker_cli_bridge_fixture:
        mounts += [
            {"source": "<project-root>", "target": "/loopx/project", "read_only": True},
            {"source": "<runtime-root>", "target": "/loopx/runtime", "read_only": True},
        ]
    if opts.active_user_assisted_treatment:
        mounts.append(
            {"source": "<active-user-dir>", "target": "/loopx/active-user", "read_only": False}
        )
    return mounts


# --- arm ---------------------------------------------------------------------------------------


def _explicit_arm(opts: PlannedRunOptions) -> str | None:
    if opts.arm_id:
        return str(opts.arm_id)
    for entry in as_list(opts.arm_map):
        target, sep, arm = entry.partition("=")
        agent, _colon, model = target.partition(":")
        if not sep or not agent or not arm:
            raise InputError(f"invalid --arm-map entry: {entry}")
        if agent == agent_of(opts) and (not model or model == model_of(opts)):
            return arm
    return None


def arm_identity(opts: PlannedRunOptions) -> tuple[str, str | None, str | None]:
    """(arm_id, arm_role, explicit arm): an explicit arm wins; else the mode's own arm."""
    explicit = _explicit_arm(opts)
    role = opts.arm_role
    if explicit:
        return explicit, role, explicit
    spec = MODES[mode_of(opts)]
    return spec.arm_id, role or spec.arm_role, None


# --- fixture blocks (docs/formats/cli.md §6.3, §6.7)
# ----------------------------------------------------------


def _calls_counters(calls: Sequence[str], reads: int, writes: int) -> dict[str, Any]:
    return {
        "loopx_cli_calls": dict.fromkeys(calls, 1),
        "loopx_cli_call_total": len(calls),
        "loopx_cli_state_read_count": reads,
        "loopx_cli_state_write_count": writes,
        "loopx_counter_scope": "synthetic_fixture",
    }


def fixture_fields(opts: PlannedRunOptions, shape: EventShape) -> dict[str, Any]:
    """The loopx counters and claim flags, reproduced only for fixture and bridge modes."""
    fields: dict[str, Any] = {}
    if opts.fake_worker:
        fields["interaction_counters"] = _calls_counters(FAKE_CLI_CALLS, 4, 1)
        fields["worker_loopx_cli_call_total"] = len(FAKE_CLI_CALLS)
    if opts.cli_bridge_contract:
        fields["loopx_cli_bridge_trace_observed"] = False
        fields["runner_warning_labels"] = ["cli_bridge_contract_not_executed"]
    if opts.worker_cli_bridge_fixture:
        fields["interaction_counters"] = _calls_counters(FAKE_CLI_CALLS, 5, 1)
        fields["worker_loopx_cli_call_total"] = len(FAKE_CLI_CALLS)
        fields["loopx_worker_cli_bridge_available"] = True
        fields["loopx_worker_cli_bridge_trace_observed"] = False
    if opts.active_cli_bridge:
        fields["planned_worker_loopx_cli_call_total"] = 2
        fields["required_worker_loopx_cli_call_total_min"] = 1
        fields["claim_gate"] = {"uplift_claim_allowed": False, "leaderboard_claim_allowed": False}
    if opts.active_user_assisted_treatment:
        fields["assisted_collaboration_claim_allowed"] = True
        fields["official_score_claim_allowed"] = False
    if opts.active_user_observation_fixture:
        counters = _calls_counters(("active_user_observe",), 1, 0)
        fields["interaction_counters"] = {**counters, "active_user_observe": 1}
        fields["worker_loopx_cli_call_total"] = 1
        fields["operator_simulator_run"] = {
            "observation_seq": 2,
            "observation_source": "canned_fixture",
            "model_backed": False,
        }
    if opts.preflight_guard and mode_of(opts) == MODE_GOAL:
        fields["claim_gate"] = {
            "native_goal_mode_claim_allowed": False,
            "blocked_by": "missing_codex_app_server_goal_proof",
        }
    return fields


# --- the record ---------------------------------------------------------------------------------


def planned_run_key(material: Sequence[str]) -> str:
    """``planned:`` + 16 hex of SHA-256 over the argv joined by NUL: same launch, same key."""
    digest = hashlib.sha256("\0".join(material).encode("utf-8")).hexdigest()
    return "planned:" + digest[:16]


@dataclass(frozen=True)
class Probes:
    """Everything a planned record may learn from the machine, injected for determinism."""

    env: Mapping[str, str]
    which: Callable[[str], str | None]
    run_probe: Callable[[Sequence[str]], bool] | None = None
    path_exists: Callable[[str], bool] | None = None
    cwd: Path | None = None


def _path_exists(probes: Probes) -> Callable[[str], bool]:
    if probes.path_exists is not None:
        return probes.path_exists
    base = probes.cwd or Path.cwd()
    return lambda text: (base / text).exists()


def _base_record(opts: PlannedRunOptions, shape: EventShape, task: str) -> dict[str, Any]:
    spec = MODES[mode_of(opts)]
    dataset = opts.dataset or TERMINAL_BENCH_DEFAULT_DATASET
    record: dict[str, Any] = {
        "schema_version": "benchmark_run_v0",
        "source_runner": SOURCE_RUNNER,
        "benchmark_id": dataset,
        "mode": shape.event_mode,
        "worker_mode": spec.worker_mode,
        "case_id": task,
        "case_ids": [task],
        "run_status": shape.run_status,
        "real_run": False,
        "submit_eligible": False,
        "leaderboard_evidence": False,
        "official_task_score": {"kind": "not_run"},
        "official_score_status": "not_run",
        "trace_publicness": shape.trace_publicness,
        **dict(zip(CONTRACT_KEYS, spec.contract, strict=True)),
        **spec.extra,
    }
    return record


def _read_boundary(preflight: bool) -> dict[str, bool]:
    return {
        "compact_only": True,
        "raw_artifacts_read": False,
        "task_text_read": False,
        "trajectory_read": False,
        "local_paths_recorded": False,
        "docker_invoked": preflight,
        "model_api_invoked": False,
        "upload_invoked": False,
    }


def _build_one(
    opts: PlannedRunOptions, task: str, probes: Probes, shape: EventShape
) -> dict[str, Any]:
    dataset = opts.dataset or TERMINAL_BENCH_DEFAULT_DATASET
    setup = codex_setup(opts)
    profile = agent_profile(opts, setup)
    arm_id, arm_role, explicit_arm = arm_identity(opts)
    timeout_policy = resolve_timeout_policy(
        preset=opts.timeout_preset,
        repair_profile=opts.setup_timeout_repair_profile,
        multipliers=opts.multipliers(),
        dataset=dataset,
    )
    job_name = opts.job_name or default_job_name(dataset, task, explicit_arm or agent_of(opts))
    record = _base_record(opts, shape, task)
    record.update(job_name=job_name, arm_id=arm_id, timeout_policy=timeout_policy)
    if arm_role:
        record["arm_role"] = arm_role
    record["agent"] = _agent_block(opts, profile)
    preview = None
    if mode_of(opts) != MODE_PASSIVE:
        preview = _launch_preview(opts, dataset, task, job_name, profile, timeout_policy, probes)
        record["launch_preview"] = preview
    record["run_key"] = planned_run_key(
        preview["argv"]
        if preview
        else [dataset, task, shape.event_mode, agent_of(opts), model_of(opts)]
    )
    if opts.worker_materialization_probe_only:
        record["worker_materialization_probe_only"] = True
    if opts.setup_timeout_repair_profile:
        record["setup_timeout_repair_profile"] = repair_profile_block(setup)
    record.update(fixture_fields(opts, shape))
    first_blocker = shape.fixed_blocker
    if opts.preflight_guard:
        preflight = _preflight(opts, probes, dataset, task, preview, timeout_policy, setup)
        record["preflight"] = preflight
        first_blocker = first_blocker or preflight["first_blocker"]
    record["first_blocker"] = first_blocker or MODES[mode_of(opts)].first_blocker
    record["read_boundary"] = _read_boundary(bool(opts.preflight_guard))
    return record


def _agent_block(opts: PlannedRunOptions, profile: AgentProfile) -> dict[str, Any]:
    """The agent as the record names it: never the kwargs' values, only their keys."""
    agent: dict[str, Any] = {"name": agent_of(opts), "model": model_of(opts)}
    if profile.import_path:
        agent["import_path"] = profile.import_path
    if profile.kwargs:
        agent["kwargs_keys"] = sorted({key for key, _value in profile.kwargs})
    return agent


def _launch_preview(
    opts: PlannedRunOptions,
    dataset: str,
    task: str,
    job_name: str,
    profile: AgentProfile,
    timeout_policy: Mapping[str, Any],
    probes: Probes,
) -> dict[str, Any]:
    """The exact Harbor command the planned case would run (one task per record)."""
    return build_launch_preview(
        dataset=dataset,
        tasks=[task],
        agent=profile.agent_arg,
        model=model_of(opts),
        job_name=job_name,
        runner_ref=runner_ref_of(opts),
        n_attempts=int(opts.n_attempts or DEFAULT_N_ATTEMPTS),
        n_concurrent=int(opts.n_concurrent or DEFAULT_N_CONCURRENT),
        multipliers=timeout_policy["multipliers"],
        agent_kwargs=profile.kwargs,
        agent_env=profile.env,
        allowed_hosts=profile.allowed_hosts,
        mounts=profile.mounts,
        profile_name=profile.name,
        path_exists=_path_exists(probes),
    )


def _preflight(
    opts: PlannedRunOptions,
    probes: Probes,
    dataset: str,
    task: str,
    preview: Mapping[str, Any] | None,
    timeout_policy: Mapping[str, Any],
    setup: CodexSetup,
) -> dict[str, Any]:
    names, explicit = _auth_env_names(opts)
    status = task_material_status(dataset, task, env=probes.env, cwd=probes.cwd)
    return build_preflight(
        runner_ref=runner_ref_of(opts),
        agent=agent_of(opts),
        auth_env_names=names,
        auth_env_names_explicit=explicit,
        launch_preview=preview,
        timeout_policy=timeout_policy,
        task_material=[(task, status)],
        require_task_material_ready=bool(opts.require_task_material_ready),
        agent_setup=(setup.blocker, setup.blocks_launch) if uses_loopx_profile(opts) else None,
        env=probes.env,
        which=probes.which,
        run_probe=probes.run_probe or make_run_probe(probes.env),
        assisted_observation_required=bool(opts.active_user_assisted_treatment),
    )


def build_planned_terminal_bench_records(
    opts: PlannedRunOptions,
    *,
    env: Mapping[str, str],
    which: Callable[[str], str | None],
    run_probe: Callable[[Sequence[str]], bool] | None = None,
    path_exists: Callable[[str], bool] | None = None,
    cwd: Path | None = None,
) -> list[dict[str, Any]]:
    """One planned (or fixture) record per ``--include-task-name``. ``opts`` come from options
    the command validated once, at the edge; nothing is checked again here."""
    probes = Probes(env=env, which=which, run_probe=run_probe, path_exists=path_exists, cwd=cwd)
    shape = event_shape(opts)
    return [_build_one(opts, task, probes, shape) for task in task_names(opts)]


def build_planned_terminal_bench_record(
    opts: PlannedRunOptions,
    *,
    env: Mapping[str, str],
    which: Callable[[str], str | None],
    run_probe: Callable[[Sequence[str]], bool] | None = None,
    path_exists: Callable[[str], bool] | None = None,
    cwd: Path | None = None,
) -> dict[str, Any]:
    """The record of the first planned case (the common single-task invocation)."""
    records = build_planned_terminal_bench_records(
        opts, env=env, which=which, run_probe=run_probe, path_exists=path_exists, cwd=cwd
    )
    return records[0]
