"""``benchmark run`` without a result to ingest, through the CLI (docs/formats/cli.md §5-7).

Three tables: parser errors (exit 2), rule errors (exit 1, exact ``error: <message>``, nothing
written), and valid invocations with the record they must produce. Every valid planned record
is also checked against the invariants of docs/formats/cli.md §6.1/§7 (no trial, no reward, a stable
``run_key``, a launch preview that survives compaction, one consistent first blocker).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.support_planned_cli import invoke, ledger_rows, stored_events

TB = ["benchmark", "run", "terminal-bench", "--goal-id", "g"]
SB = ["benchmark", "run", "skillsbench", "--goal-id", "g"]
MULTIPLIER_FLAGS = [
    "--timeout-multiplier",
    "--agent-timeout-multiplier",
    "--verifier-timeout-multiplier",
    "--agent-setup-timeout-multiplier",
    "--environment-build-timeout-multiplier",
]
CODEX_LOOPX = ["--mode", "codex-loopx"]


# --- machine: deterministic probes ---------------------------------------------------------------


@pytest.fixture(autouse=True)
def machine(tmp_path, monkeypatch) -> dict[str, Path]:
    """No runner, docker or codex on PATH, no auth variables, an empty task cache, cwd = tmp."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cache = tmp_path / "task-cache"
    cache.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BENCHLEDGER_HARBOR_TASK_CACHE_ROOT", str(cache))
    for name in ("CODEX_FORCE_AUTH_JSON", "OPENAI_API_KEY", "BENCHLEDGER_REGISTRY", "MY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return {"bin": bin_dir, "cache": cache}


def install_fake_tools(bin_dir: Path, monkeypatch) -> None:
    """uvx, docker (with a server) and codex that answer their version probes."""
    for name in ("uvx", "docker", "codex", "harbor"):
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        tool.chmod(0o755)
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")


def cache_task(cache: Path, task: str, files: tuple[str, ...]) -> None:
    task_dir = cache / "some-digest" / task
    task_dir.mkdir(parents=True)
    for name in files:
        (task_dir / name).write_text("x", encoding="utf-8")


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'store' / 'ledger.db'}"


def run(args: list[str], db: str, *extra: str):
    return invoke([*args, *extra], db=db, runtime_root=Path("rt").absolute())


def plan(args: list[str], db: str) -> dict[str, Any]:
    call = run([*args, "--format", "json"], db)
    assert call.code == 0, call.stderr
    return call.payload


# --- invariants of every no-run record ------------------------------------------------------------


def _walk_keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _walk_keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _walk_keys(v)}
    return set()


def assert_no_run_record(record: dict[str, Any]) -> None:
    assert record["run_status"] in ("planned", "fixture")
    assert record["real_run"] is False and record["submit_eligible"] is False
    assert record["official_task_score"] == {"kind": "not_run"}
    keys = _walk_keys(record)
    assert not keys & {"trials", "reward", "rewards", "progress", "metrics"}, keys
    assert record["run_key"].startswith("planned:")


def assert_preview(record: dict[str, Any]) -> None:
    preview = record["launch_preview"]
    argv = preview["argv"]
    digest = hashlib.sha256("\0".join(argv).encode()).hexdigest()[:16]
    assert record["run_key"] == f"planned:{digest}"
    assert preview["command"] == shlex.join(argv)
    assert preview["job_name"] == record["job_name"]
    assert argv[argv.index("--job-name") + 1] == record["job_name"]
    assert preview["forbidden_flags_absent"] is True
    assert not any(a in argv for a in ("--upload", "--public", "--share", "--agent-import-path"))
    assert not any(a.startswith(("/", "~")) for a in argv)
    env_values = [argv[i + 1] for i, a in enumerate(argv) if a == "--agent-env"]
    assert all(v.endswith("=true") or "=${" in v for v in env_values), "env names, not values"


def assert_timeout_policy(record: dict[str, Any]) -> None:
    policy = record["timeout_policy"]
    effective = policy["effective_multipliers"]
    assert len(effective) == 5
    assert policy["official_comparable"] is all(v == 1.0 for v in effective.values())


def assert_preflight_consistent(record: dict[str, Any]) -> None:
    preflight = record.get("preflight")
    if preflight is None:
        return
    failing = [c for c in preflight["checks"] if c["blocking"] and not c["ok"]]
    assert preflight["ready"] is (not failing)
    assert preflight["first_blocker"] == (failing[0]["blocker"] if failing else "ready_for_launch")
    if record["run_status"] == "planned":
        assert record["first_blocker"] == preflight["first_blocker"]


def assert_invariants(payload: dict[str, Any]) -> None:
    records = payload["benchmark_runs"]
    assert payload["ok"] is True and payload["benchmark_cli"]["record_count"] == len(records)
    for record in records:
        assert_no_run_record(record)
        if record["source_runner"] == "benchledger_planner" and "launch_preview" in record:
            assert_preview(record)
        if "timeout_policy" in record:
            assert_timeout_policy(record)
        assert_preflight_consistent(record)


def argv_value(record: dict[str, Any], flag: str) -> list[str]:
    argv = record["launch_preview"]["argv"]
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


def dig(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


# --- 1. parser errors: exit 2, usage on stderr, no JSON -------------------------------------------

PARSER_ERRORS = [
    ("mode", [*TB, "--mode", "bogus"], "--mode"),
    ("runner", [*TB, "--runner", "docker"], "--runner"),
    ("route", [*SB, "--skillsbench-route", "bogus"], "--skillsbench-route"),
    ("install", [*TB, "--codex-install-strategy", "bogus"], "--codex-install-strategy"),
    ("materialization", [*TB, "--worker-codex-materialization-strategy", "x"],
     "--worker-codex-materialization-strategy"),
    ("selection", [*SB, "--selection-policy", "best"], "--selection-policy"),
    ("preset", [*TB, "--timeout-preset", "fast"], "--timeout-preset"),
    ("float", [*TB, "--agent-timeout-multiplier", "two"], "invalid float value: 'two'"),
    ("int", [*TB, "--codex-preflight-timeout-sec", "4.5"], "invalid int value: '4.5'"),
    ("n-attempts", [*TB, "--n-attempts", "x"], "invalid int value: 'x'"),
    ("goal", ["benchmark", "run", "terminal-bench"], "--goal-id"),
    ("benchmark", ["benchmark", "run", "swe-bench", "--goal-id", "g"], "swe-bench"),
    ("unknown", [*TB, "--upload"], "--upload"),
    ("format", [*TB, "--format", "yaml"], "--format"),
    ("delivery-outcome", [*TB, "--delivery-outcome", "bogus"], "--delivery-outcome"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "args", "needle"), PARSER_ERRORS)
def test_parser_errors_exit_2(case, args, needle, db):
    call = run([*args, "--execute"], db)
    assert call.code == 2, (case, call.stderr)
    assert needle in call.stderr
    assert call.stdout == ""
    assert not Path("rt").exists() and not Path("store").exists()


# --- 2. rule errors: exit 1, exact message, nothing written ---------------------------------------

SKB_FLAGS = "skillsbench skeleton does not accept Terminal-Bench runner, Harbor ingest, preflight, timeout, fake-worker, or bridge flags"  # noqa: E501
HARBOR_FIXTURE = "--harbor-job-dir cannot be combined with fixture or preflight flags"
HARBOR_TIMEOUT = ("--harbor-job-dir reads timeout policy from Harbor artifacts; do not pass "
                  "preview timeout multiplier flags")  # fmt: skip
FINITE = "{} must be a finite number greater than zero"
TB_ONLY = [
    ["--harbor-job-dir", "jobs/x"], ["--fake-worker"], ["--preflight-guard"],
    ["--require-task-material-ready"], ["--cli-bridge-contract"], ["--worker-cli-bridge-fixture"],
    ["--active-cli-bridge"], ["--active-user-assisted-treatment"],
    ["--active-user-observation-fixture"], ["--setup-timeout-repair-profile"],
    *[[flag, "2"] for flag in MULTIPLIER_FLAGS], ["--timeout-preset", "official"],
    ["--codex-preflight-timeout-sec", "30"],
    ["--worker-codex-materialization-strategy", "worker_path_preprovisioned"],
    ["--worker-materialization-probe-only"],
    ["--codex-install-strategy", "runtime_install_if_missing"],
]  # fmt: skip
FIXTURE_OR_PREFLIGHT = [
    ["--fake-worker"], ["--preflight-guard"], ["--require-task-material-ready"],
    ["--cli-bridge-contract"], ["--worker-cli-bridge-fixture"], ["--active-cli-bridge"],
    ["--active-user-assisted-treatment"], ["--active-user-observation-fixture"],
    ["--setup-timeout-repair-profile"], ["--worker-materialization-probe-only"],
]  # fmt: skip
HARBOR_TIMEOUT_FLAGS = [
    *[[flag, "2"] for flag in MULTIPLIER_FLAGS], ["--timeout-preset", "long-horizon-8x"],
    ["--codex-preflight-timeout-sec", "30"],
    ["--worker-codex-materialization-strategy", "runtime_install_extended_setup"],
]  # fmt: skip
PF = ["--preflight-guard"]

RULE_ERRORS: list[tuple[str, list[str], str]] = [
    ("1 dry-run+execute", [*TB, "--dry-run"], "benchmark run accepts either --dry-run or --execute, not both"),  # noqa: E501
    *[(f"2 skillsbench {a[0]}", [*SB, *a], SKB_FLAGS) for a in TB_ONLY],
    ("2 before 3", [*SB, "--fake-worker", "--skillsbench-result-json", "a", "--skillsbench-result-root", "b"], SKB_FLAGS),  # noqa: E501
    ("3 both results", [*SB, "--skillsbench-result-json", "a", "--skillsbench-result-root", "b"],
     "--skillsbench-result-json and --skillsbench-result-root are mutually exclusive"),
    *[(f"4 tb {a[0]}", [*TB, *a], "terminal-bench does not accept SkillsBench result flags")
      for a in (["--skillsbench-result-json", "r.json"], ["--skillsbench-result-root", "r"],
                ["--selection-policy", "newest"])],
    *[(f"5 harbor {a[0]}", [*TB, "--harbor-job-dir", "j", *a], HARBOR_FIXTURE)
      for a in FIXTURE_OR_PREFLIGHT],
    ("6 material", [*TB, "--require-task-material-ready"], "--require-task-material-ready requires --preflight-guard"),  # noqa: E501
    *[(f"7 harbor {a[0]}", [*TB, "--harbor-job-dir", "j", *a], HARBOR_TIMEOUT)
      for a in HARBOR_TIMEOUT_FLAGS],
    ("8 arm", [*TB, "--arm-id", "a", "--arm-map", "codex=b"], "--arm-id and --arm-map are mutually exclusive"),  # noqa: E501
    *[(f"9 {flag} {value} {mode}", [*TB, "--mode", mode, flag, value], FINITE.format(flag))
      for flag in MULTIPLIER_FLAGS for value in ("0", "-1", "nan", "inf")
      for mode in ("loopx-managed-codex", "passive-observed-codex")],
    ("9 first bad flag wins", [*TB, "--verifier-timeout-multiplier", "0", "--timeout-multiplier", "-2"], FINITE.format("--timeout-multiplier")),  # noqa: E501
    ("9 preset+multiplier",
     [*TB, "--timeout-preset", "official", "--agent-timeout-multiplier", "8"],
     "--timeout-preset cannot be combined with timeout multiplier flags"),
    ("10 timeout 0", [*TB, "--codex-preflight-timeout-sec", "0"], "codex_preflight_timeout_sec must be a positive integer"),  # noqa: E501
    ("10 timeout -3", [*TB, "--codex-preflight-timeout-sec", "-3"], "codex_preflight_timeout_sec must be a positive integer"),  # noqa: E501
    *[(f"11 fake {m}", [*TB, "--mode", m, "--fake-worker"], "--fake-worker is only supported for codex-loopx or loopx-managed-codex")  # noqa: E501
      for m in ("hardened-codex", "passive-observed-codex", "codex-goal-mode", "codex-app-server-goal")],  # noqa: E501
    ("12 preflight+fake", [*TB, *PF, "--fake-worker"], "--preflight-guard cannot be combined with --fake-worker"),  # noqa: E501
    ("13 preflight passive", [*TB, "--mode", "passive-observed-codex", *PF],
     "--preflight-guard is only supported for hardened-codex, codex-goal-mode, codex-app-server-goal, codex-loopx, or loopx-managed-codex"),  # noqa: E501
    ("14 contract mode", [*TB, "--cli-bridge-contract"], "--cli-bridge-contract is only supported for codex-loopx"),  # noqa: E501
    ("14 contract fake", [*TB, *CODEX_LOOPX, "--cli-bridge-contract", "--fake-worker"], "--cli-bridge-contract cannot be combined with --fake-worker"),  # noqa: E501
    ("14 contract preflight", [*TB, *CODEX_LOOPX, "--cli-bridge-contract", *PF], "--cli-bridge-contract cannot be combined with --preflight-guard"),  # noqa: E501
    ("15 worker mode", [*TB, "--worker-cli-bridge-fixture"], "--worker-cli-bridge-fixture is only supported for codex-loopx"),  # noqa: E501
    ("15 worker fake", [*TB, *CODEX_LOOPX, "--worker-cli-bridge-fixture", "--fake-worker"], "--worker-cli-bridge-fixture cannot be combined with --fake-worker"),  # noqa: E501
    ("15 worker preflight", [*TB, *CODEX_LOOPX, "--worker-cli-bridge-fixture", *PF], "--worker-cli-bridge-fixture cannot be combined with --preflight-guard"),  # noqa: E501
    ("15 worker contract", [*TB, *CODEX_LOOPX, "--worker-cli-bridge-fixture", "--cli-bridge-contract"], "--worker-cli-bridge-fixture cannot be combined with --cli-bridge-contract"),  # noqa: E501
    ("16 active mode", [*TB, "--active-cli-bridge", *PF], "--active-cli-bridge is only supported for codex-loopx"),  # noqa: E501
    ("16 active preflight", [*TB, *CODEX_LOOPX, "--active-cli-bridge"], "--active-cli-bridge requires --preflight-guard"),  # noqa: E501
    # Rule 14 always fires first for the contract (it needs no preflight, active needs one).
    ("16 active contract", [*TB, *CODEX_LOOPX, "--active-cli-bridge", *PF, "--cli-bridge-contract"], "--cli-bridge-contract cannot be combined with --preflight-guard"),  # noqa: E501
    ("16 active worker", [*TB, *CODEX_LOOPX, "--active-cli-bridge", *PF, "--worker-cli-bridge-fixture"], "--worker-cli-bridge-fixture cannot be combined with --preflight-guard"),  # noqa: E501
    ("17 treatment mode", [*TB, "--active-user-assisted-treatment"], "--active-user-assisted-treatment is only supported for codex-loopx"),  # noqa: E501
    ("17 treatment preflight", [*TB, *CODEX_LOOPX, "--active-user-assisted-treatment"], "--active-user-assisted-treatment requires --preflight-guard"),  # noqa: E501
    ("17 treatment active", [*TB, *CODEX_LOOPX, "--active-user-assisted-treatment", *PF], "--active-user-assisted-treatment requires --active-cli-bridge"),  # noqa: E501
    ("18 observation", [*TB, *CODEX_LOOPX, "--active-user-observation-fixture"], "--active-user-observation-fixture requires --active-user-assisted-treatment"),  # noqa: E501
    ("19 repair agent", [*TB, "--setup-timeout-repair-profile", "--agent-timeout-multiplier", "4"], "setup_timeout_repair_profile requires agent_timeout_multiplier=8"),  # noqa: E501
    ("19 repair setup", [*TB, "--setup-timeout-repair-profile", "--agent-setup-timeout-multiplier", "2"], "setup_timeout_repair_profile requires agent_setup_timeout_multiplier=8"),  # noqa: E501
    ("19 repair timeout", [*TB, "--setup-timeout-repair-profile", "--codex-preflight-timeout-sec", "30"], "setup_timeout_repair_profile requires codex_preflight_timeout_sec=45"),  # noqa: E501
    ("20 app-server", [*TB, "--mode", "codex-app-server-goal"], "unsupported terminal-bench mode: codex-app-server-goal"),  # noqa: E501
    ("20 app-server preflight", [*TB, "--mode", "codex-app-server-goal", *PF], "unsupported terminal-bench mode: codex-app-server-goal"),  # noqa: E501
    ("21 harbor missing", [*TB, "--harbor-job-dir", "no-such-dir"], "--harbor-job-dir does not exist or is not a directory"),  # noqa: E501
    ("21 harbor not a job", [*TB, "--harbor-job-dir", "bin"], "--harbor-job-dir is not a Harbor job directory (no config.json, lock.json, result.json or trial directories)"),  # noqa: E501
    ("21 benchflow json", [*SB, "--skillsbench-result-json", "nope.json"], "--skillsbench-result-json must be a result.json file or a directory"),  # noqa: E501
    ("21 benchflow root", [*SB, "--skillsbench-result-root", "nope"], "--skillsbench-result-root must be a directory"),  # noqa: E501
    ("22 goal empty", ["benchmark", "run", "terminal-bench", "--goal-id", "  "], "goal id is required"),  # noqa: E501
    ("22 goal dots", ["benchmark", "run", "terminal-bench", "--goal-id", ".."], "goal id must be a single path segment"),  # noqa: E501
    ("22 goal slash", ["benchmark", "run", "skillsbench", "--goal-id", "a/b"], "goal id must be a single path segment"),  # noqa: E501
    ("22 goal secret", ["benchmark", "run", "terminal-bench", "--goal-id", "sk-abcdefabcdefabcdefabcdef12345678"], "goal id is not public-safe"),  # noqa: E501
    ("21 arm-map entry", [*TB, "--arm-map", "no-equals-sign"], "invalid --arm-map entry: no-equals-sign"),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(("case", "args", "message"), RULE_ERRORS, ids=[r[0] for r in RULE_ERRORS])
def test_rule_errors_exit_1_with_the_exact_message(case, args, message, db):
    call = run([*args, "--execute", "--format", "json"], db)
    assert call.code == 1, (case, call.stderr, call.stdout)
    assert call.stderr.strip() == f"error: {message}"
    assert call.payload["ok"] is False and call.payload["error"] == message
    assert not Path("rt").exists(), "nothing rendered"
    store = Path("store")
    if store.exists():
        assert stored_events(db) == [], "no events appended"


# --- 3. valid invocations: the record ----------------------------------------------------------

MANAGED = {
    "mode": "loopx_managed_codex_cli_dry_run",
    "worker_mode": "loopx_managed_codex_cli",
    "first_blocker": "managed_cli_skeleton_only_no_real_case",
    "arm_id": "codex_loopx_treatment",
    "loopx_inside_case": True,
    "official_score_comparable_to_native_codex": False,
}
VALID: list[tuple[str, list[str], str, dict[str, Any]]] = [
    ("default", [], "terminal_bench_cli_dry_run_v0", {
        **MANAGED, "run_status": "planned", "benchmark_id": "terminal-bench@2.0",
        "case_id": "build-cython-ext", "agent.name": "codex", "agent.model": "gpt-5.5",
        "job_name": "terminal-bench_2.0_build-cython-ext_codex",
        "launch_preview.runner_ref": "harbor==0.25.0",
        "launch_preview.argv.0": "uvx", "launch_preview.argv.2": "harbor==0.25.0",
        "launch_preview.jobs_dir": "<jobs-dir>", "launch_preview.placeholders": ["<jobs-dir>"],
        "timeout_policy.multipliers": None, "timeout_policy.official_comparable": True,
        "timeout_policy.source": "cli_preview",
        "timeout_policy.agent_timeout_seconds_effective": 900.0,
    }),
    ("runner harbor", ["--runner", "harbor"], "terminal_bench_cli_dry_run_v0", MANAGED),
    ("mode codex-loopx", CODEX_LOOPX, "terminal_bench_codex_loopx_dry_run_v0", {
        "mode": "codex_loopx_cli_dry_run", "worker_mode": "codex_loopx_cli",
        "first_blocker": "codex_loopx_cli_skeleton_only_no_real_case"}),
    ("mode hardened", ["--mode", "hardened-codex"], "terminal_bench_cli_dry_run_v0", {
        "mode": "hardened_codex_baseline_cli_dry_run", "arm_id": "hardened_codex_baseline",
        "arm_role": "baseline", "hardened_install_surface": True,
        "first_blocker": "hardened_codex_baseline_cli_skeleton_only_no_real_case",
        "official_score_comparable_to_loopx_treatment": True, "loopx_inside_case": False}),
    ("mode goal", ["--mode", "codex-goal-mode"], "terminal_bench_codex_goal_mode_baseline_dry_run_v0", {  # noqa: E501
        "mode": "codex_goal_mode_baseline_cli_dry_run", "worker_mode": "codex_goal_mode_baseline",
        "first_blocker": "codex_goal_mode_baseline_cli_skeleton_only_no_real_case"}),
    ("mode passive", ["--mode", "passive-observed-codex"], "terminal_bench_cli_dry_run_v0", {
        "mode": "passive_observed_codex_cli_dry_run", "worker_mode": "passive_observed_codex_cli",
        "first_blocker": "passive_cli_skeleton_only_no_real_case",
        "official_score_comparable_to_native_codex": True, "launch_preview": None}),
    ("dataset", ["--dataset", "my-set@1.0"], "terminal_bench_cli_dry_run_v0", {
        "benchmark_id": "my-set@1.0", "argv:--dataset": ["my-set@1.0"],
        "timeout_policy.agent_timeout_seconds_effective": None}),
    ("benchmark-id alias", ["--benchmark-id", "my-set@1.0"], "terminal_bench_cli_dry_run_v0", {
        "benchmark_id": "my-set@1.0"}),
    ("local dataset", ["--dataset", "./tasks"], "terminal_bench_cli_dry_run_v0", {
        "benchmark_id": "./tasks", "argv:--path": ["./tasks"], "argv:--dataset": []}),
    ("agent", ["--agent", "terminus-2", "--model", "anthropic/claude-x"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "agent.name": "terminus-2", "argv:--agent": ["terminus-2"],
        "argv:--model": ["anthropic/claude-x"], "argv:--agent-kwarg": [],
        "argv:--allow-environment-host": [], "argv:--agent-env": [],
        "job_name": "terminal-bench_2.0_build-cython-ext_terminus-2"}),
    ("auth env name", ["--agent", "terminus-2", "--auth-env-name", "ANTHROPIC_API_KEY"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "argv:--agent-env": ["ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY}"],
        "launch_preview.env_names": ["ANTHROPIC_API_KEY"]}),
    ("loopx agent", [], "terminal_bench_cli_dry_run_v0", {
        "argv:--agent": ["loopx.terminal_bench_agent:GoalHarnessManagedCodex"],
        "argv:--agent-env": ["CODEX_FORCE_AUTH_JSON=true"],
        "launch_preview.agent_kwargs.loopx_goal_id": "g",
        "launch_preview.agent_kwargs.loopx_codex_install_strategy": "runtime_install_if_missing",
        "launch_preview.allowed_environment_hosts.0": "registry.npmjs.org"}),
    ("timeout-multiplier", ["--timeout-multiplier", "2"], "terminal_bench_cli_dry_run_v0", {
        "argv:--timeout-multiplier": ["2"], "timeout_policy.official_comparable": False,
        "timeout_policy.multipliers": {"timeout_multiplier": 2.0},
        "timeout_policy.agent_timeout_seconds_effective": 1800.0}),
    ("agent multiplier 8", ["--agent-timeout-multiplier", "8"], "terminal_bench_cli_dry_run_v0", {
        "argv:--agent-timeout-multiplier": ["8"], "timeout_policy.official_comparable": False,
        "timeout_policy.agent_timeout_seconds_effective": 7200.0,
        "benchmark_cli.timeout_multiplier_preview_requested": True,
        "benchmark_cli.timeout_multiplier_preview_defaulted": False}),
    ("verifier multiplier", ["--verifier-timeout-multiplier", "0.5"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "argv:--verifier-timeout-multiplier": ["0.5"],
        "timeout_policy.official_comparable": False}),
    ("setup multiplier", ["--agent-setup-timeout-multiplier", "3"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "argv:--agent-setup-timeout-multiplier": ["3"]}),
    ("build multiplier", ["--environment-build-timeout-multiplier", "1.5"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "argv:--environment-build-timeout-multiplier": ["1.5"],
        "timeout_policy.official_comparable": False}),
    ("all multipliers 1", [a for f in MULTIPLIER_FLAGS for a in (f, "1")], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "argv:--agent-timeout-multiplier": ["1"], "timeout_policy.official_comparable": True}),
    ("preset official", ["--timeout-preset", "official"], "terminal_bench_cli_dry_run_v0", {
        "timeout_policy.source": "preset:official", "timeout_policy.official_comparable": True}),
    ("preset 8x", ["--timeout-preset", "long-horizon-8x"], "terminal_bench_cli_dry_run_v0", {
        "timeout_policy.source": "preset:long-horizon-8x",
        "timeout_policy.official_comparable": False,
        "argv:--agent-timeout-multiplier": ["8"], "argv:--agent-setup-timeout-multiplier": ["8"],
        "argv:--timeout-multiplier": []}),
    ("install require", ["--codex-install-strategy", "require_existing_codex"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "launch_preview.agent_kwargs.loopx_codex_install_strategy": "require_existing_codex",
        "argv:--allow-environment-host": [],
        "benchmark_cli.timeout_multiplier_preview_requested": True}),
    ("preflight timeout", ["--codex-preflight-timeout-sec", "30"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "launch_preview.agent_kwargs.loopx_codex_preflight_timeout_sec": "30"}),
    ("materialization", ["--worker-codex-materialization-strategy", "worker_path_preprovisioned"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "launch_preview.agent_kwargs.loopx_worker_codex_materialization_strategy":
            "worker_path_preprovisioned"}),
    ("probe only", ["--worker-materialization-probe-only"], "terminal_bench_cli_dry_run_v0", {
        "worker_materialization_probe_only": True,
        "launch_preview.agent_kwargs.loopx_worker_materialization_probe_only": "true",
        "benchmark_cli.worker_materialization_probe_only": True}),
    ("repair profile", ["--setup-timeout-repair-profile"], "terminal_bench_cli_dry_run_v0", {
        "setup_timeout_repair_profile.enabled": True,
        "timeout_policy.source": "preset:setup-timeout-repair-profile",
        "timeout_policy.multipliers": {"agent_timeout_multiplier": 8.0,
                                       "agent_setup_timeout_multiplier": 8.0},
        "launch_preview.agent_kwargs.loopx_codex_install_strategy": "require_existing_codex",
        "launch_preview.agent_kwargs.loopx_codex_preflight_timeout_sec": "45",
        "benchmark_cli.setup_timeout_repair_profile": True}),
    ("repair extended", ["--setup-timeout-repair-profile",
                         "--worker-codex-materialization-strategy",
                         "runtime_install_extended_setup", "--codex-preflight-timeout-sec", "30"],
     "terminal_bench_cli_dry_run_v0", {
        "setup_timeout_repair_profile.materialization_strategy": "runtime_install_extended_setup",
        "launch_preview.agent_kwargs.loopx_codex_preflight_timeout_sec": "30"}),
    ("job name", ["--job-name", "my job/1"], "terminal_bench_cli_dry_run_v0", {
        "job_name": "my job/1", "argv:--job-name": ["my job/1"]}),
    ("attempts", ["--n-attempts", "3", "--n-concurrent", "2"], "terminal_bench_cli_dry_run_v0", {
        "argv:--n-attempts": ["3"], "argv:--n-concurrent": ["2"]}),
    ("runner ref", ["--runner-ref", "harbor==0.24.1"], "terminal_bench_cli_dry_run_v0", {
        "launch_preview.argv.2": "harbor==0.24.1"}),
    ("runner on PATH", ["--runner-ref", ""], "terminal_bench_cli_dry_run_v0", {
        "launch_preview.argv.0": "harbor", "launch_preview.argv.1": "run"}),
    ("arm id", ["--arm-id", "my_arm", "--arm-role", "baseline"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "arm_id": "my_arm", "arm_role": "baseline",
        "job_name": "terminal-bench_2.0_build-cython-ext_my_arm"}),
    ("arm map", ["--arm-map", "codex:gpt-5.5=mapped"], "terminal_bench_cli_dry_run_v0", {
        "arm_id": "mapped"}),
    ("arm map other model", ["--arm-map", "codex:other=mapped"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "arm_id": "codex_loopx_treatment"}),
    ("fake managed", ["--fake-worker"], "terminal_bench_cli_fake_worker_v0", {
        "run_status": "fixture", "mode": "loopx_managed_codex_fake_worker_wrapper",
        "first_blocker": "fake_managed_worker_only_no_real_case",
        "trace_publicness": "public_fake_managed_wrapper", "benchmark_cli.fake_worker": True}),
    ("fake codex-loopx", [*CODEX_LOOPX, "--fake-worker"], "terminal_bench_codex_loopx_fake_worker_v0", {  # noqa: E501
        "run_status": "fixture", "mode": "codex_loopx_fake_worker_wrapper",
        "first_blocker": "fake_codex_loopx_worker_only_no_real_case",
        "interaction_counters.loopx_cli_call_total": 6, "worker_loopx_cli_call_total": 6}),
    ("cli bridge contract", [*CODEX_LOOPX, "--cli-bridge-contract"], "terminal_bench_codex_loopx_cli_bridge_contract_runner_fixture_v0", {  # noqa: E501
        "run_status": "fixture", "mode": "codex_loopx_cli_bridge_contract_fixture",
        "first_blocker": "cli_bridge_contract_fixture_only_no_real_case",
        "loopx_cli_bridge_trace_observed": False,
        "benchmark_cli.cli_bridge_trace_observed": False}),
    ("worker bridge fixture", [*CODEX_LOOPX, "--worker-cli-bridge-fixture"], "terminal_bench_codex_loopx_worker_cli_bridge_fixture_v0", {  # noqa: E501
        "run_status": "fixture", "mode": "codex_loopx_worker_cli_bridge_fixture",
        "first_blocker": "worker_cli_bridge_fixture_only_no_real_case",
        "launch_preview.placeholders": ["<jobs-dir>", "<project-root>", "<runtime-root>"],
        "launch_preview.agent_kwargs.loopx_cli_bridge_enabled": "true",
        "worker_loopx_cli_call_total": 6}),
    ("active bridge", [*CODEX_LOOPX, *PF, "--active-cli-bridge"], "terminal_bench_codex_loopx_active_cli_bridge_preflight_v0", {  # noqa: E501
        "run_status": "planned", "mode": "codex_loopx_active_cli_bridge_preflight",
        "first_blocker": "missing_uvx_runner_surface", "planned_worker_loopx_cli_call_total": 2,
        "timeout_policy.multipliers": None}),
    ("active treatment", [*CODEX_LOOPX, *PF, "--active-cli-bridge", "--active-user-assisted-treatment"], "terminal_bench_active_user_assisted_treatment_preflight_v0", {  # noqa: E501
        "run_status": "planned", "mode": "codex_loopx_active_user_assisted_treatment_preflight",
        "benchmark_cli.mode": "codex_loopx_active_user_assisted_treatment_preflight",
        "first_blocker": "missing_uvx_runner_surface", "official_score_claim_allowed": False,
        "preflight.checks.-1": None}),
    ("observation fixture", [*CODEX_LOOPX, *PF, "--active-cli-bridge", "--active-user-assisted-treatment", "--active-user-observation-fixture"], "terminal_bench_active_user_assisted_observation_fixture_v0", {  # noqa: E501
        "run_status": "fixture", "mode": "codex_loopx_active_user_assisted_observation_fixture",
        "first_blocker": "real_assisted_worker_observation_fixture_only_no_real_case",
        "preflight.first_blocker": "missing_uvx_runner_surface"}),
    ("preflight managed", PF, "terminal_bench_managed_real_run_preflight_guard_v0", {
        "mode": "loopx_managed_codex_real_run_preflight_guard", "preflight.ready": False,
        "first_blocker": "missing_uvx_runner_surface", "timeout_policy.multipliers": None,
        "read_boundary.docker_invoked": True}),
    ("preflight codex-loopx", [*CODEX_LOOPX, *PF], "terminal_bench_codex_loopx_preflight_guard_v0", {  # noqa: E501
        "mode": "codex_loopx_no_upload_preflight_guard"}),
    ("preflight hardened", ["--mode", "hardened-codex", *PF], "hardened_codex_baseline_preflight_guard_v0", {  # noqa: E501
        "mode": "hardened_codex_baseline_preflight_guard"}),
    ("preflight goal", ["--mode", "codex-goal-mode", *PF], "terminal_bench_codex_goal_mode_baseline_preflight_guard_v0", {  # noqa: E501
        "mode": "codex_goal_mode_baseline_preflight_guard",
        "claim_gate.blocked_by": "missing_codex_app_server_goal_proof"}),
    ("classification", ["--classification", "my_label_v0", "--recommended-action", "run it"], "my_label_v0", {  # noqa: E501
        "payload:recommended_action": "run it"}),
    ("delivery", ["--delivery-batch-scale", "single_surface", "--delivery-outcome", "surface_only"], "terminal_bench_cli_dry_run_v0", {  # noqa: E501
        "payload:delivery_batch_scale": "single_surface",
        "payload:delivery_outcome": "surface_only"}),
    ("no global sync", ["--no-global-sync"], "terminal_bench_cli_dry_run_v0", {
        "payload:global_sync.skipped": True}),
    ("dry-run flag", ["--dry-run"], "terminal_bench_cli_dry_run_v0", {
        "payload:dry_run": True, "payload:appended": False}),
    ("skillsbench skeleton", [], "skillsbench_codex_cli_goal_baseline_skeleton_v0", {
        "run_status": "planned", "benchmark_id": "skillsbench@1.1", "case_id": "citation-check",
        "benchmark_cli.mode": "codex-cli-goal-baseline",
        "benchmark_cli.mode_source": "skillsbench_route"}),
    ("skillsbench route", ["--skillsbench-route", "codex-app-server-goal-baseline", "--include-task-name", "t1", "--model", "m"], "skillsbench_codex_app_server_goal_baseline_skeleton_v0", {  # noqa: E501
        "case_id": "t1", "agent.model": "m", "mode": "skillsbench_codex_app_server_goal_baseline",
        "benchmark_cli.skillsbench_route": "codex-app-server-goal-baseline"}),
]  # fmt: skip


def _expect(payload: dict[str, Any], record: dict[str, Any], path: str, expected: Any) -> None:
    if path.startswith("payload:"):
        assert dig(payload, path[len("payload:") :]) == expected, path
    elif path.startswith("argv:"):
        assert argv_value(record, path[len("argv:") :]) == expected, path
    elif path.startswith("benchmark_cli."):
        assert dig(payload["benchmark_cli"], path[len("benchmark_cli.") :]) == expected, path
    elif path == "preflight.checks.-1":
        last = record["preflight"]["checks"][-1]
        assert last["name"] == "assisted_worker_observation"
        assert last["blocker"] == "missing_real_assisted_worker_observation"
    elif expected is None:
        parent, _, key = path.rpartition(".")
        assert key not in (dig(record, parent) if parent else record), path
    else:
        assert dig(record, path) == expected, path


@pytest.mark.parametrize(
    ("case", "args", "classification", "expected"), VALID, ids=[v[0] for v in VALID]
)
def test_valid_invocations_produce_the_record(case, args, classification, expected, db):
    base = SB if case.startswith("skillsbench") else TB
    payload = plan([*base, *args], db)
    assert payload["classification"] == classification
    assert_invariants(payload)
    record = payload["benchmark_runs"][0]
    for path, value in expected.items():
        _expect(payload, record, path, value)


def test_several_tasks_give_one_record_each(db):
    payload = plan([*TB, "--include-task-name", "a", "--include-task-name", "b",
                    "--include-task-name", "a"], db)  # fmt: skip
    assert_invariants(payload)
    records = payload["benchmark_runs"]
    assert [r["case_id"] for r in records] == ["a", "b"]
    assert [argv_value(r, "--include-task-name") for r in records] == [["a"], ["b"]]
    assert len({r["run_key"] for r in records}) == 2
    assert payload["benchmark_cli"]["record_count"] == 2


def test_same_invocation_same_run_key(db):
    first = plan([*TB, "--agent-timeout-multiplier", "8"], db)["benchmark_run"]["run_key"]
    again = plan([*TB, "--agent-timeout-multiplier", "8.0"], db)["benchmark_run"]["run_key"]
    other = plan([*TB, "--agent-timeout-multiplier", "4"], db)["benchmark_run"]["run_key"]
    assert first == again != other


# --- preflight on a machine that has everything ---------------------------------------------------


def test_ready_machine_is_ready_for_launch(db, machine, monkeypatch):
    install_fake_tools(machine["bin"], monkeypatch)
    record = plan([*TB, *PF], db)["benchmark_run"]
    assert record["preflight"]["ready"] is True
    assert record["first_blocker"] == record["preflight"]["first_blocker"] == "ready_for_launch"
    checks = {c["name"]: c for c in record["preflight"]["checks"]}
    assert list(checks) == ["runner_cli", "runner_version", "container_cli", "container_daemon",
                            "agent_cli", "auth_env_names", "no_upload_boundary", "timeout_policy",
                            "task_material", "agent_setup_budget"]  # fmt: skip
    assert checks["task_material"]["blocking"] is False
    assert checks["agent_setup_budget"]["blocker"] == (
        "runtime_codex_install_can_exceed_setup_budget"
    )
    payload = plan([*TB, *PF], db)
    assert payload["recommended_action"] == (
        "launch the previewed command, then ingest its job directory"
    )


@pytest.mark.parametrize(
    ("files", "extra", "blocker"),
    [
        (None, [], "task_material_not_cached_or_not_locally_resolved"),
        (("instruction.md",), [], "task_material_missing_task_toml"),
        (("task.toml",), [], "task_material_missing_instruction_md"),
        (("instruction.md", "task.toml"), [], "ready_for_launch"),
        (("instruction.md", "task.toml"), ["--auth-env-name", "MY_TOKEN"],
         "auth_env_names_missing"),
        (("instruction.md", "task.toml"), ["--codex-install-strategy", "require_existing_codex"],
         "codex_preflight_timeout_missing"),
        (("instruction.md", "task.toml"), ["--runner-ref", ""], "ready_for_launch"),
    ],
)  # fmt: skip
def test_required_material_and_other_blockers(db, machine, monkeypatch, files, extra, blocker):
    install_fake_tools(machine["bin"], monkeypatch)
    if files is not None:
        cache_task(machine["cache"], "build-cython-ext", files)
    payload = plan([*TB, *PF, "--require-task-material-ready", *extra], db)
    assert_invariants(payload)
    record = payload["benchmark_run"]
    assert record["first_blocker"] == blocker
    assert record["preflight"]["ready"] is (blocker == "ready_for_launch")


def test_missing_harbor_on_path_without_runner_ref(db):
    record = plan([*TB, *PF, "--runner-ref", ""], db)["benchmark_run"]
    assert record["first_blocker"] == "missing_harbor_runner_surface"


def test_treatment_blocks_on_the_observation_only_when_otherwise_ready(db, machine, monkeypatch):
    install_fake_tools(machine["bin"], monkeypatch)
    args = [*TB, *CODEX_LOOPX, *PF, "--active-cli-bridge", "--active-user-assisted-treatment"]
    record = plan(args, db)["benchmark_run"]
    assert record["first_blocker"] == "missing_real_assisted_worker_observation"


# --- stored events: what --execute records --------------------------------------------------------


def test_execute_stores_the_preview_uncompacted(db):
    ledger = Path("ledger.json").absolute()
    call = run([*TB, "--agent-timeout-multiplier", "8", *PF, "--update-run-ledger",
                "--run-ledger-path", str(ledger), "--run-group-id", "grp", "--run-ledger-note",
                "n", "--execute", "--format", "json"], db)  # fmt: skip
    assert call.code == 0, call.stderr
    printed = call.payload["benchmark_run"]
    [built] = stored_events(db, "run_built")
    [appended] = stored_events(db, "run_appended")
    stored = built["payload"]["record"]
    assert stored["launch_preview"] == printed["launch_preview"]
    assert stored["timeout_policy"] == printed["timeout_policy"]
    assert stored["preflight"] == printed["preflight"]
    assert (
        appended["payload"]["record"]["benchmark_run"]["launch_preview"]["argv"]
        == (printed["launch_preview"]["argv"])
    )
    history = json.loads(Path(call.payload["json_path"]).read_text("utf-8"))
    assert history["benchmark_run"]["launch_preview"]["argv"] == printed["launch_preview"]["argv"]
    ledger_result = call.payload["benchmark_run_ledger"]
    assert ledger_result["skipped"] is True
    assert ledger_result["skip_reason"] == "benchmark_run_not_terminal_for_public_ledger"
    assert not ledger.exists() or ledger_rows(ledger) == []
    assert not [e for e in stored_events(db, "ledger_upserted") if e["payload"].get("row")]


def test_execute_twice_is_recorded_once(db):
    args = [*TB, "--no-global-sync", "--execute", "--format", "json"]
    first = run(args, db)
    again = run(args, db)
    assert first.code == again.code == 0
    assert again.payload["already_recorded"] is True
    assert len(stored_events(db, "run_built")) == 1


def test_fixture_records_are_stored_labelled(db):
    call = run([*TB, *CODEX_LOOPX, "--fake-worker", "--update-run-ledger", "--run-ledger-path",
                "ledger.json", "--execute", "--format", "json"], db)  # fmt: skip
    assert call.code == 0, call.stderr
    [built] = stored_events(db, "run_built")
    record = built["payload"]["record"]
    assert record["run_status"] == "fixture"
    assert record["mode"] == "codex_loopx_fake_worker_wrapper"
    assert_no_run_record(record)
    assert call.payload["benchmark_run_ledger"]["skipped"] is True


def test_json_stdout_carries_the_launch_command(db):
    payload = plan(TB, db)
    assert payload["benchmark_run"]["launch_preview"]["command"].startswith(
        "uvx --from harbor==0.25.0 harbor run --dataset terminal-bench@2.0"
    )


def test_markdown_stdout_shows_the_launch_command(db):
    call = run([*TB, *PF], db)
    assert call.code == 0
    assert "uvx --from harbor==0.25.0 harbor run" in call.stdout
    assert "first_blocker" in call.stdout
    assert "progress:" not in call.stdout


@pytest.mark.parametrize("route", ["loopx-product-mode", "curated-skills-baseline"])
def test_every_documented_skillsbench_route_is_accepted(route, db):
    payload = plan([*SB, "--skillsbench-route", route], db)
    assert payload["benchmark_cli"]["skillsbench_route"] == route
    assert_invariants(payload)


def test_preview_mounts_and_profile_survive_compaction(db):
    record = plan([*TB, *CODEX_LOOPX, "--worker-cli-bridge-fixture"], db)["benchmark_run"]
    preview = record["launch_preview"]
    assert preview["agent_setup_profile"] == "loopx_managed_codex"
    assert [m["read_only"] for m in preview["mounts"]] == [True, True]


def test_agent_kwarg_reaches_the_preview(db):
    payload = plan([*TB, "--agent", "terminus-2", "--agent-kwarg", "temperature=0"], db)
    assert argv_value(payload["benchmark_run"], "--agent-kwarg") == ["temperature=0"]
