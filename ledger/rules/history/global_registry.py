"""The global registry sync: merge sanitised goal entries into ``RT/registry.global.json``.

The merge is a pure function of (current global document, source registry, options, time), so
the command can run it as a precondition before any event is written, record its outcome in a
``global_synced`` event, and render the same document again on replay. Writing the file, the
writability probe and the backup copy are the caller's job; this module says what to write.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.rules.history.global_sync_skipped import (
    SKIPPED_DISABLED as SKIPPED_DISABLED,  # re-exported
)
from benchledger.ledger.rules.history.global_sync_skipped import (
    skipped_disabled_payload as skipped_disabled_payload,
)

GLOBAL_REGISTRY_NAME = "registry.global.json"
DEFAULT_SCHEMA_VERSION = "0.1"
WRITABILITY_SCHEMA = "loopx_registry_writability_v0"
ROUTE_FIELDS = ("source_registry", "repo", "state_file")
ATTENTION_FIELDS = (
    "waiting_on",
    "attention_status",
    "operator_question",
    "recommended_action",
    "next_handoff_condition",
)
BINDING_FIELDS = ("repository_bindings", "external_locator_bindings")
SKIPPED_SAME_SOURCE = "source registry is already the global registry"


@dataclass(frozen=True)
class SyncResult:
    """What one sync decided.

    ``document`` is the global registry to write (``None`` when skipped); ``changed`` says whether
    it differs from the current one, so an unchanged sync writes nothing. ``backup_name`` and
    ``backup_document`` are set only when a replaced route changes an existing file.
    """

    payload: dict[str, Any]
    document: dict[str, Any] | None = None
    changed: bool = False
    backup_name: str | None = None
    backup_document: dict[str, Any] | None = None
    route_collisions: list[dict[str, Any]] = field(default_factory=list)


def sync_global(
    global_doc: dict[str, Any] | None,
    project_registry: Mapping[str, Any],
    *,
    goal_id: str | None,
    replace_state: bool,
    now: str,
    source_registry: str,
    runtime_root: str,
    registry_label: str | None = None,
    dry_run: bool = True,
    path_exists: Callable[[str], bool] | None = None,
) -> SyncResult:
    """Merge the source registry's goals into the global document (§7.2 steps 2-8).

    ``global_doc`` is the current global file (``None`` when it does not exist);
    ``source_registry`` the absolute, resolved path of the source (the project registry file,
    or whatever the caller names as the store's registry view); ``now`` is ``synced_at`` and
    ``updated_at``. Merge errors raise ``InputError`` so they fail dry runs too.
    """
    global_path = os.path.join(runtime_root, GLOBAL_REGISTRY_NAME)
    registry_text = registry_label if registry_label is not None else source_registry
    if _same_path(source_registry, global_path):
        return SyncResult(
            payload=skipped_same_source_payload(dry_run, registry_text, global_path, runtime_root)
        )

    goals = select_goals(project_registry, goal_id)
    merged = _merge(
        global_doc,
        project_registry,
        goals,
        replace_state=replace_state,
        now=now,
        source_registry=source_registry,
        runtime_root=runtime_root,
        path_exists=path_exists,
    )
    document, collisions = merged.document, merged.collisions
    changed = document != (global_doc or {})
    needs_backup = bool(collisions) and replace_state and global_doc is not None and changed
    backup_name = backup_file_name(now) if needs_backup else None
    backup_path = os.path.join(runtime_root, backup_name) if backup_name else None
    where = {
        "registry": registry_text,
        "global_registry": global_path,
        "runtime_root": runtime_root,
    }
    payload = _payload(dry_run, where, len(goals), merged, replace_state, backup_path, now)
    return SyncResult(
        payload=payload,
        document=document,
        changed=changed,
        backup_name=backup_name,
        backup_document=copy.deepcopy(global_doc) if needs_backup else None,
        route_collisions=collisions,
    )


def _payload(
    dry_run: bool,
    where: Mapping[str, str],
    source_goal_count: int,
    merged: _Merged,
    replace_state: bool,
    backup_path: str | None,
    now: str,
) -> dict[str, Any]:
    """What ``registry sync-global`` prints (§7.2 step 8)."""
    return {
        "ok": True,
        "dry_run": dry_run,
        "skipped": False,
        **where,
        "source_goal_count": source_goal_count,
        "global_goal_count": len(merged.goals),
        "synced_goal_ids": merged.synced_ids,
        "actions": merged.actions,
        "route_collisions": merged.collisions,
        "route_replacement_allowed": replace_state,
        "backup_path": backup_path,
        "updated_at": now,
        "wrote": not dry_run,
        "global_registry_writability": {},
    }


@dataclass(frozen=True)
class _Merged:
    """The global document after the merge, and what the merge did."""

    document: dict[str, Any]
    goals: list[dict[str, Any]]
    actions: list[Any]
    synced_ids: list[str]
    collisions: list[Any]


def _merge(
    global_doc: dict[str, Any] | None,
    project_registry: Mapping[str, Any],
    goals: Sequence[Mapping[str, Any]],
    *,
    replace_state: bool,
    now: str,
    source_registry: str,
    runtime_root: str,
    path_exists: Callable[[str], bool] | None,
) -> _Merged:
    """§7.2 steps 4-7: sanitize the selected goals, merge them and their projects into a copy
    of the global document."""
    incoming = [
        sanitize_goal(goal, source_registry=source_registry, synced_at=now, path_exists=path_exists)
        for goal in goals
    ]
    incoming_projects = referenced_projects(project_registry, goals)
    current = copy.deepcopy(global_doc) if isinstance(global_doc, dict) else {}
    merged_goals, actions, synced_ids, collisions = merge_goals(
        _list(current.get("goals")), incoming, replace_state=replace_state
    )
    merged_projects = merge_projects(_global_projects(current), incoming_projects)
    document = _document(
        current, project_registry, merged_goals, merged_projects, runtime_root=runtime_root, now=now
    )
    return _Merged(document, merged_goals, actions, synced_ids, collisions)


# --- step 3: selection -------------------------------------------------------------------------


def select_goals(registry: Mapping[str, Any], goal_id: str | None) -> list[dict[str, Any]]:
    """All goal objects with an id, or just the requested one (compared after stripping)."""
    goals = [
        goal
        for goal in _list(registry.get("goals"))
        if isinstance(goal, dict) and str(goal.get("id") or "").strip()
    ]
    if not goal_id:
        return goals
    wanted = goal_id.strip()
    chosen = [goal for goal in goals if str(goal["id"]).strip() == wanted]
    if not chosen:
        raise InputError(f"goal id not found in source registry: {wanted}")
    return chosen


# --- step 4: sanitising ------------------------------------------------------------------------


def sanitize_goal(
    goal: Mapping[str, Any],
    *,
    source_registry: str,
    synced_at: str,
    path_exists: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """Copy a goal for the machine-wide registry without the bulky authority material."""
    copied = copy.deepcopy(dict(goal))
    copied["id"] = str(copied["id"]).strip()
    sources = copied.pop("authority_sources", None)
    authority = copied.pop("authority_registry", None)
    copied["source_registry"] = os.path.normpath(source_registry)
    copied["synced_at"] = synced_at
    copied["authority_source_count"] = len(sources) if isinstance(sources, (list, dict)) else 0
    copied["authority_registry"] = authority_summary(authority, goal=goal, path_exists=path_exists)
    return copied


def authority_summary(
    authority: Any,
    *,
    goal: Mapping[str, Any],
    path_exists: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """Counts and flags of a goal's authority registry; its ``default_entries`` list is dropped."""
    raw = authority if isinstance(authority, dict) else {}
    path = raw.get("path") if isinstance(raw.get("path"), str) and raw.get("path") else None
    exists = None
    if path is not None and path_exists is not None:
        exists = bool(path_exists(_join_repo(goal, path)))
    return {
        "declared": bool(raw),
        "required": raw.get("required") is True or goal.get("authority_registry_required") is True,
        "path": path,
        "path_exists": exists,
        "default_entry_count": _count(raw.get("default_entries")),
        "topic_authority_count": _count(raw.get("topics") or raw.get("topic_authorities")),
        "deprecated_source_count": _count(raw.get("deprecated_sources")),
        "conflict_risk": str(raw.get("conflict_risk") or "unknown"),
    }


def _join_repo(goal: Mapping[str, Any], path: str) -> str:
    repo = goal.get("repo")
    if os.path.isabs(path) or not isinstance(repo, str) or not repo:
        return path
    return os.path.join(repo, path)


def _count(value: Any) -> int:
    return len(value) if isinstance(value, (list, dict)) else 0


# --- step 5: projects --------------------------------------------------------------------------


def referenced_projects(
    registry: Mapping[str, Any], goals: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The source ProjectRecords the selected goals point to, validated, in id order."""
    source = registry.get("projects")
    if source is not None and not isinstance(source, list):
        raise InputError("source registry projects must be a list")
    by_id = projects_by_id(source or [], source="source registry")
    wanted = sorted(
        {
            str(goal.get("project_id")).strip()
            for goal in goals
            if str(goal.get("project_id") or "").strip()
        }
    )
    missing = [project_id for project_id in wanted if project_id not in by_id]
    if missing:
        raise InputError(f"goal references a missing ProjectRecord: {', '.join(missing)}")
    return [by_id[project_id] for project_id in wanted]


def projects_by_id(entries: Sequence[Any], *, source: str) -> dict[str, dict[str, Any]]:
    projects: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise InputError(f"{source} projects entries must be JSON objects")
        project_id = str(entry.get("project_id") or "").strip()
        if not project_id:
            raise InputError(f"{source} ProjectRecord is missing project_id")
        if project_id in projects:
            raise InputError(f"{source} has duplicate project_id: {project_id}")
        _check_bindings(entry, project_id=project_id, source=source)
        projects[project_id] = entry
    return projects


def _check_bindings(entry: Mapping[str, Any], *, project_id: str, source: str) -> None:
    for name in BINDING_FIELDS:
        value = entry.get(name)
        if value is None:
            continue
        if not isinstance(value, list) or not all(
            isinstance(item, str) and item.strip() for item in value
        ):
            raise InputError(f"{source} ProjectRecord {project_id} has a malformed {name} list")


def merge_projects(existing: Sequence[Any], incoming: Sequence[dict[str, Any]]) -> list[Any]:
    """Refuse to overwrite a different global ProjectRecord; otherwise incoming ones go last."""
    existing_by_id = projects_by_id(existing, source="global registry")
    incoming_ids = set()
    for project in incoming:
        project_id = str(project["project_id"]).strip()
        incoming_ids.add(project_id)
        if project_id in existing_by_id and existing_by_id[project_id] != project:
            raise InputError(f"global ProjectRecord conflicts with source registry: {project_id}")
    kept = [
        entry
        for entry in existing
        if str(entry.get("project_id") or "").strip() not in incoming_ids
    ]
    return kept + [copy.deepcopy(project) for project in incoming]


def _global_projects(current: Mapping[str, Any]) -> list[Any]:
    value = current.get("projects")
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError("global registry projects must be a list")
    return value


# --- step 6: goals, route collisions, attention carry-over -------------------------------------


def merge_goals(
    existing: Sequence[Any],
    incoming: Sequence[dict[str, Any]],
    *,
    replace_state: bool,
) -> tuple[list[Any], list[str], list[str], list[dict[str, Any]]]:
    """Keep untouched global goals in order, append incoming ones; a re-synced goal moves last."""
    incoming_ids = {goal["id"] for goal in incoming}
    existing_by_id = {
        _goal_id(item): item for item in existing if isinstance(item, dict) and _goal_id(item)
    }
    merged = [
        item for item in existing if not (isinstance(item, dict) and _goal_id(item) in incoming_ids)
    ]
    actions: list[str] = []
    synced: list[str] = []
    collisions: list[dict[str, Any]] = []
    for goal in incoming:
        previous = existing_by_id.get(goal["id"])
        action = "updated" if previous is not None else "added"
        if previous is not None:
            collision = route_collision(previous, goal)
            if collision is not None:
                if not replace_state:
                    raise InputError(collision_message(collision))
                collisions.append(collision)
                action = "replaced-route"
            goal = carry_attention(previous, goal)
        goal.pop("clear_attention_override", None)
        merged.append(goal)
        actions.append(f"{goal['id']}:{action}")
        synced.append(goal["id"])
    return merged, actions, synced, collisions


def route_snapshot(goal: Mapping[str, Any]) -> dict[str, str | None]:
    return {name: _route_value(goal, name) for name in ROUTE_FIELDS}


def route_collision(
    existing: Mapping[str, Any], incoming: Mapping[str, Any]
) -> dict[str, Any] | None:
    """A route field collides when both sides set it and the values differ."""
    before, after = route_snapshot(existing), route_snapshot(incoming)
    changed = [
        name
        for name in ROUTE_FIELDS
        if before[name] and after[name] and before[name] != after[name]
    ]
    if not changed:
        return None
    return {
        "goal_id": str(incoming.get("id")),
        "changed_fields": changed,
        "existing_route": before,
        "incoming_route": after,
    }


def collision_message(collision: Mapping[str, Any]) -> str:
    fields = ", ".join(collision["changed_fields"])
    goal = collision["goal_id"]
    # (new) loopx named --fork-goal and a bare --replace-state, which `benchmark run` does not
    # have; this names the commands that exist here.
    return (
        f"global route collision for goal_id {goal}: {fields} would change. "
        "Use the existing source_registry to register agents, record under another --goal-id, "
        f"or replace the route with `benchledger sync-global --goal-id {goal} --replace-state "
        "--execute` (it writes a global registry backup first). A project of its own needs no "
        "shared runtime root: without --runtime-root or common_runtime_root it uses its own "
        ".benchledger/."
    )


def carry_attention(existing: Mapping[str, Any], incoming: dict[str, Any]) -> dict[str, Any]:
    """Keep an operator's attention note set from another project until someone clears it."""
    merged = {key: value for key, value in incoming.items() if key != "clear_attention_override"}
    if incoming.get("clear_attention_override"):
        return merged
    if _same_path(existing.get("source_registry"), incoming.get("source_registry")):
        return merged
    carried = False
    for name in ATTENTION_FIELDS:
        if not merged.get(name) and existing.get(name):
            merged[name] = copy.deepcopy(existing[name])
            carried = True
    if carried:
        merged["attention_override_synced_from"] = existing.get(
            "attention_override_synced_from"
        ) or existing.get("source_registry")
    return merged


def _route_value(goal: Mapping[str, Any], name: str) -> str | None:
    value = goal.get(name)
    if value is None or value == "":
        return None
    text = str(value)
    return os.path.normpath(text) if name == "source_registry" else text


def _goal_id(goal: Mapping[str, Any]) -> str:
    return str(goal.get("id") or "").strip()


# --- step 7: the document ----------------------------------------------------------------------


def _document(
    current: dict[str, Any],
    source: Mapping[str, Any],
    goals: list[Any],
    projects: list[Any],
    *,
    runtime_root: str,
    now: str,
) -> dict[str, Any]:
    document = dict(current)
    document["schema_version"] = str(
        current.get("schema_version") or source.get("schema_version") or DEFAULT_SCHEMA_VERSION
    )
    document["updated_at"] = now
    document["common_runtime_root"] = runtime_root
    document["registry_role"] = "global-local"
    if projects:
        document["projects"] = projects
    document["goals"] = goals
    return document


def backup_file_name(synced_at: str) -> str:
    """``registry.global.json.route-collision-backup-20261130T174734Z.bak`` (§7.3)."""
    stamp = synced_at.replace(":", "").replace("-", "")
    return f"{GLOBAL_REGISTRY_NAME}.route-collision-backup-{stamp}.bak"


# --- payload forms (§7.4, §7.5) ----------------------------------------------------------------


def skipped_same_source_payload(
    dry_run: bool, registry: str | None, global_path: str, runtime_root: str
) -> dict[str, Any]:
    return {
        "ok": True,
        "dry_run": dry_run,
        "skipped": True,
        "reason": SKIPPED_SAME_SOURCE,
        "registry": registry,
        "global_registry": global_path,
        "runtime_root": runtime_root,
        "synced_goal_ids": [],
        "actions": [],
    }


def writability_ok(
    path: str, *, create_parent: bool = True, probe: str = "write_rename_delete"
) -> dict[str, Any]:
    return {
        "schema_version": WRITABILITY_SCHEMA,
        "ok": True,
        "path": path,
        "parent": os.path.dirname(path),
        "create_parent": create_parent,
        "probe": probe,
    }


def writability_denied(
    path: str,
    *,
    errno: int | None,
    error: str,
    permission_denied: bool,
    create_parent: bool = True,
    probe: str = "write_rename_delete",
) -> dict[str, Any]:
    """The probe's failure record; ``permission_denied`` is EACCES/EPERM/EROFS, not any OSError."""
    return {
        **writability_ok(path, create_parent=create_parent, probe=probe),
        "ok": False,
        "error_kind": "registry_write_denied"
        if permission_denied
        else "registry_write_probe_failed",
        "errno": errno,
        "error": error,
        "requires_host_permission": permission_denied,
        "recommended_action": (
            "grant write access to the runtime root, or choose another with --runtime-root"
        ),
    }


def denied_payload(success: Mapping[str, Any], writability: Mapping[str, Any]) -> dict[str, Any]:
    """Turn a planned sync into the §7.5 denied form: returned, not raised, and ``ok: false``."""
    payload = dict(success)
    payload.update(
        {
            "ok": False,
            "synced_goal_ids": [],
            "attempted_goal_ids": list(success.get("synced_goal_ids") or []),
            "wrote": False,
            "write_denied": True,
            "error_kind": "global_registry_write_denied",
            "errno": writability.get("errno"),
            "error": writability.get("error") or "global registry is not writable",
            "project_registry_usable": True,
            "fallback_registry": success.get("registry"),
            "requires_global_registry_repair": True,
            "requires_host_permission": bool(writability.get("requires_host_permission")),
            "global_registry_writability": dict(writability),
            "recommended_action": (
                "fix write access to the global registry and rerun `benchledger sync-global`; "
                "the project registry and run history are unaffected"
            ),
        }
    )
    return payload


# --- helpers -----------------------------------------------------------------------------------


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _same_path(left: Any, right: Any) -> bool:
    if not left or not right:
        return False
    return os.path.normpath(str(left)) == os.path.normpath(str(right))
