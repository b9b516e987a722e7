"""``run-ledger-check``: is every terminal run of a goal's history also in the ledger?
(docs/formats/ledger_v0.md §12)

A history record becomes the row it describes (benchledger's row rules); it matches a ledger
row by run id or by signature, and unmatched runs are listed with a catch-up command.
"""

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.read_boundary import LEDGER_READ_BOUNDARY as READ_BOUNDARY
from benchledger.ledger.rules.record.compaction import compact_run
from benchledger.ledger.rules.row.build import build_row, drift_signature
from benchledger.ledger.rules.row.rows import LEDGER_SCHEMA
from benchledger.ledger.rules.row.scoring import is_terminal

# ---------------------------------------------------------------------------------------------
# §12 drift check
# ---------------------------------------------------------------------------------------------

DRIFT_SCHEMA = "benchmark_run_ledger_drift_v0"
_RUN_SCHEMA = "benchmark_run_v0"


def resolve_benchmark_run(record: Any) -> dict | None:
    """The ``benchmark_run_v0`` inside a history/index record (docs/formats/benchmark_run_v0.md
    §2)."""
    if not isinstance(record, Mapping):
        return None
    nested = record.get("benchmark_run")
    if isinstance(nested, Mapping) and nested.get("schema_version") == _RUN_SCHEMA:
        return dict(nested)
    if record.get("schema_version") == _RUN_SCHEMA:
        return dict(record)
    if record.get("schema_version") == "harbor_job_result_reducer_v0":
        return resolve_benchmark_run(record.get("compact_benchmark_run"))
    return None


def _compacted(record: dict) -> dict:
    """History records are stored compacted; re-compact so the id matches what an upsert of
    the same record computes (compaction is idempotent)."""
    return compact_run(record)


def _display_ledger_path(ledger_path: str) -> str:
    text = str(ledger_path or "benchmark-run-ledger.json")
    if text.startswith(("/", "~", "\\")) or (len(text) > 2 and text[1] == ":"):
        return "<benchmark-run-ledger.json>"
    return text


def _history_row(record: Mapping[str, Any], run: dict, now: str) -> dict | None:
    generated_at = record.get("generated_at")
    history_ref = record.get("json_path")
    try:
        row, _ = build_row(run, recorded_at=generated_at or None, history_ref=history_ref, now=now)
    except InputError:
        try:
            row, _ = build_row(run, history_ref=history_ref, now=now)
        except InputError:
            return None
    return row


def history_rows(
    history_records: Sequence[Mapping[str, Any]], *, history_limit: int, now: str
) -> list[tuple[Mapping[str, Any], dict | None]]:
    """The newest ``history_limit`` records, each with the ledger row it describes (None when
    it holds no usable run)."""
    out: list[tuple[Mapping[str, Any], dict | None]] = []
    for record in history_records[: max(int(history_limit), 0)]:
        run = resolve_benchmark_run(record)
        out.append((record, _history_row(record, _compacted(run), now) if run else None))
    return out


def drift_check(
    history_records: Sequence[Mapping[str, Any]],
    ledger_rows: Sequence[Mapping[str, Any]],
    *,
    ledger_path: str = "benchmark-run-ledger.json",
    history_limit: int = 500,
    limit: int = 20,
    now: str,
    ledger_schema_version: str = LEDGER_SCHEMA,
    rows: Sequence[tuple[Mapping[str, Any], dict | None]] | None = None,
) -> dict:
    """Is every terminal run of the goal's history also in the ledger? (§12)

    ``history_records`` are index records newest first; the ``history_limit`` newest are read.
    ``rows``: ``history_rows`` of them when the caller already built them (building a row
    compacts the record, the larger part of a check's cost).
    """
    history_limit, limit = max(int(history_limit), 0), max(int(limit), 0)
    if rows is None:
        rows = history_rows(history_records, history_limit=history_limit, now=now)
    ids = {str(row.get("run_id")) for row in ledger_rows if row.get("run_id")}
    # A row without a benchmark id (the bare run-id stubs drift_view passes for untouched
    # cases) can never share a signature with a history row, which always has one.
    signatures = {drift_signature(row) for row in ledger_rows if row.get("benchmark_id")}
    shown_path = _display_ledger_path(ledger_path)
    counts = {"checked": 0, "terminal": 0, "matched": 0, "non_terminal": 0}
    missing: list[dict] = []
    for record, row in rows:
        if row is None:
            continue
        counts["checked"] += 1
        if not is_terminal(row):
            counts["non_terminal"] += 1
            continue
        counts["terminal"] += 1
        if row["run_id"] in ids or drift_signature(row) in signatures:
            counts["matched"] += 1
        else:
            missing.append(_missing_item(row, record.get("generated_at"), shown_path))
    return {
        "schema_version": DRIFT_SCHEMA,
        "ok": True,
        "drift_detected": bool(missing),
        "ledger_schema_version": ledger_schema_version,
        "ledger_run_count": len(ledger_rows),
        "checked_history_run_count": counts["checked"],
        "terminal_history_run_count": counts["terminal"],
        "matched_history_run_count": counts["matched"],
        "non_terminal_skipped_count": counts["non_terminal"],
        "missing_ledger_run_count": len(missing),
        "missing_runs": missing[:limit],
        "truncated": len(missing) > limit,
        "limit": limit,
        "read_boundary": dict(READ_BOUNDARY),
    }


def _quoted(text: str) -> str:
    """Shell-quote real values; leave ``<placeholder>`` tokens readable."""
    return text if text.startswith("<") and text.endswith(">") else shlex.quote(text)


def _missing_item(row: Mapping[str, Any], generated_at: Any, ledger_path: str) -> dict:
    stamp = str(generated_at or row.get("recorded_at") or "")
    command = " ".join(
        [
            "benchledger benchmark run-ledger-upsert",
            "--benchmark-run-json <compact-benchmark-run-v0.json>",
            f"--run-ledger-path {_quoted(ledger_path)}",
            f"--run-group-id {shlex.quote(str(row.get('run_group_id') or ''))}",
            f"--arm-id {shlex.quote(str(row.get('arm_id') or ''))}",
            f"--recorded-at {shlex.quote(stamp)}",
            "--execute",
        ]
    )
    item = {
        "run_id": row.get("run_id"),
        "generated_at": stamp or None,
        "benchmark_id": row.get("benchmark_id"),
        "case_id": row.get("case_id"),
        "arm_id": row.get("arm_id"),
        "mode": row.get("mode"),
        "job_name": row.get("job_name"),
        "score_status": row.get("score_status"),
        "official_score": row.get("official_score"),
        "failure_class": row.get("failure_class"),
        "catch_up_command_template": command,
    }
    return item
