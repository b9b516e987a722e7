"""The ``benchmark run`` pipeline shared by every source (Harbor, BenchFlow, planned runs).

This is composition, not rules: it validates first, asks a source adapter for records, asks the
row/registry/rollout rules for their decisions, appends every event of the invocation in one
transaction, and renders files only after the commit. A dry run computes the same payload and
the same run ids, lists the events it would append, and writes nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger.chain import canonical_json
from ledger.clock import utc_now_seconds
from ledger.errors import BenchledgerError, InputError
from ledger.events import GLOBAL_SYNCED, RUN_APPENDED, RUN_BUILT, NewEvent
from ledger.faults import reach
from ledger.handlers.run_sources import BuiltSource
from ledger.registry import CommandContext, build_command_context, validate_goal_id


@dataclass
class PipelineOptions:
    """The options every ``benchmark run`` source shares (cli.md §5.1)."""

    benchmark: str
    goal_id: str
    execute: bool = False
    update_run_ledger: bool = False
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    run_group_id: str | None = None
    arm_id: str | None = None
    run_ledger_note: str | None = None
    classification: str | None = None
    recommended_action: str | None = None
    delivery_batch_scale: str | None = None
    delivery_outcome: str | None = None
    global_sync: bool = True
    render: bool = True


@dataclass
class Invocation:
    """One command's resolved environment: store, registry, runtime root, now."""

    opened: Any
    context: CommandContext
    goal_id: str
    now: str
    metadata: dict[str, Any]


def prepare(
    db: str | None,
    registry: str | None,
    runtime_root: str | None,
    goal_id_raw: str,
    metadata: dict[str, Any],
) -> tuple[CommandContext, str]:
    """Registry and runtime root resolved once, goal id validated: before any input is read."""
    context = build_command_context(
        registry_flag=registry, runtime_root_flag=runtime_root, cwd=Path.cwd(), env=os.environ
    )
    return context, validate_goal_id(goal_id_raw)


def idempotency_key(
    goal_id: str, built: BuiltSource, options: PipelineOptions, ledger_id: str | None
) -> str:
    """Same bytes read + same semantic options = same key; never the time or the cwd."""
    semantic = {
        "goal_id": goal_id,
        "benchmark": options.benchmark,
        "content": built.content_digest,
        "source": built.semantic_options,
        "ledger": ledger_id if options.update_run_ledger else None,
        "run_group_id": options.run_group_id,
        "arm_id": options.arm_id,
        "note": options.run_ledger_note,
        "classification": options.classification,
        "recommended_action": options.recommended_action,
        "delivery": [options.delivery_batch_scale, options.delivery_outcome],
        "global_sync": options.global_sync,
    }
    digest = hashlib.sha256(canonical_json(semantic).encode()).hexdigest()
    return f"benchmark_run:{digest}"


def run_pipeline(
    *,
    db: str | None,
    registry: str | None,
    runtime_root: str | None,
    options: PipelineOptions,
    build: Callable[[], BuiltSource],
    metadata: dict[str, Any],
) -> dict[str, Any]:
    """Validate, build, decide, append in one transaction, render; return the payload.

    The store is opened only once the source was read, so a rejected input never creates or
    migrates a database.
    """
    from commands.runtime import open_store

    context, goal_id = prepare(db, registry, runtime_root, options.goal_id, metadata)
    dry_run = not options.execute
    try:
        if options.global_sync:
            from ledger.registry import require_registry_file

            require_registry_file(context)
        built = build()
        opened = open_store(db)
    except BenchledgerError as err:
        _attach_payload(err, context, goal_id, dry_run, options.classification or "")
        raise
    try:
        return _run(opened, context, goal_id, options, built, metadata)
    except BenchledgerError as err:
        _attach_payload(err, context, goal_id, dry_run, built.classification)
        raise
    finally:
        opened.close()


def _attach_payload(
    err: BenchledgerError,
    context: CommandContext,
    goal_id: str,
    dry_run: bool,
    classification: str,
) -> None:
    """Give the error the command's own envelope (§6.2) so ``--format json`` prints it."""
    from projections.goal_runs import error_payload

    err.details.setdefault(
        "payload",
        error_payload(
            dry_run=dry_run,
            registry=context.registry_label,
            runtime_root=str(context.runtime_root),
            goal_id=goal_id,
            classification=classification,
            error=err.message,
        ),
    )


def _run(
    opened: Any,
    context: CommandContext,
    goal_id: str,
    options: PipelineOptions,
    built: BuiltSource,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    from projections.queries import StoreReads

    now = utc_now_seconds()
    dry_run = not options.execute
    target = _ledger_target(options, context) if options.update_run_ledger else None
    key = idempotency_key(goal_id, built, options, target.ledger_id if target else None)
    if options.execute:
        _check_writable(context, target, options)
    reach("before_transaction")
    with opened.store.transaction(metadata) as uow:
        reads = StoreReads(uow.conn)
        existing = opened.store.events_for_key(uow.conn, key)
        if existing:
            decision = None
        else:
            decision = _decide(reads, context, goal_id, options, built, target, now)
            if options.execute:
                uow.append(decision.events, idempotency_key=key)
                reach("after_append")
    reach("after_commit")
    if existing:
        return _already_recorded_payload(opened, context, goal_id, options, built, existing, target)
    payload = decision.payload(dry_run=dry_run)
    if options.execute and options.render:
        opened.store.database.checkpoint_soon()  # overlaps the file writes that follow
        payload.update(_render_after_commit(opened, context, goal_id, decision, target, payload))
    return payload


@dataclass
class Decision:
    """Everything one invocation decided, before it is appended."""

    events: list[NewEvent]
    payload_builder: Callable[[bool], dict[str, Any]]
    stems: list[str]
    backup: dict[str, Any] | None
    synced: bool

    def payload(self, *, dry_run: bool) -> dict[str, Any]:
        return self.payload_builder(dry_run)


def _decide(
    reads: Any,
    context: CommandContext,
    goal_id: str,
    options: PipelineOptions,
    built: BuiltSource,
    target: Any,
    now: str,
) -> Decision:
    from ledger.classification import recommended_action
    from ledger.handlers.ledger_upsert import RowOptions, ledger_result, plan_ledger_upsert
    from ledger.handlers.planned_link import link_planned
    from projections.goal_runs import (
        allocate_stems,
        build_run_record,
        index_path_rel,
        record_paths_rel,
        success_payload,
    )
    from projections.rollout import benchmark_run_event, rollout_payload_fields

    records = link_planned(built.records, reads.goal_records(goal_id))
    action = recommended_action(
        options.recommended_action, records[0], adapter_default=built.adapter_recommended_action
    )
    stems = allocate_stems(
        now, len(records), reads.goal_stems(goal_id) | _stems_on_disk(context.runtime_root, goal_id)
    )
    row_options = [
        RowOptions(
            run_group_id=options.run_group_id,
            arm_id=options.arm_id,
            notes=options.run_ledger_note,
            history_ref=record_paths_rel(goal_id, stem)[0],
        )
        for stem in stems
    ]
    ledger_plan = None
    if target is not None:
        from ledger.handlers.ledger_maintenance import require_store_ledger

        require_store_ledger(reads, target)
        ledger_plan = plan_ledger_upsert(
            records,
            target=target,
            options=row_options,
            reads=reads,
            decide_case=reads.decide_case,
            now=now,
            ref_root=str(context.project_root or Path.cwd()),
            runtime_root=str(context.runtime_root),
        )
    run_ids = _run_ids(records, row_options, ledger_plan, now)
    events: list[NewEvent] = []
    rollout_records = []
    stream = f"goal/{goal_id}"
    for record in records:
        events.append(
            NewEvent(
                stream,
                RUN_BUILT,
                {
                    "goal_id": goal_id,
                    "run_key": record.get("run_key"),
                    "record": record,
                    "provenance": built.provenance_for(record),
                    "content_digest": built.content_digest,
                    "warnings": built.warnings,
                },
            )
        )
    for record, stem, run_id in zip(records, stems, run_ids, strict=True):
        run_record = build_run_record(
            record,
            goal_id=goal_id,
            generated_at=now,
            classification=built.classification,
            recommended_action=action,
            delivery_batch_scale=options.delivery_batch_scale,
            delivery_outcome=options.delivery_outcome,
        )
        rollout = benchmark_run_event(
            record,
            goal_id=goal_id,
            run_id=run_id,
            action=action,
            recorded_at=now,
            history_stem=stem,
            classification=built.classification,
            delivery_outcome=options.delivery_outcome,
        )
        rollout_records.append(rollout)
        events.append(
            NewEvent(
                stream,
                RUN_APPENDED,
                {
                    "goal_id": goal_id,
                    "stem": stem,
                    "run_key": record.get("run_key"),
                    "run_id": run_id,
                    "generated_at": now,
                    "record": run_record,
                    "rollout_event": rollout,
                },
            )
        )
    if ledger_plan is not None:
        events.extend(ledger_plan.events)
    sync_payload, sync_event, backup = _plan_global_sync(reads, context, goal_id, options, now)
    if sync_event is not None:
        events.append(sync_event)
    json_paths = [record_paths_rel(goal_id, s)[0] for s in stems]
    md_paths = [record_paths_rel(goal_id, s)[1] for s in stems]

    def build_payload(dry_run: bool) -> dict[str, Any]:
        payload = success_payload(
            dry_run=dry_run,
            registry=context.registry_label,
            runtime_root=str(context.runtime_root),
            goal_id=goal_id,
            classification=built.classification,
            recommended_action=action,
            generated_at=now,
            records=records,
            json_paths=[str(context.runtime_root / p) for p in json_paths],
            markdown_paths=[str(context.runtime_root / p) for p in md_paths],
            index_path=str(context.runtime_root / index_path_rel(goal_id)),
            benchmark_cli=built.benchmark_cli,
            global_sync={**sync_payload, "dry_run": dry_run},
            delivery_batch_scale=options.delivery_batch_scale,
            delivery_outcome=options.delivery_outcome,
            discovery=built.discovery,
            selection=built.selection,
            benchmark_run_ledger=(
                ledger_result(ledger_plan, target=target, dry_run=dry_run)
                if ledger_plan is not None
                else None
            ),
            rollout=None if dry_run else rollout_payload_fields(rollout_records),
        )
        if built.warnings:
            payload["warnings"] = built.warnings
        payload["events"] = _event_summary(events, dry_run)
        return payload

    return Decision(events, build_payload, stems, backup, sync_event is not None)


def _event_summary(events: list[NewEvent], dry_run: bool) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for e in events:
        counts[e.event_type] = counts.get(e.event_type, 0) + 1
    return {"would_append" if dry_run else "appended": len(events), "by_type": counts}


def _run_ids(records: list[dict], row_options: list, ledger_plan: Any, now: str) -> list[str]:
    """The ledger identity of each record (ledger_v0 §5.15), used by rollout records too."""
    if ledger_plan is not None:
        return [o["entry"].get("run_id") for o in ledger_plan.outcomes]
    from ledger.rules.row import build_row

    return [
        build_row(r, now=now, run_group_id=o.run_group_id, arm_id=o.arm_id)[0]["run_id"]
        for r, o in zip(records, row_options, strict=True)
    ]


def _stems_on_disk(runtime_root: Path, goal_id: str) -> set[str]:
    from projections.goal_runs import stems_on_disk

    runs = runtime_root / "goals" / goal_id / "runs"
    try:
        return set(stems_on_disk(os.listdir(runs)))
    except OSError:
        return set()


def _ledger_target(options: PipelineOptions, context: CommandContext) -> Any:
    from ledger.ledger_target import resolve_ledger_target

    return resolve_ledger_target(options.run_ledger_path, ledger_id=options.ledger_id)


def _plan_global_sync(
    reads: Any, context: CommandContext, goal_id: str, options: PipelineOptions, now: str
):  # noqa: ANN202
    from projections.global_registry import skipped_disabled_payload

    if not options.global_sync:
        return skipped_disabled_payload(not options.execute), None, None
    return plan_global_sync(
        reads, context, goal_id, replace_state=False, execute=options.execute, now=now
    )


def plan_global_sync(
    reads: Any,
    context: CommandContext,
    goal_id: str | None,
    *,
    replace_state: bool,
    execute: bool,
    now: str,
) -> tuple[dict[str, Any], NewEvent | None, dict[str, Any] | None]:
    """The sync's payload, its ``global_synced`` event (None when skipped) and any backup.

    With no project registry file the goals known to the store are the source, so a fresh
    directory works without a hand-written registry (history_registry_rollout §7.1).
    """
    from projections.global_registry import sync_global

    known = set(reads.known_goal_ids()) | ({goal_id} if goal_id else set())
    source = (
        context.registry
        if context.registry_exists
        else {"schema_version": "0.1", "goals": [{"id": g} for g in sorted(known)]}
    )
    global_path = context.runtime_root / "registry.global.json"
    current = _read_json_file(global_path)
    if current is None:
        current = reads.global_registry()
    result = sync_global(
        current,
        source,
        goal_id=goal_id,
        replace_state=replace_state,
        now=now,
        source_registry=str(
            context.registry_path.resolve() if context.registry_path else global_path.parent
        ),
        runtime_root=str(context.runtime_root),
        registry_label=context.registry_label,
        dry_run=not execute,
        path_exists=lambda p: Path(p).exists(),
    )
    if result.document is None:
        return result.payload, None, None
    backup = (
        {"name": result.backup_name, "document": result.backup_document}
        if result.backup_name
        else None
    )
    event = NewEvent(
        "registry/global",
        GLOBAL_SYNCED,
        {
            "registry_id": "global",
            "document": result.document,
            "goal_ids": list(
                result.payload.get("synced_goal_ids") or ([goal_id] if goal_id else [])
            ),
            "actions": result.payload.get("actions"),
            "backup": backup,
        },
    )
    return result.payload, event, backup


def _read_json_file(path: Path) -> dict[str, Any] | None:
    from ledger.input_files import REGISTRY_LIMIT, read_regular_file
    from ledger.json_input import parse_json

    try:
        raw = read_regular_file(path, shown=f"global registry {path.name}", limit=REGISTRY_LIMIT)
    except FileNotFoundError:
        return None
    data = parse_json(raw, what=f"global registry is not readable JSON: {path.name}")
    return data if isinstance(data, dict) else None


def _check_writable(context: CommandContext, target: Any, options: PipelineOptions) -> None:
    """Refuse before anything is appended when a file we must render cannot be written."""
    dirs = [context.runtime_root]
    if target is not None:
        dirs.append(target.json_path.parent)
    for directory in dirs:
        probe = _nearest_existing(directory)
        if not os.access(probe, os.W_OK | os.X_OK):
            raise InputError(
                f"cannot write under {directory.name or directory}: permission "
                "denied; nothing was recorded"
            )


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def _render_after_commit(
    opened: Any,
    context: CommandContext,
    goal_id: str,
    decision: Decision,
    target: Any,
    payload: dict[str, Any],
) -> dict[str, Any]:
    """Render every file the events changed; a failure is an error (stderr, exit 1) that
    still reports what was committed."""
    from projections.render import RenderError, render_for_goal

    try:
        exports = render_for_goal(
            opened,
            context.runtime_root,
            goal_id,
            stems=decision.stems,
            ledger_target=target,
            global_registry=decision.synced,
            backup=decision.backup,
        )
    except RenderError as err:
        err.details["payload"] = {**payload, "ok": False, "appended": True, "error": err.message}
        raise
    return {"rendered_files": len(exports)}


def _already_recorded_payload(
    opened: Any,
    context: CommandContext,
    goal_id: str,
    options: PipelineOptions,
    built: BuiltSource,
    existing: list,
    target: Any,
) -> dict[str, Any]:
    payload = {
        "ok": True,
        "dry_run": not options.execute,
        "appended": False,
        "already_recorded": True,
        "message": (
            f"nothing to append: this input was already recorded at positions "
            f"{existing[0].position}-{existing[-1].position}"
        ),
        "registry": context.registry_label,
        "runtime_root": str(context.runtime_root),
        "goal_id": goal_id,
        "classification": built.classification,
        "benchmark_runs": built.records,
        "appended_count": 0,
        "benchmark_cli": built.benchmark_cli,
    }
    if options.execute and options.render:
        from projections.render import render_for_goal

        render_for_goal(
            opened,
            context.runtime_root,
            goal_id,
            stems=None,
            ledger_target=target,
            global_registry=True,
            backup=None,
        )
    return payload
