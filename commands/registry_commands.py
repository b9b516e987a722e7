"""``benchledger sync-global``: sync project goals into the runtime root's global registry."""

from __future__ import annotations

import click

from benchledger.commands.ledger_views import render_sync
from benchledger.commands.output import emit, format_option, resolve_format
from benchledger.commands.runtime import command_metadata
from benchledger.ledger.requests.global_sync import GlobalSyncRequest
from benchledger.services.global_sync import run_global_sync


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
    fmt = resolve_format(ctx, output_format)
    request = GlobalSyncRequest.parse(
        goal_id=goal_id, replace_state=replace_state, dry_run=dry_run, execute=execute
    )
    root = ctx.find_root().obj
    payload = run_global_sync(
        request,
        db=root.get("db"),
        registry=root.get("registry"),
        runtime_root=root.get("runtime_root"),
        metadata=command_metadata(),
    )
    emit(payload, fmt, "Global Registry Sync", render_sync)
    if not payload.get("ok", True):
        ctx.exit(1)
