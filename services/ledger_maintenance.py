"""``benchmark run-ledger-archive|restore|merge|aggregate|check`` (docs/formats/ledger_v0.md
§9-§12).

Writing commands decide inside one store transaction, append when executing and render the
ledger after the commit; aggregate and check only read. Every user error carries the
command's envelope (docs/formats/cli.md §3), so ``--format json`` prints it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchledger.ledger.core.clock import utc_now_seconds
from benchledger.ledger.core.errors import BenchledgerError, InputError
from benchledger.ledger.core.ledger_target import LedgerTarget, resolve_ledger_target
from benchledger.ledger.core.read_boundary import LEDGER_READ_BOUNDARY as READ_BOUNDARY
from benchledger.ledger.core.registry import validate_goal_id
from benchledger.ledger.handlers.ledger_aggregate import (
    AggregateRequest,
    aggregate_view,
    require_known_benchmark,
)
from benchledger.ledger.handlers.ledger_archive import ArchiveRequest, plan_archive, plan_restore
from benchledger.ledger.handlers.ledger_drift import drift_view
from benchledger.ledger.handlers.ledger_merge import plan_merge
from benchledger.ledger.handlers.ledger_source_files import (
    case_root_ids,
    load_sources,
    read_case_ids_file,
)
from benchledger.ledger.handlers.ledger_store import (
    MaintenancePlan,
    MaintenanceReads,
    require_store_ledger,
)
from benchledger.ledger.requests.ledger import (
    LedgerAggregateCommand,
    LedgerArchiveCommand,
    LedgerCheckRequest,
    LedgerMergeRequest,
)
from benchledger.ledger.rules.operations.aggregate import SELECTION_POLICIES, TargetLanes
from benchledger.ledger.rules.operations.archive import ARCHIVE_SCHEMA
from benchledger.ledger.rules.operations.drift import DRIFT_SCHEMA
from benchledger.ledger.rules.operations.merge import MERGE_SCHEMA
from benchledger.projections.publishing.files import atomic_write
from benchledger.projections.publishing.render import render_ledger
from benchledger.projections.read_models.aggregate_cases import (
    AggregateCasesReader,
    keep_aggregate_cases,
)
from benchledger.projections.read_models.queries import StoreReads
from benchledger.services.as_of_reads import Progress, ledger_reads_at
from benchledger.services.store_session import open_store

if TYPE_CHECKING:
    from benchledger.ledger.handlers.ledger_archive import ArchiveRequest
Decide = Callable[[MaintenanceReads, str], MaintenancePlan]


@contextmanager
def error_envelope(envelope: dict[str, Any]) -> Iterator[None]:
    """Attach the command's error envelope (docs/formats/cli.md §3) to any user error raised
    inside."""
    try:
        yield
    except BenchledgerError as err:
        err.details.setdefault("payload", envelope)
        raise


def _write_plan(
    db: str | None, metadata: dict[str, Any], execute: bool, target: LedgerTarget, decide: Decide
) -> tuple[MaintenancePlan, bool]:
    """Decide inside the write transaction, append when executing, render after commit."""
    now = utc_now_seconds()
    with open_store(db) as opened:
        with opened.store.transaction(metadata) as uow:
            reads = StoreReads(uow.conn)
            require_store_ledger(reads, target)
            plan = decide(reads, now)
            if execute and plan.events:
                uow.append(plan.events)
        rendered = False
        if execute and plan.changed:
            render_ledger(opened, target)
            rendered = True
    return plan, rendered


def run_archive(
    request: LedgerArchiveCommand,
    *,
    subcommand: str,
    restore: bool,
    db: str | None,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    """Archive (or restore) the matching runs; re-running changes nothing and says so."""

    dry_run = not request.execute
    block = {"schema_version": ARCHIVE_SCHEMA, "ok": False, "benchmark_id": request.benchmark_id}
    envelope = _failure_envelope(request.run_ledger_path, dry_run, "archive", block)
    with error_envelope(envelope):
        request.check(f"benchmark {subcommand}")
        target = resolve_ledger_target(request.run_ledger_path, ledger_id=request.ledger_id)
        envelope["ledger_path"] = target.display_path
        selection = _archive_selection(request)
        planner = plan_restore if restore else plan_archive
        plan, rendered = _write_plan(
            db,
            metadata,
            request.execute,
            target,
            lambda reads, now: planner(reads, target, selection, now=now),
        )
    return _archive_payload(plan, target, dry_run=dry_run, rendered=rendered)


def _failure_envelope(
    ledger_path: str | None, dry_run: bool, name: str, block: dict[str, Any]
) -> dict[str, Any]:
    """What a file-changing maintenance command prints when it fails: nothing updated, and
    its own block (``archive``, ``merge``) marked not ok."""
    return {
        "ok": False,
        "dry_run": dry_run,
        "updated": False,
        "ledger_path": ledger_path or "benchmark-run-ledger.json",
        name: block,
        "read_boundary": READ_BOUNDARY,
    }


def _archive_selection(request: LedgerArchiveCommand) -> ArchiveRequest:
    """The command's filters as the archive handler takes them."""
    return ArchiveRequest(
        benchmark_id=request.benchmark_id,
        reason=request.reason,
        case_ids=request.case_id,
        arm_ids=request.arm_id,
        run_group_contains=request.run_group_contains,
        keep_run_group_contains=request.keep_run_group_contains,
        archive_all_matching_benchmark=request.archive_all_matching_benchmark,
        archive_batch_id=request.archive_batch_id,
        run_ids=request.run_id,
    )


def _archive_payload(
    plan: MaintenancePlan, target: LedgerTarget, *, dry_run: bool, rendered: bool
) -> dict[str, Any]:
    payload = {
        "ok": True,
        "dry_run": dry_run,
        "updated": plan.changed and not dry_run,
        "ledger_path": target.display_path,
        "markdown_path": target.display_markdown_path,
        "archive": {**plan.payload, "ok": True},
        "read_boundary": READ_BOUNDARY,
    }
    if not plan.changed:
        payload["unchanged"] = True
    if rendered:
        payload["rendered"] = True
    return payload


def run_merge(
    request: LedgerMergeRequest, *, db: str | None, metadata: dict[str, Any]
) -> dict[str, Any]:
    """Merge source ledger files into the store ledger."""
    dry_run = not request.execute
    block = {"schema_version": MERGE_SCHEMA, "ok": False, "source_paths_recorded": False}
    envelope = _failure_envelope(request.run_ledger_path, dry_run, "merge", block)
    with error_envelope(envelope):
        request.check("benchmark run-ledger-merge")
        paths, globs = request.source_run_ledger_path, request.source_run_ledger_glob
        if not paths and not globs:
            raise InputError(
                "provide at least one --source-run-ledger-path or --source-run-ledger-glob"
            )
        target = resolve_ledger_target(request.run_ledger_path, ledger_id=request.ledger_id)
        envelope["ledger_path"] = target.display_path
        sources = load_sources(paths, globs, target_json_path=target.json_path)
        plan, rendered = _write_plan(
            db,
            metadata,
            request.execute,
            target,
            lambda reads, now: plan_merge(
                reads,
                target,
                sources,
                benchmark_ids=request.benchmark_id,
                run_group_contains=request.run_group_contains,
                now=now,
            ),
        )
    return _merge_payload(plan, target, dry_run=dry_run, rendered=rendered)


def _merge_payload(
    plan: MaintenancePlan, target: LedgerTarget, *, dry_run: bool, rendered: bool
) -> dict[str, Any]:
    updated = plan.changed and not dry_run
    where = {"ledger_path": target.display_path, "markdown_path": target.display_markdown_path}
    merge = {**plan.payload, "ok": True, "dry_run": dry_run, "updated": updated, **where}
    payload = {
        "ok": True,
        "dry_run": dry_run,
        "updated": updated,
        **where,
        "merge": merge,
        "read_boundary": READ_BOUNDARY,
    }
    if rendered:
        payload["rendered"] = True
    return payload


def run_aggregate(
    request: LedgerAggregateCommand, *, db: str | None, progress: Progress | None = None
) -> dict[str, Any]:
    """One current result per canonical case; the file is written with --execute only."""
    output = request.output_json
    envelope = {
        "ok": False,
        "dry_run": not request.execute,
        "updated": False,
        "output_json": output,
        "aggregate": {"ok": False},
    }
    with error_envelope(envelope):
        request.check("benchmark run-ledger-aggregate")
        if request.execute and not output:
            raise InputError("--execute requires --output-json")
        target = resolve_ledger_target(request.run_ledger_path, ledger_id=request.ledger_id)
        selection = _aggregate_selection(request)
        sources = load_sources(
            request.source_run_ledger_path,
            request.source_run_ledger_glob,
            target_json_path=target.json_path,
        )
        named = request.run_ledger_path is not None or request.ledger_id is not None
        aggregate, preview, moment = _aggregate_view(
            db, request.as_of, target, sources, selection, progress, named
        )
        if request.execute and output:
            _write_aggregate(output, aggregate)
    as_of = {"as_of": moment} if moment is not None else {}
    return {
        "ok": True,
        **as_of,
        "dry_run": not request.execute,
        "updated": bool(request.execute),
        "output_json": output,
        "selection_policy": SELECTION_POLICIES[request.selection_policy],
        "aggregate": aggregate,
        "merge_preview": preview,
        "read_boundary": READ_BOUNDARY,
    }


def _aggregate_view(
    db: str | None,
    as_of: str | None,
    target: LedgerTarget,
    sources: Any,
    selection: Any,
    progress: Progress | None,
    named: bool,
) -> tuple[dict[str, Any], Any, Any]:
    """The aggregate over the store ledger as it stands (or stood at ``as_of``); with no
    ledger flag, over the ledger the store knows."""
    with ledger_reads_at(db, target, as_of, progress, named=named) as (
        conn,
        reads,
        moment,
        target,
    ):
        # a past moment's scratch store is thrown away: nothing is kept there
        kept = AggregateCasesReader(conn, keep=moment is None)
        aggregate, preview = aggregate_view(reads, target, sources, selection, kept)
        require_known_benchmark(reads, target, sources, aggregate)
        if moment is None:
            keep_aggregate_cases(conn, kept)
    return aggregate, preview, moment


def _aggregate_selection(request: LedgerAggregateCommand) -> Any:
    """The handler's request: canonical and active cases from flags, files and a case root."""

    canonical = list(request.canonical_case_id)
    if request.canonical_case_ids_file:
        canonical += read_case_ids_file(
            request.canonical_case_ids_file, "--canonical-case-ids-file"
        )
    if request.canonical_case_root:
        canonical += case_root_ids(request.canonical_case_root)
    active = list(request.active_case_id)
    if request.active_case_ids_file:
        active += read_case_ids_file(request.active_case_ids_file, "--active-case-ids-file")
    return AggregateRequest(
        benchmark_id=request.benchmark_id,
        selection=request.selection_policy,
        canonical_case_ids=tuple(canonical),
        active_case_ids=tuple(active),
        include_noncanonical_sanity_sources=request.include_noncanonical_sanity_sources,
        lanes=TargetLanes(
            lane_id=request.target_lane_id,
            target=request.target_run_group_contains,
            current=request.target_current_run_group_contains,
            backfill=request.target_backfill_run_group_contains,
        ),
    )


def _write_aggregate(output: str, aggregate: dict[str, Any]) -> None:
    """Indent 2, sorted keys, trailing newline; temp file then rename."""
    text = json.dumps(aggregate, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path = Path(output).expanduser()
    if path.is_dir():
        raise InputError(f"--output-json is a directory: {Path(output).name}")
    try:
        atomic_write(Path(os.path.abspath(path)), text.encode("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot write {Path(output).name}: {exc.strerror}") from None


def run_check(request: LedgerCheckRequest, *, db: str | None) -> dict[str, Any]:
    """Compare the goal's run history with the ledger; ``drift_gate_failed`` with the gate."""
    envelope = {
        "ok": False,
        "goal_id": request.goal_id,
        "benchmark_run_ledger_drift": {
            "schema_version": DRIFT_SCHEMA,
            "ok": False,
            "drift_detected": False,
        },
        "read_boundary": READ_BOUNDARY,
    }
    history_limit, limit = max(request.history_limit, 0), max(request.limit, 0)
    with error_envelope(envelope):
        goal_id = validate_goal_id(request.goal_id)
        target = resolve_ledger_target(request.run_ledger_path, ledger_id=request.ledger_id)
        with open_store(db) as opened:
            with opened.store.database.connect() as conn:
                reads = StoreReads(conn)
                require_store_ledger(reads, target)
                drift = drift_view(
                    reads,
                    target,
                    goal_id=goal_id,
                    history_limit=history_limit,
                    limit=limit,
                    now=utc_now_seconds(),
                )
    payload: dict[str, Any] = {
        "ok": True,
        "goal_id": goal_id,
        "history_limit": history_limit,
        "benchmark_run_ledger_drift": drift,
        "read_boundary": READ_BOUNDARY,
    }
    if request.fail_on_drift:
        payload["drift_gate_failed"] = bool(drift["drift_detected"])
    return payload
