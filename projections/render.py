"""After-commit rendering: every file a command's events changed, then an ``export_written``
event with the digest of each file, so ``verify --files`` can tell whether a published file
still matches the store.

Renders run while holding the store's write lock (the same lock appends take), so two commands
that finish at the same time cannot leave an older snapshot on disk after a newer one: whoever
renders last has read the newest committed state.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ledger.events import EXPORT_WRITTEN, NewEvent
from ledger.faults import reach
from projections.goal_files import render_global_registry, render_goal_files, render_rollout_log
from projections.ledger_files import render_ledger_files


def _export_event(exports: list[dict[str, str]]) -> NewEvent:
    return NewEvent("exports", EXPORT_WRITTEN, {"files": exports})


def render_metadata(opened: Any) -> dict[str, Any]:
    """The command's own metadata and correlation id, so its files trace back to it."""
    return {**opened.metadata, "reason": "render"}


def record_exports(opened: Any, exports: list[dict[str, str]]) -> None:
    if not exports:
        return
    with opened.store.database.connect() as conn:
        unchanged = _already_published(conn, exports)
    if not unchanged:
        reach("before_export_event")
        opened.store.append([_export_event(exports)], metadata=render_metadata(opened))


def _already_published(conn: Any, exports: list[dict[str, str]]) -> bool:
    """Every file byte-identical to its last recorded export: re-rendering after a rerun of a
    command that had already completed then appends nothing, as idempotency promises."""
    from ledger.connection import placeholders

    paths = [f["path"] for f in exports]
    query = f"SELECT path, sha256 FROM rm_exports WHERE path IN ({placeholders(len(paths))})"
    recorded = {path: sha for path, sha in conn.execute(query, paths)}
    return all(recorded.get(f["path"]) == f["sha256"] for f in exports)


@contextmanager
def render_lock(opened: Any) -> Iterator[Any]:
    """The store's write lock around read + write + export event."""
    with opened.store.transaction(render_metadata(opened)) as uow:
        yield uow


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
) -> list[dict[str, str]]:
    exports: list[dict[str, str]] = []
    with render_lock(opened) as uow:
        conn = uow.conn
        exports += render_goal_files(conn, goal_id, runtime_root, stems)
        exports += render_rollout_log(conn, goal_id, runtime_root)
        if global_registry:
            exports += render_global_registry(conn, runtime_root, backup)
        if ledger_target is not None:
            exports += render_ledger_files(
                conn, ledger_target.ledger_id, ledger_target.json_path, ledger_target.markdown_path
            )
        finish_exports(uow, exports)
    return exports
