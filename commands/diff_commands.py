"""``benchledger diff``: what changed in a ledger between two moments, case by case."""

from __future__ import annotations

from typing import Any

import click

from benchledger.commands.output import emit, format_option, resolve_format
from benchledger.projections.reports.diff import render_diff_markdown
from benchledger.services.compare import run_diff


@click.command("diff")
@click.option("--from", "from_value", required=True, metavar="POSITION|ISO-TIME",
              help="The earlier moment (an event position, or an ISO 8601 time: the last "
              "event recorded at or before it).")  # fmt: skip
@click.option("--to", "to_value", default=None, metavar="POSITION|ISO-TIME",
              help="The later moment (default: the head).")  # fmt: skip
@click.option("--benchmark-id", default=None, help="Only cases of this benchmark.")
@click.option("--run-ledger-path", default=None,
              help="Ledger JSON (default: benchmark-run-ledger.json).")  # fmt: skip
@click.option("--ledger-id", default=None, help="Ledger key in the store.")
@format_option
@click.pass_context
def diff(ctx: click.Context, output_format: str | None, **opts: Any) -> None:
    """Per case, what changed between two moments: runs added, moved, archived, restored or
    updated, and the case's decision, bucket and score, each with the positions of the events
    that caused it (JSON: benchmark_ledger_diff_v0). Reads only; built by replay in a scratch
    store, from the nearest snapshot."""
    fmt = resolve_format(ctx, output_format)
    payload = run_diff(
        from_value=opts["from_value"],
        to_value=opts["to_value"],
        benchmark_id=opts["benchmark_id"],
        run_ledger_path=opts["run_ledger_path"],
        ledger_id=opts["ledger_id"],
        db=ctx.find_root().obj.get("db"),
    )
    emit(payload, fmt, "Ledger Diff",
         lambda payload: render_diff_markdown(payload["diff"]))  # fmt: skip
