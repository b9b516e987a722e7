"""``benchmark parity-check`` and ``benchmark case-analysis-candidates`` (docs/formats/cli.md
§13-14).

Both read files the user names and report on them; the rules live in
``ledger/rules/operations/parity.py`` and
``ledger/rules/operations/case_analysis.py``. Only ``case-analysis-candidates --apply-accepted``
changes
anything, and it does so through the event store: the accepted document is appended as a
``case_analysis_accepted`` event, and the output files are written from it after the commit.

The case-analysis command reads the ledger JSON *file* (``--run-ledger-path``, default
``benchmark-run-ledger.json`` in the project root), as loopx did, and refuses a missing one
(``file not found: <name>``) instead of rendering it from the store: a read-only report should
not create or migrate a database, and ``benchledger render`` already brings the file up to date.
"""

from __future__ import annotations

from typing import Any

import click

from benchledger.commands.output import emit, format_option, resolve_format
from benchledger.commands.runtime import command_metadata
from benchledger.ledger.core.errors import BenchledgerError
from benchledger.ledger.core.read_boundary import LEDGER_READ_BOUNDARY as READ_BOUNDARY
from benchledger.ledger.requests.analysis import CaseAnalysisRequest
from benchledger.ledger.requests.options import request_from_options
from benchledger.ledger.rules.operations.case_analysis import render_candidates_markdown
from benchledger.ledger.rules.operations.parity import (
    parity_check_error_payload,
    render_parity_markdown,
)
from benchledger.services.case_analysis import (
    case_analysis_payload,
    resolve_case_analysis_paths,
)
from benchledger.services.parity import parity_payload


def _with_payload(err: Exception, payload: dict[str, Any]) -> Exception:
    details = getattr(err, "details", None)
    if isinstance(details, dict):
        details.setdefault("payload", payload)
    return err


# --- parity-check (docs/formats/cli.md §13, docs/formats/history_registry_rollout.md §10)
# ---------------------------------


@click.command("parity-check")
@click.option(
    "--benchmark-run-json",
    required=True,
    metavar="PATH|-",
    help="A compact benchmark_run_v0 record (or a goal run record / wrapper); '-' reads stdin.",
)
@format_option
@click.pass_context
def parity_check_command(
    ctx: click.Context, benchmark_run_json: str, output_format: str | None
) -> None:
    """[loopx] Can this run back a "full loopx product path" claim? Read-only.

    The record is compacted first, so only evidence that survives compaction counts.

      benchledger benchmark parity-check --benchmark-run-json runs/2026-05-02T09-14-07Z.json
    """
    fmt = resolve_format(ctx, output_format)
    try:
        payload = parity_payload(benchmark_run_json)
    except BenchledgerError as err:
        raise _with_payload(err, parity_check_error_payload(err.message)) from None
    emit(payload, fmt, "Codex App Parity Posthoc Check", markdown=render_parity_markdown)


# --- case-analysis-candidates (docs/formats/cli.md §14, docs/formats/history_registry_rollout.md
# §11) ----------------------


@click.command("case-analysis-candidates")
@click.option("--run-ledger-path", default=None, help="Ledger JSON (default: project root's).")
@click.option(
    "--case-analysis-path",
    default=None,
    help="Case-analysis JSON (default: benchmark-case-analysis.json beside the ledger).",
)
@click.option(
    "--include-proposed-records", is_flag=True, help="Add an upsert proposal per candidate."
)
@click.option("--proposal-limit", type=int, default=None, help="Cap the proposals (default: none).")
@click.option(
    "--acceptance-policy",
    type=click.Choice(["proposal-only", "generated-safe"]),
    default="proposal-only",
    show_default=True,
    help="generated-safe accepts only decisions whose meaning is unambiguous.",
)
@click.option(
    "--apply-accepted",
    is_flag=True,
    help="Record the accepted entries (an event) and write the updated copy.",
)
@click.option("--output-case-analysis-path", default=None, help="Where the updated copy goes.")
@click.option(
    "--output-case-analysis-markdown-path", default=None, help="Also render it as Markdown here."
)
@format_option
@click.pass_context
def case_analysis_candidates_command(
    ctx: click.Context, output_format: str | None, **opts: Any
) -> None:
    """[loopx] Ledger cases the case analysis does not cover yet, ranked by their decision.

    Read-only unless --apply-accepted; the input analysis is never modified.

      benchledger benchmark case-analysis-candidates --include-proposed-records

      benchledger benchmark case-analysis-candidates --acceptance-policy generated-safe
        --apply-accepted --output-case-analysis-path analysis.next.json
    """

    fmt = resolve_format(ctx, output_format)
    root = ctx.find_root().obj or {}
    request = request_from_options(CaseAnalysisRequest, opts)
    shown = {
        "run_ledger_path": request.run_ledger_path,
        "case_analysis_path": request.case_analysis_path,
    }
    try:
        paths = resolve_case_analysis_paths(request, registry=root.get("registry"))
        shown = {
            "run_ledger_path": paths.ledger_display,
            "case_analysis_path": paths.analysis_display,
        }
        payload = case_analysis_payload(
            request, paths, db=root.get("db"), metadata=command_metadata()
        )
    except BenchledgerError as err:
        error = {"ok": False, **shown, "read_boundary": dict(READ_BOUNDARY), "error": err.message}
        raise _with_payload(err, error) from None
    emit(payload, fmt, "Benchmark Case Analysis Candidates", markdown=render_candidates_markdown)
