"""The Harbor 0.25 ``harbor run`` command a planned run would launch (docs/formats/cli.md §7.2).

A planned record is only useful if a person can see exactly what would run and check it before
spending hours of compute. So the preview is the real argv for Harbor 0.25.0 (not loopx's, which
used an ``--agent-import-path`` flag 0.25.0 does not have), with every value we cannot know named
as a ``<placeholder>``, secrets reduced to env *names*, and a flag telling whether anything that
could publish results slipped in.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchledger.ledger.sources.planned.timeout_policy import (
    MULTIPLIER_FLAGS,
    MULTIPLIER_KEYS,
    format_multiplier,
)

PREVIEW_SCHEMA_VERSION = "benchledger_launch_preview_v0"
JOBS_DIR_PLACEHOLDER = "<jobs-dir>"
DATASET_PATH_PLACEHOLDER = "<dataset-path>"
CONTAINER_ENV = "docker"

#: Flags that would publish or share results; they must never appear in a preview.
FORBIDDEN_FLAGS: frozenset[str] = frozenset(
    {"--upload", "--launch", "--public", "--share", "--org"}
)
_SECRET_FLAG_WORDS = ("secret", "token", "password", "api-key", "apikey", "api_key", "credential")
_PLACEHOLDER = re.compile(r"<[a-z][a-z0-9-]*>")
_JOB_NAME_JUNK = re.compile(r"(?:[^\w.-]|_)+")
_LOCAL_PREFIXES = ("/", "./", "../", "~")
_HOME_OR_ABSOLUTE = re.compile(r"^(?:/|~|[A-Za-z]:[\\/])")


def default_job_name(dataset: str, task: str, label: str) -> str:
    """``<dataset>_<task>_<arm or agent>``; runs of non letters/digits/``.``/``-`` -> ``_``.

    Unicode letters are kept (loopx lowercased and lost them).
    """
    return _JOB_NAME_JUNK.sub("_", f"{dataset}_{task}_{label}")


def is_local_dataset(dataset: str, *, exists: Callable[[str], bool]) -> bool:
    """Harbor takes a registry dataset with ``--dataset`` and a local directory with ``--path``."""
    return dataset.startswith(_LOCAL_PREFIXES) or exists(dataset)


def _dataset_args(dataset: str, *, exists: Callable[[str], bool]) -> list[str]:
    if not is_local_dataset(dataset, exists=exists):
        return ["--dataset", dataset]
    # An absolute or home path would make the persisted preview unsafe to share; name it instead.
    shown = DATASET_PATH_PLACEHOLDER if _HOME_OR_ABSOLUTE.match(dataset) else dataset
    return ["--path", shown]


def _repeat(flag: str, values: Sequence[str]) -> list[str]:
    return [part for value in values for part in (flag, value)]


def _multiplier_args(multipliers: Mapping[str, float]) -> list[str]:
    args: list[str] = []
    for key in MULTIPLIER_KEYS:
        if key in multipliers:
            args += [MULTIPLIER_FLAGS[key], format_multiplier(multipliers[key])]
    return args


def _has_forbidden_flag(argv: Sequence[str]) -> bool:
    for token in argv:
        if not token.startswith("--"):
            continue
        flag = token.split("=", 1)[0].lower()
        if flag in FORBIDDEN_FLAGS or any(word in flag for word in _SECRET_FLAG_WORDS):
            return True
    return False


def _placeholders(argv: Sequence[str], mounts: Sequence[Mapping[str, Any]]) -> list[str]:
    found: list[str] = []
    texts = [*argv, *(str(mount.get("source", "")) for mount in mounts)]
    for text in texts:
        for token in _PLACEHOLDER.findall(text):
            if token not in found:
                found.append(token)
    return found


def shell_command(argv: Sequence[str]) -> str:
    """The argv shell-quoted and joined by spaces (``${NAME}`` stays literal for Harbor)."""
    return shlex.join(argv)


def build_launch_preview(
    *,
    dataset: str,
    tasks: Sequence[str],
    agent: str,
    model: str | None,
    job_name: str,
    runner_ref: str | None,
    n_attempts: int,
    n_concurrent: int,
    multipliers: Mapping[str, float],
    agent_kwargs: Sequence[tuple[str, str]] = (),
    agent_env: Sequence[tuple[str, str]] = (),
    allowed_hosts: Sequence[str] = (),
    mounts: Sequence[Mapping[str, Any]] = (),
    profile_name: str | None = None,
    path_exists: Callable[[str], bool] = lambda _path: False,
) -> dict[str, Any]:
    """Build the ``launch_preview`` block; ``agent_env`` pairs are (NAME, value template)."""
    runner = ["uvx", "--from", runner_ref, "harbor", "run"] if runner_ref else ["harbor", "run"]
    argv = [
        *runner,
        *_dataset_args(dataset, exists=path_exists),
        *_repeat("--include-task-name", tasks),
        "--agent",
        agent,
        *(["--model", model] if model else []),
        "--env",
        CONTAINER_ENV,
        "--n-attempts",
        str(n_attempts),
        "--n-concurrent",
        str(n_concurrent),
        "--jobs-dir",
        JOBS_DIR_PLACEHOLDER,
        "--job-name",
        job_name,
        *_repeat("--agent-env", [f"{name}={value}" for name, value in agent_env]),
        *_repeat("--agent-kwarg", [f"{key}={value}" for key, value in agent_kwargs]),
        *_repeat("--allow-environment-host", list(allowed_hosts)),
        *_multiplier_args(multipliers),
    ]
    preview: dict[str, Any] = {
        "schema_version": PREVIEW_SCHEMA_VERSION,
        "runner": "harbor",
        "runner_ref": runner_ref,
        "argv": argv,
        "command": shell_command(argv),
        "job_name": job_name,
        "jobs_dir": JOBS_DIR_PLACEHOLDER,
        "placeholders": _placeholders(argv, mounts),
        "env_names": [name for name, _value in agent_env],
        "allowed_environment_hosts": list(allowed_hosts),
        "agent_kwargs": dict(agent_kwargs),
        "forbidden_flags_absent": not _has_forbidden_flag(argv),
    }
    if runner_ref is None:
        del preview["runner_ref"]
    if profile_name:
        preview["agent_setup_profile"] = profile_name
    if mounts:
        preview["mounts"] = [dict(mount) for mount in mounts]
    return preview
