"""``benchmark run``: read the source, decide, append in one transaction, render after commit.

The store is opened only once the source was read, so a rejected input never creates or
migrates a database. A dry run computes the same payload and the same run ids, lists the events
it would append, and writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchledger.ledger.core.clock import utc_now_seconds
from benchledger.ledger.core.errors import BenchledgerError
from benchledger.ledger.core.ledger_target import LedgerTarget, resolve_ledger_target
from benchledger.ledger.core.registry import (
    CommandContext,
    build_command_context,
    require_registry_file,
    validate_goal_id,
)
from benchledger.ledger.handlers.benchmark_run import (
    BenchmarkRunPlan,
    RunInputs,
    already_recorded_payload,
    check_writable,
    decide,
    idempotency_key,
)
from benchledger.ledger.handlers.benchmark_run_payload import error_payload
from benchledger.ledger.handlers.benchmark_run_sources import build_source
from benchledger.ledger.handlers.built_source import BuiltSource, Progress
from benchledger.ledger.handlers.store_ledger import ledger_the_store_knows
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.store.faults import reach
from benchledger.projections.publishing.render import RenderError, render_for_goal
from benchledger.projections.read_models.queries import StoreReads
from benchledger.services.files_seen import global_registry_file, stems_taken_on_disk
from benchledger.services.store_session import open_store


def run_benchmark(
    request: BenchmarkRunRequest,
    *,
    db: str | None,
    registry: str | None,
    runtime_root: str | None,
    metadata: dict[str, Any],
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Validate, build, decide, append in one transaction, render; return the payload.
    (The ``benchmark run`` command pauses the cyclic collector around all of it.)"""
    return _run_benchmark(request, db, registry, runtime_root, metadata, progress)


def _run_benchmark(
    request: BenchmarkRunRequest,
    db: str | None,
    registry: str | None,
    runtime_root: str | None,
    metadata: dict[str, Any],
    progress: Progress | None,
) -> dict[str, Any]:
    context = build_command_context(
        registry_flag=registry, runtime_root_flag=runtime_root, cwd=Path.cwd(), env=os.environ
    )
    goal_id = validate_goal_id(request.goal_id)
    try:
        if not request.no_global_sync:
            require_registry_file(context)
        built = build_source(request, env=os.environ, progress=progress)
        opened = open_store(db)
    except BenchledgerError as err:
        _attach_payload(err, request, context, goal_id, request.classification or "")
        raise
    with opened:
        try:
            return _run(opened, request, context, goal_id, built, metadata)
        except BenchledgerError as err:
            _attach_payload(err, request, context, goal_id, built.classification)
            raise


def _attach_payload(
    err: BenchledgerError,
    request: BenchmarkRunRequest,
    context: CommandContext,
    goal_id: str,
    classification: str,
) -> None:
    """Give the error the command's own envelope (§6.2) so ``--format json`` prints it."""
    err.details.setdefault(
        "payload",
        error_payload(
            dry_run=not request.execute,
            registry=context.registry_label,
            runtime_root=str(context.runtime_root),
            goal_id=goal_id,
            classification=classification,
            error=err.message,
        ),
    )


def _run(
    opened: Any,
    request: BenchmarkRunRequest,
    context: CommandContext,
    goal_id: str,
    built: BuiltSource,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    target = _ledger_target(opened, request) if request.update_run_ledger else None
    inputs = RunInputs(
        context=context,
        goal_id=goal_id,
        now=utc_now_seconds(),
        built=built,
        target=target,
        stems_taken_on_disk=stems_taken_on_disk(context.runtime_root, goal_id),
        global_registry_file=lambda: global_registry_file(context),
    )
    key = idempotency_key(goal_id, built, request, target.ledger_id if target else None)
    if request.execute:
        check_writable(context, target)
    reach("before_transaction")
    plan: BenchmarkRunPlan | None = None
    # Its temporary files in memory: each statement appends a bounded batch of events, whose
    # temporary table and statement journal would otherwise be files written and deleted
    # statement by statement (``SqliteDatabase.begin``).
    with opened.store.transaction(metadata, temp_in_memory=True) as uow:
        existing = opened.store.events_for_key(uow.conn, key)
        if not existing:
            plan = decide(StoreReads(uow.conn), request, inputs)
            if request.execute:
                uow.append(plan.events, idempotency_key=key)
                reach("after_append")
    reach("after_commit")
    if plan is None:
        positions = (existing[0].position, existing[-1].position)
        payload = already_recorded_payload(request, inputs, positions)
        if request.execute and not request.no_render:
            _render(opened, context, goal_id, None, target, payload)
        return payload
    payload = plan.payload(dry_run=not request.execute)
    if request.execute and not request.no_render:
        opened.store.database.checkpoint_soon()  # overlaps the file writes that follow
        payload.update(_render(opened, context, goal_id, plan, target, payload))
    return payload


def _ledger_target(opened: Any, request: BenchmarkRunRequest) -> LedgerTarget:
    """The named ledger, else the one the store knows (so a second ingest lands beside the
    first without repeating ``--run-ledger-path``), else the default file."""
    target = resolve_ledger_target(request.run_ledger_path, ledger_id=request.ledger_id)
    named = request.run_ledger_path is not None or request.ledger_id is not None
    if named:
        return target
    with opened.store.database.connect() as conn:
        return ledger_the_store_knows(StoreReads(conn), target, named=False)


def _render(
    opened: Any,
    context: CommandContext,
    goal_id: str,
    plan: BenchmarkRunPlan | None,
    target: LedgerTarget | None,
    payload: dict[str, Any],
) -> dict[str, Any]:
    """Render every file the events changed; a failure is an error (stderr, exit 1) that
    still reports what was committed. A retried input re-renders everything of the goal."""

    try:
        exports = render_for_goal(
            opened,
            context.runtime_root,
            goal_id,
            stems=plan.stems if plan else None,
            appended=plan.run_records() if plan else None,
            ledger_target=target,
            global_registry=plan.synced if plan else True,
            backup=plan.backup if plan else None,
        )
    except RenderError as err:
        if plan is None:
            raise
        err.details["payload"] = {**payload, "ok": False, "appended": True, "error": err.message}
        raise
    return {"rendered_files": len(exports)}
