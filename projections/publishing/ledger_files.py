"""Rendering a ledger's JSON and Markdown from the read model, after the events commit.

Files are written atomically (temp file, rename), JSON first then Markdown, and their
digests are returned so the caller can record an ``export_written`` event.

They are not fsynced (``LEDGER_FILES_DURABLE``): the store is the durable copy and can always
render them again. At 30,000 rows the fsync of the ~90 MB JSON was most of an upsert's time,
and all it bought was that a power loss right after the command leaves the new file rather than
the old, an empty or a missing one. Each of those is a file whose bytes differ from its
committed ``export_written`` digest, so ``verify --files`` reports it and ``render`` rewrites
it (tests/test_ledger_file_crash.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchledger.ledger.store.faults import reach
from benchledger.projections.publishing.files import atomic_write
from benchledger.projections.publishing.ledger_stream import stream_ledger_json
from benchledger.projections.publishing.ledger_v0 import build_document, dump_json, render_markdown
from benchledger.projections.read_models.ledger_queries import LedgerQueries

LEDGER_FILES_DURABLE = False

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection


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

    The JSON and the Markdown are streamed from the read model's cached pieces
    (``ledger_stream``); a ledger the cache cannot render is built and dumped in full, to the
    same bytes. Either way the JSON is put in place first, then the Markdown.
    """
    meta = LedgerQueries(conn).ledger(ledger_id)
    if meta is None:
        return []  # nothing was ever upserted: no file to publish (and none to overwrite)
    streamed = stream_ledger_json(
        conn, ledger_id, meta, json_path, markdown_path, durable=LEDGER_FILES_DURABLE
    )
    if streamed is None:
        doc = ledger_document(conn, ledger_id)
        json_bytes = dump_json(doc)
        markdown_bytes = render_markdown(doc).encode("utf-8")
        atomic_write(json_path, json_bytes, durable=LEDGER_FILES_DURABLE)
        json_sha256 = hashlib.sha256(json_bytes).hexdigest()
        reach("mid_render")
        atomic_write(markdown_path, markdown_bytes, durable=LEDGER_FILES_DURABLE)
        markdown_sha256 = hashlib.sha256(markdown_bytes).hexdigest()
    else:
        json_sha256, markdown = streamed  # the Markdown is written, under its temp name
        try:
            reach("mid_render")
            markdown.publish()
        except BaseException:
            markdown.discard()
            raise
        markdown_sha256 = markdown.sha256
    return [
        {"path": str(json_path), "kind": "ledger_json", "sha256": json_sha256},
        {"path": str(markdown_path), "kind": "ledger_markdown", "sha256": markdown_sha256},
    ]
