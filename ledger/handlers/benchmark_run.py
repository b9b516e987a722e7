"""Deciding ``benchmark run``: built records in, the invocation's events and payload out.

One invocation appends, in one transaction: a ``run_built`` and a ``run_appended`` per record,
the ledger upserts with ``--update-run-ledger``, and the global sync unless
``--no-global-sync``. The same input with the same semantic options has the same idempotency
key, so a retried command appends nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import LedgerTarget
from benchledger.ledger.core.registry import CommandContext
from benchledger.ledger.handlers.benchmark_run_payload import success_payload
from benchledger.ledger.handlers.built_source import BuiltSource
from benchledger.ledger.handlers.global_sync import GlobalSyncPlan, plan_global_sync, skipped_sync
from benchledger.ledger.handlers.ledger_store import require_store_ledger
from benchledger.ledger.handlers.ledger_upsert import (
    LedgerPlan,
    RowOptions,
    ledger_result,
    plan_ledger_upsert,
)
from benchledger.ledger.handlers.planned_link import link_planned
from benchledger.ledger.requests.benchmark_run import BenchmarkRunRequest
from benchledger.ledger.rules.history.goal_runs import (
    allocate_stems,
    build_run_record,
    index_path_rel,
    record_paths_rel,
)
from benchledger.ledger.rules.history.rollout import benchmark_run_event, rollout_payload_fields
from benchledger.ledger.rules.row.build import row_run_id
from benchledger.ledger.rules.row.classification import recommended_action
from benchledger.ledger.store.chain import CanonicalJson, canonical_json
from benchledger.ledger.store.events import RUN_APPENDED, RUN_BUILT, NewEvent


class BenchmarkRunReads(Protocol):
    def goal_records(self, goal_id: str, limit: int | None = None) -> list[dict[str, Any]]: ...
    def goal_stems(self, goal_id: str) -> set[str]: ...
    def known_goal_ids(self) -> list[str]: ...
    def global_registry(self) -> dict[str, Any] | None: ...
    def ledger(self, ledger_id: str) -> dict[str, Any] | None: ...
    def case_rows(self, ledger_id: str, benchmark_id: str, case_id: str) -> list[dict]: ...


@dataclass  # not frozen: cheaper to build and create; nothing hashes or mutates it
class RunInputs:
    """What the invocation resolved before deciding: where, which goal, when, what was read."""

    context: CommandContext
    goal_id: str
    now: str
    built: BuiltSource
    target: LedgerTarget | None
    stems_taken_on_disk: frozenset[str] = frozenset()
    global_registry_file: Callable[[], dict[str, Any] | None] = lambda: None


@dataclass
class BenchmarkRunPlan:
    """Everything one invocation decided, before it is appended."""

    events: list[NewEvent]
    payload_builder: Callable[[bool], dict[str, Any]]
    stems: list[str]
    backup: dict[str, Any] | None
    synced: bool

    def payload(self, *, dry_run: bool) -> dict[str, Any]:
        return self.payload_builder(dry_run)

    def run_records(self) -> dict[str, CanonicalJson]:
        """The run records this plan appends, by stem, as the immutable text their events
        carry: the render writes their files from it instead of reading the read model's
        copy of that text back."""
        return {
            event.payload["stem"]: event.payload["record"]
            for event in self.events
            if event.event_type == RUN_APPENDED and type(event.payload["record"]) is CanonicalJson
        }


def idempotency_key(
    goal_id: str, built: BuiltSource, request: BenchmarkRunRequest, ledger_id: str | None
) -> str:
    """Same bytes read + same semantic options = same key; never the time or the cwd."""
    semantic = {
        "goal_id": goal_id,
        "benchmark": request.benchmark_name,
        "content": built.content_digest,
        "source": built.semantic_options,
        "ledger": ledger_id if request.update_run_ledger else None,
        "run_group_id": request.run_group_id,
        "arm_id": request.arm_id,
        "note": request.run_ledger_note,
        "classification": request.classification,
        "recommended_action": request.recommended_action,
        "delivery": [request.delivery_batch_scale, request.delivery_outcome],
        "global_sync": not request.no_global_sync,
    }
    digest = hashlib.sha256(canonical_json(semantic).encode()).hexdigest()
    return f"benchmark_run:{digest}"


def decide(
    reads: BenchmarkRunReads, request: BenchmarkRunRequest, inputs: RunInputs
) -> BenchmarkRunPlan:
    """The invocation's events in append order, and the payload that reports them."""
    goal_id, built, now = inputs.goal_id, inputs.built, inputs.now
    history = reads.goal_records(goal_id)
    records = link_planned(built.records, history)
    action = recommended_action(
        request.recommended_action, records[0], adapter_default=built.adapter_recommended_action
    )
    # A runner attempt the goal's history already holds (the same record) keeps its stem and is
    # not appended again, whatever ledger path or flags this invocation has (issue 34).
    recorded = recorded_stems(history)
    # Each record is serialised once, here, for the history lookup, both events and the read
    # model that carry it: its frozen text is the ``canonical_json`` the lookup keys on.
    texts = [_frozen(RUN_BUILT, record) for record in records]
    known = [recorded.get(text.text.decode()) for text in texts]
    taken = reads.goal_stems(goal_id) | inputs.stems_taken_on_disk
    fresh_stems = iter(allocate_stems(now, known.count(None), taken))
    all_stems = [stem if stem is not None else next(fresh_stems) for stem in known]
    row_options = [
        RowOptions(
            run_group_id=request.run_group_id,
            arm_id=request.arm_id,
            notes=request.run_ledger_note,
            history_ref=record_paths_rel(goal_id, stem)[0],
        )
        for stem in all_stems
    ]
    ledger_plan = _ledger_plan(reads, records, row_options, inputs)
    run_ids = _run_ids(records, row_options, ledger_plan)
    new = [i for i, stem in enumerate(known) if stem is None]
    records_new = [records[i] for i in new]
    stems = [all_stems[i] for i in new]
    frozen = [texts[i] for i in new]
    provenance = _ProvenanceTexts(built)
    events = [
        _run_built(goal_id, r, text, built, provenance(r))
        for r, text in zip(records_new, frozen, strict=True)
    ]
    rollouts = []
    for i, text in zip(new, frozen, strict=True):
        appended, rollout = _run_appended(
            request, inputs, records[i], text, all_stems[i], run_ids[i], action
        )
        events.append(appended)
        rollouts.append(rollout)
    if ledger_plan is not None:
        events.extend(ledger_plan.events)
    sync = _global_sync(reads, request, inputs)
    if sync.event is not None:
        events.append(sync.event)

    def build_payload(dry_run: bool) -> dict[str, Any]:
        ledger = (
            ledger_result(ledger_plan, target=inputs.target, dry_run=dry_run)
            if ledger_plan is not None and inputs.target is not None
            else None
        )
        rollout = None if dry_run else rollout_payload_fields(rollouts)
        payload = _payload(
            request, inputs, records_new, stems, action, sync, dry_run, ledger, rollout
        )
        if len(records_new) < len(records):
            payload["already_in_history"] = len(records) - len(records_new)
        if built.warnings:
            payload["warnings"] = built.warnings
        payload["events"] = _event_summary(events, dry_run)
        return payload

    return BenchmarkRunPlan(events, build_payload, stems, sync.backup, sync.event is not None)


def recorded_stems(history: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The stem of each run record already in a goal's history, by its canonical text."""
    found: dict[str, str] = {}
    for entry in history:
        record = entry.get("benchmark_run")
        if isinstance(record, dict) and entry.get("stem"):
            found.setdefault(canonical_json(record), str(entry["stem"]))
    return found


def _ledger_plan(
    reads: BenchmarkRunReads,
    records: list[dict[str, Any]],
    row_options: list[RowOptions],
    inputs: RunInputs,
) -> LedgerPlan | None:
    """``--update-run-ledger``: the upserts of the records' rows into the target ledger."""
    target = inputs.target
    if target is None:
        return None
    require_store_ledger(reads, target)
    context = inputs.context
    return plan_ledger_upsert(
        records,
        target=target,
        options=row_options,
        reads=reads,
        now=inputs.now,
        ref_root=str(context.project_root or Path.cwd()),
        runtime_root=str(context.runtime_root),
    )


def _frozen(event_type: str, value: dict[str, Any]) -> CanonicalJson:
    """``value`` as its canonical text, fixed now; a NaN or an infinity in it is refused as the
    append would refuse it (``ledger.store.event_store``)."""
    try:
        return CanonicalJson(value)
    except TypeError as exc:
        raise InputError(f"event {event_type} payload is not valid JSON: {exc}") from None


class _ProvenanceTexts:
    """Each record's ``run_built`` provenance (``BuiltSource.provenance_for``) as canonical
    text, made once for consecutive records that share it.

    Why: records that share a provenance (every record of a source that does not map its
    records to their own files, like BenchFlow; the samples of one Inspect log, 100 records
    per log in bench/inspect_ingest.py) would have it serialised and walked for NaN again in
    each ``run_built`` event. Records that share it get dicts whose entries are the very same
    objects, so that test (not a comparison of contents, which would take ``1`` for ``True``)
    reuses the text; the stored bytes are those the dict would give.
    """

    def __init__(self, built: BuiltSource) -> None:
        self.built = built
        self.last: tuple[dict[str, Any], CanonicalJson] | None = None

    def __call__(self, record: dict[str, Any]) -> CanonicalJson:
        value = self.built.provenance_for(record)
        if self.last is not None and _same_entries(self.last[0], value):
            return self.last[1]
        text = _frozen(RUN_BUILT, value)
        self.last = (value, text)
        return text


def _same_entries(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(b[key] is value for key, value in a.items())


def _run_built(
    goal_id: str,
    record: dict[str, Any],
    frozen: CanonicalJson,
    built: BuiltSource,
    provenance: CanonicalJson,
) -> NewEvent:
    """What was read for one record (``frozen``: its canonical text), with its own files'
    provenance (as canonical text too)."""
    return NewEvent(
        f"goal/{goal_id}",
        RUN_BUILT,
        {
            "goal_id": goal_id,
            "run_key": record.get("run_key"),
            "record": frozen,
            "provenance": provenance,
            "content_digest": built.content_digest,
            "warnings": built.warnings,
        },
    )


def _run_appended(
    request: BenchmarkRunRequest,
    inputs: RunInputs,
    record: dict[str, Any],
    frozen: CanonicalJson,
    stem: str,
    run_id: str,
    action: str,
) -> tuple[NewEvent, dict[str, Any]]:
    """The run history record and its rollout event, carried by one ``run_appended``; the run
    record holds the record's canonical text ``frozen`` instead of serialising it again."""
    goal_id, now, classification = inputs.goal_id, inputs.now, inputs.built.classification
    run_record = build_run_record(
        record,
        goal_id=goal_id,
        generated_at=now,
        classification=classification,
        recommended_action=action,
        delivery_batch_scale=request.delivery_batch_scale,
        delivery_outcome=request.delivery_outcome,
    )
    rollout = benchmark_run_event(
        record,
        goal_id=goal_id,
        run_id=run_id,
        action=action,
        recorded_at=now,
        history_stem=stem,
        classification=classification,
        delivery_outcome=request.delivery_outcome,
    )
    event = NewEvent(
        f"goal/{goal_id}",
        RUN_APPENDED,
        {
            "goal_id": goal_id,
            "stem": stem,
            "run_key": record.get("run_key"),
            "run_id": run_id,
            "generated_at": now,
            "record": _frozen(RUN_APPENDED, {**run_record, "benchmark_run": frozen}),
            "rollout_event": rollout,
        },
    )
    return event, rollout


def _global_sync(
    reads: BenchmarkRunReads, request: BenchmarkRunRequest, inputs: RunInputs
) -> GlobalSyncPlan:
    if request.no_global_sync:
        return skipped_sync(execute=request.execute)
    return plan_global_sync(
        reads,
        inputs.context,
        inputs.goal_id,
        replace_state=False,
        execute=request.execute,
        now=inputs.now,
        current_file=inputs.global_registry_file,
    )


def _payload(
    request: BenchmarkRunRequest,
    inputs: RunInputs,
    records: list[dict[str, Any]],
    stems: list[str],
    action: str,
    sync: GlobalSyncPlan,
    dry_run: bool,
    ledger: dict[str, Any] | None,
    rollout: dict[str, Any] | None,
) -> dict[str, Any]:
    context, built, root = inputs.context, inputs.built, inputs.context.runtime_root
    paths = [record_paths_rel(inputs.goal_id, stem) for stem in stems]
    return success_payload(
        dry_run=dry_run,
        registry=context.registry_label,
        runtime_root=str(root),
        goal_id=inputs.goal_id,
        classification=built.classification,
        recommended_action=action,
        generated_at=inputs.now,
        records=records,
        json_paths=[str(root / json_rel) for json_rel, _md in paths],
        markdown_paths=[str(root / md_rel) for _json, md_rel in paths],
        index_path=str(root / index_path_rel(inputs.goal_id)),
        benchmark_cli=built.benchmark_cli,
        global_sync={**sync.payload, "dry_run": dry_run},
        delivery_batch_scale=request.delivery_batch_scale,
        delivery_outcome=request.delivery_outcome,
        discovery=built.discovery,
        selection=built.selection,
        benchmark_run_ledger=ledger,
        rollout=rollout,
    )


def _event_summary(events: list[NewEvent], dry_run: bool) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for e in events:
        counts[e.event_type] = counts.get(e.event_type, 0) + 1
    return {"would_append" if dry_run else "appended": len(events), "by_type": counts}


def _run_ids(
    records: list[dict[str, Any]],
    row_options: list[RowOptions],
    ledger_plan: LedgerPlan | None,
) -> list[str]:
    """The ledger identity of each record (docs/formats/ledger_v0.md §5.15), used by rollout
    records too."""
    if ledger_plan is not None:
        return [o["entry"].get("run_id") for o in ledger_plan.outcomes]
    return [
        row_run_id(r, run_group_id=o.run_group_id, arm_id=o.arm_id)
        for r, o in zip(records, row_options, strict=True)
    ]


def check_writable(context: CommandContext, target: LedgerTarget | None) -> None:
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


def already_recorded_payload(
    request: BenchmarkRunRequest, inputs: RunInputs, existing_positions: tuple[int, int]
) -> dict[str, Any]:
    """A retried invocation: nothing appended, the payload says where it was recorded."""
    first, last = existing_positions
    context, built = inputs.context, inputs.built
    return {
        "ok": True,
        "dry_run": not request.execute,
        "appended": False,
        "already_recorded": True,
        "message": (
            f"nothing to append: this input was already recorded at positions {first}-{last}"
        ),
        "registry": context.registry_label,
        "runtime_root": str(context.runtime_root),
        "goal_id": inputs.goal_id,
        "classification": built.classification,
        "benchmark_runs": built.records,
        "appended_count": 0,
        "benchmark_cli": built.benchmark_cli,
    }
