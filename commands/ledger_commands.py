"""Ledger commands: ``benchmark run-ledger-upsert|archive|restore|merge|aggregate|check``,
``render`` and ``import loopx-ledger``.

Click functions only parse flags, open the store, hand a reads object to the handlers in
``ledger/handlers/`` and print; every writing command appends its events in one
``store.transaction`` and renders the ledger files after the commit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from commands.as_of import as_of_option, read_database
from commands.benchmark_group import benchmark
from commands.output import emit, format_option, printable, resolve_format


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


def _read_input(value: str, limit: int) -> tuple[bytes, str | None]:
    """The bytes of a file argument or of stdin (``-``), and the path to cite (None for stdin)."""
    from ledger.input_files import read_input_file, read_stream

    if value == "-":
        return read_stream(sys.stdin.buffer, shown="standard input", limit=limit), None
    return read_input_file(value, shown=Path(value).name, limit=limit), value


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
    from ledger.errors import InputError
    from ledger.input_files import COMPACT_JSON_LIMIT
    from ledger.json_input import parse_json
    from ledger.rules.compact_input import NOT_AN_OBJECT, resolve_compact_input

    post_launch = bool(opts["post_launch_json"])
    given = opts["post_launch_json"] or opts["benchmark_run_json"]
    raw, source_path = _read_input(given, COMPACT_JSON_LIMIT)
    shown = "standard input" if source_path is None else Path(given).name
    data = parse_json(raw, what=f"{NOT_AN_OBJECT}; {shown}", unique_keys=True)
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
    from ledger.handlers.ledger_maintenance import require_store_ledger
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
        with opened.store.transaction(command_metadata()) as uow:
            reads = StoreReads(uow.conn)
            require_store_ledger(reads, target)
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
@as_of_option
@click.option(
    "--output-json",
    default=None,
    metavar="PATH",
    help="With --as-of: write the past ledger here (its Markdown view beside it, .md); "
    "without it the past ledger is printed and no file is written.",
)
@format_option
@click.pass_context
def render(
    ctx: click.Context,
    run_ledger_path: str | None,
    ledger_id: str | None,
    all_ledgers: bool,
    as_of: str | None,
    output_json: str | None,
    output_format: str | None,
) -> None:
    """Re-render ledger JSON and Markdown from the store (after --no-render, or to repair).

    With --as-of, the ledger as it stood then: printed (the Markdown view, or the document with
    --format json), or written to --output-json; the published files are never overwritten and
    no export is recorded.
    """
    from commands.runtime import open_store
    from ledger.errors import InputError
    from ledger.ledger_target import resolve_ledger_target
    from projections.queries import StoreReads
    from projections.render import render_ledger, render_stale_goal_files

    fmt = resolve_format(ctx, output_format)
    if as_of is not None or output_json is not None:
        _render_as_of(ctx, fmt, run_ledger_path, ledger_id, all_ledgers, as_of, output_json)
        return
    opened = open_store(ctx.find_root().obj.get("db"))
    try:
        with opened.store.database.connect() as conn:
            reads = StoreReads(conn)
            named = run_ledger_path is not None or ledger_id is not None
            target = resolve_ledger_target(run_ledger_path, ledger_id=ledger_id)
            if all_ledgers or (not named and reads.ledger(target.ledger_id) is None):
                # plain `benchledger render` (what a failed render says to run) repairs every
                # ledger when the default one is not in the store
                targets = [
                    resolve_ledger_target(reads.ledger(i)["ledger_path"], ledger_id=i)
                    for i in reads.ledger_ids()
                ]
            else:
                if reads.ledger(target.ledger_id) is None:
                    raise InputError(f"no ledger {target.ledger_id} in the store")
                targets = [target]
        written = render_stale_goal_files(opened)
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


def _render_as_of(
    ctx: click.Context,
    fmt: str,
    run_ledger_path: str | None,
    ledger_id: str | None,
    all_ledgers: bool,
    as_of: str | None,
    output_json: str | None,
) -> None:
    """``render --as-of``: the past ledger printed, or written to an explicit path."""
    from commands.runtime import open_store
    from ledger.errors import InputError
    from ledger.ledger_target import resolve_ledger_target
    from projections.past_render import render_past_ledger

    if as_of is None:
        raise InputError(
            "--output-json goes with --as-of (a live render writes the ledger's own files)"
        )
    if all_ledgers:
        raise InputError(
            "render --as-of renders one ledger: drop --all and name it with --ledger-id"
        )
    target = resolve_ledger_target(run_ledger_path, ledger_id=ledger_id)
    output = Path(os.path.abspath(Path(output_json).expanduser())) if output_json else None
    opened = open_store(ctx.find_root().obj.get("db"))
    try:
        with read_database(opened, as_of) as (database, moment):
            result = render_past_ledger(opened.store, database, target, output)
    finally:
        opened.close()
    markdown = result.pop("markdown", None)
    if markdown is not None and fmt != "json":
        click.echo(printable(markdown), nl=False)
        return
    if "rendered" in result:
        result["rendered"] = [
            {"kind": f["kind"], "sha256": f["sha256"], "path": f["path"]}
            for f in result["rendered"]
        ]
    emit({"ok": True, "as_of": moment, **result}, fmt, "Render As Of")


@click.group("import")
def import_group() -> None:
    """Bring existing records into the store as events."""


@import_group.command("loopx-ledger")
@click.argument("path")
@click.option(
    "--run-ledger-path",
    default=None,
    help="Where the imported ledger lives and is rendered (default: PATH itself, which is "
    "only rewritten with --in-place).",
)
@click.option("--ledger-id", default=None)
@click.option(
    "--in-place",
    is_flag=True,
    help="Render the imported ledger over PATH (and its .md twin). Without it, or an explicit "
    "--run-ledger-path, the source file is left untouched; `benchledger render` renders later.",
)
@_write_controls
@format_option
@click.pass_context
def import_loopx_ledger(
    ctx: click.Context,
    path: str,
    run_ledger_path: str | None,
    ledger_id: str | None,
    in_place: bool,
    dry_run: bool,
    execute: bool,
    output_format: str | None,
) -> None:
    """Import a loopx benchmark_run_ledger_v0 JSON (run ids and archive state kept).

    PATH itself is never rewritten unless --in-place says so."""
    from commands.runtime import command_metadata, open_store
    from ledger.errors import InputError
    from ledger.handlers.import_loopx import import_idempotency_key, plan_import
    from ledger.input_files import LEDGER_JSON_LIMIT
    from ledger.ledger_target import resolve_ledger_target
    from projections.render import render_ledger

    fmt = resolve_format(ctx, output_format)
    if dry_run and execute:
        raise InputError("import loopx-ledger accepts either --dry-run or --execute, not both")
    data, _ = _read_input(path, LEDGER_JSON_LIMIT)
    target = resolve_ledger_target(run_ledger_path or path, ledger_id=ledger_id)
    events, summary = plan_import(data, name=Path(path).name, target=target)
    already = False
    render = execute and (in_place or run_ledger_path is not None)
    if execute:
        opened = open_store(ctx.find_root().obj.get("db"))
        try:
            result = opened.store.append(
                events,
                metadata=command_metadata(),
                idempotency_key=import_idempotency_key(target, data),
            )
            already = result.already_recorded
            if render:
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
            "rendered": render,
            "source_rewritten": render and _same_file(target.json_path, path),
            **summary,
        },
        fmt,
        "Import loopx Ledger",
    )


def _same_file(rendered: Path, given: str) -> bool:
    return given != "-" and Path(rendered).resolve() == Path(given).expanduser().resolve()


# ---------------------------------------------------------------------------------------------
# Maintenance commands (ledger_v0 §9-§12, cli.md §9-§12)
# ---------------------------------------------------------------------------------------------


def _store_reads(conn: Any) -> Any:
    """``StoreReads`` plus the two reads only the maintenance handlers need."""
    from ledger.connection import scalars
    from projections.queries import StoreReads

    class MaintenanceStoreReads(StoreReads):
        def run_ids(self, ledger_id: str) -> list[str]:
            query = "SELECT run_id FROM rm_ledger_rows WHERE ledger_id = ?"
            return scalars(self.conn.execute(query, (ledger_id,)))

        def last_ledger_event(self, ledger_id: str) -> dict[str, Any] | None:
            import orjson

            query = (
                "SELECT event_type, payload FROM events WHERE stream = ?"
                " ORDER BY stream_version DESC LIMIT 1"
            )
            found = self.conn.execute(query, (f"ledger/{ledger_id}",)).first()
            if found is None:
                return None
            return {"event_type": found[0], "payload": orjson.loads(found[1])}

    return MaintenanceStoreReads(conn)


def _check_write_controls(subcommand: str, opts: dict[str, Any]) -> None:
    from ledger.errors import InputError

    if opts["dry_run"] and opts["execute"]:
        raise InputError(f"benchmark {subcommand} accepts either --dry-run or --execute, not both")


def _summary_markdown(title: str, block_key: str):  # noqa: ANN202
    """``# Title`` and ``- key: value`` bullets: the envelope's scalars, then the scalars of its
    main block (its counts are what a reader looks for), lists shown when short."""
    from commands.output import bullets

    def render(payload: dict[str, Any]) -> str:
        top = {k: v for k, v in payload.items() if not isinstance(v, dict)}
        block = payload.get(block_key)
        inner = {
            f"{block_key}.{k}": v
            for k, v in (block.items() if isinstance(block, dict) else ())
            if not (isinstance(v, dict) and len(v) > 8)
            and not (isinstance(v, list) and len(v) > 10)
        }
        return bullets(title, {**top, **inner})

    return render


def _with_error_envelope(envelope: dict[str, Any]):  # noqa: ANN202
    """Attach the command's error envelope (cli.md §3) to any user error raised inside."""
    from contextlib import contextmanager

    from ledger.errors import BenchledgerError

    @contextmanager
    def guard():  # noqa: ANN202
        try:
            yield
        except BenchledgerError as err:
            err.details.setdefault("payload", envelope)
            raise

    return guard()


def _write_plan(ctx: click.Context, opts: dict[str, Any], target: Any, decide: Any) -> tuple:
    """Decide inside the write transaction, append when executing, render after commit.

    ``decide(reads, now)`` returns a ``MaintenancePlan``; returns ``(plan, rendered)``.
    """
    from commands.runtime import command_metadata, open_store
    from ledger.clock import utc_now_seconds
    from ledger.handlers.ledger_maintenance import require_store_ledger
    from projections.render import render_ledger

    now = utc_now_seconds()
    opened = open_store(ctx.find_root().obj.get("db"))
    try:
        with opened.store.transaction(command_metadata()) as uow:
            reads = _store_reads(uow.conn)
            require_store_ledger(reads, target)
            plan = decide(reads, now)
            if opts["execute"] and plan.events:
                uow.append(plan.events)
        rendered = False
        if opts["execute"] and plan.changed:
            render_ledger(opened, target)
            rendered = True
    finally:
        opened.close()
    return plan, rendered


def _archive_filter_options(func):  # noqa: ANN001, ANN202
    options = [
        click.option(
            "--benchmark-id", required=True, help="Benchmark whose matching runs are changed."
        ),
        click.option(
            "--archive-batch-id",
            default=None,
            help="Batch id (archive: default a deterministic id of the request; "
            "restore: only rows of this batch).",
        ),
        click.option(
            "--run-group-contains",
            multiple=True,
            help="Match runs whose run_group_id contains this text (repeatable).",
        ),
        click.option(
            "--keep-run-group-contains",
            multiple=True,
            help="Never touch runs whose run_group_id contains this text (repeatable).",
        ),
        click.option("--case-id", multiple=True, help="Match this case (repeatable)."),
        click.option("--arm-id", multiple=True, help="Match this arm (repeatable)."),
        click.option(
            "--archive-all-matching-benchmark",
            is_flag=True,
            help="Match every run of the benchmark when no other filter is given.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _archive_request(opts: dict[str, Any]) -> Any:
    from ledger.handlers.ledger_maintenance import ArchiveRequest

    return ArchiveRequest(
        benchmark_id=opts["benchmark_id"],
        reason=opts["reason"],
        case_ids=tuple(opts["case_id"]),
        arm_ids=tuple(opts["arm_id"]),
        run_group_contains=tuple(opts["run_group_contains"]),
        keep_run_group_contains=tuple(opts["keep_run_group_contains"]),
        archive_all_matching_benchmark=opts["archive_all_matching_benchmark"],
        archive_batch_id=opts["archive_batch_id"],
    )


@benchmark.command("run-ledger-archive")
@_ledger_options
@click.option("--reason", required=True, help="Public-safe reason recorded on the rows.")
@_archive_filter_options
@click.option(
    "--restore",
    is_flag=True,
    help="Reverse the archive for matching archived runs (same as run-ledger-restore).",
)
@_write_controls
@format_option
@click.pass_context
def run_ledger_archive(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Mark matching runs archived: kept in JSON, left out of decisions, backlog and runs
    table. Dry run unless --execute; re-running archives nothing new."""
    fmt = resolve_format(ctx, output_format)
    subcommand = "run-ledger-archive"
    payload = _archive_command(ctx, opts, subcommand, opts["restore"])
    emit(payload, fmt, _ARCHIVE_TITLE, _summary_markdown(_ARCHIVE_TITLE, "archive"))


@benchmark.command("run-ledger-restore")
@_ledger_options
@click.option("--reason", required=True, help="Why the runs come back (recorded in the event).")
@_archive_filter_options
@_write_controls
@format_option
@click.pass_context
def run_ledger_restore(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Bring matching archived runs back (new; loopx had no way back). Restoring exactly the
    last archive returns the ledger files to their earlier bytes. Dry run unless --execute."""
    fmt = resolve_format(ctx, output_format)
    payload = _archive_command(ctx, opts, "run-ledger-restore", True)
    emit(payload, fmt, _ARCHIVE_TITLE, _summary_markdown(_ARCHIVE_TITLE, "archive"))


_ARCHIVE_TITLE = "Benchmark Run Ledger Archive"


def _archive_command(
    ctx: click.Context, opts: dict[str, Any], subcommand: str, restore: bool
) -> dict[str, Any]:
    from ledger.archive import ARCHIVE_SCHEMA
    from ledger.handlers.ledger_maintenance import READ_BOUNDARY, plan_archive, plan_restore
    from ledger.ledger_target import resolve_ledger_target

    dry_run = not opts["execute"]
    envelope = {
        "ok": False,
        "dry_run": dry_run,
        "updated": False,
        "ledger_path": opts["run_ledger_path"] or "benchmark-run-ledger.json",
        "archive": {
            "schema_version": ARCHIVE_SCHEMA,
            "ok": False,
            "benchmark_id": opts["benchmark_id"],
        },
        "read_boundary": READ_BOUNDARY,
    }
    with _with_error_envelope(envelope):
        _check_write_controls(subcommand, opts)
        target = resolve_ledger_target(opts["run_ledger_path"], ledger_id=opts["ledger_id"])
        envelope["ledger_path"] = target.display_path
        request = _archive_request(opts)
        planner = plan_restore if restore else plan_archive
        plan, rendered = _write_plan(
            ctx, opts, target, lambda reads, now: planner(reads, target, request, now=now)
        )
    archive = {**plan.payload, "ok": True}
    payload = {
        "ok": True,
        "dry_run": dry_run,
        "updated": plan.changed and not dry_run,
        "ledger_path": target.display_path,
        "markdown_path": target.display_markdown_path,
        "archive": archive,
        "read_boundary": READ_BOUNDARY,
    }
    if not plan.changed:
        payload["unchanged"] = True
    if rendered:
        payload["rendered"] = True
    return payload


@benchmark.command("run-ledger-merge")
@_ledger_options
@click.option(
    "--source-run-ledger-path",
    multiple=True,
    help="A benchmark_run_ledger_v0 JSON to merge in (repeatable).",
)
@click.option(
    "--source-run-ledger-glob",
    multiple=True,
    help="A glob of source ledgers, `**` recursive (repeatable; paths are not recorded).",
)
@click.option("--benchmark-id", multiple=True, help="Merge only runs of this benchmark.")
@click.option("--run-group-contains", multiple=True, help="Merge only matching run groups.")
@_write_controls
@format_option
@click.pass_context
def run_ledger_merge(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Merge source ledger files into the store ledger: same run_id replaces (earliest
    recorded_at kept), archived rows stay archived. Dry run unless --execute."""
    from ledger.handlers.ledger_maintenance import (
        READ_BOUNDARY,
        load_sources,
        plan_merge,
    )
    from ledger.ledger_target import resolve_ledger_target
    from ledger.merge import MERGE_SCHEMA

    fmt = resolve_format(ctx, output_format)
    dry_run = not opts["execute"]
    envelope = {
        "ok": False,
        "dry_run": dry_run,
        "updated": False,
        "ledger_path": opts["run_ledger_path"] or "benchmark-run-ledger.json",
        "merge": {"schema_version": MERGE_SCHEMA, "ok": False, "source_paths_recorded": False},
        "read_boundary": READ_BOUNDARY,
    }
    with _with_error_envelope(envelope):
        _check_write_controls("run-ledger-merge", opts)
        paths, globs = opts["source_run_ledger_path"], opts["source_run_ledger_glob"]
        if not paths and not globs:
            from ledger.errors import InputError

            raise InputError(
                "provide at least one --source-run-ledger-path or --source-run-ledger-glob"
            )
        target = resolve_ledger_target(opts["run_ledger_path"], ledger_id=opts["ledger_id"])
        envelope["ledger_path"] = target.display_path
        sources = load_sources(paths, globs, target_json_path=target.json_path)
        plan, rendered = _write_plan(
            ctx,
            opts,
            target,
            lambda reads, now: plan_merge(
                reads,
                target,
                sources,
                benchmark_ids=opts["benchmark_id"],
                run_group_contains=opts["run_group_contains"],
                now=now,
            ),
        )
    updated = plan.changed and not dry_run
    merge = {
        **plan.payload,
        "ok": True,
        "dry_run": dry_run,
        "updated": updated,
        "ledger_path": target.display_path,
        "markdown_path": target.display_markdown_path,
    }
    payload = {
        "ok": True,
        "dry_run": dry_run,
        "updated": updated,
        "ledger_path": target.display_path,
        "markdown_path": target.display_markdown_path,
        "merge": merge,
        "read_boundary": READ_BOUNDARY,
    }
    if rendered:
        payload["rendered"] = True
    title = "Benchmark Run Ledger Merge"
    emit(payload, fmt, title, _summary_markdown(title, "merge"))


_SELECTION_CHOICES = ["best", "latest_countable", "best-of-n", "latest-countable"]


@benchmark.command("run-ledger-aggregate")
@_ledger_options
@click.option("--source-run-ledger-path", multiple=True, help="Another ledger JSON to include.")
@click.option("--source-run-ledger-glob", multiple=True, help="A glob of ledgers to include.")
@click.option("--benchmark-id", required=True, help="Benchmark to aggregate.")
@click.option("--canonical-case-id", multiple=True, help="A canonical case (repeatable).")
@click.option("--canonical-case-ids-file", default=None, help="One canonical case id per line.")
@click.option(
    "--canonical-case-root", default=None, help="Directory whose sub-directories are the cases."
)
@click.option("--active-case-id", multiple=True, help="A running/reserved case (repeatable).")
@click.option("--active-case-ids-file", default=None, help="One active case id per line.")
@click.option("--include-noncanonical-sanity-sources", is_flag=True, help="[loopx] keep them.")
@click.option("--target-lane-id", default=None, help="Label of the target lane.")
@click.option("--target-run-group-contains", multiple=True)
@click.option("--target-current-run-group-contains", multiple=True)
@click.option("--target-backfill-run-group-contains", multiple=True)
@click.option(
    "--selection-policy",
    type=click.Choice(_SELECTION_CHOICES),
    default="best",
    show_default=True,
    help="best: best-of-N (a pass beats a later failure); latest_countable: the latest "
    "countable run, else the best.",
)
@click.option("--output-json", default=None, help="Write the aggregate here (with --execute).")
@as_of_option
@_write_controls
@format_option
@click.pass_context
def run_ledger_aggregate(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """One current result per canonical case, over the store ledger plus source files. Reads
    only; the aggregate file is written with --execute --output-json."""
    fmt = resolve_format(ctx, output_format)
    title = "Benchmark Run Ledger Aggregate"
    emit(_aggregate_command(ctx, opts), fmt, title, _summary_markdown(title, "aggregate"))


def _aggregate_command(ctx: click.Context, opts: dict[str, Any]) -> dict[str, Any]:
    from commands.runtime import open_store
    from ledger.aggregate import SELECTION_POLICIES
    from ledger.errors import InputError
    from ledger.handlers.ledger_maintenance import (
        READ_BOUNDARY,
        aggregate_view,
        load_sources,
        require_store_ledger,
    )
    from ledger.ledger_target import resolve_ledger_target

    dry_run = not opts["execute"]
    output = opts["output_json"]
    envelope = {
        "ok": False,
        "dry_run": dry_run,
        "updated": False,
        "output_json": output,
        "aggregate": {"ok": False},
    }
    with _with_error_envelope(envelope):
        _check_write_controls("run-ledger-aggregate", opts)
        if opts["execute"] and not output:
            raise InputError("--execute requires --output-json")
        target = resolve_ledger_target(opts["run_ledger_path"], ledger_id=opts["ledger_id"])
        request = _aggregate_request(opts)
        sources = load_sources(
            opts["source_run_ledger_path"],
            opts["source_run_ledger_glob"],
            target_json_path=target.json_path,
        )
        opened = open_store(ctx.find_root().obj.get("db"))
        try:
            with read_database(opened, opts["as_of"]) as (database, moment):
                with database.connect() as conn:
                    reads = _store_reads(conn)
                    if moment is not None and reads.ledger(target.ledger_id) is None:
                        raise InputError(
                            f"no ledger {target.ledger_id} in the store at that moment"
                        )
                    require_store_ledger(reads, target)
                    aggregate, preview = aggregate_view(reads, target, sources, request)
        finally:
            opened.close()
        if opts["execute"]:
            _write_aggregate(output, aggregate)
    as_of = {"as_of": moment} if moment is not None else {}
    return {
        "ok": True,
        **as_of,
        "dry_run": dry_run,
        "updated": bool(opts["execute"]),
        "output_json": output,
        "selection_policy": SELECTION_POLICIES[opts["selection_policy"]],
        "aggregate": aggregate,
        "merge_preview": preview,
        "read_boundary": READ_BOUNDARY,
    }


def _aggregate_request(opts: dict[str, Any]) -> Any:
    from ledger.aggregate import TargetLanes
    from ledger.handlers.ledger_maintenance import (
        AggregateRequest,
        case_root_ids,
        read_case_ids_file,
    )

    canonical = list(opts["canonical_case_id"])
    if opts["canonical_case_ids_file"]:
        canonical += read_case_ids_file(
            opts["canonical_case_ids_file"], "--canonical-case-ids-file"
        )
    if opts["canonical_case_root"]:
        canonical += case_root_ids(opts["canonical_case_root"])
    active = list(opts["active_case_id"])
    if opts["active_case_ids_file"]:
        active += read_case_ids_file(opts["active_case_ids_file"], "--active-case-ids-file")
    return AggregateRequest(
        benchmark_id=opts["benchmark_id"],
        selection=opts["selection_policy"],
        canonical_case_ids=tuple(canonical),
        active_case_ids=tuple(active),
        include_noncanonical_sanity_sources=opts["include_noncanonical_sanity_sources"],
        lanes=TargetLanes(
            lane_id=opts["target_lane_id"],
            target=tuple(opts["target_run_group_contains"]),
            current=tuple(opts["target_current_run_group_contains"]),
            backfill=tuple(opts["target_backfill_run_group_contains"]),
        ),
    )


def _write_aggregate(output: str, aggregate: dict[str, Any]) -> None:
    """Indent 2, sorted keys, trailing newline; temp file then rename."""
    import json

    from ledger.errors import InputError
    from projections.files import atomic_write

    text = json.dumps(aggregate, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path = Path(output).expanduser()
    if path.is_dir():
        raise InputError(f"--output-json is a directory: {Path(output).name}")
    try:
        atomic_write(Path(os.path.abspath(path)), text.encode("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot write {Path(output).name}: {exc.strerror}") from None


@benchmark.command("run-ledger-check")
@click.option("--goal-id", required=True, help="Goal whose run history is compared.")
@_ledger_options
@click.option(
    "--history-limit", type=int, default=500, show_default=True, help="Newest history records."
)
@click.option("--limit", type=int, default=20, show_default=True, help="Missing runs shown.")
@click.option("--fail-on-drift", is_flag=True, help="Exit 1 when a history run is missing.")
@format_option
@click.pass_context
def run_ledger_check(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Is every terminal run of the goal's history also in the ledger? Prints a catch-up
    command per missing run; read-only."""
    from commands.runtime import open_store
    from ledger.clock import utc_now_seconds
    from ledger.drift import DRIFT_SCHEMA
    from ledger.handlers.ledger_maintenance import (
        READ_BOUNDARY,
        drift_view,
        require_store_ledger,
    )
    from ledger.ledger_target import resolve_ledger_target
    from ledger.registry import validate_goal_id

    fmt = resolve_format(ctx, output_format)
    envelope = {
        "ok": False,
        "goal_id": opts["goal_id"],
        "benchmark_run_ledger_drift": {
            "schema_version": DRIFT_SCHEMA,
            "ok": False,
            "drift_detected": False,
        },
        "read_boundary": READ_BOUNDARY,
    }
    history_limit, limit = max(opts["history_limit"], 0), max(opts["limit"], 0)
    with _with_error_envelope(envelope):
        goal_id = validate_goal_id(opts["goal_id"])
        target = resolve_ledger_target(opts["run_ledger_path"], ledger_id=opts["ledger_id"])
        opened = open_store(ctx.find_root().obj.get("db"))
        try:
            with opened.store.database.connect() as conn:
                reads = _store_reads(conn)
                require_store_ledger(reads, target)
                drift = drift_view(
                    reads,
                    target,
                    goal_id=goal_id,
                    history_limit=history_limit,
                    limit=limit,
                    now=utc_now_seconds(),
                )
        finally:
            opened.close()
    payload: dict[str, Any] = {
        "ok": True,
        "goal_id": goal_id,
        "history_limit": history_limit,
        "benchmark_run_ledger_drift": drift,
        "read_boundary": READ_BOUNDARY,
    }
    gate_failed = opts["fail_on_drift"] and drift["drift_detected"]
    if opts["fail_on_drift"]:
        payload["drift_gate_failed"] = gate_failed
    title = "Benchmark Run Ledger Check"
    emit(payload, fmt, title, _summary_markdown(title, "benchmark_run_ledger_drift"))
    if gate_failed:
        count = drift["missing_ledger_run_count"]
        click.echo(
            f"error: drift detected: {count} terminal history run(s) missing from the ledger",
            err=True,
        )
        ctx.exit(1)


COMMANDS = [render, import_group]
