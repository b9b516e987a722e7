"""Resolving a user's compact-run input (docs/formats/benchmark_run_v0.md §2): a record, a nested
``benchmark_run``, a Harbor reducer wrapper or a batch.

A user's record is type-checked before compaction (``record_input``), because compaction's
leniency would silently coerce wrong types; adapter output is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.json_input import parse_json
from benchledger.ledger.rules.record.compaction import compact_run, is_compactable
from benchledger.ledger.rules.record.fields import RECORD_SCHEMA_VERSION
from benchledger.ledger.rules.record.input import check_input_types

HARBOR_WRAPPER_SCHEMA = "harbor_job_result_reducer_v0"
BATCH_SCHEMA = "benchmark_run_batch_v0"
NOT_AN_OBJECT = "ledger input JSON must contain an object"
NOT_COMPACTABLE = {
    "upsert": (
        "--benchmark-run-json did not contain a compactable benchmark_run_v0 object or "
        "harbor_job_result_reducer_v0 wrapper with compact_benchmark_run"
    ),
    "parity": "--benchmark-run-json did not contain a compactable benchmark_run_v0 object",
    "builder": "benchmark command did not produce a compactable benchmark_run_v0",
}


def _unwrap_single(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A nested ``benchmark_run`` (checked first), then the object itself (§2 rows 1–2)."""
    nested = data.get("benchmark_run")
    if isinstance(nested, Mapping) and nested.get("schema_version") == RECORD_SCHEMA_VERSION:
        return nested
    if data.get("schema_version") == RECORD_SCHEMA_VERSION:
        return data
    return None


def _resolve_one(data: Any) -> tuple[Mapping[str, Any] | None, str]:
    if not isinstance(data, Mapping):
        return None, RECORD_SCHEMA_VERSION
    found = _unwrap_single(data)
    if found is not None:
        return found, RECORD_SCHEMA_VERSION
    if data.get("schema_version") == HARBOR_WRAPPER_SCHEMA:
        inner = data.get("compact_benchmark_run")
        if isinstance(inner, Mapping):
            return _unwrap_single(inner), HARBOR_WRAPPER_SCHEMA
        return None, HARBOR_WRAPPER_SCHEMA
    return None, RECORD_SCHEMA_VERSION


def resolve_compact_input(
    data: object, *, context: str = "upsert"
) -> tuple[list[dict[str, Any]], str]:
    """Resolve a compact-run input (records, wrappers, batches) and compact every record.

    ``data`` is parsed JSON (or JSON text/bytes); ``context`` selects the error wording of the
    command that asked: "upsert", "parity" or "builder".
    """
    if context not in NOT_COMPACTABLE:
        raise ValueError(f"unknown resolve context: {context!r}")
    if isinstance(data, str | bytes | bytearray):
        data = _parse_json(data)
    if not isinstance(data, Mapping):
        raise InputError(NOT_AN_OBJECT)
    not_compactable = InputError(NOT_COMPACTABLE[context])
    if data.get("schema_version") == BATCH_SCHEMA and "benchmark_run" not in data:
        items = data.get("benchmark_runs")
        if not isinstance(items, list) or not items:
            raise not_compactable
        records = [
            _compact_resolved(_resolve_one(item)[0], not_compactable, context, f"[{i}] ")
            for i, item in enumerate(items)
        ]
        return records, BATCH_SCHEMA
    found, kind = _resolve_one(data)
    return [_compact_resolved(found, not_compactable, context)], kind


def _compact_resolved(
    found: Mapping[str, Any] | None, error: InputError, context: str, where: str = ""
) -> dict[str, Any]:
    if found is None:
        raise error
    if context != "builder":  # a user's record: wrong types are errors, not coerced
        try:
            check_input_types(found)
        except InputError as wrong:
            if not where:
                raise
            raise InputError(f"benchmark_runs{where.strip()}: {wrong.message}") from None
    record = compact_run(found)
    if not is_compactable(record):
        raise error
    return record


def _parse_json(text: str | bytes | bytearray) -> object:
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    return parse_json(raw, what=NOT_AN_OBJECT, unique_keys=True)
