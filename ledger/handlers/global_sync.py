"""Deciding a global registry sync: the ``global_synced`` event and the payload
(docs/formats/history_registry_rollout.md §7).

Shared by ``sync-global`` and every ``benchmark run`` that does not say ``--no-global-sync``.
The current global document is the file itself, an input like the project registry: every
project synced into the runtime root shares it, so this store's read model (its own last copy)
misses whatever other projects synced since. The merge decided here is the sync's precondition
and its record; the write re-reads the file under its lock and merges this store's entries
again (``projections/publishing/global_registry_file.py``), so a project that synced in
between keeps its goals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from benchledger.ledger.core.registry import CommandContext
from benchledger.ledger.rules.history.global_registry import (
    sync_global,  # only when a sync runs (~2-3 ms)
)
from benchledger.ledger.rules.history.global_sync_skipped import skipped_disabled_payload
from benchledger.ledger.store.events import GLOBAL_SYNCED, NewEvent


class GlobalSyncReads(Protocol):
    def known_goal_ids(self) -> list[str]: ...


@dataclass  # not frozen: cheaper to build and create; nothing hashes or mutates it
class GlobalSyncPlan:
    """The sync's payload, its event (None when nothing is written) and any backup to render."""

    payload: dict[str, Any]
    event: NewEvent | None
    backup: dict[str, Any] | None


def skipped_sync(*, execute: bool) -> GlobalSyncPlan:
    """``--no-global-sync``: nothing decided, the payload says why."""
    return GlobalSyncPlan(skipped_disabled_payload(not execute), None, None)


def plan_global_sync(
    reads: GlobalSyncReads,
    context: CommandContext,
    goal_id: str | None,
    *,
    replace_state: bool,
    execute: bool,
    now: str,
    current_file: Callable[[], dict[str, Any] | None] = lambda: None,
) -> GlobalSyncPlan:
    """Merge the project's goals into the global registry file as it is now
    (``current_file``: None when there is none).

    With no project registry file the goals known to the store are the source, so a fresh
    directory works without a hand-written registry (docs/formats/history_registry_rollout.md §7.1).
    """
    known = set(reads.known_goal_ids()) | ({goal_id} if goal_id else set())
    source = (
        context.registry
        if context.registry_exists
        else {"schema_version": "0.1", "goals": [{"id": g} for g in sorted(known)]}
    )

    global_path = context.global_registry_path
    current = current_file()
    result = sync_global(
        current,
        source,
        goal_id=goal_id,
        replace_state=replace_state,
        now=now,
        source_registry=str(
            context.registry_path.resolve() if context.registry_path else global_path.parent
        ),
        runtime_root=str(context.runtime_root),
        registry_label=context.registry_label,
        dry_run=not execute,
        path_exists=lambda p: Path(p).exists(),
    )
    if result.document is None:
        return GlobalSyncPlan(result.payload, None, None)
    backup = (
        {"name": result.backup_name, "document": result.backup_document}
        if result.backup_name
        else None
    )
    synced = result.payload.get("synced_goal_ids") or ([goal_id] if goal_id else [])
    event = NewEvent(
        "registry/global",
        GLOBAL_SYNCED,
        {
            "registry_id": "global",
            "document": result.document,
            "goal_ids": list(synced),
            "actions": result.payload.get("actions"),
            "backup": backup,
        },
    )
    return GlobalSyncPlan(result.payload, event, backup)
