"""``benchledger report``: the ledger as a static HTML page (``projections/report``)."""

from __future__ import annotations

from pathlib import Path

import click

from commands.as_of import as_of_option, read_database
from commands.output import emit, format_option, resolve_format

DEFAULT_OUT = "benchledger-report"


@click.command("report")
@click.option(
    "--out",
    "out_dir",
    default=DEFAULT_OUT,
    show_default=True,
    metavar="DIR",
    help="Directory to write (index.html plus assets/); a new, empty or earlier report dir.",
)
@click.option(
    "--benchmark-id",
    "benchmark_ids",
    multiple=True,
    help="Only this benchmark (repeatable; default: every benchmark in the ledger).",
)
@click.option("--run-ledger-path", default=None, help="Ledger JSON whose store rows to show.")
@click.option("--ledger-id", default=None, help="Ledger key in the store.")
@as_of_option
@format_option
@click.pass_context
def report(
    ctx: click.Context,
    out_dir: str,
    benchmark_ids: tuple[str, ...],
    run_ledger_path: str | None,
    ledger_id: str | None,
    as_of: str | None,
    output_format: str | None,
) -> None:
    """Write a static HTML report of the ledger: overview from compare, case x arm grid,
    score against cost, timeline, case decisions, repair backlog and an audit panel.

    Opens from disk with no server and fetches nothing. Needs the report extra
    (pip install 'benchledger[report]').

    \b
      benchledger report --run-ledger-path benchmark-run-ledger.json --out benchledger-report
      xdg-open benchledger-report/index.html
    """
    from commands.runtime import open_store
    from ledger.errors import InputError
    from ledger.ledger_target import resolve_ledger_target
    from ledger.version import tool_version
    from projections.queries import StoreReads
    from projections.report.site import ReportRequest, require_report_extra, write_report

    fmt = resolve_format(ctx, output_format)
    require_report_extra()
    target = resolve_ledger_target(run_ledger_path, ledger_id=ledger_id)
    out = Path(out_dir).expanduser()
    opened = open_store(ctx.find_root().obj.get("db"))
    moment = None
    try:
        wanted = tuple(dict.fromkeys(benchmark_ids))
        request = ReportRequest(target.ledger_id, out.absolute(), wanted)
        if as_of is None:
            with opened.store.database.connect() as conn:
                if StoreReads(conn).ledger(target.ledger_id) is None:
                    raise InputError(f"no ledger {target.ledger_id} in the store")
            exports = write_report(opened, request, tool_version())
        else:
            from projections.past_report import write_past_report

            with read_database(opened, as_of) as (database, moment):
                with database.connect() as conn:
                    if StoreReads(conn).ledger(target.ledger_id) is None:
                        raise InputError(
                            f"no ledger {target.ledger_id} in the store at that moment"
                        )
                exports = write_past_report(
                    opened.store, database, moment["position"], request, tool_version()
                )
    finally:
        opened.close()
    index = out / "index.html"
    as_of_block = {"as_of": moment} if moment is not None else {}
    emit(
        {"ok": True, **as_of_block, "report": str(index), "files": len(exports)},
        fmt,
        "Report",
        markdown=lambda r: f"report: {r['report']} ({r['files']} files)",
    )


COMMANDS = [report]
