"""Ledger commands: ``benchmark run-ledger-upsert|archive|restore|merge|aggregate|check``,
``render`` and ``import loopx-ledger``.

Click functions only parse flags into a typed request (``ledger/requests/ledger.py``), call
one service (``services/ledger_*.py``) and print.
"""

from __future__ import annotations

from typing import Any

import click

from benchledger.commands.as_of import as_of_option, replay_progress
from benchledger.commands.ledger_views import (
    render_aggregate,
    render_archive,
    render_check,
    render_import,
    render_merge,
    render_render,
    render_upsert,
)
from benchledger.commands.output import emit, format_option, printable, resolve_format
from benchledger.commands.runtime import command_metadata
from benchledger.ledger.core.readable import plural
from benchledger.ledger.requests.ledger import (
    ImportLoopxRequest,
    LedgerAggregateCommand,
    LedgerArchiveCommand,
    LedgerCheckRequest,
    LedgerMergeRequest,
    RenderRequest,
)
from benchledger.ledger.requests.options import request_from_options
from benchledger.ledger.requests.write_controls import LedgerUpsertRequest
from benchledger.services.ledger_maintenance import run_aggregate, run_archive, run_check, run_merge
from benchledger.services.ledger_render import run_import_loopx, run_render, run_render_as_of


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


def _db(ctx: click.Context) -> str | None:
    return ctx.find_root().obj.get("db")


@click.command("run-ledger-upsert")
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
@click.option("--run-group-id", default=None, help="Group id shared by runs compared together.")
@click.option("--arm-id", default=None, help="Arm label; an explicit arm is always kept.")
@click.option(
    "--arm-role",
    type=click.Choice(["baseline", "treatment", "other"]),
    default=None,
    help="Role of the arm in comparisons (default: the record's, else from the arm's name).",
)
@click.option("--run-key", default=None, help="Stable run identity (feeds run_id).")
@click.option("--recorded-at", default=None, help="ISO 8601 time the run happened.")
@click.option(
    "--compact-artifact-ref", default=None, help="Public ref of the compact record to keep."
)
@click.option("--run-ledger-note", default=None, help="A note kept on the ledger row.")
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
    from benchledger.services.ledger_upsert import run_ledger_upsert

    fmt = resolve_format(ctx, output_format)
    request = request_from_options(LedgerUpsertRequest, opts)
    payload = run_ledger_upsert(request, db=_db(ctx), metadata=command_metadata())
    emit(payload, fmt, "Benchmark Run Ledger Upsert", render_upsert)
    if not payload["ok"]:
        ctx.exit(1)


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

    fmt = resolve_format(ctx, output_format)
    request = RenderRequest(run_ledger_path, ledger_id, all_ledgers, as_of, output_json)
    if as_of is None and output_json is None:
        emit(run_render(request, db=_db(ctx)), fmt, "Render", render_render)
        return
    with replay_progress() as progress:
        result = run_render_as_of(request, db=_db(ctx), progress=progress)
    markdown = result.pop("markdown", None)
    if markdown is not None and fmt != "json":
        click.echo(printable(markdown), nl=False)
        return
    emit(result, fmt, "Render As Of", render_render)


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
@click.option(
    "--ledger-id",
    default=None,
    help="Ledger key in the store (default: the ledger path relative to the project).",
)
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
    fmt = resolve_format(ctx, output_format)
    request = ImportLoopxRequest(
        dry_run=dry_run,
        execute=execute,
        path=path,
        run_ledger_path=run_ledger_path,
        ledger_id=ledger_id,
        in_place=in_place,
    )
    payload = run_import_loopx(request, db=_db(ctx), metadata=command_metadata())
    emit(payload, fmt, "Import loopx Ledger", render_import)


# ---------------------------------------------------------------------------------------------
# Maintenance commands (docs/formats/ledger_v0.md §9-§12, docs/formats/cli.md §9-§12)
# ---------------------------------------------------------------------------------------------


def _archive_filter_options(func):  # noqa: ANN001, ANN202
    options = [
        click.option(
            "--benchmark-id",
            default="",
            help="Benchmark whose matching runs are changed (with --run-id alone: the runs' own).",
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
        click.option("--run-id", multiple=True, help="Match this run id (repeatable)."),
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


@click.command("run-ledger-archive")
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
    _archive(ctx, output_format, opts, "run-ledger-archive", restore=opts["restore"])


@click.command("run-ledger-restore")
@_ledger_options
@click.option("--reason", required=True, help="Why the runs come back (recorded in the event).")
@_archive_filter_options
@_write_controls
@format_option
@click.pass_context
def run_ledger_restore(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Bring matching archived runs back (new; loopx had no way back). Restoring exactly the
    last archive returns the ledger files to their earlier bytes. Dry run unless --execute."""
    _archive(ctx, output_format, opts, "run-ledger-restore", restore=True)


def _archive(
    ctx: click.Context,
    output_format: str | None,
    opts: dict[str, Any],
    subcommand: str,
    *,
    restore: bool,
) -> None:
    if not opts["benchmark_id"] and not opts["run_id"]:
        raise click.UsageError(
            "Missing option '--benchmark-id' (or '--run-id', whose runs name their benchmark)."
        )
    fmt = resolve_format(ctx, output_format)
    request = request_from_options(LedgerArchiveCommand, opts)
    payload = run_archive(
        request,
        subcommand=subcommand,
        restore=restore,
        db=_db(ctx),
        metadata=command_metadata(),
    )
    emit(payload, fmt, "Benchmark Run Ledger Archive", render_archive)


@click.command("run-ledger-merge")
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
    fmt = resolve_format(ctx, output_format)
    request = request_from_options(LedgerMergeRequest, opts)
    payload = run_merge(request, db=_db(ctx), metadata=command_metadata())
    emit(payload, fmt, "Benchmark Run Ledger Merge", render_merge)


_SELECTION_CHOICES = ["best", "latest_countable", "best-of-n", "latest-countable"]


@click.command("run-ledger-aggregate")
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
@click.option(
    "--target-run-group-contains",
    multiple=True,
    help="Target lane: runs whose group, id or job name contain this (repeatable).",
)
@click.option(
    "--target-current-run-group-contains",
    multiple=True,
    help="Target lane: runs that are current evidence (repeatable).",
)
@click.option(
    "--target-backfill-run-group-contains",
    multiple=True,
    help="Target lane: runs that only fill in for missing current ones (repeatable).",
)
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
    request = request_from_options(LedgerAggregateCommand, opts)
    with replay_progress() as progress:
        payload = run_aggregate(request, db=_db(ctx), progress=progress)
    emit(payload, fmt, "Benchmark Run Ledger Aggregate", render_aggregate)


@click.command("run-ledger-check")
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
    fmt = resolve_format(ctx, output_format)
    payload = run_check(request_from_options(LedgerCheckRequest, opts), db=_db(ctx))
    emit(payload, fmt, "Benchmark Run Ledger Check", render_check)
    if payload.get("drift_gate_failed"):
        count = payload["benchmark_run_ledger_drift"]["missing_ledger_run_count"]
        click.echo(
            f"error: drift detected: {plural(count, 'finished history run')} missing from "
            "the ledger",
            err=True,
        )
        ctx.exit(1)
