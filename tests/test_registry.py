"""Project registry location, goal ids, runtime root (docs/formats/history_registry_rollout.md
§2-4, §9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.registry import (
    build_command_context,
    find_goal,
    load_registry,
    locate_registry,
    parse_registry_text,
    registry_goal_ids,
    require_registry_file,
    resolve_runtime_root,
    validate_goal_id,
)
from benchledger.ledger.rules.row.classification import (
    DEFAULT_RECOMMENDED_ACTION,
    ClassificationInput,
    classification_label,
    recommended_action,
)

# the spec's minimal registry (docs/formats/history_registry_rollout.md §2)
MINIMAL_REGISTRY = Path("spec-examples/minimal-registry.json")


def _spec_minimal_registry(fixtures_dir: Path) -> dict:
    return json.loads((fixtures_dir / MINIMAL_REGISTRY).read_text(encoding="utf-8"))


def _write_project(root: Path, registry: dict) -> Path:
    path = root / ".benchledger" / "registry.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(registry), encoding="utf-8")
    return path


# --- goal id (§4) ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("demo", "demo"),
        ("  demo \n", "demo"),
        ("tb2-baseline_2026.05", "tb2-baseline_2026.05"),
        ("données", "données"),
        ("...", "..."),
    ],
)
def test_goal_id_accepted_and_stripped(raw: str, expected: str) -> None:
    assert validate_goal_id(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (None, "goal id is required"),
        ("", "goal id is required"),
        ("   ", "goal id is required"),
        (".", "goal id must be a single path segment"),
        ("..", "goal id must be a single path segment"),
        (" .. ", "goal id must be a single path segment"),
        ("../escape", "goal id must be a single path segment"),
        ("a/b", "goal id must be a single path segment"),
        ("..\\windows", "goal id must be a single path segment"),
        ("/etc", "goal id must be a single path segment"),
        ("bad\x00id", "goal id must be a single path segment"),
        ("C:evil", "goal id must not include path traversal"),
        ("token=abcdef1234567890", "goal id is not public-safe"),
        ("sk-proj1234567890abc", "goal id is not public-safe"),
    ],
)
def test_goal_id_refused_with_spec_message(raw: str | None, message: str) -> None:
    with pytest.raises(InputError) as info:
        validate_goal_id(raw)
    assert str(info.value) == message


# --- registry location and loading (§2) --------------------------------------------------------


def test_spec_minimal_registry_resolves(fixtures_dir: Path, tmp_path: Path) -> None:
    registry = _spec_minimal_registry(fixtures_dir)
    project = tmp_path / "project"
    _write_project(project, registry)
    nested = project / "sub" / "dir"
    nested.mkdir(parents=True)

    context = build_command_context(registry_flag=None, runtime_root_flag=None, cwd=nested, env={})

    assert context.registry == registry
    assert context.registry_exists and not context.registry_explicit
    assert context.project_root == project
    # relative common_runtime_root joins the project root, not the cwd (§3)
    assert context.runtime_root == project / "runtime"
    assert context.goal_runs_dir("demo") == project / "runtime" / "goals" / "demo" / "runs"
    assert context.global_registry_path == project / "runtime" / "registry.global.json"
    assert registry_goal_ids(context.registry) == ["demo"]


def test_flag_beats_env_beats_discovery(tmp_path: Path) -> None:
    _write_project(tmp_path, {})
    env = {"BENCHLEDGER_REGISTRY": "env.json"}
    assert locate_registry("flag.json", env=env, cwd=tmp_path) == (
        tmp_path / "flag.json",
        "flag.json",
        True,
    )
    assert locate_registry(None, env=env, cwd=tmp_path)[1:] == ("env.json", True)
    found = locate_registry(None, env={}, cwd=tmp_path)
    assert found[0] == tmp_path / ".benchledger" / "registry.json" and found[2] is False


def test_no_registry_reads_as_empty_and_cwd_is_project_root(tmp_path: Path) -> None:
    context = build_command_context(
        registry_flag=None, runtime_root_flag=None, cwd=tmp_path, env={"HOME": "/home/u"}
    )
    assert context.registry == {} and context.registry_path is None
    assert context.project_root == tmp_path
    # (new) the runtime root is the project's own .benchledger/, never the home directory
    assert context.runtime_root == tmp_path / ".benchledger"
    require_registry_file(context)  # nothing was named explicitly: no error


def test_explicit_missing_registry_is_refused_for_sync(tmp_path: Path) -> None:
    context = build_command_context(
        registry_flag="missing.json", runtime_root_flag="rt", cwd=tmp_path, env={}
    )
    assert context.registry == {}
    with pytest.raises(InputError, match=r"^registry file does not exist: missing.json$"):
        require_registry_file(context)


def test_plain_registry_file_directory_is_project_root(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "reg.json"
    path.parent.mkdir()
    path.write_text('{"common_runtime_root": "rt"}', encoding="utf-8")
    context = build_command_context(
        registry_flag=str(path), runtime_root_flag=None, cwd=tmp_path, env={}
    )
    assert context.project_root == tmp_path / "conf"
    assert context.runtime_root == tmp_path / "conf" / "rt"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "registry root must be a JSON object"),
        ('"x"', "registry root must be a JSON object"),
        ("{", "registry is not valid JSON: Expecting property name enclosed in double quotes"),
        ("", "registry is not valid JSON: Expecting value"),
    ],
)
def test_registry_format_errors(text: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_registry_text(text)
    assert str(info.value).startswith(message)


def test_load_registry_invalid_file_message_has_no_path(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_text("{broken", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_registry(path)
    assert str(tmp_path) not in str(info.value)


def test_goal_membership_ignores_malformed_entries() -> None:
    registry = {"goals": ["x", {"name": "no id"}, {"id": " demo "}, {"id": "other"}]}
    assert registry_goal_ids(registry) == ["demo", "other"]
    assert find_goal(registry, "demo") == {"id": " demo "}
    assert find_goal(registry, "absent") is None
    assert registry_goal_ids({"goals": "nope"}) == []


# --- runtime root (§3) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "registry", "expected"),
    [
        ("/abs/rt", {"common_runtime_root": "ignored"}, "/abs/rt"),
        ("rel/rt", {}, "/proj/rel/rt"),
        ("~/rt", {}, "/home/u/rt"),
        ("~", {}, "/home/u"),
        (None, {"common_runtime_root": "runtime"}, "/proj/runtime"),
        (None, {"common_runtime_root": "~/x"}, "/home/u/x"),
        (None, {"common_runtime_root": "/srv/rt/../rt2"}, "/srv/rt2"),
        (None, {"common_runtime_root": ""}, "/proj/.benchledger"),
        (None, {}, "/proj/.benchledger"),
    ],
)
def test_runtime_root_precedence(flag: str | None, registry: dict, expected: str) -> None:
    root = resolve_runtime_root(flag, registry, project_root=Path("/proj"), env={"HOME": "/home/u"})
    assert root == Path(expected)


def test_default_runtime_root_is_beside_the_store_found_upward(tmp_path: Path) -> None:
    """No flag, no registry: the goal files go beside the store the command finds, from any
    subdirectory, so two projects with the same goal id never share a run index."""
    (tmp_path / ".benchledger").mkdir()
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home")}
    context = build_command_context(registry_flag=None, runtime_root_flag=None, cwd=nested, env=env)
    assert context.runtime_root == tmp_path / ".benchledger"
    shared = build_command_context(
        registry_flag=None, runtime_root_flag="~/.benchledger", cwd=nested, env=env
    )
    assert shared.runtime_root == tmp_path / "home" / ".benchledger"


def test_runtime_root_errors() -> None:
    with pytest.raises(InputError, match="HOME is not set"):
        resolve_runtime_root("~/rt", {}, project_root=Path("/proj"), env={})
    with pytest.raises(InputError, match="common_runtime_root must be a string"):
        resolve_runtime_root(None, {"common_runtime_root": 3}, project_root=Path("/p"), env={})


# --- classification (§9) and recommended action (docs/formats/cli.md §5.6)
# ----------------------------------


@pytest.mark.parametrize(
    ("flags", "label"),
    [
        (
            ClassificationInput("skillsbench", classification="my_custom_class_v0"),
            "my_custom_class_v0",
        ),
        (
            ClassificationInput("skillsbench", classification="token=abcdef1234567"),
            "skillsbench_codex_cli_goal_baseline_skeleton_v0",
        ),
        (
            ClassificationInput("skillsbench", skillsbench_result=True),
            "skillsbench_official_benchflow_result_ingest_v0",
        ),
        (
            ClassificationInput("skillsbench", skillsbench_route="loopx-product-mode"),
            "skillsbench_loopx_product_mode_skeleton_v0",
        ),
        (
            ClassificationInput("terminal-bench", harbor_job_dir=True, fake_worker=True),
            "terminal_bench_harbor_runner_result_ingest_v0",
        ),
        (
            ClassificationInput(
                "terminal-bench", active_user_observation_fixture=True, active_cli_bridge=True
            ),
            "terminal_bench_active_user_assisted_observation_fixture_v0",
        ),
        (
            ClassificationInput("terminal-bench", active_user_assisted_treatment=True),
            "terminal_bench_active_user_assisted_treatment_preflight_v0",
        ),
        (
            ClassificationInput("terminal-bench", active_cli_bridge=True, preflight_guard=True),
            "terminal_bench_codex_loopx_active_cli_bridge_preflight_v0",
        ),
        (
            ClassificationInput("terminal-bench", worker_cli_bridge_fixture=True),
            "terminal_bench_codex_loopx_worker_cli_bridge_fixture_v0",
        ),
        (
            ClassificationInput("terminal-bench", cli_bridge_contract=True),
            "terminal_bench_codex_loopx_cli_bridge_contract_runner_fixture_v0",
        ),
        (
            ClassificationInput("terminal-bench", mode="codex-loopx", preflight_guard=True),
            "terminal_bench_codex_loopx_preflight_guard_v0",
        ),
        (
            ClassificationInput("terminal-bench", mode="hardened-codex", preflight_guard=True),
            "hardened_codex_baseline_preflight_guard_v0",
        ),
        (
            ClassificationInput("terminal-bench", mode="codex-goal-mode", preflight_guard=True),
            "terminal_bench_codex_goal_mode_baseline_preflight_guard_v0",
        ),
        (
            ClassificationInput("terminal-bench", preflight_guard=True),
            "terminal_bench_managed_real_run_preflight_guard_v0",
        ),
        (
            ClassificationInput("terminal-bench", mode="codex-loopx", fake_worker=True),
            "terminal_bench_codex_loopx_fake_worker_v0",
        ),
        (
            ClassificationInput("terminal-bench", fake_worker=True),
            "terminal_bench_cli_fake_worker_v0",
        ),
        (
            ClassificationInput("terminal-bench", mode="codex-loopx"),
            "terminal_bench_codex_loopx_dry_run_v0",
        ),
        (
            ClassificationInput("terminal-bench", mode="codex-goal-mode"),
            "terminal_bench_codex_goal_mode_baseline_dry_run_v0",
        ),
        (ClassificationInput("terminal-bench"), "terminal_bench_cli_dry_run_v0"),
    ],
)
def test_classification_table(flags: ClassificationInput, label: str) -> None:
    assert classification_label(flags) == label


@pytest.mark.parametrize(
    ("explicit", "record", "expected"),
    [
        ("  compare with   baseline arm next ", {}, "compare with baseline arm next"),
        (
            None,
            {"run_status": "planned", "first_blocker": "missing_docker_server_surface"},
            "resolve missing_docker_server_surface before launching",
        ),
        (
            None,
            {
                "run_status": "planned",
                "preflight": {"ready": True},
                "first_blocker": "ready_for_launch",
            },
            "launch the previewed command, then ingest its job directory",
        ),
        (
            None,
            {"run_status": "planned", "first_blocker": "none"},
            "launch the previewed command, then ingest its job directory",
        ),
        (None, {"run_status": "running"}, "re-ingest the job directory after the runner finishes"),
        (
            None,
            {
                "run_status": "completed",
                "official_task_score": {"passed": False},
                "official_score": 0.0,
            },
            "review the failure attribution before the next run",
        ),
        (None, {"run_status": "fixture"}, DEFAULT_RECOMMENDED_ACTION),
        ("password=hunter2", {}, DEFAULT_RECOMMENDED_ACTION),
    ],
)
def test_recommended_action(explicit: str | None, record: dict, expected: str) -> None:
    assert recommended_action(explicit, record) == expected
