"""``benchledger snapshot create|list|verify``: read-model snapshots that speed up ``--as-of``."""

from __future__ import annotations

import click

from benchledger.commands.output import emit, failed_check, format_option, resolve_format
from benchledger.commands.store_views import (
    render_snapshot_create,
    render_snapshot_list,
    render_snapshot_verify,
    snapshot_failure,
)
from benchledger.services.snapshots import create, listing, verify

_DIR_HELP = (
    "Snapshot directory (default: BENCHLEDGER_SNAPSHOT_DIR, else snapshots/ beside a SQLite "
    "store, else .benchledger/snapshots)."
)


def _dir_option(func):  # noqa: ANN001, ANN202
    return click.option("--dir", "directory", default=None, metavar="DIR", help=_DIR_HELP)(func)


def _db(ctx: click.Context) -> str | None:
    return ctx.find_root().obj.get("db")


@click.group("snapshot")
def snapshot_group() -> None:
    """Snapshots of the read models: --as-of then replays only the events after the nearest
    one. Disposable caches: the event table stays the truth, a snapshot is used only while the
    store's chain hash at its position matches, and deleting one loses nothing."""


@snapshot_group.command("create")
@click.option("--at", "at", default=None, metavar="POSITION|ISO-TIME",
              help="The moment to snapshot (default: the head).")  # fmt: skip
@_dir_option
@format_option
@click.pass_context
def snapshot_create(
    ctx: click.Context, at: str | None, directory: str | None, output_format: str | None
) -> None:
    """Store the read models as they stand at a position (the head by default)."""
    fmt = resolve_format(ctx, output_format)
    emit(create(_db(ctx), directory, at), fmt, "Snapshot", render_snapshot_create)


@snapshot_group.command("list")
@_dir_option
@format_option
@click.pass_context
def snapshot_list(ctx: click.Context, directory: str | None, output_format: str | None) -> None:
    """Snapshots in the directory, and whether each matches this store."""
    fmt = resolve_format(ctx, output_format)
    emit(listing(_db(ctx), directory), fmt, "Snapshots", markdown=render_snapshot_list)


@snapshot_group.command("verify")
@_dir_option
@format_option
@click.pass_context
def snapshot_verify(ctx: click.Context, directory: str | None, output_format: str | None) -> None:
    """Replay from position 1 to each snapshot's position and compare every read-model row
    with the snapshot; exit 1 when one differs or no longer matches the store."""
    fmt = resolve_format(ctx, output_format)
    result = verify(_db(ctx), directory)
    emit(result, fmt, "Snapshot Verify", render_snapshot_verify)
    if not result["ok"]:
        failed_check(snapshot_failure(result))
        ctx.exit(1)
