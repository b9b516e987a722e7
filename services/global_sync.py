"""``sync-global``: decide the sync in one transaction, append it, render the global registry."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchledger.ledger.core.clock import utc_now_seconds
from benchledger.ledger.core.registry import (
    build_command_context,
    require_registry_file,
    validate_goal_id,
)
from benchledger.ledger.handlers.global_sync import plan_global_sync
from benchledger.ledger.requests.global_sync import GlobalSyncRequest
from benchledger.projections.publishing.goal_files import render_global_registry
from benchledger.projections.publishing.render import record_exports
from benchledger.projections.read_models.queries import StoreReads
from benchledger.services.files_seen import global_registry_file
from benchledger.services.store_session import open_store


def run_global_sync(
    request: GlobalSyncRequest,
    *,
    db: str | None,
    registry: str | None,
    runtime_root: str | None,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    """Append the ``global_synced`` event (with --execute) and render the files it changed."""
    context = build_command_context(
        registry_flag=registry, runtime_root_flag=runtime_root, cwd=Path.cwd(), env=os.environ
    )
    require_registry_file(context)
    goal = validate_goal_id(request.goal_id) if request.goal_id is not None else None
    with open_store(db) as opened:
        with opened.store.transaction(metadata) as uow:
            plan = plan_global_sync(
                StoreReads(uow.conn),
                context,
                goal,
                replace_state=request.replace_state,
                execute=request.execute,
                now=utc_now_seconds(),
                current_file=lambda: global_registry_file(context),
            )
            if request.execute and plan.event is not None:
                uow.append([plan.event])
        if request.execute and plan.event is not None:
            with opened.store.database.connect() as conn:
                exports = render_global_registry(
                    conn, context.runtime_root, plan.backup, forced=_replaced_routes(plan.payload)
                )
                record_exports(opened, exports)
    return plan.payload


def _replaced_routes(payload: dict[str, Any]) -> list[str]:
    """Goals whose route this sync took over on purpose (``--replace-state``): the write puts
    them in place even though the file names another source registry for them."""
    suffix = ":replaced-route"
    return [a[: -len(suffix)] for a in payload.get("actions") or [] if a.endswith(suffix)]
