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
from projections.ledger_stream import stream_ledger_json
from projections.ledger_v0 import build_document, dump_json, render_markdown

if TYPE_CHECKING:
    from ledger.connection import Connection


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
    """Write both files and return ``[{path, kind, sha256}]`` for the export event.

    The JSON is streamed from the read model's cached pieces (``ledger_stream``); a ledger the
    cache cannot render is built and dumped in full, to the same bytes.
    """
    meta = LedgerQueries(conn).ledger(ledger_id)
    if meta is None:
        return []  # nothing was ever upserted: no file to publish (and none to overwrite)
    streamed = stream_ledger_json(conn, ledger_id, meta, json_path)
    if streamed is None:
        doc = ledger_document(conn, ledger_id)
        json_bytes = dump_json(doc)
        markdown_bytes = render_markdown(doc).encode("utf-8")
        atomic_write(json_path, json_bytes)
        json_sha256 = hashlib.sha256(json_bytes).hexdigest()
    else:
        json_sha256, markdown_bytes = streamed
    reach("mid_render")
    atomic_write(markdown_path, markdown_bytes)
    return [
        {"path": str(json_path), "kind": "ledger_json", "sha256": json_sha256},
        {
            "path": str(markdown_path),
            "kind": "ledger_markdown",
            "sha256": hashlib.sha256(markdown_bytes).hexdigest(),
        },
    ]
