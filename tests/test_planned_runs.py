"""Planned Terminal-Bench runs: validation order and messages (docs/formats/cli.md §5.3) and
records (§6-7)."""

from __future__ import annotations

import math

import pytest

from benchledger.ledger.core.errors import InputError, UsageError
from benchledger.ledger.handlers.benchmark_cli import build_benchmark_cli
from benchledger.ledger.handlers.source_planned import planned_run_options
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.requests.benchmark_run_rules import (
    parse_float_option,
    parse_int_option,
    validate_skillsbench_options,
    validate_terminal_bench_options,
)
from benchledger.ledger.sources.planned.records import (
    build_planned_terminal_bench_record,
    build_planned_terminal_bench_records,
)

R = BenchmarkRunRequest.from_options

ALL_PRESENT = {"uvx", "docker", "codex", "harbor"}


def which_all(name: str) -> str | None:
    return f"/usr/bin/{name}" if name in ALL_PRESENT else None


def probe_ok(_argv) -> bool:
    return True


def build(opts: dict, **kw) -> dict:
    env = kw.pop("env", {"HOME": "/nonexistent-home", "OPENAI_API_KEY": "x"})
    return build_planned_terminal_bench_record(
        planned_run_options(R({"goal_id": "g1", **opts})),
        env=env,
        which=kw.pop("which", which_all),
        run_probe=kw.pop("run_probe", probe_ok),
        path_exists=lambda _p: False,
        **kw,
    )


# --- validation: every invalid combination, in order ----------------------------------------

TB_MULTIPLIER_FLAGS = [
    ("timeout_multiplier", "--timeout-multiplier"),
    ("agent_timeout_multiplier", "--agent-timeout-multiplier"),
    ("verifier_timeout_multiplier", "--verifier-timeout-multiplier"),
    ("agent_setup_timeout_multiplier", "--agent-setup-timeout-multiplier"),
    ("environment_build_timeout_multiplier", "--environment-build-timeout-multiplier"),
]

SKB_MSG = (
    "skillsbench skeleton does not accept Terminal-Bench runner, Harbor ingest, preflight, "
    "timeout, fake-worker, or bridge flags"
)
HARBOR_FIXTURE = "--harbor-job-dir cannot be combined with fixture or preflight flags"
HARBOR_TIMEOUT = (
    "--harbor-job-dir reads timeout policy from Harbor artifacts; "
    "do not pass preview timeout multiplier flags"
)
PREFLIGHT_MODES_MSG = (
    "--preflight-guard is only supported for hardened-codex, codex-goal-mode, "
    "codex-app-server-goal, codex-loopx, or loopx-managed-codex"
)
CL = {"mode": "codex-loopx"}
BOTH = "benchmark run accepts either --dry-run or --execute, not both"
TB_SKB = "terminal-bench does not accept SkillsBench result flags"
MATERIAL = "--require-task-material-ready requires --preflight-guard"
FAKE_MODES = "--fake-worker is only supported for codex-loopx or loopx-managed-codex"
NOT_FAKE = ("hardened-codex", "passive-observed-codex", "codex-goal-mode", "codex-app-server-goal")
PF = {"mode": "codex-loopx", "preflight_guard": True}

TB_INVALID = [
    ({"dry_run": True, "execute": True}, BOTH),
    ({"dry_run": True, "execute": True, "fake_worker": True, "mode": "hardened-codex"},
     "benchmark run accepts either --dry-run or --execute, not both"),
    ({"skillsbench_result_json": "r.json", "skillsbench_result_root": "d"},
     "--skillsbench-result-json and --skillsbench-result-root are mutually exclusive"),
    ({"skillsbench_result_json": "r.json"}, TB_SKB),
    ({"skillsbench_result_root": "d"}, "terminal-bench does not accept SkillsBench result flags"),
    ({"selection_policy": "newest"}, "terminal-bench does not accept SkillsBench result flags"),
    *[({"harbor_job_dir": "j", flag: True}, HARBOR_FIXTURE) for flag in (
        "fake_worker", "preflight_guard", "require_task_material_ready", "cli_bridge_contract",
        "worker_cli_bridge_fixture", "active_cli_bridge", "active_user_assisted_treatment",
        "active_user_observation_fixture", "setup_timeout_repair_profile",
        "worker_materialization_probe_only")],
    ({"require_task_material_ready": True}, MATERIAL),
    *[({"harbor_job_dir": "j", key: 2.0}, HARBOR_TIMEOUT) for key, _f in TB_MULTIPLIER_FLAGS],
    ({"harbor_job_dir": "j", "timeout_preset": "official"}, HARBOR_TIMEOUT),
    ({"harbor_job_dir": "j", "codex_preflight_timeout_sec": 30}, HARBOR_TIMEOUT),
    ({"harbor_job_dir": "j", "worker_codex_materialization_strategy": "worker_path_preprovisioned"},
     HARBOR_TIMEOUT),
    ({"arm_id": "a", "arm_map": ["codex=b"]}, "--arm-id and --arm-map are mutually exclusive"),
    *[({key: bad}, f"{flag} must be a finite number greater than zero")
      for key, flag in TB_MULTIPLIER_FLAGS for bad in (0.0, -1.0, math.nan, math.inf)],
    ({"harbor_job_dir": "j", "agent_timeout_multiplier": math.nan}, HARBOR_TIMEOUT),
    ({"timeout_preset": "official", "agent_timeout_multiplier": 2.0},
     "--timeout-preset cannot be combined with timeout multiplier flags"),
    ({"codex_preflight_timeout_sec": 0}, "codex_preflight_timeout_sec must be a positive integer"),
    ({"codex_preflight_timeout_sec": -3}, "codex_preflight_timeout_sec must be a positive integer"),
    *[({"fake_worker": True, "mode": m}, FAKE_MODES) for m in NOT_FAKE],
    ({"preflight_guard": True, "fake_worker": True},
     "--preflight-guard cannot be combined with --fake-worker"),
    ({"preflight_guard": True, "mode": "passive-observed-codex"}, PREFLIGHT_MODES_MSG),
    ({"cli_bridge_contract": True}, "--cli-bridge-contract is only supported for codex-loopx"),
    ({**CL, "cli_bridge_contract": True, "fake_worker": True},
     "--cli-bridge-contract cannot be combined with --fake-worker"),
    ({**PF, "cli_bridge_contract": True},
     "--cli-bridge-contract cannot be combined with --preflight-guard"),
    ({"worker_cli_bridge_fixture": True},
     "--worker-cli-bridge-fixture is only supported for codex-loopx"),
    ({**CL, "worker_cli_bridge_fixture": True, "fake_worker": True},
     "--worker-cli-bridge-fixture cannot be combined with --fake-worker"),
    ({**PF, "worker_cli_bridge_fixture": True},
     "--worker-cli-bridge-fixture cannot be combined with --preflight-guard"),
    ({"active_cli_bridge": True}, "--active-cli-bridge is only supported for codex-loopx"),
    ({**CL, "active_cli_bridge": True}, "--active-cli-bridge requires --preflight-guard"),
    ({"active_user_assisted_treatment": True},
     "--active-user-assisted-treatment is only supported for codex-loopx"),
    ({**CL, "active_user_assisted_treatment": True},
     "--active-user-assisted-treatment requires --preflight-guard"),
    ({**PF, "active_user_assisted_treatment": True},
     "--active-user-assisted-treatment requires --active-cli-bridge"),
    ({**PF, "active_user_observation_fixture": True, "active_cli_bridge": True},
     "--active-user-observation-fixture requires --active-user-assisted-treatment"),
    ({"active_user_observation_fixture": True},
     "--active-user-observation-fixture requires --active-user-assisted-treatment"),
    ({"setup_timeout_repair_profile": True, "agent_timeout_multiplier": 4.0},
     "setup_timeout_repair_profile requires agent_timeout_multiplier=8"),
    ({"setup_timeout_repair_profile": True, "agent_setup_timeout_multiplier": 2.0},
     "setup_timeout_repair_profile requires agent_setup_timeout_multiplier=8"),
    ({"setup_timeout_repair_profile": True, "timeout_preset": "official"},
     "setup_timeout_repair_profile requires agent_timeout_multiplier=8"),
    ({"setup_timeout_repair_profile": True, "codex_preflight_timeout_sec": 30},
     "setup_timeout_repair_profile requires codex_preflight_timeout_sec=45"),
    ({"setup_timeout_repair_profile": True, "codex_preflight_timeout_sec": 30,
      "worker_codex_materialization_strategy": "worker_path_preprovisioned"},
     "setup_timeout_repair_profile requires codex_preflight_timeout_sec=45"),
    ({"mode": "codex-app-server-goal"}, "unsupported terminal-bench mode: codex-app-server-goal"),
    ({"mode": "codex-app-server-goal", "preflight_guard": True},
     "unsupported terminal-bench mode: codex-app-server-goal"),
]  # fmt: skip


@pytest.mark.parametrize(("opts", "message"), TB_INVALID)
def test_terminal_bench_invalid_combinations_exit_1_with_exact_message(opts, message):
    with pytest.raises(InputError) as err:
        validate_terminal_bench_options(R({"goal_id": "g1", **opts}))
    assert err.value.message == message
    assert err.value.exit_code == 1


SKB_INVALID = [
    ({"dry_run": True, "execute": True}, BOTH),
    *[({flag: True}, SKB_MSG) for flag in (
        "harbor_job_dir", "fake_worker", "preflight_guard", "require_task_material_ready",
        "cli_bridge_contract", "worker_cli_bridge_fixture", "active_cli_bridge",
        "active_user_assisted_treatment", "active_user_observation_fixture",
        "setup_timeout_repair_profile", "worker_materialization_probe_only")],
    *[({key: 2.0}, SKB_MSG) for key, _f in TB_MULTIPLIER_FLAGS],
    ({"timeout_preset": "long-horizon-8x"}, SKB_MSG),
    ({"codex_preflight_timeout_sec": 45}, SKB_MSG),
    ({"worker_codex_materialization_strategy": "worker_path_preprovisioned"}, SKB_MSG),
    ({"codex_install_strategy": "runtime_install_if_missing"}, SKB_MSG),
    ({"skillsbench_result_json": "r.json", "skillsbench_result_root": "d"},
     "--skillsbench-result-json and --skillsbench-result-root are mutually exclusive"),
    ({"arm_id": "a", "arm_map": ["codex=b"]}, "--arm-id and --arm-map are mutually exclusive"),
]  # fmt: skip


@pytest.mark.parametrize(("opts", "message"), SKB_INVALID)
def test_skillsbench_invalid_combinations(opts, message):
    with pytest.raises(InputError) as err:
        validate_skillsbench_options(R({"goal_id": "g1", **opts}))
    assert err.value.message == message


@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"mode": "codex-app-server-goal"},  # the mode belongs to terminal-bench only
        {"skillsbench_result_root": "d", "selection_policy": "newest"},
        {"skillsbench_route": "loopx-product-mode", "include_task_name": ["a", "b"]},
    ],
)
def test_skillsbench_valid(opts):
    validate_skillsbench_options(R({"goal_id": "g1", **opts}))


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ({"mode": "bogus"}, "argument --mode: invalid choice: 'bogus'"),
        ({"runner": "tb"}, "argument --runner: invalid choice: 'tb'"),
        ({"codex_install_strategy": "x"}, "argument --codex-install-strategy: invalid choice"),
        ({"worker_codex_materialization_strategy": "x"}, "argument --worker-codex-materializ"),
        ({"selection_policy": "x"}, "argument --selection-policy: invalid choice"),
        ({"timeout_preset": "x"}, "argument --timeout-preset: invalid choice"),
        ({"skillsbench_route": "loopx-prompt-polling-test"}, "argument --skillsbench-route"),
    ],
)
def test_parser_level_errors_exit_2(opts, message):
    with pytest.raises(UsageError) as err:
        validate_terminal_bench_options(R({"goal_id": "g1", **opts}))
    assert err.value.exit_code == 2
    assert err.value.message.startswith(message)


def test_missing_goal_id_is_a_usage_error():
    with pytest.raises(UsageError, match="--goal-id"):
        validate_terminal_bench_options(R({}))


def test_number_parsing_messages():
    with pytest.raises(UsageError, match=r"^invalid float value: 'two'$"):
        parse_float_option("two")
    with pytest.raises(UsageError, match=r"^invalid int value: '4.5'$"):
        parse_int_option("4.5")
    assert math.isnan(parse_float_option("nan"))  # parsed; rule 9 rejects it


@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"fake_worker": True},
        {"mode": "codex-loopx", "fake_worker": True},
        {"mode": "hardened-codex", "preflight_guard": True, "require_task_material_ready": True},
        {"mode": "codex-loopx", "cli_bridge_contract": True},
        {"mode": "codex-loopx", "worker_cli_bridge_fixture": True},
        {**PF, "active_cli_bridge": True},
        {**PF, "active_cli_bridge": True, "active_user_assisted_treatment": True},
        {**PF, "active_cli_bridge": True, "active_user_assisted_treatment": True,
         "active_user_observation_fixture": True},
        {"setup_timeout_repair_profile": True, "agent_timeout_multiplier": 8.0},
        {"setup_timeout_repair_profile": True, "timeout_preset": "long-horizon-8x"},
        {"setup_timeout_repair_profile": True, "codex_preflight_timeout_sec": 10,
         "worker_codex_materialization_strategy": "runtime_install_extended_setup"},
        {"harbor_job_dir": "j", "arm_map": ["codex=x"],
         "codex_install_strategy": "require_existing_codex"},
    ],
)  # fmt: skip
def test_valid_terminal_bench_combinations(opts):
    validate_terminal_bench_options(R({"goal_id": "g1", **opts}))


# --- records: every mode -----------------------------------------------------------------------

MODE_TABLE = [
    ("loopx-managed-codex", "loopx_managed_codex_cli_dry_run",
     "managed_cli_skeleton_only_no_real_case", (1, 1, 0, 0, 1, 1), "loopx_managed_codex_cli"),
    ("codex-loopx", "codex_loopx_cli_dry_run", "codex_loopx_cli_skeleton_only_no_real_case",
     (1, 1, 0, 0, 1, 1), "codex_loopx_cli"),
    ("hardened-codex", "hardened_codex_baseline_cli_dry_run",
     "hardened_codex_baseline_cli_skeleton_only_no_real_case", (0, 0, 0, 1, 0, 0),
     "hardened_codex_baseline"),
    ("codex-goal-mode", "codex_goal_mode_baseline_cli_dry_run",
     "codex_goal_mode_baseline_cli_skeleton_only_no_real_case", (0, 0, 0, 1, 0, 0),
     "codex_goal_mode_baseline"),
    ("passive-observed-codex", "passive_observed_codex_cli_dry_run",
     "passive_cli_skeleton_only_no_real_case", (0, 0, 1, 0, 0, 1), "passive_observed_codex_cli"),
]  # fmt: skip
CONTRACT = (
    "loopx_inside_case",
    "case_semantics_changed_by_harness",
    "official_score_comparable_to_native_codex",
    "official_score_comparable_to_loopx_treatment",
    "model_plus_harness_pair",
    "control_plane_score_applicable",
)


@pytest.mark.parametrize(("mode", "event", "blocker", "contract", "worker"), MODE_TABLE)
def test_plain_mode_record(mode, event, blocker, contract, worker):
    record = build({"mode": mode})
    assert record["run_status"] == "planned"
    assert record["source_runner"] == "benchledger_planner"
    assert record["mode"] == event
    assert record["first_blocker"] == blocker
    assert record["worker_mode"] == worker
    assert tuple(int(record[key]) for key in CONTRACT) == contract
    assert record["benchmark_id"] == "terminal-bench@2.0"
    assert record["case_id"] == "build-cython-ext" and record["case_ids"] == ["build-cython-ext"]
    assert record["agent"]["name"] == "codex" and record["agent"]["model"] == "gpt-5.5"
    assert record["official_task_score"] == {"kind": "not_run"}
    assert record["official_score_status"] == "not_run"
    assert record["real_run"] is False and record["submit_eligible"] is False
    assert record["trace_publicness"] == "public_cli_dry_run"
    assert record["run_key"].startswith("planned:") and len(record["run_key"]) == 24
    for absent in ("trials", "trial_count", "progress", "metrics", "official_score", "preflight"):
        assert absent not in record
    assert ("launch_preview" in record) == (mode != "passive-observed-codex")
    assert record["timeout_policy"]["official_comparable"] is True


def test_hardened_flags_and_arms():
    hardened = build({"mode": "hardened-codex"})
    assert hardened["hardened_install_surface"] is True
    assert hardened["hardened_install_baseline"] is True
    assert (hardened["arm_id"], hardened["arm_role"]) == ("hardened_codex_baseline", "baseline")
    managed = build({})
    assert (managed["arm_id"], managed["arm_role"]) == ("codex_loopx_treatment", "treatment")


def test_identity_flags_reach_record_and_preview():
    record = build(
        {"dataset": "terminal-bench@2.1", "include_task_name": "fix-git", "model": "gpt-6"}
    )
    assert record["benchmark_id"] == "terminal-bench@2.1"
    assert record["case_id"] == "fix-git"
    assert record["job_name"] == "terminal-bench_2.1_fix-git_codex"
    argv = record["launch_preview"]["argv"]
    assert argv[argv.index("--dataset") + 1] == "terminal-bench@2.1"
    assert argv[argv.index("--include-task-name") + 1] == "fix-git"
    assert argv[argv.index("--model") + 1] == "gpt-6"


def test_repeatable_task_gives_one_record_per_case():
    records = build_planned_terminal_bench_records(
        planned_run_options(R({"goal_id": "g1", "include_task_name": ["a", "b", "a"]})),
        env={},
        which=which_all,
        path_exists=lambda _p: False,
    )
    assert [r["case_id"] for r in records] == ["a", "b"]
    assert len({r["run_key"] for r in records}) == 2
    assert len({r["job_name"] for r in records}) == 2


def test_free_text_agent_gets_plain_preview():
    record = build({"agent": "terminus-2", "auth_env_name": ["ANTHROPIC_API_KEY"]})
    preview = record["launch_preview"]
    argv = preview["argv"]
    assert argv[argv.index("--agent") + 1] == "terminus-2"
    assert "--agent-kwarg" not in argv
    assert preview["env_names"] == ["ANTHROPIC_API_KEY"]
    assert "ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY}" in argv
    assert record["job_name"] == "terminal-bench_2.0_build-cython-ext_terminus-2"


def test_explicit_arm_and_arm_map():
    assert build({"arm_id": "my-arm", "arm_role": "baseline"})["arm_id"] == "my-arm"
    record = build({"arm_map": ["other=x", "codex:gpt-5.5=mapped"]})
    assert record["arm_id"] == "mapped"
    assert record["job_name"].endswith("_mapped")
    with pytest.raises(InputError, match="^invalid --arm-map entry: nope$"):
        build({"arm_map": ["nope"]})


def test_no_run_record_never_fakes_a_trial_in_any_flag_combination():
    for opts in (
        {"fake_worker": True},
        {"mode": "codex-loopx", "worker_cli_bridge_fixture": True},
        {**PF, "active_cli_bridge": True, "active_user_assisted_treatment": True,
         "active_user_observation_fixture": True},
    ):  # fmt: skip
        record = build(opts)
        assert "trials" not in record and "official_score" not in record
        assert "progress" not in record and "metrics" not in record


# --- fixtures and bridges ---------------------------------------------------------------------

FIXTURES = [
    ({"fake_worker": True}, "loopx_managed_codex_fake_worker_wrapper",
     "fake_managed_worker_only_no_real_case", "public_fake_managed_wrapper"),
    ({"mode": "codex-loopx", "fake_worker": True}, "codex_loopx_fake_worker_wrapper",
     "fake_codex_loopx_worker_only_no_real_case", "public_fake_codex_loopx_wrapper"),
    ({"mode": "codex-loopx", "cli_bridge_contract": True},
     "codex_loopx_cli_bridge_contract_fixture",
     "cli_bridge_contract_fixture_only_no_real_case", "public_cli_dry_run"),
    ({"mode": "codex-loopx", "worker_cli_bridge_fixture": True},
     "codex_loopx_worker_cli_bridge_fixture", "worker_cli_bridge_fixture_only_no_real_case",
     "public_cli_dry_run"),
    ({**PF, "active_cli_bridge": True, "active_user_assisted_treatment": True,
      "active_user_observation_fixture": True},
     "codex_loopx_active_user_assisted_observation_fixture",
     "real_assisted_worker_observation_fixture_only_no_real_case", "public_cli_dry_run"),
]  # fmt: skip


@pytest.mark.parametrize(("opts", "event", "blocker", "trace"), FIXTURES)
def test_fixture_records(opts, event, blocker, trace):
    record = build(opts)
    assert record["run_status"] == "fixture"
    assert (record["mode"], record["first_blocker"], record["trace_publicness"]) == (
        event,
        blocker,
        trace,
    )


def test_fixture_counters():
    fake = build({"mode": "codex-loopx", "fake_worker": True})
    counters = fake["interaction_counters"]
    assert counters["loopx_cli_calls"] == dict.fromkeys(
        ("status", "quota_should_run", "todo_list", "history", "check", "append_benchmark_run"), 1
    )
    assert (counters["loopx_cli_state_read_count"], counters["loopx_cli_state_write_count"]) == (
        4,
        1,
    )
    assert fake["worker_loopx_cli_call_total"] == 6
    contract = build({"mode": "codex-loopx", "cli_bridge_contract": True})
    assert contract["loopx_cli_bridge_trace_observed"] is False
    assert contract["runner_warning_labels"] == ["cli_bridge_contract_not_executed"]
    assert "interaction_counters" not in contract
    worker = build({"mode": "codex-loopx", "worker_cli_bridge_fixture": True})
    assert worker["interaction_counters"]["loopx_cli_state_read_count"] == 5
    sources = [m["source"] for m in worker["launch_preview"]["mounts"]]
    assert sources == ["<project-root>", "<runtime-root>"]
    assert set(worker["launch_preview"]["placeholders"]) >= {"<project-root>", "<runtime-root>"}
    observe = build(FIXTURES[-1][0])
    assert observe["interaction_counters"]["active_user_observe"] == 1
    assert observe["worker_loopx_cli_call_total"] == 1
    assert observe["operator_simulator_run"]["observation_seq"] == 2


def test_active_bridge_and_treatment_follow_the_preflight():
    bridge = build({**PF, "active_cli_bridge": True})
    assert bridge["mode"] == "codex_loopx_active_cli_bridge_preflight"
    assert bridge["run_status"] == "planned"
    assert bridge["planned_worker_loopx_cli_call_total"] == 2
    assert bridge["required_worker_loopx_cli_call_total_min"] == 1
    assert bridge["claim_gate"]["uplift_claim_allowed"] is False
    assert bridge["first_blocker"] == bridge["preflight"]["first_blocker"]
    treat = build({**PF, "active_cli_bridge": True, "active_user_assisted_treatment": True})
    assert treat["mode"] == "codex_loopx_active_user_assisted_treatment_preflight"
    assert treat["assisted_collaboration_claim_allowed"] is True
    assert treat["official_score_claim_allowed"] is False
    # Otherwise-ready machine: the missing real observation is the first blocker.
    assert treat["first_blocker"] == "missing_real_assisted_worker_observation"
    assert treat["preflight"]["checks"][-1]["name"] == "assisted_worker_observation"
    # Machine not ready: the machine's blocker comes first (loopx always said observation).
    blocked = build(
        {**PF, "active_cli_bridge": True, "active_user_assisted_treatment": True},
        which=lambda n: None,
    )
    assert blocked["first_blocker"] == "missing_uvx_runner_surface"
    mounts = treat["launch_preview"]["mounts"]
    assert mounts == [
        {"source": "<active-user-dir>", "target": "/loopx/active-user", "read_only": False}
    ]


# --- preflight event modes and classification-relevant fields ----------------------------------


@pytest.mark.parametrize(
    ("mode", "event"),
    [
        ("loopx-managed-codex", "loopx_managed_codex_real_run_preflight_guard"),
        ("codex-loopx", "codex_loopx_no_upload_preflight_guard"),
        ("hardened-codex", "hardened_codex_baseline_preflight_guard"),
        ("codex-goal-mode", "codex_goal_mode_baseline_preflight_guard"),
    ],
)
def test_preflight_event_modes_and_no_implicit_multipliers(mode, event):
    record = build({"mode": mode, "preflight_guard": True})
    assert record["mode"] == event
    assert record["run_status"] == "planned"
    assert record["timeout_policy"]["multipliers"] == {}
    assert record["first_blocker"] == record["preflight"]["first_blocker"]
    if mode == "codex-goal-mode":
        assert record["claim_gate"]["blocked_by"] == "missing_codex_app_server_goal_proof"


# --- timeout and setup flags --------------------------------------------------------------------


@pytest.mark.parametrize(("key", "flag"), TB_MULTIPLIER_FLAGS)
def test_each_multiplier_reaches_policy_and_preview(key, flag):
    record = build({key: 2.5})
    assert record["timeout_policy"]["multipliers"] == {key: 2.5}
    assert record["timeout_policy"]["official_comparable"] is False
    assert record["timeout_policy"]["source"] == "cli_preview"
    argv = record["launch_preview"]["argv"]
    assert argv[argv.index(flag) + 1] == "2.5"


def test_multipliers_kept_for_passive_mode_too():
    record = build({"mode": "passive-observed-codex", "agent_timeout_multiplier": 8.0})
    assert record["timeout_policy"]["agent_timeout_seconds_effective"] == 7200.0


def test_presets():
    official = build({"timeout_preset": "official"})["timeout_policy"]
    assert official["source"] == "preset:official"
    assert official["official_comparable"] is True
    long = build({"timeout_preset": "long-horizon-8x"})
    assert long["timeout_policy"]["multipliers"] == {
        "agent_timeout_multiplier": 8.0,
        "agent_setup_timeout_multiplier": 8.0,
    }
    assert long["timeout_policy"]["agent_timeout_tier"] == "hours_scale"
    argv = long["launch_preview"]["argv"]
    assert argv[argv.index("--agent-timeout-multiplier") + 1] == "8"


def _kwargs(record: dict) -> dict:
    return record["launch_preview"]["agent_kwargs"]


def test_codex_setup_flags_in_preview():
    default = build({})
    assert _kwargs(default)["loopx_codex_install_strategy"] == "runtime_install_if_missing"
    assert len(default["launch_preview"]["allowed_environment_hosts"]) == 10
    assert _kwargs(default)["loopx_goal_id"] == "g1"
    strict = build(
        {
            "codex_install_strategy": "require_existing_codex",
            "codex_preflight_timeout_sec": 30,
            "worker_codex_materialization_strategy": "worker_path_preprovisioned",
            "worker_materialization_probe_only": True,
        }
    )
    kwargs = _kwargs(strict)
    assert kwargs["loopx_codex_install_strategy"] == "require_existing_codex"
    assert kwargs["loopx_codex_preflight_timeout_sec"] == "30"
    assert kwargs["loopx_worker_codex_materialization_strategy"] == "worker_path_preprovisioned"
    assert kwargs["loopx_worker_materialization_probe_only"] == "true"
    assert strict["launch_preview"]["allowed_environment_hosts"] == []
    assert strict["worker_materialization_probe_only"] is True


def test_repair_profile_block():
    record = build({"setup_timeout_repair_profile": True})
    block = record["setup_timeout_repair_profile"]
    assert block["enabled"] is True and block["raw_logs_required"] is False
    assert block["disallowed_launch_overrides"] == [
        "codex_install_strategy=runtime_install_if_missing"
    ]
    assert "codex_preflight_timeout_sec=45" in block["required_launch_overrides"]
    assert record["timeout_policy"]["source"] == "preset:setup-timeout-repair-profile"
    assert _kwargs(record)["loopx_codex_install_strategy"] == "require_existing_codex"
    assert _kwargs(record)["loopx_codex_preflight_timeout_sec"] == "45"


def test_benchmark_cli_block():
    opts = {"goal_id": "g1", "mode": "codex-loopx", "setup_timeout_repair_profile": True}
    records = build_planned_terminal_bench_records(
        planned_run_options(R(opts)), env={}, which=which_all, path_exists=lambda _p: False
    )
    block = build_benchmark_cli(R(opts), records)
    assert block["mode"] == "codex-loopx" and block["requested_mode"] == "codex-loopx"
    assert block["mode_source"] == "cli_arg" and block["skillsbench_route"] is None
    assert block["timeout_multiplier_preview_requested"] is True
    assert block["setup_timeout_repair_profile"] is True
    assert block["record_count"] == 1
    for key in ("real_runner_invoked", "real_codex_invoked", "auth_values_read", "submit_eligible"):
        assert block[key] is False
    treat_opts = {**PF, "goal_id": "g1", "active_cli_bridge": True,
                  "active_user_assisted_treatment": True}  # fmt: skip
    treat = build_benchmark_cli(R(treat_opts), [build(treat_opts)])
    assert treat["mode"] == "codex_loopx_active_user_assisted_treatment_preflight"
    assert treat["timeout_multiplier_preview_defaulted"] is False
    skb = build_benchmark_cli(R({"benchmark_name": "skillsbench"}), [])
    assert (skb["mode"], skb["mode_source"]) == ("codex-cli-goal-baseline", "skillsbench_route")
    ingest = build_benchmark_cli(
        R({"benchmark_name": "skillsbench", "skillsbench_result_root": "d"}), []
    )
    assert ingest["mode"] == "benchflow_observed"
    harbor = build_benchmark_cli(R({"harbor_job_dir": "j"}), [{"mode": "bare_codex_cli"}])
    assert (harbor["mode"], harbor["mode_source"]) == ("bare_codex_cli", "harbor_job_result")
    assert build_benchmark_cli(R({}), [])["timeout_multiplier_preview_requested"] is False
