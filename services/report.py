"""``benchledger report``: the static HTML report of one stored ledger, live or as of a moment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import resolve_ledger_target
from benchledger.ledger.handlers.store_ledger import ledger_the_store_knows
from benchledger.projections.history.past_report import write_past_report
from benchledger.projections.read_models.queries import StoreReads
from benchledger.projections.reports.html.site import (
    ReportRequest,
    WrittenReport,
    require_report_extra,
    write_report,
)
from benchledger.services.as_of_reads import Progress, read_database
from benchledger.services.store_session import open_store


def run_report(
    *,
    out_dir: str,
    benchmark_ids: tuple[str, ...],
    run_ledger_path: str | None,
    ledger_id: str | None,
    as_of: str | None,
    db: str | None,
    version: str,
    progress: Progress | None = None,
    link_artifacts: bool = False,
) -> dict[str, Any]:
    """Write the report files; the payload names the index page, counts the files and says
    whether the cells link to the runs' files on this disk (and how many were found)."""
    require_report_extra()
    target = resolve_ledger_target(run_ledger_path, ledger_id=ledger_id)
    out = Path(out_dir).expanduser()
    moment = None
    with open_store(db) as opened:
        with opened.store.database.connect() as conn:
            named = run_ledger_path is not None or ledger_id is not None
            target = ledger_the_store_knows(StoreReads(conn), target, named=named)
        wanted = tuple(dict.fromkeys(benchmark_ids))
        request = ReportRequest(target.ledger_id, out.absolute(), wanted, link_artifacts)
        if as_of is None:
            written = _live_report(opened, request, version)
        else:
            written, moment = _past_report(opened, request, as_of, version, progress)
    as_of_block = {"as_of": moment} if moment is not None else {}
    links = {"artifact_links": written.link_counts} if written.link_counts is not None else {}
    return {
        "ok": True,
        **as_of_block,
        "report": str(out / "index.html"),
        "files": len(written.exports),
        "artifacts_linked": link_artifacts,
        **links,
    }


def _live_report(opened: Any, request: Any, version: str) -> WrittenReport:
    with opened.store.database.connect() as conn:
        if StoreReads(conn).ledger(request.ledger_id) is None:
            raise InputError(f"no ledger {request.ledger_id} in the store")
    return write_report(opened, request, version)


def _past_report(
    opened: Any, request: Any, as_of: str, version: str, progress: Progress | None
) -> tuple[WrittenReport, Any]:
    # the past report copies the events up to that moment into its scratch store
    with read_database(opened, as_of, progress, own_file=True) as (database, moment):
        with database.connect() as conn:
            if StoreReads(conn).ledger(request.ledger_id) is None:
                raise InputError(f"no ledger {request.ledger_id} in the store at that moment")
        position = moment["position"] if moment is not None else opened.store.head_position()
        written = write_past_report(opened.store, database, position, request, version)
    return written, moment
