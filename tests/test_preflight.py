"""One preflight check list: ready and first_blocker never disagree (docs/formats/cli.md §7.4,
§6.4-6.6)."""

from __future__ import annotations

import shutil

import pytest

from benchledger.ledger.handlers.source_planned import planned_run_options
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.sources.planned.preflight import (
    MATERIAL_NO_INSTRUCTION,
    MATERIAL_NO_TASK_TOML,
    MATERIAL_READY,
    MATERIAL_UNRESOLVED,
    build_preflight,
    summarize,
    task_material_status,
)
from benchledger.ledger.sources.planned.records import (
    build_planned_terminal_bench_record,
    codex_setup,
)

R = BenchmarkRunRequest.from_options

ORDER = [
    "runner_cli",
    "runner_version",
    "container_cli",
    "container_daemon",
    "agent_cli",
    "auth_env_names",
    "no_upload_boundary",
    "timeout_policy",
    "task_material",
    "agent_setup_budget",
]


def machine(present=("uvx", "docker", "codex"), probes_ok=("uvx", "docker")):
    def which(name):
        return f"/bin/{name}" if name in present else None

    def run_probe(argv):
        return argv[0] in probes_ok

    return which, run_probe


def planned(opts, *, present=("uvx", "docker", "codex"), probes_ok=("uvx", "docker"), env=None,
            cwd=None):  # fmt: skip
    which, run_probe = machine(present, probes_ok)
    return build_planned_terminal_bench_record(
        planned_run_options(R({"goal_id": "g", "preflight_guard": True, **opts})),
        env=env if env is not None else {"HOME": "/nonexistent", "CODEX_FORCE_AUTH_JSON": "1"},
        which=which,
        run_probe=run_probe,
        path_exists=lambda _p: False,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("present", "probes_ok", "blocker"),
    [
        ((), (), "missing_uvx_runner_surface"),
        (("uvx", "docker", "codex"), (), "uvx_runner_surface_unverified"),
        (("uvx", "codex"), ("uvx",), "missing_docker_cli_surface"),
        (("uvx", "docker", "codex"), ("uvx",), "missing_docker_server_surface"),
        (("uvx", "docker"), ("uvx", "docker"), "missing_codex_cli_surface"),
        (("uvx", "docker", "codex"), ("uvx", "docker"), "ready_for_launch"),
    ],
)
def test_blocker_ladder(present, probes_ok, blocker):
    record = planned({}, present=present, probes_ok=probes_ok)
    preflight = record["preflight"]
    assert [c["name"] for c in preflight["checks"]] == ORDER
    assert preflight["first_blocker"] == blocker
    assert preflight["ready"] is (blocker == "ready_for_launch")
    assert record["first_blocker"] == blocker


def test_ready_and_first_blocker_never_contradict():
    for present in ((), ("uvx",), ("uvx", "docker"), ("uvx", "docker", "codex")):
        for probes_ok in ((), ("uvx",), ("uvx", "docker")):
            for opts in ({}, {"require_task_material_ready": True},
                         {"codex_install_strategy": "require_existing_codex"}):  # fmt: skip
                p = planned(opts, present=present, probes_ok=probes_ok)["preflight"]
                failing = [c for c in p["checks"] if c["blocking"] and not c["ok"]]
                assert p["ready"] is (not failing)
                assert p["first_blocker"] == (
                    failing[0]["blocker"] if failing else "ready_for_launch"
                )


def test_harbor_without_runner_ref():
    record = planned({"runner_ref": ""}, present=("docker", "codex"))
    assert record["preflight"]["first_blocker"] == "missing_harbor_runner_surface"


def test_auth_names_only_and_blocking_only_when_explicit():
    # Default names: neither set -> informational failure, never blocks.
    p = planned({}, env={"HOME": "/nonexistent"})["preflight"]
    auth = p["checks"][5]
    assert auth == {"name": "auth_env_names", "ok": False, "blocking": False,
                    "blocker": "auth_env_names_missing",
                    "detail": "missing: CODEX_FORCE_AUTH_JSON, OPENAI_API_KEY"}  # fmt: skip
    assert p["ready"] is True
    # Explicit names: every one must be set; the detail names the missing NAME, never a value.
    env = {"HOME": "/nonexistent", "MY_KEY": "sk-supersecretvalue123456"}
    p = planned({"auth_env_name": ["MY_KEY", "OTHER_KEY"]}, env=env)["preflight"]
    auth = p["checks"][5]
    assert auth["blocking"] is True and auth["ok"] is False
    assert auth["detail"] == "missing: OTHER_KEY"
    assert p["first_blocker"] == "auth_env_names_missing"
    assert "supersecret" not in repr(p)


def _copy_local_tasks(fixtures_dir, tmp_path):
    src = fixtures_dir / "harbor" / "adhoc-local" / "tasks"
    dst = tmp_path / "tasks"
    shutil.copytree(src, dst)
    return dst


def test_task_material_local_dataset_statuses(fixtures_dir, tmp_path):
    tasks = _copy_local_tasks(fixtures_dir, tmp_path)
    assert task_material_status(str(tasks), "straße-normalize", env={}) == MATERIAL_READY
    (tasks / "straße-normalize" / "task.toml").unlink()
    assert task_material_status(str(tasks), "straße-normalize", env={}) == MATERIAL_NO_TASK_TOML
    (tasks / "日本語-tokenizer" / "instruction.md").unlink()
    assert task_material_status(str(tasks), "日本語-tokenizer", env={}) == MATERIAL_NO_INSTRUCTION
    assert task_material_status(str(tasks), "absent", env={}) == MATERIAL_UNRESOLVED


def test_task_material_cache_root(fixtures_dir, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(
        fixtures_dir / "harbor" / "adhoc-local" / "tasks" / "données-nettoyage",
        cache / "abc123" / "données-nettoyage",
    )
    env = {"BENCHLEDGER_HARBOR_TASK_CACHE_ROOT": str(cache)}
    assert (
        task_material_status("terminal-bench@2.0", "données-nettoyage", env=env) == MATERIAL_READY
    )
    assert task_material_status("terminal-bench@2.0", "x", env=env) == MATERIAL_UNRESOLVED
    home_env = {"HOME": str(tmp_path / "home")}
    assert task_material_status("terminal-bench@2.0", "x", env=home_env) == MATERIAL_UNRESOLVED


def test_require_task_material_ready_blocks(fixtures_dir, tmp_path):
    informational = planned({})
    check = informational["preflight"]["checks"][8]
    assert check["blocker"] == "task_material_not_cached_or_not_locally_resolved"
    assert check["blocking"] is False and informational["preflight"]["ready"] is True
    blocked = planned({"require_task_material_ready": True})
    assert blocked["first_blocker"] == "task_material_not_cached_or_not_locally_resolved"
    tasks = _copy_local_tasks(fixtures_dir, tmp_path)
    ready = planned(
        {"require_task_material_ready": True, "dataset": str(tasks),
         "include_task_name": "straße-normalize"}
    )  # fmt: skip
    assert ready["preflight"]["ready"] is True
    assert ready["launch_preview"]["argv"][6] == "<dataset-path>"


# --- Codex setup ladder (docs/formats/cli.md §6.6)
# -------------------------------------------------------------

LADDER = [
    ({}, "runtime_codex_install_can_exceed_setup_budget", False),
    ({"worker_codex_materialization_strategy": "runtime_install_extended_setup"},
     "ready_for_runtime_codex_materialization_probe", False),
    ({"codex_install_strategy": "require_existing_codex"}, "codex_preflight_timeout_missing", True),
    ({"codex_install_strategy": "require_existing_codex", "codex_preflight_timeout_sec": 30},
     "codex_worker_materialization_strategy_missing", True),
    ({"codex_install_strategy": "require_existing_codex", "codex_preflight_timeout_sec": 30,
      "worker_codex_materialization_strategy": "worker_path_preprovisioned"},
     "ready_for_fail_fast_codex_setup_probe", False),
    ({"setup_timeout_repair_profile": True}, "codex_worker_materialization_strategy_missing", True),
    ({"setup_timeout_repair_profile": True,
      "worker_codex_materialization_strategy": "worker_path_preprovisioned"},
     "ready_for_fail_fast_codex_setup_probe", False),
    ({"setup_timeout_repair_profile": True,
      "worker_codex_materialization_strategy": "runtime_install_extended_setup"},
     "ready_for_runtime_codex_materialization_probe", False),
    ({"setup_timeout_repair_profile": True, "codex_install_strategy": "runtime_install_if_missing"},
     "setup_timeout_repair_profile_runtime_install_disallowed", True),
]  # fmt: skip


@pytest.mark.parametrize(("opts", "token", "blocks"), LADDER)
def test_setup_ladder(opts, token, blocks):
    setup = codex_setup(R(opts))
    assert (setup.blocker, setup.blocks_launch) == (token, blocks)
    record = planned(opts)
    check = record["preflight"]["checks"][-1]
    assert check["name"] == "agent_setup_budget" and check["blocking"] is blocks
    assert record["preflight"]["ready"] is (not blocks)
    assert record["first_blocker"] == (token if blocks else "ready_for_launch")


def test_no_setup_check_for_non_codex_agent():
    record = planned({"agent": "oracle"})
    assert [c["name"] for c in record["preflight"]["checks"]] == [
        n for n in ORDER if n not in ("agent_cli", "agent_setup_budget")
    ]


def test_no_upload_and_timeout_checks_fail_without_inputs():
    which, run_probe = machine()
    p = build_preflight(
        runner_ref="harbor==0.25.0", agent="x", auth_env_names=[], auth_env_names_explicit=False,
        launch_preview={"forbidden_flags_absent": False}, timeout_policy=None, task_material=[],
        require_task_material_ready=False, agent_setup=None, env={}, which=which,
        run_probe=run_probe,
    )  # fmt: skip
    assert p["first_blocker"] == "no_upload_boundary_not_ready"
    names = [c["name"] for c in p["checks"] if not c["ok"]]
    assert names == ["no_upload_boundary", "timeout_policy"]


def test_summarize_empty_list_is_ready():
    assert summarize([]) == {
        "schema_version": "benchledger_preflight_v0",
        "ready": True,
        "first_blocker": "ready_for_launch",
        "checks": [],
    }


def test_recommended_action_follows_the_blocker():
    from benchledger.ledger.rules.row.classification import recommended_action

    blocked = planned({}, present=())
    assert (
        recommended_action(None, blocked) == "resolve missing_uvx_runner_surface before launching"
    )
    ready = planned({})
    assert recommended_action(None, ready) == (
        "launch the previewed command, then ingest its job directory"
    )
