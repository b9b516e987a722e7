"""Event-store commands: events list/show/verify, verify, rebuild, sql, db upgrade/current."""

from __future__ import annotations

from typing import Any

import click

from commands.output import emit, format_option, resolve_format


def _open(ctx: click.Context, **kwargs: Any):  # noqa: ANN202
    from commands.runtime import open_store

    return open_store(ctx.find_root().obj.get("db"), **kwargs)


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
@click.option("--limit", type=int, default=100, show_default=True)
@click.option("--payload/--no-payload", default=False, help="Include payloads in JSON output.")
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
    output_format: str | None,
) -> None:
    """List events in position order."""
    fmt = resolve_format(ctx, output_format)
    opened = _open(ctx)
    try:
        events = list(
            opened.store.read(
                from_position=from_position,
                to_position=to_position,
                stream=stream,
                event_types=event_types or None,
                limit=limit,
            )
        )
    finally:
        opened.close()
    items = []
    for e in events:
        item = e.as_dict()
        if not payload:
            item.pop("payload")
            item.pop("metadata")
        items.append(item)
    result = {"ok": True, "count": len(items), "events": items}
    emit(result, fmt, "Events", markdown=_events_markdown)


def _events_markdown(result: dict[str, Any]) -> str:
    from ledger.markdown import table_text

    lines = ["# Events", "", f"- count: {result['count']}", ""]
    if result["events"]:
        lines += [
            "| position | recorded_at | stream | version | type |",
            "| --- | --- | --- | --- | --- |",
        ]
        for e in result["events"]:
            keys = ("position", "recorded_at", "stream", "stream_version", "event_type")
            lines.append("| " + " | ".join(table_text(str(e[key])) for key in keys) + " |")
    return "\n".join(lines)


@events_group.command("show")
@click.argument("key")
@format_option
@click.pass_context
def events_show(ctx: click.Context, key: str, output_format: str | None) -> None:
    """Show one event by position or event id."""
    from ledger.errors import InputError

    fmt = resolve_format(ctx, output_format)
    opened = _open(ctx)
    try:
        event = opened.store.get(key)
    finally:
        opened.close()
    if event is None:
        raise InputError(f"no event at {key}")
    emit(
        {"ok": True, "event": event.as_dict()},
        fmt,
        "Event",
        markdown=lambda r: "# Event\n\n```json\n" + _json(r["event"]) + "\n```",
    )


def _json(value: Any) -> str:
    from commands.output import dumps

    return dumps(value)


def _verify(
    ctx: click.Context, files: bool, expect_head: str | None, output_format: str | None
) -> None:
    from ledger.head_witness import parse_expected_head, read_marker

    fmt = resolve_format(ctx, output_format)
    expected = parse_expected_head(expect_head) if expect_head else None
    opened = _open(ctx)
    try:
        marker = read_marker(opened.store.head_marker)
        witnesses = [w for w in (marker, expected) if w is not None]
        report = opened.store.verify(witnesses=witnesses).as_dict()
        if files:
            from projections.files import verify_exports

            checked = verify_exports(opened.store)
            report["files"] = checked.files
            report["exports"] = checked.summary
            report["ok"] = report["ok"] and checked.ok
    finally:
        opened.close()
    emit({"ok": report["ok"], "verify": report}, fmt, "Event Chain Verify")
    if not report["ok"]:
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
@_EXPECT_HEAD
@format_option
@click.pass_context
def verify(
    ctx: click.Context, files: bool, expect_head: str | None, output_format: str | None
) -> None:
    """Verify the event chain (and, with --files, the published files)."""
    _verify(ctx, files, expect_head, output_format)


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
    opened = _open(ctx)
    try:
        if verify_only:
            report = opened.projections.verify_rebuild(opened.store, projection_names)
            result = {"ok": report.ok, "rebuild_verify": report.as_dict()}
        else:
            report = opened.projections.rebuild(opened.store, projection_names)
            result = {"ok": True, "rebuild": report.as_dict()}
    finally:
        opened.close()
    emit(result, fmt, "Rebuild Verify" if verify_only else "Rebuild")
    if not result["ok"]:
        ctx.exit(1)


@click.command("sql")
@click.argument("statement")
@click.option(
    "--limit", type=click.IntRange(min=0), default=1000, show_default=True, help="Row cap."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="Stop the query after this long.",
)
@format_option
@click.pass_context
def sql(
    ctx: click.Context, statement: str, limit: int, timeout: float, output_format: str | None
) -> None:
    """Run one read-only query (views: events_v, ledger_runs_v, goal_runs_v, rollout_events_v)."""
    from ledger.sql_query import run_read_only_query

    fmt = resolve_format(ctx, output_format)
    result = run_read_only_query(
        ctx.find_root().obj.get("db"), statement, limit=limit, timeout=timeout
    )
    emit({"ok": True, **result}, fmt, "SQL", markdown=_sql_markdown)


def _sql_markdown(result: dict[str, Any]) -> str:
    from ledger.markdown import table_text

    cols = result["columns"]
    lines = ["| " + " | ".join(table_text(str(c)) for c in cols) + " |", "|" + " --- |" * len(cols)]
    for row in result["rows"]:
        lines.append(
            "| " + " | ".join("" if v is None else table_text(str(v)) for v in row) + " |"
        )
    lines.append("")
    lines.append(f"{result['row_count']} row(s){' (truncated)' if result['truncated'] else ''}")
    return "\n".join(lines)


@click.group("db")
def db_group() -> None:
    """Schema migrations."""


@db_group.command("upgrade")
@format_option
@click.pass_context
def db_upgrade(ctx: click.Context, output_format: str | None) -> None:
    """Upgrade the store's schema to this version's head."""
    from ledger.database import SCHEMA_HEAD, current_revision, run_upgrade

    fmt = resolve_format(ctx, output_format)
    opened = _open(ctx, check_schema=False)
    try:
        before = current_revision(opened.store.database)
        run_upgrade(opened.store.database)
        after = current_revision(opened.store.database)
    finally:
        opened.close()
    emit(
        {
            "ok": True,
            "from_revision": before,
            "to_revision": after,
            "head": SCHEMA_HEAD,
            "database": opened.location.display(),
        },
        fmt,
        "Database Upgrade",
    )


@db_group.command("current")
@format_option
@click.pass_context
def db_current(ctx: click.Context, output_format: str | None) -> None:
    """Show the store's schema revision and whether it is current."""
    from ledger.database import SCHEMA_HEAD, current_revision

    fmt = resolve_format(ctx, output_format)
    opened = _open(ctx, check_schema=False)
    try:
        revision = current_revision(opened.store.database)
    finally:
        opened.close()
    emit(
        {
            "ok": True,
            "revision": revision,
            "head": SCHEMA_HEAD,
            "up_to_date": revision == SCHEMA_HEAD,
            "database": opened.location.display(),
        },
        fmt,
        "Database Revision",
    )


COMMANDS = [events_group, verify, rebuild, sql, db_group]
