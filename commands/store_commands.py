"""Event-store commands: events list/show/verify, verify, rebuild, sql, db upgrade/current."""

from __future__ import annotations

from functools import partial
from typing import Any

import click

from benchledger.commands.as_of import as_of_option, replay_progress
from benchledger.commands.output import emit, failed_check, format_option, resolve_format
from benchledger.commands.store_views import (
    rebuild_failure,
    render_db,
    render_event,
    render_rebuild,
    render_verify,
    row_count,
    verify_failure,
)
from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.readable import plural, table
from benchledger.ledger.store.sql_query import check_timeout
from benchledger.services.store_admin import db_current as current
from benchledger.services.store_admin import db_upgrade as upgrade
from benchledger.services.store_admin import list_events, run_sql, show_event, verify_store
from benchledger.services.store_admin import rebuild as rebuild_store


def _db(ctx: click.Context) -> str | None:
    return ctx.find_root().obj.get("db")


@click.group("events")
def events_group() -> None:
    """Read the event table (the audit log)."""


@events_group.command("list")
@click.option(
    "--from", "from_position", type=int, default=1, show_default=True, help="First position."
)
@click.option("--to", "to_position", type=int, default=None, help="Last position.")
@click.option("--stream", default=None, help="Only this stream (e.g. goal/<goal_id>).")
@click.option("--type", "event_types", multiple=True, help="Only these event types.")
@click.option("--limit", type=int, default=100, show_default=True, help="Most events listed.")
@click.option("--payload/--no-payload", default=False, help="Include payloads in JSON output.")
@as_of_option
@format_option
@click.pass_context
def events_list(
    ctx: click.Context,
    from_position: int,
    to_position: int | None,
    stream: str | None,
    event_types: tuple[str, ...],
    limit: int,
    payload: bool,
    as_of: str | None,
    output_format: str | None,
) -> None:
    """List events in position order (with --as-of, only those up to that moment)."""
    fmt = resolve_format(ctx, output_format)
    result = list_events(
        _db(ctx),
        from_position=from_position,
        to_position=to_position,
        stream=stream,
        event_types=event_types,
        limit=limit,
        payload=payload,
        as_of=as_of,
    )
    emit(result, fmt, "Events", markdown=_events_markdown)


def _events_markdown(result: dict[str, Any]) -> str:
    lines = ["# Events", "", *_as_of_line(result), f"- shown: {plural(result['count'], 'event')}"]
    lines += [f"- note: {result['note']}", ""] if result.get("truncated") else [""]
    if result["events"]:
        keys = ("position", "recorded_at", "stream", "stream_version", "event_type")
        rows = [[e[key] for key in keys] for e in result["events"]]
        lines += table(("position", "recorded at", "stream", "version", "type"), rows)
    return "\n".join(lines)


@events_group.command("show")
@click.argument("key")
@format_option
@click.pass_context
def events_show(ctx: click.Context, key: str, output_format: str | None) -> None:
    """Show one event by position or event id."""
    fmt = resolve_format(ctx, output_format)
    emit(show_event(_db(ctx), key), fmt, "Event", markdown=render_event)


def _verify(
    ctx: click.Context,
    files: bool,
    expect_head: str | None,
    output_format: str | None,
    schemas: bool = False,
) -> None:
    fmt = resolve_format(ctx, output_format)
    result = verify_store(_db(ctx), files=files, expect_head=expect_head, schemas=schemas)
    report = result["verify"]
    emit({"ok": report["ok"], "verify": report}, fmt, "Verify", markdown=render_verify)
    failure = verify_failure(report)
    if failure is not None:
        failed_check(failure)
        ctx.exit(1)


_EXPECT_HEAD = click.option(
    "--expect-head",
    metavar="POS:HASH",
    default=None,
    help="Also fail unless the chain has this hash at this position (a head kept elsewhere).",
)


@events_group.command("verify")
@click.option("--files", is_flag=True, help="Also check published files against the store.")
@_EXPECT_HEAD
@format_option
@click.pass_context
def events_verify(
    ctx: click.Context, files: bool, expect_head: str | None, output_format: str | None
) -> None:
    """Re-walk the hash chain; exit 1 and name the first bad position if it breaks."""
    _verify(ctx, files, expect_head, output_format)


@click.command("verify")
@click.option(
    "--files",
    is_flag=True,
    help="Also check that published ledger/run files still match the store.",
)
@click.option(
    "--schemas",
    is_flag=True,
    help="Also check every stored payload against its contract (benchledger schema).",
)
@_EXPECT_HEAD
@format_option
@click.pass_context
def verify(
    ctx: click.Context,
    files: bool,
    schemas: bool,
    expect_head: str | None,
    output_format: str | None,
) -> None:
    """Verify the event chain (with --files the published files, with --schemas the payloads)."""
    _verify(ctx, files, expect_head, output_format, schemas=schemas)


@click.command("rebuild")
@click.option(
    "--projection",
    "projection_names",
    multiple=True,
    help="Only this projection (repeatable). Default: all.",
)
@click.option(
    "--verify",
    "verify_only",
    is_flag=True,
    help="Replay into a scratch database and report rows that differ; change nothing.",
)
@format_option
@click.pass_context
def rebuild(
    ctx: click.Context,
    projection_names: tuple[str, ...],
    verify_only: bool,
    output_format: str | None,
) -> None:
    """Drop the read models and replay every event from position 1."""
    fmt = resolve_format(ctx, output_format)
    result = rebuild_store(_db(ctx), projection_names, verify_only=verify_only)
    emit(result, fmt, "Rebuild", markdown=render_rebuild)
    if not result["ok"]:
        failed_check(rebuild_failure(result))
        ctx.exit(1)


def _finite_timeout(_ctx: click.Context, _param: click.Parameter, value: float) -> float:
    """``nan`` passes a range check (every comparison with it is false): test finiteness."""
    try:
        return check_timeout(value)
    except InputError as err:
        raise click.BadParameter(err.message) from None


@click.command("sql")
@click.argument("statement")
@click.option(
    "--limit", type=click.IntRange(min=0), default=1000, show_default=True, help="Row cap."
)
@click.option(
    "--timeout",
    type=float,
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    callback=_finite_timeout,
    help="Stop the query after this long (at most a day).",
)
@as_of_option
@format_option
@click.pass_context
def sql(
    ctx: click.Context,
    statement: str,
    limit: int,
    timeout: float,
    as_of: str | None,
    output_format: str | None,
) -> None:
    """Run one read-only query (views: events_v, ledger_runs_v, goal_runs_v, rollout_events_v).

    With --as-of the query runs on a scratch SQLite database (SQLite's dialect, whatever the
    store) holding the read models and the events up to that moment.
    """
    fmt = resolve_format(ctx, output_format)
    with replay_progress() as progress:
        result = run_sql(
            _db(ctx), statement, limit=limit, timeout=timeout, as_of=as_of, progress=progress
        )
    emit(result, fmt, "SQL", markdown=_sql_markdown)


def _as_of_line(result: dict[str, Any]) -> list[str]:
    moment = result.get("as_of")
    if not moment:
        return []
    return [f"- as of: position {moment['position']} ({moment['recorded_at']})"]


def _sql_markdown(result: dict[str, Any]) -> str:
    """The rows as a table; cells in words (NULL as ``none``, numbers rounded for reading:
    ``--format json`` keeps every digit)."""
    cols = result["columns"]
    head = _as_of_line(result)
    lines = [*head, *([""] if head else [])]
    lines += table([str(c) for c in cols], result["rows"])
    lines.append("")
    lines.append(row_count(result["row_count"], result["truncated"]))
    return "\n".join(lines)


@click.group("db")
def db_group() -> None:
    """Schema migrations."""


@db_group.command("upgrade")
@format_option
@click.pass_context
def db_upgrade(ctx: click.Context, output_format: str | None) -> None:
    """Upgrade the store's schema to this version's head."""
    fmt = resolve_format(ctx, output_format)
    emit(upgrade(_db(ctx)), fmt, "Database Upgrade", partial(render_db, "Database Upgrade"))


@db_group.command("current")
@format_option
@click.pass_context
def db_current(ctx: click.Context, output_format: str | None) -> None:
    """Show the store's schema revision and whether it is current."""
    fmt = resolve_format(ctx, output_format)
    emit(current(_db(ctx)), fmt, "Database Revision", partial(render_db, "Database Revision"))
