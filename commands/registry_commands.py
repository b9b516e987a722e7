"""``benchledger sync-global``: sync project goals into the runtime root's global registry."""

from __future__ import annotations

import os
from pathlib import Path

import click

from commands.output import emit, format_option, resolve_format


@click.command("sync-global")
@click.option("--goal-id", default=None, help="Only this goal (default: every goal).")
@click.option(
    "--replace-state",
    is_flag=True,
    help="Replace a colliding route, writing a backup of the global registry first.",
)
@click.option("--dry-run", is_flag=True, help="Show the merge, write nothing (the default).")
@click.option("--execute", is_flag=True, help="Append the sync and write the global registry.")
@format_option
@click.pass_context
def sync_global_command(
    ctx: click.Context,
    goal_id: str | None,
    replace_state: bool,
    dry_run: bool,
    execute: bool,
    output_format: str | None,
) -> None:
    """Merge sanitised goal entries into RT/registry.global.json (dry run unless --execute)."""
    from commands.pipeline import plan_global_sync
    from commands.runtime import command_metadata, open_store
    from ledger.clock import utc_now_seconds
    from ledger.errors import InputError
    from ledger.registry import build_command_context, require_registry_file, validate_goal_id
    from projections.goal_files import render_global_registry
    from projections.queries import StoreReads
    from projections.render import record_exports

    fmt = resolve_format(ctx, output_format)
    if dry_run and execute:
        raise InputError("sync-global accepts either --dry-run or --execute, not both")
    root = ctx.find_root().obj
    context = build_command_context(
        registry_flag=root.get("registry"),
        runtime_root_flag=root.get("runtime_root"),
        cwd=Path.cwd(),
        env=os.environ,
    )
    require_registry_file(context)
    goal = validate_goal_id(goal_id) if goal_id is not None else None
    opened = open_store(root.get("db"))
    try:
        with opened.store.transaction(command_metadata()) as uow:
            payload, event, backup = plan_global_sync(
                StoreReads(uow.conn),
                context,
                goal,
                replace_state=replace_state,
                execute=execute,
                now=utc_now_seconds(),
            )
            if execute and event is not None:
                uow.append([event])
        if execute and event is not None:
            with opened.store.database.connect() as conn:
                record_exports(opened, render_global_registry(conn, context.runtime_root, backup))
    finally:
        opened.close()
    emit(payload, fmt, "Global Registry Sync")
    if not payload.get("ok", True):
        ctx.exit(1)


COMMANDS = [sync_global_command]
