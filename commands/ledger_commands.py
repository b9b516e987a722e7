"""Ledger commands: ``benchmark run-ledger-upsert``, ``render`` and ``import loopx-ledger``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from commands.benchmark_group import benchmark
from commands.output import emit, format_option, resolve_format


def _write_controls(func):  # noqa: ANN001, ANN202
    func = click.option("--execute", is_flag=True, help="Append the events and render.")(func)
    return click.option(
        "--dry-run", is_flag=True, help="Show what would change, write nothing (the default)."
    )(func)


def _ledger_options(func):  # noqa: ANN001, ANN202
    func = click.option(
        "--ledger-id",
        default=None,
        help="Ledger key in the store (default: its path relative to the project).",
    )(func)
    return click.option(
        "--run-ledger-path",
        default=None,
        help="Ledger JSON (default: benchmark-run-ledger.json in the project; "
        "the Markdown view is written beside it).",
    )(func)


def _version() -> str:
    from commands.cli import VERSION

    return VERSION


def _read_input(value: str) -> tuple[bytes, str | None]:
    """The bytes of a file argument or of stdin (``-``), and the path to cite (None for stdin)."""
    from ledger.errors import InputError

    if value == "-":
        return sys.stdin.buffer.read(), None
    try:
        return Path(value).read_bytes(), value
    except FileNotFoundError:
        raise InputError(f"file not found: {Path(value).name}") from None
    except IsADirectoryError:
        raise InputError(f"not a file: {Path(value).name}") from None
    except OSError as exc:
        raise InputError(f"cannot read {Path(value).name}: {exc.strerror}") from None


@benchmark.command("run-ledger-upsert")
@click.option(
    "--benchmark-run-json",
    default=None,
    metavar="PATH|-",
    help="A compact benchmark_run_v0 (or a wrapper / batch) to upsert.",
)
@click.option(
    "--post-launch-json",
    default=None,
    metavar="PATH|-",
    help="[loopx] a post-launch materialization record.",
)
@_ledger_options
@click.option("--run-group-id", default=None)
@click.option("--arm-id", default=None, help="Arm label; an explicit arm is always kept.")
@click.option("--arm-role", type=click.Choice(["baseline", "treatment", "other"]), default=None)
@click.option("--run-key", default=None, help="Stable run identity (feeds run_id).")
@click.option("--recorded-at", default=None, help="ISO 8601 time the run happened.")
@click.option("--compact-artifact-ref", default=None)
@click.option("--run-ledger-note", default=None)
@click.option(
    "--no-render",
    is_flag=True,
    help="Append and update the read models only; render later with "
    "`benchledger render` (batch ingest).",
)
@_write_controls
@format_option
@click.pass_context
def run_ledger_upsert(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Upsert compact benchmark runs into the public run ledger (dry run unless --execute)."""
    from ledger.handlers.ledger_upsert import READ_BOUNDARY

    fmt = resolve_format(ctx, output_format)
    payload = _upsert(ctx, opts)
    emit(payload, fmt, "Benchmark Run Ledger Upsert")
    if not payload["ok"]:
        ctx.exit(1)
    assert READ_BOUNDARY


def _upsert(ctx: click.Context, opts: dict[str, Any]) -> dict[str, Any]:
    from ledger.errors import BenchledgerError, InputError
    from ledger.handlers.ledger_upsert import READ_BOUNDARY
    from ledger.ledger_target import resolve_ledger_target

    dry_run = not opts["execute"]
    target_display = opts["run_ledger_path"] or "benchmark-run-ledger.json"
    try:
        if opts["dry_run"] and opts["execute"]:
            raise InputError(
                "benchmark run-ledger-upsert accepts either --dry-run or --execute, not both"
            )
        if bool(opts["benchmark_run_json"]) == bool(opts["post_launch_json"]):
            raise InputError("provide exactly one of --benchmark-run-json or --post-launch-json")
        target = resolve_ledger_target(opts["run_ledger_path"], ledger_id=opts["ledger_id"])
        target_display = target.display_path
        records, input_kind, source_path = _resolve_records(opts)
        return _apply_upsert(ctx, opts, target, records, input_kind, source_path)
    except BenchledgerError as err:
        err.details.setdefault(
            "payload",
            {
                "ok": False,
                "dry_run": dry_run,
                "benchmark_run_ledger": {"updated": False, "ledger_path": target_display},
                "read_boundary": READ_BOUNDARY,
            },
        )
        raise


def _resolve_records(opts: dict[str, Any]) -> tuple[list[dict], str, str | None]:
    import orjson

    from ledger.errors import InputError
    from ledger.record import resolve_compact_input

    post_launch = bool(opts["post_launch_json"])
    raw, source_path = _read_input(opts["post_launch_json"] or opts["benchmark_run_json"])
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InputError("ledger input JSON must contain an object") from None
    if not isinstance(data, dict):
        raise InputError("ledger input JSON must contain an object")
    if post_launch:
        schema = "terminal_bench_post_launch_materialization_v0"
        if data.get("schema_version") != schema:
            raise InputError(f"--post-launch-json did not contain a compactable {schema} object")
        return [data], schema, source_path
    records, input_kind = resolve_compact_input(data, context="upsert")
    return records, input_kind, source_path


def _apply_upsert(
    ctx: click.Context,
    opts: dict[str, Any],
    target: Any,
    records: list[dict],
    input_kind: str,
    source_path: str | None,
) -> dict[str, Any]:
    from commands.runtime import command_metadata, open_store
    from ledger.clock import utc_now_seconds
    from ledger.handlers.ledger_upsert import (
        READ_BOUNDARY,
        RowOptions,
        ledger_result,
        plan_ledger_upsert,
    )
    from projections.queries import StoreReads
    from projections.render import render_ledger

    now = utc_now_seconds()
    row_options = RowOptions(
        run_group_id=opts["run_group_id"],
        arm_id=opts["arm_id"],
        arm_role=opts["arm_role"],
        run_key=opts["run_key"],
        notes=opts["run_ledger_note"],
        recorded_at=opts["recorded_at"],
        compact_artifact_ref=opts["compact_artifact_ref"] or source_path,
    )
    opened = open_store(ctx.find_root().obj.get("db"))
    try:
        with opened.store.transaction(command_metadata(_version())) as uow:
            reads = StoreReads(uow.conn)
            plan = plan_ledger_upsert(
                records,
                target=target,
                options=[row_options] * len(records),
                reads=reads,
                decide_case=reads.decide_case,
                now=now,
                ref_root=str(Path.cwd()),
            )
            if opts["execute"] and plan.events:
                uow.append(plan.events)
        result = ledger_result(plan, target=target, dry_run=not opts["execute"])
        if (
            opts["execute"]
            and not opts["no_render"]
            and (plan.changed or not target.json_path.exists())
        ):
            render_ledger(opened, target)
            result["rendered"] = True
    finally:
        opened.close()
    return {
        "ok": True,
        "dry_run": not opts["execute"],
        "input_kind": input_kind,
        "benchmark_run_ledger": result,
        "read_boundary": READ_BOUNDARY,
    }


@click.command("render")
@_ledger_options
@click.option("--all", "all_ledgers", is_flag=True, help="Render every ledger in the store.")
@format_option
@click.pass_context
def render(
    ctx: click.Context,
    run_ledger_path: str | None,
    ledger_id: str | None,
    all_ledgers: bool,
    output_format: str | None,
) -> None:
    """Re-render ledger JSON and Markdown from the store (after --no-render, or to repair)."""
    from commands.runtime import open_store
    from ledger.errors import InputError
    from ledger.ledger_target import resolve_ledger_target
    from projections.queries import StoreReads
    from projections.render import render_ledger

    fmt = resolve_format(ctx, output_format)
    opened = open_store(ctx.find_root().obj.get("db"))
    try:
        with opened.store.engine.connect() as conn:
            reads = StoreReads(conn)
            if all_ledgers:
                targets = [
                    resolve_ledger_target(reads.ledger(i)["ledger_path"], ledger_id=i)
                    for i in reads.ledger_ids()
                ]
            else:
                target = resolve_ledger_target(run_ledger_path, ledger_id=ledger_id)
                if reads.ledger(target.ledger_id) is None:
                    raise InputError(f"no ledger {target.ledger_id} in the store")
                targets = [target]
        written = []
        for target in targets:
            written += render_ledger(opened, target)
    finally:
        opened.close()
    emit(
        {
            "ok": True,
            "rendered": [
                {"kind": f["kind"], "sha256": f["sha256"], "path": f["path"]} for f in written
            ],
        },
        fmt,
        "Render",
    )


@click.group("import")
def import_group() -> None:
    """Bring existing records into the store as events."""


@import_group.command("loopx-ledger")
@click.argument("path")
@click.option(
    "--run-ledger-path",
    default=None,
    help="Where to render the imported ledger (default: PATH itself).",
)
@click.option("--ledger-id", default=None)
@_write_controls
@format_option
@click.pass_context
def import_loopx_ledger(
    ctx: click.Context,
    path: str,
    run_ledger_path: str | None,
    ledger_id: str | None,
    dry_run: bool,
    execute: bool,
    output_format: str | None,
) -> None:
    """Import a loopx benchmark_run_ledger_v0 JSON (run ids and archive state kept)."""
    from commands.runtime import command_metadata, open_store
    from ledger.errors import InputError
    from ledger.handlers.import_loopx import import_idempotency_key, plan_import
    from ledger.ledger_target import resolve_ledger_target
    from projections.render import render_ledger

    fmt = resolve_format(ctx, output_format)
    if dry_run and execute:
        raise InputError("import loopx-ledger accepts either --dry-run or --execute, not both")
    data, _ = _read_input(path)
    target = resolve_ledger_target(run_ledger_path or path, ledger_id=ledger_id)
    events, summary = plan_import(data, name=Path(path).name, target=target)
    already = False
    if execute:
        opened = open_store(ctx.find_root().obj.get("db"))
        try:
            result = opened.store.append(
                events,
                metadata=command_metadata(_version()),
                idempotency_key=import_idempotency_key(target, data),
            )
            already = result.already_recorded
            render_ledger(opened, target)
        finally:
            opened.close()
    emit(
        {
            "ok": True,
            "dry_run": not execute,
            "imported": execute and not already,
            "already_recorded": already,
            "ledger_id": target.ledger_id,
            "ledger_path": target.display_path,
            "markdown_path": target.display_markdown_path,
            **summary,
        },
        fmt,
        "Import loopx Ledger",
    )


COMMANDS = [render, import_group]
