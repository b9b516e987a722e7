"""Harbor 0.25 launch preview (docs/formats/cli.md §7.2) and timeout policy (§7.3)."""

from __future__ import annotations

import math
import shlex

import pytest

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.handlers.source_planned import planned_run_options
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.sources.planned.launch_preview import (
    build_launch_preview,
    default_job_name,
    is_local_dataset,
)
from benchledger.ledger.sources.planned.records import build_planned_terminal_bench_record
from benchledger.ledger.sources.planned.timeout_policy import (
    build_timeout_policy,
    format_multiplier,
    validate_multiplier,
    validate_multipliers,
)

R = BenchmarkRunRequest.from_options


def P(options: dict):  # noqa: N802 - beside R: the planner's options from the request's
    return planned_run_options(R(options))


def preview(**kw):
    base = dict(
        dataset="terminal-bench@2.0",
        tasks=["build-cython-ext"],
        agent="codex",
        model="gpt-5.5",
        job_name="terminal-bench_2.0_build-cython-ext_codex",
        runner_ref="harbor==0.25.0",
        n_attempts=1,
        n_concurrent=1,
        multipliers={},
        agent_env=[("CODEX_FORCE_AUTH_JSON", "${CODEX_FORCE_AUTH_JSON}")],
    )
    base.update(kw)
    return build_launch_preview(**base)


def test_spec_example_argv_exactly():
    p = preview()
    assert p["argv"] == [
        "uvx", "--from", "harbor==0.25.0", "harbor", "run", "--dataset", "terminal-bench@2.0",
        "--include-task-name", "build-cython-ext", "--agent", "codex", "--model", "gpt-5.5",
        "--env", "docker", "--n-attempts", "1", "--n-concurrent", "1", "--jobs-dir", "<jobs-dir>",
        "--job-name", "terminal-bench_2.0_build-cython-ext_codex",
        "--agent-env", "CODEX_FORCE_AUTH_JSON=${CODEX_FORCE_AUTH_JSON}",
    ]  # fmt: skip
    assert p["schema_version"] == "benchledger_launch_preview_v0"
    assert p["runner"] == "harbor" and p["runner_ref"] == "harbor==0.25.0"
    assert p["command"] == shlex.join(p["argv"])
    assert shlex.split(p["command"]) == p["argv"]
    assert p["placeholders"] == ["<jobs-dir>"]
    assert p["jobs_dir"] == "<jobs-dir>"
    assert p["env_names"] == ["CODEX_FORCE_AUTH_JSON"]
    assert p["allowed_environment_hosts"] == [] and p["agent_kwargs"] == {}
    assert p["forbidden_flags_absent"] is True


def test_no_runner_ref_uses_harbor_directly():
    p = preview(runner_ref=None)
    assert p["argv"][:2] == ["harbor", "run"]
    assert "runner_ref" not in p


def test_repeatable_tasks_kwargs_hosts_and_multipliers():
    p = preview(
        tasks=["a", "b"],
        agent_kwargs=[("k", "v")],
        allowed_hosts=["github.com"],
        multipliers={"agent_timeout_multiplier": 8.0, "verifier_timeout_multiplier": 0.25},
    )
    argv = p["argv"]
    assert argv.count("--include-task-name") == 2
    assert "--agent-kwarg" in argv and "k=v" in argv
    assert argv[argv.index("--allow-environment-host") + 1] == "github.com"
    assert argv[argv.index("--agent-timeout-multiplier") + 1] == "8"
    assert argv[argv.index("--verifier-timeout-multiplier") + 1] == "0.25"
    assert "--agent-import-path" not in argv  # Harbor 0.25.0 has no such flag


@pytest.mark.parametrize("flag", ["--upload", "--public", "--share", "--org", "--launch"])
def test_forbidden_flags_detected(flag):
    assert (
        preview(agent_kwargs=[], agent_env=[], tasks=["t", flag])["forbidden_flags_absent"] is False
    )


def test_secret_flag_detected():
    p = preview(agent_env=[], tasks=["--api-key=abc"])
    assert p["forbidden_flags_absent"] is False


@pytest.mark.parametrize(
    ("dataset", "local"),
    [("terminal-bench@2.0", False), ("./tasks", True), ("../t", True), ("/abs/t", True),
     ("~/t", True)],
)  # fmt: skip
def test_local_dataset_detection(dataset, local):
    assert is_local_dataset(dataset, exists=lambda _p: False) is local


def test_absolute_dataset_path_becomes_placeholder():
    p = preview(dataset="/srv/bench/tasks", path_exists=lambda _p: True)
    argv = p["argv"]
    assert argv[argv.index("--path") + 1] == "<dataset-path>"
    assert "/srv/bench" not in p["command"]
    assert p["placeholders"] == ["<dataset-path>", "<jobs-dir>"]


def test_local_unicode_dataset_from_fixtures(fixtures_dir):
    """A dataset that exists locally is passed with --path; Unicode letters stay in the job name."""
    task = "données-nettoyage"
    record = build_planned_terminal_bench_record(
        P({"goal_id": "g", "dataset": "adhoc-local/tasks", "include_task_name": task}),
        env={},
        which=lambda _n: None,
        cwd=fixtures_dir / "harbor",
    )
    argv = record["launch_preview"]["argv"]
    assert argv[argv.index("--path") + 1] == "adhoc-local/tasks"
    assert record["benchmark_id"] == "adhoc-local/tasks"
    assert record["job_name"] == "adhoc-local_tasks_données-nettoyage_codex"


@pytest.mark.parametrize(
    ("dataset", "task", "label", "expected"),
    [
        ("terminal-bench@2.0", "build-cython-ext", "codex",
         "terminal-bench_2.0_build-cython-ext_codex"),
        ("a b@@c", "x__y", "arm/1", "a_b_c_x_y_arm_1"),
        ("skillsbench@1.1", "日本語-tokenizer", "codex", "skillsbench_1.1_日本語-tokenizer_codex"),
    ],
)  # fmt: skip
def test_default_job_name(dataset, task, label, expected):
    assert default_job_name(dataset, task, label) == expected


def test_job_name_flag_and_run_key_stability():
    opts = {"goal_id": "g", "job_name": "my-job", "n_attempts": 3, "n_concurrent": 2}
    one = build_planned_terminal_bench_record(P(opts), env={}, which=lambda _n: None)
    two = build_planned_terminal_bench_record(P(opts), env={}, which=lambda _n: None)
    argv = one["launch_preview"]["argv"]
    assert argv[argv.index("--job-name") + 1] == "my-job"
    assert argv[argv.index("--n-attempts") + 1] == "3"
    assert argv[argv.index("--n-concurrent") + 1] == "2"
    assert one["run_key"] == two["run_key"]
    other = build_planned_terminal_bench_record(
        P({**opts, "goal_id": "h"}), env={}, which=lambda _n: None
    )
    assert other["run_key"] != one["run_key"]


def test_runner_ref_flag():
    record = build_planned_terminal_bench_record(
        P({"goal_id": "g", "runner_ref": "harbor==0.26.0"}), env={}, which=lambda _n: None
    )
    assert record["launch_preview"]["argv"][:3] == ["uvx", "--from", "harbor==0.26.0"]


def test_user_agent_kwargs_and_bad_entry():
    record = build_planned_terminal_bench_record(
        P({"goal_id": "g", "agent_kwarg": ["reasoning=high"]}), env={}, which=lambda _n: None
    )
    assert record["launch_preview"]["agent_kwargs"]["reasoning"] == "high"
    with pytest.raises(InputError, match="^invalid --agent-kwarg entry: nokey$"):
        build_planned_terminal_bench_record(
            P({"goal_id": "g", "agent_kwarg": ["nokey"]}), env={}, which=lambda _n: None
        )


# --- timeout policy --------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "text"), [(8.0, "8"), (0.25, "0.25"), (1.5, "1.5"), (2, "2")])
def test_format_multiplier(value, text):
    assert format_multiplier(value) == text


@pytest.mark.parametrize("bad", [0, -0.5, math.nan, math.inf, -math.inf, True, "2"])
def test_invalid_multiplier(bad):
    with pytest.raises(InputError, match="^--x must be a finite number greater than zero$"):
        validate_multiplier("--x", bad)


def test_first_bad_multiplier_in_flag_order_is_reported():
    with pytest.raises(InputError, match="^--agent-timeout-multiplier "):
        validate_multipliers({"verifier_timeout_multiplier": 0.0, "agent_timeout_multiplier": -1.0})


def test_policy_fields_and_harbor_override_rule():
    policy = build_timeout_policy(
        {"timeout_multiplier": 2.0}, source="cli_preview", dataset="terminal-bench@2.0"
    )
    assert policy["effective_multipliers"]["timeout_multiplier"] == 2.0
    assert policy["effective_multipliers"]["agent_timeout_multiplier"] == 1.0
    assert policy["agent_timeout_seconds_effective"] == 1800.0
    assert policy["agent_timeout_tier"] == "true_long_task"
    assert policy["official_comparable"] is False
    overridden = build_timeout_policy(
        {"timeout_multiplier": 2.0, "agent_timeout_multiplier": 1.0},
        source="cli_preview",
        dataset="terminal-bench@2.0",
    )
    assert overridden["agent_timeout_seconds_effective"] == 900.0
    unknown = build_timeout_policy({}, source="cli_preview", dataset="other@1")
    assert "agent_timeout_seconds_base" not in unknown
    assert unknown["official_comparable"] is True
