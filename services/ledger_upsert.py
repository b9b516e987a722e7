"""``benchmark run-ledger-upsert``: read the compact input, decide the upserts, append, render."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchledger.ledger.core.clock import utc_now_seconds
from benchledger.ledger.core.errors import BenchledgerError, InputError
from benchledger.ledger.core.input_files import COMPACT_JSON_LIMIT
from benchledger.ledger.core.json_input import parse_json
from benchledger.ledger.core.ledger_target import LedgerTarget, resolve_ledger_target
from benchledger.ledger.core.read_boundary import LEDGER_READ_BOUNDARY as READ_BOUNDARY
from benchledger.ledger.handlers.ledger_store import require_store_ledger
from benchledger.ledger.handlers.ledger_upsert import (
    RowOptions,
    ledger_result,
    plan_ledger_upsert,
)
from benchledger.ledger.requests.write_controls import LedgerUpsertRequest
from benchledger.ledger.rules.record.compact_input import NOT_AN_OBJECT, resolve_compact_input
from benchledger.projections.publishing.render import render_ledger
from benchledger.projections.read_models.queries import StoreReads
from benchledger.services.inputs import read_input
from benchledger.services.store_session import open_store


def run_ledger_upsert(
    request: LedgerUpsertRequest, *, db: str | None, metadata: dict[str, Any]
) -> dict[str, Any]:
    """The upsert's payload; a user error carries the command's envelope (docs/formats/cli.md
    §3)."""
    target_display = request.run_ledger_path or "benchmark-run-ledger.json"
    try:
        request.check("benchmark run-ledger-upsert")
        if bool(request.benchmark_run_json) == bool(request.post_launch_json):
            raise InputError("provide exactly one of --benchmark-run-json or --post-launch-json")
        target = resolve_ledger_target(request.run_ledger_path, ledger_id=request.ledger_id)
        target_display = target.display_path
        records, input_kind, source_path = _resolve_records(request)
        return _apply_upsert(request, db, metadata, target, records, input_kind, source_path)
    except BenchledgerError as err:
        err.details.setdefault(
            "payload",
            {
                "ok": False,
                "dry_run": not request.execute,
                "benchmark_run_ledger": {"updated": False, "ledger_path": target_display},
                "read_boundary": READ_BOUNDARY,
            },
        )
        raise


def _resolve_records(request: LedgerUpsertRequest) -> tuple[list[dict], str, str | None]:

    post_launch = bool(request.post_launch_json)
    given = request.post_launch_json or request.benchmark_run_json or ""
    raw, source_path = read_input(given, COMPACT_JSON_LIMIT)
    shown = "standard input" if source_path is None else Path(given).name
    data = parse_json(raw, what=f"{NOT_AN_OBJECT}; {shown}", unique_keys=True)
    if not isinstance(data, dict):
        raise InputError("ledger input JSON must contain an object")
    if post_launch:
        schema = "terminal_bench_post_launch_materialization_v0"
        if data.get("schema_version") != schema:
            raise InputError(f"--post-launch-json did not contain a compactable {schema} object")
        return [data], schema, source_path
    records, input_kind = resolve_compact_input(data, context="upsert")
    return records, input_kind, source_path


def _apply_upsert(
    request: LedgerUpsertRequest,
    db: str | None,
    metadata: dict[str, Any],
    target: LedgerTarget,
    records: list[dict],
    input_kind: str,
    source_path: str | None,
) -> dict[str, Any]:
    row_options = RowOptions(
        run_group_id=request.run_group_id,
        arm_id=request.arm_id,
        arm_role=request.arm_role,
        run_key=request.run_key,
        notes=request.run_ledger_note,
        recorded_at=request.recorded_at,
        compact_artifact_ref=request.compact_artifact_ref or source_path,
    )
    now = utc_now_seconds()
    with open_store(db) as opened:
        with opened.store.transaction(metadata) as uow:
            reads = StoreReads(uow.conn)
            require_store_ledger(reads, target)
            plan = plan_ledger_upsert(
                records,
                target=target,
                options=[row_options] * len(records),
                reads=reads,
                now=now,
                ref_root=str(Path.cwd()),
            )
            if request.execute and plan.events:
                uow.append(plan.events)
        result = ledger_result(plan, target=target, dry_run=not request.execute)
        stale = plan.changed or not target.json_path.exists()
        if request.execute and not request.no_render and stale:
            render_ledger(opened, target)
            result["rendered"] = True
    return {
        "ok": True,
        "dry_run": not request.execute,
        "input_kind": input_kind,
        "benchmark_run_ledger": result,
        "read_boundary": READ_BOUNDARY,
    }
