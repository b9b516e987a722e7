"""``report --as-of``: the HTML report of the ledger as it stood at a past moment.

Built like the live report from scratch read models (``projections/history/as_of.py``) and the
events
up to that moment (copied into the scratch store, for the timeline and audit panel). Nothing
is recorded: an as-of read appends no event, so the directory must not be one the live store
published (its ``index.html`` recorded by ``export_written``).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.event_store import EventStore as Store
from benchledger.projections.history.as_of_sql import copy_events
from benchledger.projections.reports.html.site import (
    WrittenReport,
    check_out_dir,
    gather_request,
    render_files,
    write_directory,
)

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Database
    from benchledger.ledger.store.event_store import EventStore


def write_past_report(
    store: EventStore, scratch: Database, upto: int, request: Any, version: str
) -> WrittenReport:

    index = request.out_dir / "index.html"
    with store.database.connect() as conn:
        query = "SELECT 1 FROM rm_exports WHERE path = ?"
        if conn.execute(query, (str(index),)).first() is not None:
            raise InputError(
                f"--out {request.out_dir.name} holds the live store's published report; "
                "write the past report to another directory"
            )
    check_out_dir(request.out_dir)
    copy_events(store, scratch, upto)
    with scratch.connect() as conn:
        contents = gather_request(Store(scratch), conn, request)
    files = render_files(contents, version)
    write_directory(request.out_dir, files)
    sha256 = hashlib.sha256(files["index.html"]).hexdigest()
    exports = [{"path": str(index), "kind": "report_html", "sha256": sha256}]
    return WrittenReport(exports, contents.link_counts)
