"""``benchledger import loopx-ledger``: an existing loopx ledger becomes events.

The event keeps every row exactly as the file stored it, with the benchmark and case keys it sat
under (``row_locations``); the read model holds each row as loopx 0.4.8 reads it back
(``ledger.sources.loopx``). Large ledgers are split into chunks of rows so no single event
grows without bound.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.input_files import shown_path
from benchledger.ledger.core.json_input import json_type, parse_json, too_deep
from benchledger.ledger.core.ledger_target import LedgerTarget
from benchledger.ledger.core.safety import finite_number, public_json
from benchledger.ledger.rules.row.rows import LEDGER_SCHEMA, document_rows_as_stored
from benchledger.ledger.store.events import LEDGER_IMPORTED, NewEvent

IMPORT_CHUNK_ROWS = 500


def load_ledger_document(data: bytes, name: str) -> dict[str, Any]:
    document = parse_json(data, what=f"{name} is not valid JSON")
    if not isinstance(document, dict):
        raise InputError("benchmark run ledger must be a JSON object")
    if document.get("schema_version") != LEDGER_SCHEMA:
        raise InputError(f"benchmark run ledger must use schema_version={LEDGER_SCHEMA}")
    if not isinstance(document.get("benchmarks", {}), dict):
        # Without it there is no row to import; an empty ledger would misreport the file.
        raise InputError("benchmark run ledger benchmarks must be a JSON object")
    return document


# The row fields the store indexes and the views expose; a value of another type would either
# be coerced on the way into a column or refused by the database mid-import.
_TEXT_FIELDS = (
    "run_id",
    "benchmark_id",
    "case_id",
    "arm_id",
    "status",
    "score_status",
    "failure_class",
    "run_group_id",
    "job_name",
    "recorded_at",
    "archive_state",
)


def check_importable(document: Mapping[str, Any], name: str) -> None:
    """Refuse a document an import would read only in part.

    The walk below skips what it cannot read, which is right for a projection but would make
    an import drop a benchmark whose ``cases`` is not an object (and the rows under it) without
    a word; here every level of the tree is checked first and the first bad one is named, by
    its path in the document, with the type found.
    """
    for benchmark_key, node in document.get("benchmarks", {}).items():
        where = f"benchmarks[{_key(benchmark_key)}]"
        _require(node, dict, where, name)
        cases = node.get("cases", {})
        _require(cases, dict, f"{where}.cases", name)
        for case_key, case in cases.items():
            case_where = f"{where}.cases[{_key(case_key)}]"
            _require(case, dict, case_where, name)
            runs = case.get("runs", [])
            _require(runs, list, f"{case_where}.runs", name)
            for index, run in enumerate(runs):
                run_where = f"{case_where}.runs[{index}]"
                _require(run, dict, run_where, name)
                _check_row_types(run, run_where, name)


def _check_row_types(run: Mapping[str, Any], where: str, name: str) -> None:
    for field in _TEXT_FIELDS:
        value = run.get(field)
        if value is not None and not isinstance(value, str):
            _wrong(f"{where}.{field}", "a string", value, name)
    score = run.get("official_score")
    if score is not None and finite_number(score) is None:
        _wrong(f"{where}.official_score", "a number within 64 bits", score, name)
    passed = run.get("official_passed")
    if passed is not None and not isinstance(passed, bool):
        _wrong(f"{where}.official_passed", "true or false", passed, name)


_JSON_TYPES: dict[type, str] = {dict: "an object", list: "a list"}


def _require(value: Any, kind: type, where: str, name: str) -> None:
    if not isinstance(value, kind):
        _wrong(where, _JSON_TYPES[kind], value, name)


def _wrong(where: str, expected: str, value: Any, name: str) -> None:
    raise InputError(
        f"{name}: {where} must be {expected}, got {json_type(value)}; "
        "fix the file (nothing was imported)"
    )


# orjson writes at most this many nested containers; an event payload holds the rows at its
# third level (payload, ``rows``, the row) and ``update_policy`` at its second.
ORJSON_MAX_DEPTH = 254


def check_storable_depth(
    document: Mapping[str, Any], rows: list[Any], locations: list[list[str]], name: str
) -> None:
    """Refuse, naming the file and the field, a row nested deeper than an event can store.

    The file itself may nest up to orjson's reading limit (1,024), far past what it writes
    (254), so without this a valid file failed at append as "payload is not valid JSON"
    without a word of where. One serialisation of the rows at the depth the payload gives
    them is the whole check; the walk that names the field runs only when it fails."""
    try:
        orjson.dumps({"rows": rows, "update_policy": document.get("update_policy")})
    except (TypeError, orjson.JSONEncodeError) as exc:
        if "ecursion" not in str(exc):
            return  # not a depth: the append's own checks say what it is
    else:
        return
    limit = ORJSON_MAX_DEPTH - 2
    for row, (benchmark_key, case_key) in zip(rows, locations, strict=True):
        path = too_deep(row, limit)
        if path is not None:
            where = f"benchmarks[{_key(benchmark_key)}].cases[{_key(case_key)}] run {path}"
            raise InputError(
                f"{name}: {where} is nested more than {limit} levels deep within its run, "
                "deeper than benchledger can store; flatten it (nothing was imported)"
            )
    path = too_deep(document.get("update_policy"), ORJSON_MAX_DEPTH - 1)
    if path is not None:
        raise InputError(
            f"{name}: update_policy.{path} is nested deeper than benchledger can store; "
            "flatten it (nothing was imported)"
        )


def _key(key: str) -> str:
    return '"' + shown_path(key[:80]) + '"'


def plan_import(data: bytes, *, name: str, target: LedgerTarget) -> tuple[list[NewEvent], dict]:
    """Events for the whole document plus a summary; the caller appends them in one go."""
    document = load_ledger_document(data, name)
    check_importable(document, name)
    located = list(document_rows_as_stored(document))
    rows = [row for row, _, _ in located]
    locations = [[benchmark_key, case_key] for _, benchmark_key, case_key in located]
    check_storable_depth(document, rows, locations, name)
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
        "public_safety_dropped_field_count": sum(public_json(dict(r))[1] for r in rows),
        "benchmark_count": len(document.get("benchmarks") or {}),
        "event_count": len(events),
    }
    return events, summary


def import_idempotency_key(target: LedgerTarget, data: bytes) -> str:
    return f"import:{target.ledger_id}:{hashlib.sha256(data).hexdigest()}"


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}
