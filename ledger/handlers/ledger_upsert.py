"""Deciding ledger upserts: compact records in, ``ledger_upserted`` events and the payload out.

Shared by ``run-ledger-upsert`` and ``benchmark run --update-run-ledger`` so both apply the
same row rules. Each record touches only the rows of its own case, read through ``reads``; a
row that would not change anything (same content, only ``last_upserted_at`` newer) produces no
event, which is what makes re-upserting the same run a no-op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchledger.ledger.core.ledger_target import LedgerTarget
from benchledger.ledger.handlers.ledger_store import DEFAULT_UPDATE_POLICY
from benchledger.ledger.rules.row.build import RULES_VERSION, build_row
from benchledger.ledger.rules.row.case_landing import CaseLanding
from benchledger.ledger.rules.row.rows import LEDGER_SCHEMA
from benchledger.ledger.store.events import LEDGER_UPSERTED, NewEvent

VOLATILE_ROW_KEYS = ("last_upserted_at",)


class LedgerReads(Protocol):
    def ledger(self, ledger_id: str) -> dict[str, Any] | None: ...
    def case_rows(self, ledger_id: str, benchmark_id: str, case_id: str) -> list[dict]: ...


@dataclass
class RowOptions:
    """The command's per-row inputs besides the record (docs/formats/ledger_v0.md §4)."""

    run_group_id: str | None = None
    arm_id: str | None = None
    arm_role: str | None = None
    run_key: str | None = None
    notes: str | None = None
    recorded_at: str | None = None
    artifact_ref: str | None = None
    result_ref: str | None = None
    compact_artifact_ref: str | None = None
    history_ref: str | None = None


@dataclass
class LedgerPlan:
    events: list[NewEvent] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    rows_by_run_id: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.events)


def plan_ledger_upsert(
    records: Sequence[dict[str, Any]],
    *,
    target: LedgerTarget,
    options: Sequence[RowOptions],
    reads: LedgerReads,
    now: str,
    ref_root: str | None = None,
    runtime_root: str | None = None,
) -> LedgerPlan:
    """Build each row, land it on its case, and keep only the upserts that change something.

    Each case is read once and then kept as a ``CaseLanding``, so the records of one case cost
    what their own rows change, not a pass over the whole case each."""
    plan = LedgerPlan()
    is_new_ledger = reads.ledger(target.ledger_id) is None
    cases: dict[tuple[str, str], CaseLanding] = {}
    for record, opts in zip(records, options, strict=True):
        row, warnings = _row(record, opts, now=now, ref_root=ref_root, runtime_root=runtime_root)
        key = (row.get("benchmark_id") or "", row.get("case_id") or "")
        if key not in cases:
            cases[key] = CaseLanding(reads.case_rows(target.ledger_id, *key))
        result = cases[key].land(row)
        outcome: dict[str, Any] = {"entry": result.row, "warnings": warnings}
        plan.outcomes.append(outcome)
        if not result.updated:
            outcome.update(
                updated=False, skipped=True, skip_reason=result.skip_reason, case_decision={}
            )
            continue
        before = result.before
        unchanged = before is not None and _same_row(before, result.row)
        outcome.update(
            updated=not unchanged,
            merged_into="unchanged" if unchanged else _merged_into(result.action, before),
            case_decision=result.decision,
            benchmark_id=key[0],
            case_id=key[1],
        )
        if unchanged:
            continue
        first = is_new_ledger and not plan.events
        plan.events.append(_upserted(target, result, outcome["merged_into"], now, first=first))
        plan.rows_by_run_id[result.row["run_id"]] = result.row
    return plan


def _row(
    record: dict[str, Any],
    opts: RowOptions,
    *,
    now: str,
    ref_root: str | None,
    runtime_root: str | None,
) -> tuple[dict[str, Any], list[str]]:
    return build_row(
        record,
        now=now,
        ref_root=ref_root,
        runtime_root=runtime_root,
        run_group_id=opts.run_group_id,
        arm_id=opts.arm_id,
        arm_role=opts.arm_role,
        run_key=opts.run_key,
        notes=opts.notes,
        recorded_at=opts.recorded_at,
        artifact_ref=opts.artifact_ref,
        result_ref=opts.result_ref,
        compact_artifact_ref=opts.compact_artifact_ref,
        history_ref=opts.history_ref,
    )


def _upserted(
    target: LedgerTarget, result: Any, merged_into: str, now: str, *, first: bool
) -> NewEvent:
    """One ``ledger_upserted``; the ledger's first event also carries its update policy."""
    payload = {
        "ledger_id": target.ledger_id,
        "ledger_path": target.display_path,
        "row": result.row,
        "merged_into": merged_into,
        "touched_run_id": result.touched_run_id,
        "rules_version": RULES_VERSION,
        "updated_at": now,
    }
    if first:
        payload["update_policy"] = DEFAULT_UPDATE_POLICY
    return NewEvent(target.stream, LEDGER_UPSERTED, payload)


def _merged_into(action: str, before: dict | None) -> str:
    if action == "replaced" and before is not None and before.get("archive_state") == "archived":
        return "archived_kept"
    return action


def _same_row(a: dict[str, Any], b: dict[str, Any]) -> bool:
    strip = VOLATILE_ROW_KEYS
    return {k: v for k, v in a.items() if k not in strip} == {
        k: v for k, v in b.items() if k not in strip
    }


def ledger_result(plan: LedgerPlan, *, target: LedgerTarget, dry_run: bool) -> dict[str, Any]:
    """The ``benchmark_run_ledger`` block (docs/formats/ledger_v0.md §6.2 / §6.5)."""
    base = {
        "ok": True,
        "dry_run": dry_run,
        "schema_version": LEDGER_SCHEMA,
        "ledger_path": target.display_path,
        "markdown_path": target.display_markdown_path,
    }
    if len(plan.outcomes) == 1:
        outcome = plan.outcomes[0]
        block = {
            **base,
            "updated": bool(outcome.get("updated")) and not dry_run,
            "entry": outcome["entry"],
            "case_decision": outcome.get("case_decision", {}),
        }
        for key in ("merged_into", "skipped", "skip_reason"):
            if outcome.get(key) is not None:
                block[key] = outcome[key]
        if outcome.get("merged_into") == "unchanged":
            block["unchanged"] = True
        if outcome.get("warnings"):
            block["warnings"] = outcome["warnings"]
        return block
    accepted = [o for o in plan.outcomes if not o.get("skipped")]
    return {
        **base,
        "updated": plan.changed and not dry_run,
        "input_entry_count": len(plan.outcomes),
        "accepted_entry_count": len(accepted),
        "skipped_entry_count": len(plan.outcomes) - len(accepted),
        "upserted_count": 0 if dry_run else len(plan.events),
        "unchanged_count": sum(1 for o in accepted if o.get("merged_into") == "unchanged"),
        "entries": [
            {
                "run_id": o["entry"].get("run_id"),
                "merged_into": o.get("merged_into"),
                "skipped": bool(o.get("skipped")),
            }
            for o in plan.outcomes
        ],
        "case_decisions": [
            {
                "benchmark_id": o["benchmark_id"],
                "case_id": o["case_id"],
                "decision": (o.get("case_decision") or {}).get("decision"),
            }
            for o in accepted
        ],
    }
