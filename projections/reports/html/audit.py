"""Where the numbers came from: the position the report was built at, the chain head there,
the event count, the result of ``verify`` at render time, and how to rebuild the same page.

The report is built at the last event that can change what it shows: ``export_written``
events (including the one this report itself appends) are left out. So rendering twice
without a new ledger event gives the same bytes, the export is recorded once, and the
position printed on the page names exactly the state it shows.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchledger.ledger.store.events import EXPORT_WRITTEN
from benchledger.projections.publishing.files import verify_exports

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection
    from benchledger.ledger.store.event_store import EventStore
REPORT_KIND = "report_html"  # the kind site.py records the report's files under
_LAST_CONTENT_EVENT = (
    "SELECT position, hash, recorded_at FROM events WHERE event_type <> ? "
    "ORDER BY position DESC LIMIT 1"
)


@dataclass(frozen=True)
class Audit:
    position: int
    event_count: int
    head_hash: str
    recorded_at: str
    verify_ok: bool
    verify_text: str
    reproduce: str
    files_ok: bool = True  # ``verify --files``: every published file as the store recorded it
    files_text: str = ""

    @property
    def badge(self) -> tuple[bool, str]:
        """The header badge: green only when the chain and the published files both verify."""
        if not self.verify_ok:
            return False, "chain BROKEN"
        if not self.files_ok:
            return False, "chain verified, files DIFFER"
        return True, "chain and files verified"


def build_audit(
    store: EventStore,
    conn: Connection,
    ledger_id: str,
    benchmark_ids: Sequence[str],
    link_artifacts: bool = False,
) -> Audit:
    found = conn.execute(_LAST_CONTENT_EVENT, (EXPORT_WRITTEN,)).first()
    position, head_hash, recorded_at = found if found else (0, "", "")
    count = conn.execute("SELECT count(*) FROM events WHERE position <= ?", (position,)).scalar()
    verified = store.verify()
    files_ok, files_text = _files_check(store)
    return Audit(
        position=int(position),
        event_count=int(count or 0),
        head_hash=str(head_hash),
        recorded_at=str(recorded_at),
        verify_ok=verified.ok,
        verify_text=_verify_text(verified.as_dict(), int(position)),
        reproduce=reproduce_command(ledger_id, benchmark_ids, link_artifacts),
        files_ok=files_ok,
        files_text=files_text,
    )


def _files_check(store: EventStore) -> tuple[bool, str]:
    """``verify --files`` at render time, told in counts and statuses only: the files' paths
    are local and never reach the page."""
    checked = verify_exports(store)
    # a report does not vouch for reports (its own earlier render among them): rendering
    # again must give the same page
    files = [f for f in checked.files if f.get("kind") != REPORT_KIND]
    statuses = Counter(str(f["status"]) for f in files)
    if checked.summary["ok"] and all(f["ok"] for f in files):
        return True, f"published files intact: {len(files)} file(s) match the store"
    parts = [f"{n} {status}" for status, n in sorted(statuses.items()) if status != "match"]
    if not checked.summary["ok"]:
        parts.append("events committed after the last render")
    listed = ", ".join(parts)
    return False, f"published files differ ({listed}): see `benchledger verify --files`"


def _verify_text(report: dict[str, Any], position: int) -> str:
    if report["ok"]:
        return f"chain intact: every event through position {position} re-hashed and matched"
    return (
        f"chain broken at position {report['first_bad_position']}: "
        f"{report.get('reason') or 'hash mismatch'}"
    )


def reproduce_command(
    ledger_id: str, benchmark_ids: Sequence[str], link_artifacts: bool = False
) -> str:
    """The command that renders this page again from a store at the same position (with
    ``--link-artifacts``, from the same files on disk too)."""
    argv = ["benchledger", "report", "--ledger-id", ledger_id]
    for benchmark_id in benchmark_ids:
        argv += ["--benchmark-id", benchmark_id]
    if link_artifacts:
        argv.append("--link-artifacts")
    return shlex.join(argv)
