"""The validation of ``benchmark run`` options, run once at the edge (docs/formats/cli.md §5.3).

The command layer parses flags into a :class:`BenchmarkRunRequest` and calls
:func:`validate_benchmark_run_options` on it before anything is read or written; the readers and
the planner then take small typed options built from the validated request and check nothing
again. The order of the checks is part of the contract: users and scripts see the *first*
problem, with exactly the message loopx 0.4.8 printed (plus benchledger's own new rules, slotted
where docs/formats/cli.md §5.3 puts them). Parser-level problems (bad choice, bad number) raise
``UsageError`` (exit 2); everything else raises ``InputError`` (exit 1).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from benchledger.ledger.core.errors import InputError, UsageError
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest, require_option_names
from benchledger.ledger.sources.planned import skillsbench_route_names as skillsbench
from benchledger.ledger.sources.planned.options import (
    ARM_ROLES,
    BENCHMARK_NAMES,
    CODEX_INSTALL_STRATEGIES,
    DEFAULT_MODE,
    FAKE_WORKER_MODES,
    MATERIALIZATION_EXTENDED_SETUP,
    MODE_APP_SERVER_GOAL,
    MODE_CODEX_LOOPX,
    PREFLIGHT_GUARD_MODES,
    REPAIR_PROFILE_MULTIPLIER,
    REPAIR_PROFILE_PREFLIGHT_TIMEOUT_SEC,
    RUNNERS,
    SELECTION_POLICIES,
    TERMINAL_BENCH_MODES,
    TIMEOUT_PRESET_NAMES,
    WORKER_CODEX_MATERIALIZATION_STRATEGIES,
)
from benchledger.ledger.sources.planned.timeout_policy import (
    MULTIPLIER_KEYS,
    TIMEOUT_PRESETS,
    validate_multipliers,
)

# --- option groups used by several rules -----------------------------------------------------

_BRIDGE_FLAGS = require_option_names(
    (
        "cli_bridge_contract",
        "worker_cli_bridge_fixture",
        "active_cli_bridge",
        "active_user_assisted_treatment",
        "active_user_observation_fixture",
    )
)
_FIXTURE_OR_PREFLIGHT_FLAGS = require_option_names(
    (
        "fake_worker",
        "preflight_guard",
        "require_task_material_ready",
        *_BRIDGE_FLAGS,
        "setup_timeout_repair_profile",
        "worker_materialization_probe_only",
    )
)
_PREVIEW_TIMEOUT_VALUES = require_option_names(
    (
        *MULTIPLIER_KEYS,
        "timeout_preset",
        "codex_preflight_timeout_sec",
        "worker_codex_materialization_strategy",
    )
)
_TERMINAL_BENCH_ONLY = require_option_names(
    (
        "harbor_job_dir",
        *_FIXTURE_OR_PREFLIGHT_FLAGS,
        *_PREVIEW_TIMEOUT_VALUES,
        "codex_install_strategy",
    )
)
_SKILLSBENCH_RESULT_FLAGS = require_option_names(
    (
        "skillsbench_result_json",
        "skillsbench_result_root",
        "selection_policy",
    )
)

MSG_DRY_RUN_AND_EXECUTE = "benchmark run accepts either --dry-run or --execute, not both"
MSG_SKILLSBENCH_TB_FLAGS = (
    "skillsbench skeleton does not accept Terminal-Bench runner, Harbor ingest, preflight, "
    "timeout, fake-worker, or bridge flags"
)
MSG_RESULT_FLAGS_EXCLUSIVE = (
    "--skillsbench-result-json and --skillsbench-result-root are mutually exclusive"
)
MSG_TB_SKILLSBENCH_FLAGS = "terminal-bench does not accept SkillsBench result flags"
MSG_HARBOR_FIXTURE = "--harbor-job-dir cannot be combined with fixture or preflight flags"
MSG_MATERIAL_NEEDS_PREFLIGHT = "--require-task-material-ready requires --preflight-guard"
MSG_HARBOR_TIMEOUT = (
    "--harbor-job-dir reads timeout policy from Harbor artifacts; "
    "do not pass preview timeout multiplier flags"
)
MSG_ARM_ID_AND_MAP = "--arm-id and --arm-map are mutually exclusive"
MSG_PRESET_AND_MULTIPLIERS = "--timeout-preset cannot be combined with timeout multiplier flags"
MSG_PREFLIGHT_TIMEOUT = "codex_preflight_timeout_sec must be a positive integer"
MSG_JOBS = "--jobs must be a positive integer"
MSG_APP_SERVER_GOAL = "unsupported terminal-bench mode: codex-app-server-goal"


def skillsbench_routes() -> tuple[str, ...]:
    """The route choices, in the order of the route table (docs/formats/benchflow.md §7.1), from the
    names-only module: validating options must not import the route table itself."""
    return skillsbench.ROUTE_NAMES


# --- parsing helpers for the command layer ---------------------------------------------------


def parse_float_option(text: str) -> float:
    """argparse's float conversion and message (exit 2); ``nan``/``inf`` parse, rule 9 rejects."""
    try:
        return float(text)
    except (TypeError, ValueError):
        raise UsageError(f"invalid float value: {text!r}") from None


def parse_int_option(text: str) -> int:
    """argparse's int conversion with its message (exit 2)."""
    try:
        return int(text)
    except (TypeError, ValueError):
        raise UsageError(f"invalid int value: {text!r}") from None


def _check_choice(flag: str, value: Any, choices: Iterable[str]) -> None:
    allowed = tuple(choices)
    if value is not None and value not in allowed:
        shown = ", ".join(repr(choice) for choice in allowed)
        raise UsageError(f"argument {flag}: invalid choice: {value!r} (choose from {shown})")


def check_parser_choices(opts: BenchmarkRunRequest) -> None:
    """What the parser rejects before any rule runs (exit 2); the command layer may do it first."""
    _check_choice("benchmark_name", opts.benchmark_name, BENCHMARK_NAMES)
    if opts.goal_id is None:  # an ingest got its default already (requests/goal_default.py)
        raise UsageError(
            "--goal-id is required here: only an ingest of one job directory, result root, "
            "log directory or log file has a default goal (its name)"
        )
    _check_choice("--mode", opts.mode, TERMINAL_BENCH_MODES)
    _check_choice("--runner", opts.runner, RUNNERS)
    _check_choice("--skillsbench-route", opts.skillsbench_route, skillsbench_routes())
    _check_choice("--codex-install-strategy", opts.codex_install_strategy, CODEX_INSTALL_STRATEGIES)
    _check_choice(
        "--worker-codex-materialization-strategy",
        opts.worker_codex_materialization_strategy,
        WORKER_CODEX_MATERIALIZATION_STRATEGIES,
    )
    _check_choice("--selection-policy", opts.selection_policy, SELECTION_POLICIES)
    _check_choice("--timeout-preset", opts.timeout_preset, TIMEOUT_PRESET_NAMES)
    _check_choice("--arm-role", opts.arm_role, ARM_ROLES)


# --- the ordered rules -----------------------------------------------------------------------


def _on(opts: BenchmarkRunRequest, *keys: str) -> bool:
    """True when any of the options is given (a true flag, or a value that is not None/empty)."""
    return opts.given(*keys)


def _mode(opts: BenchmarkRunRequest) -> str:
    return opts.mode or DEFAULT_MODE


def _effective_strategy(opts: BenchmarkRunRequest) -> str | None:
    return opts.worker_codex_materialization_strategy


def _common_prefix_rules(opts: BenchmarkRunRequest) -> None:
    """Rules 1-7: write controls, then which flags belong to which benchmark or path."""
    skillsbench = opts.benchmark_name == "skillsbench"
    if opts.dry_run and opts.execute:
        raise InputError(MSG_DRY_RUN_AND_EXECUTE)
    if skillsbench and _on(opts, *_TERMINAL_BENCH_ONLY):
        raise InputError(MSG_SKILLSBENCH_TB_FLAGS)
    if _on(opts, "skillsbench_result_json") and _on(opts, "skillsbench_result_root"):
        raise InputError(MSG_RESULT_FLAGS_EXCLUSIVE)
    if not skillsbench and _on(opts, *_SKILLSBENCH_RESULT_FLAGS):
        raise InputError(MSG_TB_SKILLSBENCH_FLAGS)
    harbor = _on(opts, "harbor_job_dir")
    if harbor and _on(opts, *_FIXTURE_OR_PREFLIGHT_FLAGS):
        raise InputError(MSG_HARBOR_FIXTURE)
    if _on(opts, "require_task_material_ready") and not _on(opts, "preflight_guard"):
        raise InputError(MSG_MATERIAL_NEEDS_PREFLIGHT)
    if harbor and _on(opts, *_PREVIEW_TIMEOUT_VALUES):
        raise InputError(MSG_HARBOR_TIMEOUT)


def _value_rules(opts: BenchmarkRunRequest) -> None:
    """Rules 8-10: arm flags, then numbers that parse but make no sense."""
    if _on(opts, "arm_id") and _on(opts, "arm_map"):
        raise InputError(MSG_ARM_ID_AND_MAP)
    validate_multipliers(opts.multipliers())
    if _on(opts, "timeout_preset") and any(v is not None for v in opts.multipliers().values()):
        raise InputError(MSG_PRESET_AND_MULTIPLIERS)
    seconds = opts.codex_preflight_timeout_sec
    if seconds is not None and (isinstance(seconds, bool) or seconds <= 0):
        raise InputError(MSG_PREFLIGHT_TIMEOUT)
    if opts.jobs is not None and (isinstance(opts.jobs, bool) or opts.jobs <= 0):
        raise InputError(MSG_JOBS)


def _fixture_rules(opts: BenchmarkRunRequest) -> None:
    """Rules 11-18: which fixture and preflight flags fit which mode and each other."""
    mode = _mode(opts)
    fake = _on(opts, "fake_worker")
    preflight = _on(opts, "preflight_guard")
    contract = _on(opts, "cli_bridge_contract")
    worker_fixture = _on(opts, "worker_cli_bridge_fixture")
    active = _on(opts, "active_cli_bridge")
    treatment = _on(opts, "active_user_assisted_treatment")
    codex_loopx = mode == MODE_CODEX_LOOPX
    if fake and mode not in FAKE_WORKER_MODES:
        raise InputError("--fake-worker is only supported for codex-loopx or loopx-managed-codex")
    if preflight and fake:
        raise InputError("--preflight-guard cannot be combined with --fake-worker")
    if preflight and mode not in PREFLIGHT_GUARD_MODES:
        raise InputError(
            "--preflight-guard is only supported for hardened-codex, codex-goal-mode, "
            "codex-app-server-goal, codex-loopx, or loopx-managed-codex"
        )
    if contract:
        _first_failing(
            "--cli-bridge-contract",
            (not codex_loopx, "is only supported for codex-loopx"),
            (fake, "cannot be combined with --fake-worker"),
            (preflight, "cannot be combined with --preflight-guard"),
        )
    if worker_fixture:
        _first_failing(
            "--worker-cli-bridge-fixture",
            (not codex_loopx, "is only supported for codex-loopx"),
            (fake, "cannot be combined with --fake-worker"),
            (preflight, "cannot be combined with --preflight-guard"),
            (contract, "cannot be combined with --cli-bridge-contract"),
        )
    if active:
        _first_failing(
            "--active-cli-bridge",
            (not codex_loopx, "is only supported for codex-loopx"),
            (not preflight, "requires --preflight-guard"),
            (contract, "cannot be combined with --cli-bridge-contract"),
            (worker_fixture, "cannot be combined with --worker-cli-bridge-fixture"),
        )
    if treatment:
        _first_failing(
            "--active-user-assisted-treatment",
            (not codex_loopx, "is only supported for codex-loopx"),
            (not preflight, "requires --preflight-guard"),
            (not active, "requires --active-cli-bridge"),
            (worker_fixture, "cannot be combined with --worker-cli-bridge-fixture"),
            (contract, "cannot be combined with --cli-bridge-contract"),
        )
    if _on(opts, "active_user_observation_fixture") and not treatment:
        raise InputError(
            "--active-user-observation-fixture requires --active-user-assisted-treatment"
        )


def _first_failing(flag: str, *conditions: tuple[bool, str]) -> None:
    for failed, text in conditions:
        if failed:
            raise InputError(f"{flag} {text}")


def _repair_profile_rules(opts: BenchmarkRunRequest) -> None:
    """Rule 19: explicit values that contradict the repair profile are refused, not overridden."""
    if not _on(opts, "setup_timeout_repair_profile"):
        return
    preset = TIMEOUT_PRESETS.get(opts.timeout_preset or "", {})
    for key in ("agent_timeout_multiplier", "agent_setup_timeout_multiplier"):
        value = opts.multipliers()[key]
        if value is None:
            value = preset.get(key)
        if value is not None and float(value) != REPAIR_PROFILE_MULTIPLIER:
            raise InputError(f"setup_timeout_repair_profile requires {key}=8")
    seconds = opts.codex_preflight_timeout_sec
    fail_fast = _effective_strategy(opts) != MATERIALIZATION_EXTENDED_SETUP
    if fail_fast and seconds is not None and seconds != REPAIR_PROFILE_PREFLIGHT_TIMEOUT_SEC:
        raise InputError("setup_timeout_repair_profile requires codex_preflight_timeout_sec=45")


def _terminal_bench_rules(opts: BenchmarkRunRequest) -> None:
    _fixture_rules(opts)
    _repair_profile_rules(opts)
    if _mode(opts) == MODE_APP_SERVER_GOAL:
        raise InputError(MSG_APP_SERVER_GOAL)


def validate_benchmark_run_options(opts: BenchmarkRunRequest) -> None:
    """Run every ``benchmark run`` rule in docs/formats/cli.md §5.3 order (rules 21-22 belong to
    adapters)."""
    check_parser_choices(opts)
    _common_prefix_rules(opts)
    _value_rules(opts)
    if opts.benchmark_name != "skillsbench":
        _terminal_bench_rules(opts)


def validate_terminal_bench_options(opts: BenchmarkRunRequest) -> None:
    """Validate ``benchmark run terminal-bench`` options (planned runs and Harbor ingest)."""
    validate_benchmark_run_options(opts.with_benchmark("terminal-bench"))


def validate_skillsbench_options(opts: BenchmarkRunRequest) -> None:
    """Validate ``benchmark run skillsbench`` options (planned skeleton and BenchFlow ingest)."""
    validate_benchmark_run_options(opts.with_benchmark("skillsbench"))
