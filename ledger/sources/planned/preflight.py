"""One preflight check list for a planned launch (docs/formats/cli.md §7.4, §6.4-6.6).

loopx 0.4.8 computed three "first blockers" (top level, private launch summary, setup readiness)
that could disagree, so a run could be reported ready and blocked at once. Here there is one
ordered list of checks; ``ready`` and ``first_blocker`` are both derived from it and cannot
contradict each other. Every probe of the machine (``which``, a command runner, the environment,
the task cache directory) is passed in, so the logic is deterministic under test; the real probes
at the bottom are for the command layer.
"""

from __future__ import annotations

import os
import shutil  # on the first probe, not before: an ingest makes a ``which``, never probes
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

PREFLIGHT_SCHEMA_VERSION = "benchledger_preflight_v0"
READY_TOKEN = "ready_for_launch"
PROBE_TIMEOUT_SECONDS = 4.0
TASK_CACHE_ENV = "BENCHLEDGER_HARBOR_TASK_CACHE_ROOT"
DEFAULT_TASK_CACHE = "~/.cache/harbor/tasks"

#: Agents that need a CLI on the host, with the blocker when it is missing.
AGENT_LOCAL_CLIS: dict[str, tuple[str, str]] = {"codex": ("codex", "missing_codex_cli_surface")}

MATERIAL_READY = "ready"
MATERIAL_UNRESOLVED = "not_cached_or_not_locally_resolved"
MATERIAL_NO_INSTRUCTION = "missing_instruction_md"
MATERIAL_NO_TASK_TOML = "missing_task_toml"

Which = Callable[[str], str | None]
RunProbe = Callable[[Sequence[str]], bool]


# --- checks ----------------------------------------------------------------------------------


def check(name: str, ok: bool, *, blocking: bool, blocker: str, detail: str | None = None) -> dict:
    """One check; a failing check names its blocker token even when it does not block."""
    item: dict[str, Any] = {"name": name, "ok": ok, "blocking": blocking}
    if not ok:
        item["blocker"] = blocker
    if detail:
        item["detail"] = detail
    return item


def runner_checks(runner_ref: str | None, *, which: Which, run_probe: RunProbe) -> list[dict]:
    """``uvx`` runs a pinned Harbor; without a ref a ``harbor`` on PATH is used directly."""
    binary = "uvx" if runner_ref else "harbor"
    present = which(binary) is not None
    cli = check("runner_cli", present, blocking=True, blocker=f"missing_{binary}_runner_surface")
    verified = present and run_probe([binary, "--version"])
    detail = None if verified else f"{binary} --version probe {'failed' if present else 'not run'}"
    version = check(
        "runner_version",
        verified,
        blocking=True,
        blocker=f"{binary}_runner_surface_unverified",
        detail=detail,
    )
    return [cli, version]


def container_checks(*, which: Which, run_probe: RunProbe) -> list[dict]:
    """The docker CLI, then its daemon (a CLI without a reachable server cannot start tasks)."""
    present = which("docker") is not None
    cli = check("container_cli", present, blocking=True, blocker="missing_docker_cli_surface")
    server = present and run_probe(["docker", "version", "--format", "{{.Server.Version}}"])
    detail = (
        None if server else "docker server version probe " + ("failed" if present else "not run")
    )
    daemon = check(
        "container_daemon",
        server,
        blocking=True,
        blocker="missing_docker_server_surface",
        detail=detail,
    )
    return [cli, daemon]


def agent_cli_check(agent: str, *, which: Which) -> list[dict]:
    """Only agents with a known host CLI get this check."""
    spec = AGENT_LOCAL_CLIS.get(agent)
    if spec is None:
        return []
    binary, blocker = spec
    return [check("agent_cli", which(binary) is not None, blocking=True, blocker=blocker)]


def auth_env_check(names: Sequence[str], *, explicit: bool, env: Mapping[str, str]) -> dict:
    """Presence of auth variable NAMES only; a value is never read, compared or echoed.

    With explicit ``--auth-env-name`` every named variable must be set and the check blocks;
    with the agent's defaults one of them is enough and a miss is only informational.
    """
    missing = [name for name in names if not env.get(name)]
    ok = not missing if explicit else (not names or len(missing) < len(names))
    detail = "missing: " + ", ".join(missing) if missing and not ok else None
    return check(
        "auth_env_names", ok, blocking=explicit, blocker="auth_env_names_missing", detail=detail
    )


def no_upload_check(launch_preview: Mapping[str, Any] | None) -> dict:
    ok = launch_preview is not None and launch_preview.get("forbidden_flags_absent") is True
    return check("no_upload_boundary", ok, blocking=True, blocker="no_upload_boundary_not_ready")


def timeout_policy_check(policy: Mapping[str, Any] | None) -> dict:
    ok = policy is not None and isinstance(policy.get("effective_multipliers"), Mapping)
    return check("timeout_policy", ok, blocking=True, blocker="timeout_policy_invalid")


def task_material_check(statuses: Sequence[tuple[str, str]], *, required: bool) -> dict:
    """Existence facts only; the check blocks only with ``--require-task-material-ready``."""
    first_bad = next((status for _task, status in statuses if status != MATERIAL_READY), None)
    detail = ", ".join(f"{task}: {status}" for task, status in statuses) or None
    return check(
        "task_material",
        first_bad is None,
        blocking=required,
        blocker=f"task_material_{first_bad}",
        detail=detail,
    )


def agent_setup_check(token: str, *, blocks: bool) -> dict:
    """[loopx-specific] the Codex setup ladder of docs/formats/cli.md §6.6 as one check."""
    ok = token.startswith("ready_")
    return check(
        "agent_setup_budget", ok, blocking=blocks, blocker=token, detail=token if ok else None
    )


def assisted_observation_check() -> dict:
    """The active-user treatment cannot be launched until a real observation exists."""
    return check(
        "assisted_worker_observation",
        False,
        blocking=True,
        blocker="missing_real_assisted_worker_observation",
    )


def summarize(checks: Sequence[dict]) -> dict[str, Any]:
    """``ready`` and ``first_blocker`` from the same list, so they can never disagree."""
    failing = [item for item in checks if item["blocking"] and not item["ok"]]
    return {
        "schema_version": PREFLIGHT_SCHEMA_VERSION,
        "ready": not failing,
        "first_blocker": failing[0]["blocker"] if failing else READY_TOKEN,
        "checks": list(checks),
    }


def build_preflight(
    *,
    runner_ref: str | None,
    agent: str,
    auth_env_names: Sequence[str],
    auth_env_names_explicit: bool,
    launch_preview: Mapping[str, Any] | None,
    timeout_policy: Mapping[str, Any] | None,
    task_material: Sequence[tuple[str, str]],
    require_task_material_ready: bool,
    agent_setup: tuple[str, bool] | None,
    env: Mapping[str, str],
    which: Which,
    run_probe: RunProbe,
    assisted_observation_required: bool = False,
) -> dict[str, Any]:
    """The ``preflight`` block: checks in the fixed order of docs/formats/cli.md §7.4."""
    checks = [
        *runner_checks(runner_ref, which=which, run_probe=run_probe),
        *container_checks(which=which, run_probe=run_probe),
        *agent_cli_check(agent, which=which),
        auth_env_check(auth_env_names, explicit=auth_env_names_explicit, env=env),
        no_upload_check(launch_preview),
        timeout_policy_check(timeout_policy),
        task_material_check(task_material, required=require_task_material_ready),
    ]
    if agent_setup is not None:
        checks.append(agent_setup_check(agent_setup[0], blocks=agent_setup[1]))
    if assisted_observation_required:
        checks.append(assisted_observation_check())
    return summarize(checks)


# --- task material (docs/formats/cli.md §6.5)
# ------------------------------------------------------------


def _expand_home(text: str, env: Mapping[str, str]) -> Path:
    if text == "~" or text.startswith("~/"):
        home = env.get("HOME") or str(Path.home())
        return Path(home) / text[2:]
    return Path(text)


def _task_dir_status(task_dir: Path) -> str:
    has_instruction = (task_dir / "instruction.md").is_file()
    has_toml = (task_dir / "task.toml").is_file()
    if has_instruction and has_toml:
        return MATERIAL_READY
    return MATERIAL_NO_INSTRUCTION if not has_instruction else MATERIAL_NO_TASK_TOML


def task_material_status(
    dataset: str, task: str, *, env: Mapping[str, str], cwd: Path | None = None
) -> str:
    """Where Harbor would find the task on this machine, and whether its two files exist."""
    dataset_dir = _expand_home(dataset, env)
    if not dataset_dir.is_absolute() and cwd is not None:
        dataset_dir = cwd / dataset_dir
    if dataset_dir.is_dir():
        candidates = [dataset_dir / task]
    else:
        cache = _expand_home(env.get(TASK_CACHE_ENV) or DEFAULT_TASK_CACHE, env)
        candidates = sorted(cache.glob(f"*/{task}")) if cache.is_dir() else []
    statuses = [_task_dir_status(path) for path in candidates if path.is_dir()]
    if not statuses:
        return MATERIAL_UNRESOLVED
    return MATERIAL_READY if MATERIAL_READY in statuses else statuses[0]


# --- real probes for the command layer (impure; never used by tests of the logic) ----------


def probe_search_path(env: Mapping[str, str]) -> str:
    """PATH extended with the user's and the usual package managers' bin directories."""
    home = env.get("HOME") or str(Path.home())
    extra = [
        str(Path(home) / ".local" / "bin"),
        "/opt/homebrew/bin",
        "/usr/local/bin",
        "/home/linuxbrew/.linuxbrew/bin",
    ]
    parts = [part for part in (env.get("PATH") or "").split(os.pathsep) if part]
    return os.pathsep.join(parts + [item for item in extra if item not in parts])


def make_which(env: Mapping[str, str]) -> Which:
    search = probe_search_path(env)

    def which(name: str) -> str | None:

        return shutil.which(name, path=search)

    return which


def make_run_probe(env: Mapping[str, str]) -> RunProbe:
    """Run a version probe with a short timeout; only its exit status is used, never its output."""

    probe_env = {**env, "PATH": probe_search_path(env)}

    def run(argv: Sequence[str]) -> bool:
        try:
            done = subprocess.run(
                list(argv),
                env=probe_env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=PROBE_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0

    return run
