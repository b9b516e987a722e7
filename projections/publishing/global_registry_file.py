"""Writing ``RT/registry.global.json``, the one file every project's store shares.

Each project has its own store, and a store only knows the goals it synced itself: its
``global_synced`` events. So no store can render the whole file from its events, and a store
that wrote its own last copy of the document back (what it did before) erased every goal
another project had synced since (issue 36). A store owns only its own entries, and every write
is a merge into the file as it is now (docs/formats/history_registry_rollout.md §7.2 step 9):

1. take the exclusive lock (``projections.publishing.registry_lock``);
2. re-read the file under the lock;
3. replace or add this store's own entries (the newest synced copy of each goal it synced into
   this runtime root, and the ProjectRecords they reference); every other goal, ProjectRecord
   and key is left as it is (parsed and written back unchanged: the same bytes for a file in
   the format benchledger and loopx write);
4. write the result (two-space JSON; what this store adds has its keys sorted, as before),
   only if it changed, to a ``tempfile.mkstemp`` file in the same directory,
   fsync it, ``os.replace`` it over the registry and fsync the directory.

A process killed at any point leaves the old file or the new one, never a torn one, and at
worst a temp file that the next writer removes under the lock. A goal whose route another
project has since taken over (``sync-global --replace-state`` from another source registry) is
theirs now: a repair leaves it alone.

What ``export_written`` records for this file is therefore not the digest of the whole file but
of this store's own entries as they are in it (``own_digest``): another project adding its goals
changes the file but not what this store published, so ``verify --files`` must not call it
``changed``; an edit to, or the loss of, one of this store's own entries must be.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.input_files import REGISTRY_LIMIT, read_regular_file
from benchledger.ledger.store.connection import placeholders
from benchledger.ledger.store.events import GLOBAL_SYNCED
from benchledger.ledger.store.faults import reach
from benchledger.projections.publishing.registry_lock import registry_lock

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection

GLOBAL_REGISTRY_FILE = "registry.global.json"
GLOBAL_REGISTRY_KIND = "global_registry"
_HEADER_KEYS = ("schema_version", "updated_at", "common_runtime_root", "registry_role")


@dataclass
class OwnEntries:
    """This store's own part of one runtime root's global registry.

    ``goals``: the newest synced copy of each goal, in the order of their last syncs;
    ``projects``: the ProjectRecords those copies reference; ``header``: the top-level keys of
    the newest synced document, used when the file has to be written from nothing;
    ``last_synced``: the goals of the newest sync, in its order (they move last, §7.2 step 6);
    ``position``: that sync's event.
    """

    goals: dict[str, dict[str, Any]] = field(default_factory=dict)
    projects: dict[str, dict[str, Any]] = field(default_factory=dict)
    header: dict[str, Any] = field(default_factory=dict)
    last_synced: list[str] = field(default_factory=list)
    position: int = 0


def sync_pending(conn: Connection, runtime_root: Path | str, own: OwnEntries) -> bool:
    """Whether this store's newest sync into ``runtime_root`` was never published: no export
    of the registry recorded after it (the sync just committed, or its write was killed)."""
    path = str(Path(runtime_root) / GLOBAL_REGISTRY_FILE)
    published = conn.execute("SELECT position FROM rm_exports WHERE path = ?", (path,)).scalar()
    return published is None or int(published) < own.position


def synced_runtime_roots(conn: Connection) -> list[str]:
    """Every runtime root this store has synced goals into."""
    roots: list[str] = []
    for _position, _goal_ids, root in _sync_index(conn):
        if root and root not in roots:
            roots.append(root)
    return roots


def own_entries(conn: Connection, runtime_root: Path | str) -> OwnEntries | None:
    """This store's entries for ``runtime_root`` from its ``global_synced`` events (None: it
    never synced there).

    Every ``benchmark run`` appends one such event carrying the whole document it merged, so
    only the events that hold the newest copy of some goal (and the newest one, for the
    header) are read in full; the rest are looked at through the database's JSON functions.
    """
    root = str(runtime_root)
    index = [(position, ids) for position, ids, r in _sync_index(conn) if r == root]
    if not index:
        return None
    newest: dict[str, tuple[int, int]] = {}  # goal -> (position, place in that sync)
    for position, ids in index:
        for place, goal_id in enumerate(ids):
            newest.pop(goal_id, None)
            newest[goal_id] = (position, place)
    last_position = index[-1][0]
    payloads = _payloads(conn, {p for p, _ in newest.values()} | {last_position})
    own = OwnEntries(position=last_position)
    for goal_id, (position, _place) in sorted(newest.items(), key=lambda item: item[1]):
        document = payloads[position].get("document") or {}
        goal = next((g for g in _dicts(document.get("goals")) if _id(g) == goal_id), None)
        if goal is None:
            continue
        own.goals[goal_id] = _sorted(goal)
        project_id = _pid(goal)
        project = next(
            (p for p in _dicts(document.get("projects")) if project_id and _pid(p) == project_id),
            None,
        )
        if project is not None:
            own.projects[project_id] = _sorted(project)
    last = payloads[last_position].get("document") or {}
    own.header = _sorted({k: last[k] for k in _HEADER_KEYS if k in last})
    own.last_synced = [g for g in dict.fromkeys(index[-1][1]) if g in own.goals]
    return own


def _sync_index(conn: Connection) -> list[tuple[int, list[str], str | None]]:
    """(position, synced goal ids, runtime root) of every ``global_synced`` event, in order."""
    if conn.dialect == "postgresql":
        query = (
            "SELECT position, (payload::jsonb -> 'goal_ids')::text,"
            " payload::jsonb -> 'document' ->> 'common_runtime_root'"
            " FROM events WHERE event_type = ? ORDER BY position"
        )
    else:
        query = (
            "SELECT position, json_extract(payload, '$.goal_ids'),"
            " json_extract(payload, '$.document.common_runtime_root')"
            " FROM events WHERE event_type = ? ORDER BY position"
        )
    index = []
    for position, ids_text, root in conn.execute(query, (GLOBAL_SYNCED,)):
        ids = orjson.loads(ids_text) if ids_text else []
        goal_ids = [str(i).strip() for i in ids if str(i).strip()] if isinstance(ids, list) else []
        index.append((int(position), goal_ids, root if isinstance(root, str) else None))
    return index


def _payloads(conn: Connection, positions: set[int]) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    wanted = sorted(positions)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = placeholders(len(chunk))
        query = f"SELECT position, payload FROM events WHERE position IN ({marks})"
        for position, text in conn.execute(query, chunk):
            payload = orjson.loads(text)
            found[int(position)] = payload if isinstance(payload, dict) else {}
    return found


# --- the merge ---------------------------------------------------------------------------------


def merge_own(
    current: Mapping[str, Any] | None,
    own: OwnEntries,
    *,
    pending: bool = False,
    forced: Iterable[str] = (),
) -> dict[str, Any]:
    """``current`` with this store's entries merged in; everything else kept as it is.

    Own goals are replaced where they are, or added last when missing. ``pending``: the newest
    sync is being published, so its goals move last and its header keys (``updated_at`` …) are
    taken, as the sync's own merge decided (§7.2 steps 6-7); a repair leaves the order alone.
    ``forced``: goals whose route this sync replaced on purpose (``--replace-state``); any other
    goal that another source registry holds in the file is left to it.
    """
    document = copy.deepcopy(dict(current)) if current else dict(own.header)
    goals = list(document["goals"]) if _is_list(document.get("goals")) else []
    forced_ids = set(forced)
    by_id = {_id(g): g for g in _dicts(goals) if _id(g)}
    moving = [
        g
        for g in (own.last_synced if pending else [])
        if g in forced_ids or _ours(by_id.get(g), own.goals[g])
    ]
    moved = set(moving)
    goals = [g for g in goals if not (isinstance(g, dict) and _id(g) in moved)]
    index = {_id(g): i for i, g in enumerate(goals) if isinstance(g, dict) and _id(g)}
    for goal_id, goal in own.goals.items():
        if goal_id in moved:
            continue
        at = index.get(goal_id)
        if at is None:
            index[goal_id] = len(goals)
            goals.append(goal)
        elif goal_id in forced_ids or _ours(goals[at], goal):
            goals[at] = goal
    goals += [own.goals[g] for g in moving]
    projects = _merge_projects(document.get("projects"), own, moving)
    if projects:
        document["projects"] = projects
    if moving or current is None:
        document.update(own.header)
    document["goals"] = goals
    return document if current else _sorted(document)


def _merge_projects(existing: Any, own: OwnEntries, moving: list[str]) -> list[Any]:
    """Own ProjectRecords replace theirs in place; those of the goals just synced move last
    (in id order, as the sync's merge puts them)."""
    projects = list(existing) if _is_list(existing) else []
    last = sorted({_pid(own.goals[g]) for g in moving} & set(own.projects))
    projects = [p for p in projects if not (isinstance(p, dict) and _pid(p) in last)]
    index = {_pid(p): i for i, p in enumerate(projects) if isinstance(p, dict) and _pid(p)}
    for project_id, project in own.projects.items():
        if project_id in last:
            continue
        if project_id in index:
            projects[index[project_id]] = project
        else:
            index[project_id] = len(projects)
            projects.append(project)
    return projects + [own.projects[p] for p in last]


def _ours(in_file: Any, own: Mapping[str, Any]) -> bool:
    """An entry in the file is still this store's to write unless another source registry has
    taken its route over."""
    if not isinstance(in_file, dict):
        return True
    theirs, mine = in_file.get("source_registry"), own.get("source_registry")
    if not theirs or not mine:
        return True
    return os.path.normpath(str(theirs)) == os.path.normpath(str(mine))


# --- what verify --files compares -------------------------------------------------------------


def own_digest(document: Mapping[str, Any] | None, own: OwnEntries) -> str:
    """sha256 of this store's own entries as ``document`` holds them (a missing entry counts as
    ``null``; a goal another source registry took over does not count)."""
    goals: dict[str, Any] = {}
    projects: dict[str, Any] = {}
    if isinstance(document, Mapping):
        goals = {_id(g): g for g in _dicts(document.get("goals")) if _id(g)}
        projects = {_pid(p): p for p in _dicts(document.get("projects")) if _pid(p)}
    mine = {
        goal_id: goals.get(goal_id)
        for goal_id in sorted(own.goals)
        if _ours(goals.get(goal_id), own.goals[goal_id])
    }
    referenced = sorted({_pid(g) for g in mine.values() if isinstance(g, dict)} & set(own.projects))
    canonical = {"goals": mine, "projects": {p: projects.get(p) for p in referenced}}
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def registry_file_digest(path: Path, recorded: str, own: OwnEntries | None) -> str | None:
    """What ``verify --files`` compares with the ``recorded`` digest: ``recorded`` itself when
    this store's entries in the file are the ones it published, else another digest; None when
    there is no regular file. The whole file's sha256 also matches, for a store that recorded
    that (before the registry was merged) while the file is byte for byte what it wrote."""
    try:
        raw = read_regular_file(path, shown=path.name, limit=REGISTRY_LIMIT)
    except (OSError, InputError):
        return None
    whole = hashlib.sha256(raw).hexdigest()
    if whole == recorded or own is None:
        return whole
    document = _parse(raw)
    return own_digest(document, own) if document is not None else whole


# --- the write ---------------------------------------------------------------------------------


def write_global_registry(
    runtime_root: Path,
    own: OwnEntries,
    *,
    operation: str,
    pending: bool = False,
    forced: Iterable[str] = (),
) -> dict[str, str]:
    """Lock, re-read, merge this store's entries, write atomically if changed; the export."""
    path = runtime_root / GLOBAL_REGISTRY_FILE
    with registry_lock(path, operation):
        _remove_leftover_temps(path)
        raw = _read_current(path)
        current = _parse(raw) if raw is not None else None
        if raw is not None and current is None:
            _set_aside(path)  # not JSON (a hand edit): kept beside, never silently lost
        document = merge_own(current, own, pending=pending, forced=forced)
        data = registry_bytes(document)
        if data != raw:
            _replace(path, data)
    return {"path": str(path), "kind": GLOBAL_REGISTRY_KIND, "sha256": own_digest(document, own)}


def registry_bytes(document: Mapping[str, Any]) -> bytes:
    """The file's format: two-space JSON, non-ASCII kept, one trailing newline (as loopx)."""
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


def _read_current(path: Path) -> bytes | None:
    try:
        return read_regular_file(path, shown=f"global registry {path.name}", limit=REGISTRY_LIMIT)
    except FileNotFoundError:
        return None


def _parse(raw: bytes) -> dict[str, Any] | None:
    """The document, or None when it is not a JSON object (stdlib ``json``: it keeps integers
    of any size and every float as written back by ``json.dumps``)."""
    try:
        document = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def _set_aside(path: Path) -> None:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    os.replace(path, path.with_name(f"{path.name}.unreadable-{stamp}.bak"))


def _replace(path: Path, data: bytes) -> None:
    """mkstemp beside the target (its name ends ``.<pid>.tmp``, like every temp file a render
    leaves), fsync, rename over the target, fsync the directory so the rename survives too."""
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=f".{os.getpid()}.tmp", dir=path.parent
    )
    try:
        try:
            os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp's 0600 would hide a shared file
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        reach("mid_global_registry_write")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _remove_leftover_temps(path: Path) -> None:
    """Under the lock no other writer is half-way: a temp file of this registry is a leftover
    of a writer that was killed, whatever its pid says."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(?:[A-Za-z0-9_]+\.)?\d+\.tmp$")
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        if pattern.match(name):
            try:
                os.unlink(path.parent / name)
            except OSError:
                pass


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _read_umask() -> int:
    """Once, at import, while nothing else runs: ``os.umask`` can only be read by setting it."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


# --- helpers -----------------------------------------------------------------------------------


def _sorted(value: dict[str, Any]) -> dict[str, Any]:
    """Keys sorted at every level, as the store's read model holds a document: what this store
    writes from nothing is what it always wrote (entries already in the file keep their order)."""
    result: dict[str, Any] = orjson.loads(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    return result


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if _is_list(value) else []


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _id(goal: Mapping[str, Any]) -> str:
    return str(goal.get("id") or "").strip()


def _pid(entry: Mapping[str, Any]) -> str:
    return str(entry.get("project_id") or "").strip()
