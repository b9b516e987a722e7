"""After-commit rendering: every file a command's events changed, then an ``export_written``
event with the digest of each file, so ``verify --files`` can tell whether a published file
still matches the store.

Renders run while holding the store's write lock (the same lock appends take), so two commands
that finish at the same time cannot leave an older snapshot on disk after a newer one: whoever
renders last has read the newest committed state.

The export event is also the store's record that its files were rendered at all: it is
appended whenever files changed, and also when events were committed after the last export
(a render that failed or was killed), so ``verify --files`` can tell a store whose last
command was never rendered. A render that cannot write raises ``RenderError``: the events
stay committed, and the message says so and names the command that repairs the files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import BenchledgerError
from benchledger.ledger.rules.history.goal_runs import goal_dir_rel, index_path_rel
from benchledger.ledger.store.chain import CanonicalJson
from benchledger.ledger.store.connection import placeholders
from benchledger.ledger.store.events import EXPORT_WRITTEN, NewEvent
from benchledger.ledger.store.faults import reach
from benchledger.projections.publishing.files import start_sweeping, verify_exports
from benchledger.projections.publishing.global_registry_file import synced_runtime_roots
from benchledger.projections.publishing.goal_files import (
    render_global_registry,
    render_goal_files,
    render_rollout_log,
)
from benchledger.projections.publishing.ledger_files import render_ledger_files
from benchledger.projections.publishing.registry_lock import RegistryLockError


class RenderError(BenchledgerError):
    """Files could not be written after the events committed (they stay committed)."""

    code = "render_failed"


def _export_event(exports: list[dict[str, str]]) -> NewEvent:
    return NewEvent("exports", EXPORT_WRITTEN, {"files": exports})


def record_exports(opened: Any, exports: list[dict[str, str]]) -> None:
    if not exports:
        return
    with opened.store.database.connect() as conn:
        unchanged = _already_published(conn, exports)
    if not unchanged:
        reach("before_export_event")
        opened.store.append([_export_event(exports)], metadata={"reason": "render"})


def _already_published(conn: Any, exports: list[dict[str, str]]) -> bool:
    """Every file byte-identical to its last recorded export and nothing committed since the
    last export: re-rendering after a rerun of a command that had already completed then
    appends nothing, as idempotency promises."""
    paths = [f["path"] for f in exports]
    query = f"SELECT path, sha256 FROM rm_exports WHERE path IN ({placeholders(len(paths))})"
    recorded = {path: sha for path, sha in conn.execute(query, paths)}
    if not all(recorded.get(f["path"]) == f["sha256"] for f in exports):
        return False
    last = conn.execute("SELECT event_type FROM events ORDER BY position DESC LIMIT 1").scalar()
    return last in (None, EXPORT_WRITTEN)


@contextmanager
def render_lock(opened: Any) -> Iterator[Any]:
    """The store's write lock around read + write + export event; a file that cannot be
    written becomes one sentence that says the events are safe and how to finish."""
    start_sweeping()
    try:
        with opened.store.transaction({"reason": "render"}) as uow:
            yield uow
    except RegistryLockError as exc:  # the events are committed all the same
        raise RenderError(f"events committed, but {exc.message}") from None
    except OSError as exc:
        where = f" ({Path(exc.filename).name})" if getattr(exc, "filename", None) else ""
        raise RenderError(
            "events committed, but rendering the files failed: "
            f"{exc.strerror or type(exc).__name__}{where}; free space or fix permissions, "
            "then run `benchledger render` to write them"
        ) from None


def finish_exports(uow: Any, exports: list[dict[str, str]]) -> None:
    if exports and not _already_published(uow.conn, exports):
        reach("before_export_event")
        uow.append([_export_event(exports)])


def render_ledger(opened: Any, target: Any) -> list[dict[str, str]]:
    with render_lock(opened) as uow:
        exports = render_ledger_files(
            uow.conn, target.ledger_id, target.json_path, target.markdown_path
        )
        finish_exports(uow, exports)
    return exports


def render_for_goal(
    opened: Any,
    runtime_root: Path,
    goal_id: str,
    *,
    stems: list[str] | None,
    ledger_target: Any | None,
    global_registry: bool,
    backup: dict[str, Any] | None,
    appended: Mapping[str, CanonicalJson] | None = None,
) -> list[dict[str, str]]:
    """``appended``: the run records the command just appended, by stem (``render_goal_files``)."""
    exports: list[dict[str, str]] = []
    with render_lock(opened) as uow:
        conn = uow.conn
        exports += render_goal_files(conn, goal_id, runtime_root, stems, appended)
        exports += render_rollout_log(conn, goal_id, runtime_root)
        if global_registry:
            exports += render_global_registry(conn, runtime_root, backup)
        if ledger_target is not None:
            exports += render_ledger_files(
                conn, ledger_target.ledger_id, ledger_target.json_path, ledger_target.markdown_path
            )
        finish_exports(uow, exports)
    return exports


def render_stale_goal_files(opened: Any) -> list[dict[str, str]]:
    """Re-render every goal's published files when the store has events no render followed
    (``verify --files`` says ``stale``): ``benchledger render`` then repairs what a failed or
    killed render left behind, not only the ledgers. Otherwise re-render each goal one of
    whose published files no longer has its recorded bytes: run records, the index and the
    rollout log are not fsynced (``projections.publishing.goal_files``), so a power loss can take
    one
    back. The runtime root of each goal is where its run index was last published."""

    with opened.store.database.connect() as conn:
        last = conn.execute("SELECT event_type FROM events ORDER BY position DESC LIMIT 1")
        last_type = last.scalar()
        if last_type is None:
            return []
        goals = [g for (g,) in conn.execute("SELECT DISTINCT goal_id FROM rm_goal_runs")]
        indexes = [p for (p,) in conn.execute(
            "SELECT path FROM rm_exports WHERE kind = ?", ("run_index",)
        )]  # fmt: skip
    damaged = None if last_type != EXPORT_WRITTEN else _damaged_goal_files(opened)
    exports: list[dict[str, str]] = []
    for goal_id in goals:
        rel = index_path_rel(goal_id)
        for index in indexes:
            if not index.endswith("/" + rel):
                continue
            root = index[: -len(rel) - 1]
            goal_dir = f"{root}/{goal_dir_rel(goal_id)}/"
            if damaged is not None and not any(p.startswith(goal_dir) for p in damaged):
                continue
            exports += render_for_goal(
                opened,
                Path(root),
                goal_id,
                stems=None,
                ledger_target=None,
                global_registry=False,
                backup=None,
            )
    return exports


def render_global_registries(opened: Any) -> list[dict[str, str]]:
    """``render`` repairs this store's entries in the global registry of every runtime root it
    synced into, like any other published file: an entry edited away or a deleted file is
    written again; what other projects synced there is kept (and nothing is written when the
    entries are already there)."""
    with opened.store.database.connect() as conn:
        if not synced_runtime_roots(conn):
            return []  # never synced: no write lock taken for nothing
    exports: list[dict[str, str]] = []
    with render_lock(opened) as uow:
        for root in synced_runtime_roots(uow.conn):
            exports += render_global_registry(uow.conn, Path(root))
        finish_exports(uow, exports)
    return exports


_GOAL_FILE_KINDS = frozenset({"run_record_json", "run_record_markdown", "run_index", "rollout_log"})


def _damaged_goal_files(opened: Any) -> list[str]:
    """The published goal files whose bytes on disk are not the recorded ones (or are gone)."""
    return [
        f["path"]
        for f in verify_exports(opened.store).files
        if f["kind"] in _GOAL_FILE_KINDS and f["status"] in ("changed", "missing")
    ]
