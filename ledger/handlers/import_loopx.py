"""``benchledger import loopx-ledger``: an existing loopx ledger becomes events.

The event keeps every row exactly as the file stored it, with the benchmark and case keys it sat
under (``row_locations``); the read model holds each row as loopx 0.4.8 reads it back
(``ledger.loopx_reading``). Large ledgers are split into chunks of rows so no single event
grows without bound.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

from ledger.errors import InputError
from ledger.events import LEDGER_IMPORTED, NewEvent
from ledger.ledger_target import LedgerTarget

LEDGER_SCHEMA = "benchmark_run_ledger_v0"
IMPORT_CHUNK_ROWS = 500


def load_ledger_document(data: bytes, name: str) -> dict[str, Any]:
    import orjson

    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{name} is not valid JSON: {exc.args[0].splitlines()[0]}") from None
    if not isinstance(document, dict):
        raise InputError("benchmark run ledger must be a JSON object")
    if document.get("schema_version") != LEDGER_SCHEMA:
        raise InputError(f"benchmark run ledger must use schema_version={LEDGER_SCHEMA}")
    if not isinstance(document.get("benchmarks", {}), dict):
        # Without it there is no row to import; an empty ledger would misreport the file.
        raise InputError("benchmark run ledger benchmarks must be a JSON object")
    return document


def document_rows_as_stored(document: Mapping[str, Any]) -> Iterator[tuple[dict, str, str]]:
    """Every run of the document in document order, untouched, with its benchmark and case keys."""
    benchmarks = document.get("benchmarks")
    for benchmark_key, node in (benchmarks if isinstance(benchmarks, Mapping) else {}).items():
        cases = node.get("cases") if isinstance(node, Mapping) else None
        for case_key, case in (cases if isinstance(cases, Mapping) else {}).items():
            runs = case.get("runs") if isinstance(case, Mapping) else None
            for run in runs if isinstance(runs, list) else []:
                if isinstance(run, Mapping):
                    yield dict(run), str(benchmark_key), str(case_key)


def plan_import(data: bytes, *, name: str, target: LedgerTarget) -> tuple[list[NewEvent], dict]:
    """Events for the whole document plus a summary; the caller appends them in one go."""
    document = load_ledger_document(data, name)
    located = list(document_rows_as_stored(document))
    rows = [row for row, _, _ in located]
    locations = [[benchmark_key, case_key] for _, benchmark_key, case_key in located]
    source_sha256 = hashlib.sha256(data).hexdigest()
    starts = range(0, len(rows), IMPORT_CHUNK_ROWS)
    chunks = [
        (rows[i : i + IMPORT_CHUNK_ROWS], locations[i : i + IMPORT_CHUNK_ROWS]) for i in starts
    ]
    events = []
    for index, (chunk, chunk_locations) in enumerate(chunks or [([], [])]):
        events.append(
            NewEvent(
                target.stream,
                LEDGER_IMPORTED,
                {
                    "ledger_id": target.ledger_id,
                    "ledger_path": target.display_path,
                    "rows": chunk,
                    "row_locations": chunk_locations,
                    "updated_at": document.get("updated_at"),
                    "update_policy": document.get("update_policy"),
                    "provenance": {
                        "kind": "imported",
                        "format": "loopx_benchmark_run_ledger_v0",
                        "source_sha256": source_sha256,
                        "source_name": name,
                        "chunk": index + 1,
                        "chunks": max(1, len(chunks)),
                        "row_count": len(rows),
                    },
                },
            )
        )
    summary = {
        "source": name,
        "source_sha256": source_sha256,
        "row_count": len(rows),
        "archived_row_count": sum(1 for r in rows if r.get("archive_state") == "archived"),
        "benchmark_count": len(document.get("benchmarks") or {}),
        "event_count": len(events),
    }
    return events, summary


def import_idempotency_key(target: LedgerTarget, data: bytes) -> str:
    return f"import:{target.ledger_id}:{hashlib.sha256(data).hexdigest()}"
