"""``render --as-of``: a past ledger's JSON and Markdown, from scratch read models.

The bytes are those a live render at that moment would have written (the same renderer). They
are printed, or written to a path the user names; never over a file the store has published,
and never recorded as an export: an as-of read appends nothing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import markdown_path_for
from benchledger.projections.publishing.ledger_files import render_ledger_files
from benchledger.projections.read_models.ledger_queries import LedgerQueries

if TYPE_CHECKING:
    from benchledger.ledger.core.ledger_target import LedgerTarget
    from benchledger.ledger.store.connection import Database
    from benchledger.ledger.store.event_store import EventStore


def render_past_ledger(
    store: EventStore, database: Database, target: LedgerTarget, output: Path | None
) -> dict[str, Any]:
    """The ledger in ``database`` (scratch read models): its document and Markdown when
    ``output`` is None, else the files written at ``output`` and beside it."""
    if output is not None:
        _refuse_published(store, target, output)
    with database.connect() as conn:
        if LedgerQueries(conn).ledger(target.ledger_id) is None:
            raise InputError(f"no ledger {target.ledger_id} in the store at that moment")
        if output is not None:
            written = render_ledger_files(conn, target.ledger_id, output, markdown_path_for(output))
            return {"ledger_id": target.ledger_id, "rendered": written}
        with tempfile.TemporaryDirectory(prefix="benchledger-as-of-render-") as tmp:
            json_path = Path(tmp) / "ledger.json"
            render_ledger_files(conn, target.ledger_id, json_path, markdown_path_for(json_path))
            document = orjson.loads(json_path.read_bytes())
            markdown = markdown_path_for(json_path).read_text(encoding="utf-8")
    return {"ledger_id": target.ledger_id, "benchmark_run_ledger": document, "markdown": markdown}


def _refuse_published(store: EventStore, target: LedgerTarget, output: Path) -> None:
    """An as-of render must not replace a live file: the ledger's own pair, or any file the
    store has published (``verify --files`` would then report it changed)."""
    if output.suffix == ".md":
        raise InputError(
            "--output-json names the JSON file; the Markdown view is written beside it"
        )
    with store.database.connect() as conn:
        published = {str(path) for (path,) in conn.execute("SELECT path FROM rm_exports")}
    live = {str(target.json_path), str(target.markdown_path), *published}
    for path in (output, markdown_path_for(output)):
        if str(path) in live or str(path.resolve()) in live:
            raise InputError(
                f"{path.name} is a published file of the live store; "
                "write the past ledger to another path"
            )
    if output.is_dir():
        raise InputError(f"--output-json is a directory: {output.name}")
