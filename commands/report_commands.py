"""``benchledger report``: the ledger as a static HTML page (``projections/report``)."""

from __future__ import annotations

import click

from benchledger import __version__
from benchledger.commands.as_of import as_of_option, replay_progress
from benchledger.commands.output import emit, format_option, resolve_format
from benchledger.ledger.core.readable import plural
from benchledger.services.report import run_report

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
@click.option(
    "--link-artifacts",
    is_flag=True,
    help="Link each cell's attempts to their trajectory, agent logs and verifier output (the "
    "Inspect log) where those files are on this disk now. Off by default: the links are local "
    "paths, and a report may be shared.",
)
@as_of_option
@format_option
@click.pass_context
def report(
    ctx: click.Context,
    out_dir: str,
    benchmark_ids: tuple[str, ...],
    run_ledger_path: str | None,
    ledger_id: str | None,
    link_artifacts: bool,
    as_of: str | None,
    output_format: str | None,
) -> None:
    """Write a static HTML report of the ledger: overview from compare, case x arm grid,
    score against cost, timeline, case decisions, repair backlog and an audit panel.

    Opens from disk with no server and fetches nothing. Needs the report extra
    (pip install 'benchledger[report]'). The page holds no local path unless
    --link-artifacts is given (keep such a report to yourself).

    \b
      benchledger report --run-ledger-path benchmark-run-ledger.json --out benchledger-report
      xdg-open benchledger-report/index.html
    """
    fmt = resolve_format(ctx, output_format)
    with replay_progress() as progress:
        payload = run_report(
            out_dir=out_dir,
            benchmark_ids=tuple(benchmark_ids),
            run_ledger_path=run_ledger_path,
            ledger_id=ledger_id,
            as_of=as_of,
            db=ctx.find_root().obj.get("db"),
            version=__version__,
            progress=progress,
            link_artifacts=link_artifacts,
        )
    emit(
        payload,
        fmt,
        "Report",
        markdown=_summary,
    )


def _summary(payload: dict) -> str:
    """Where the report is, and what of the runs' artifacts it could link (one plural rule:
    ``ledger/core/readable.py``)."""
    lines = [
        "# Report",
        "",
        f"- wrote {payload['report']} ({plural(payload['files'], 'file')} in all); it opens "
        "from disk, no server needed",
    ]
    counts = payload.get("artifact_links")
    if counts is not None:
        lines.append(
            f"- artifacts linked: {plural(counts['files'], 'file')}, "
            f"{plural(counts['not_on_disk'], 'attempt')} not on this disk, "
            f"{plural(counts['without_location'], 'run')} without an ingest location"
        )
    return "\n".join(lines)
