"""Rendering a ledger's JSON and Markdown from the read model, after the events commit.

Files are written atomically (temp file, fsync, rename), JSON first then Markdown, and their
digests are returned so the caller can record an ``export_written`` event.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger.faults import reach
from projections.files import atomic_write
from projections.ledger_queries import LedgerQueries
from projections.ledger_v0 import build_document, dump_json, render_markdown

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


def ledger_document(conn: Connection, ledger_id: str) -> dict[str, Any]:
    queries = LedgerQueries(conn)
    meta = queries.ledger(ledger_id) or {}
    return build_document(
        queries.all_rows(ledger_id),
        updated_at=meta.get("updated_at") or "",
        update_policy=meta.get("update_policy"),
    )


def render_ledger_files(
    conn: Connection, ledger_id: str, json_path: Path, markdown_path: Path
) -> list[dict[str, str]]:
    """Write both files and return ``[{path, kind, sha256}]`` for the export event."""
    if LedgerQueries(conn).ledger(ledger_id) is None:
        return []  # nothing was ever upserted: no file to publish (and none to overwrite)
    doc = ledger_document(conn, ledger_id)
    json_bytes = dump_json(doc, from_json=True)
    markdown_bytes = render_markdown(doc).encode("utf-8")
    atomic_write(json_path, json_bytes)
    reach("mid_render")
    atomic_write(markdown_path, markdown_bytes)
    return [
        {
            "path": str(json_path),
            "kind": "ledger_json",
            "sha256": hashlib.sha256(json_bytes).hexdigest(),
        },
        {
            "path": str(markdown_path),
            "kind": "ledger_markdown",
            "sha256": hashlib.sha256(markdown_bytes).hexdigest(),
        },
    ]
