"""Project registry, goal ids and the runtime root, resolved once per command.

loopx 0.4.8 resolved a relative runtime root differently in different steps of one command (the
append against the project root, the sync and the rollout log against the cwd), so one command
could write to two places. Here every command builds one ``CommandContext`` up front and passes
it down; nothing below re-resolves paths. Everything is pure: the cwd and environment are
arguments, and the only file read is the registry itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.input_files import REGISTRY_LIMIT, read_regular_file
from benchledger.ledger.core.safety import is_public_safe
from benchledger.ledger.store.database import find_project_dir

REGISTRY_ENV = "BENCHLEDGER_REGISTRY"
REGISTRY_DIR_NAME = ".benchledger"
REGISTRY_FILE_NAME = "registry.json"
# loopx-compatible shared runtime root: used only when a flag or the registry names it.
SHARED_RUNTIME_ROOT = "~/.benchledger"
GLOBAL_REGISTRY_NAME = "registry.global.json"


@dataclass  # not frozen: cheaper to build and create; nothing hashes or mutates it
class CommandContext:
    """The registry and runtime root one command works with, decided before anything runs.

    ``registry_path`` is where the project registry is (or would be); ``registry_label`` is how
    payloads name it (the path as the user gave it). ``registry_exists`` tells the global sync
    whether to read the file or the store's registry view.
    """

    registry_path: Path | None
    registry: dict[str, Any]
    runtime_root: Path
    project_root: Path | None = None
    registry_label: str | None = None
    registry_explicit: bool = False
    registry_exists: bool = False

    @property
    def global_registry_path(self) -> Path:
        return self.runtime_root / GLOBAL_REGISTRY_NAME

    def goal_runs_dir(self, goal_id: str) -> Path:
        return self.runtime_root / "goals" / goal_id / "runs"


# --- registry location and loading (§2) -------------------------------------------------------


def locate_registry(
    flag: str | None, *, env: Mapping[str, str], cwd: Path
) -> tuple[Path | None, str | None, bool]:
    """Return (path, label, explicit): flag, env, then the nearest ``.benchledger/registry.json``.

    The label keeps the user's spelling for payloads; discovery walks up like git finds ``.git``
    so commands work from any subdirectory of a project.
    """
    given = flag if flag else env.get(REGISTRY_ENV) or None
    if given:
        return _absolute(given, cwd, env), given, True
    for directory in (cwd, *cwd.parents):
        candidate = directory / REGISTRY_DIR_NAME / REGISTRY_FILE_NAME
        if candidate.is_file():
            return candidate, str(candidate), False
    return None, None, False


def project_root_for(registry_path: Path | None, cwd: Path) -> Path:
    """The directory relative runtime roots are joined to (§2.1)."""
    if registry_path is None or not registry_path.is_file():
        return cwd
    parent = registry_path.parent
    if parent.name == REGISTRY_DIR_NAME:
        return parent.parent
    return parent


def load_registry(path: Path | None) -> dict[str, Any]:
    """Read a project registry; a missing file is ``{}`` because most commands never need one."""
    if path is None or not os.path.lexists(path):
        return {}
    try:
        raw = read_regular_file(path, shown=f"registry {path.name}", limit=REGISTRY_LIMIT)
    except FileNotFoundError:  # a dangling link: as absent as no file at all
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"registry is not valid JSON: not UTF-8 at byte {exc.start}") from None
    return parse_registry_text(text)


def parse_registry_text(text: str) -> dict[str, Any]:
    """Parse registry JSON with the spec's two messages (the stdlib message names no path)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"registry is not valid JSON: {exc}") from None
    except RecursionError:
        raise InputError(
            "registry is not valid JSON: nested too deeply to read; "
            "a registry holds goals and settings a few levels deep"
        ) from None
    if not isinstance(document, dict):
        raise InputError("registry root must be a JSON object")
    return document


def require_registry_file(context: CommandContext) -> None:
    """An explicitly named registry must exist for the global sync (also on a dry run, §7.2)."""
    if context.registry_explicit and not context.registry_exists:
        raise InputError(f"registry file does not exist: {_display(context.registry_label or '')}")


# --- goal membership (§2.3) --------------------------------------------------------------------


def registry_goals(registry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Goal entries that count: objects with a non-empty ``id``; anything else is ignored."""
    goals = registry.get("goals")
    if not isinstance(goals, list):
        return []
    return [goal for goal in goals if isinstance(goal, dict) and str(goal.get("id") or "").strip()]


def registry_goal_ids(registry: Mapping[str, Any]) -> list[str]:
    return [str(goal["id"]).strip() for goal in registry_goals(registry)]


def find_goal(registry: Mapping[str, Any], goal_id: str) -> dict[str, Any] | None:
    for goal in registry_goals(registry):
        if str(goal["id"]).strip() == goal_id:
            return goal
    return None


# --- goal id (§4) ------------------------------------------------------------------------------

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
# A directory name (255 bytes on common filesystems) with room to spare, and short enough for
# the ``goal/<id>`` stream column (300).
GOAL_ID_MAX_BYTES = 200


def validate_goal_id(raw: str | None) -> str:
    """Return the stripped goal id, or refuse it: it becomes a directory name under RT.

    The checks run in the spec's order so the first message a user sees is the same as loopx's.
    Control characters are refused as "not a single path segment" (new) because a NUL would
    otherwise surface as a traceback when the directory is created.
    """
    goal_id = (raw or "").strip()
    if not goal_id:
        raise InputError("goal id is required")
    if (
        goal_id in {".", ".."}
        or "/" in goal_id
        or "\\" in goal_id
        or _CONTROL_CHARS.search(goal_id)
    ):
        raise InputError("goal id must be a single path segment")
    if PurePosixPath(goal_id).name != goal_id or PureWindowsPath(goal_id).name != goal_id:
        raise InputError("goal id must not include path traversal")
    if len(goal_id.encode("utf-8", "surrogatepass")) > GOAL_ID_MAX_BYTES:
        # (new) checked before anything is written: a longer name fails only when the goal's
        # directory is created, after the events were committed.
        raise InputError(f"goal id is too long (at most {GOAL_ID_MAX_BYTES} bytes)")
    if not public_safe(goal_id):
        raise InputError("goal id is not public-safe")
    return goal_id


# --- runtime root (§3) -------------------------------------------------------------------------


def resolve_runtime_root(
    flag: str | None,
    registry: Mapping[str, Any],
    *,
    project_root: Path,
    env: Mapping[str, str],
    default_root: Path | None = None,
) -> Path:
    """Flag, registry ``common_runtime_root``, else the project's own ``.benchledger/``.

    The default is per project (beside the store, ``default_root`` when given) so two projects
    that use the same goal id never write each other's run files; the loopx-style shared root
    (``~/.benchledger``) is used only when a flag or the registry asks for it. Relative values
    join the project root.
    """
    value = flag or _registry_runtime_root(registry)
    if not value:
        return Path(os.path.normpath(default_root or project_root / REGISTRY_DIR_NAME))
    return _absolute(value, project_root, env)


def _registry_runtime_root(registry: Mapping[str, Any]) -> str | None:
    value = registry.get("common_runtime_root")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError("registry common_runtime_root must be a string")
    return value


def build_command_context(
    *,
    registry_flag: str | None,
    runtime_root_flag: str | None,
    cwd: Path,
    env: Mapping[str, str],
) -> CommandContext:
    """Locate and load the registry and resolve the runtime root, once, for one command."""
    registry_path, label, explicit = locate_registry(registry_flag, env=env, cwd=cwd)
    exists = registry_path is not None and registry_path.is_file()
    registry = load_registry(registry_path)
    project_root = project_root_for(registry_path, cwd)
    store_project = find_project_dir(cwd) if registry_path is None else None
    runtime_root = resolve_runtime_root(
        runtime_root_flag,
        registry,
        project_root=project_root,
        env=env,
        default_root=(store_project or project_root) / REGISTRY_DIR_NAME,
    )
    return CommandContext(
        registry_path=registry_path,
        registry=registry,
        runtime_root=runtime_root,
        project_root=project_root,
        registry_label=label,
        registry_explicit=explicit,
        registry_exists=exists,
    )


def _absolute(value: str, base: Path, env: Mapping[str, str]) -> Path:
    """Expand ``~`` through ``$HOME`` (not the password database); join relative paths to base."""
    if value == "~" or value.startswith("~/"):
        home = env.get("HOME")
        if not home:
            raise InputError("cannot expand ~: HOME is not set")
        value = home + value[1:]
    path = Path(value)
    if not path.is_absolute():
        path = base / path
    return Path(os.path.normpath(path))


def _display(path_text: str) -> str:
    """Name a path in an error without leaking the local directory layout."""
    if not path_text or not os.path.isabs(os.path.expanduser(path_text)):
        return path_text
    return Path(path_text).name


# --- public-safety filter ----------------------------------------------------------------------


def public_safe(text: str) -> bool:
    """The one shared filter (docs/formats/benchmark_run_v0.md §3), imported lazily to keep startup
    light."""
    return is_public_safe(text)
