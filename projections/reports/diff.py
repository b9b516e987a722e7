"""``benchmark_ledger_diff_v0``: what changed in one ledger between two moments, case by case.

Both states come from one scratch store: replayed to ``--from`` (from the nearest snapshot),
read, then advanced to ``--to`` and read again. Only runs that an event in ``(from, to]``
wrote can differ (every row change is an event carrying the row), so only the cases those
runs were in or moved to are compared, and each change names the positions of the events
that wrote its runs.

Per case: runs added, moved in or out, archived, restored or updated (with the fields that
changed), and the case's decision (``latest_decision``), bucket and score (the run
``run-ledger-aggregate``'s default best-of-N selection picks) before and after.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.readable import word
from benchledger.ledger.rules.operations.aggregate import case_result
from benchledger.ledger.rules.operations.aggregate_facts import row_facts
from benchledger.ledger.rules.row.archive_state import is_archived
from benchledger.ledger.store import events as ev
from benchledger.ledger.store.connection import placeholders
from benchledger.projections.history.as_of import (
    LEDGER_READ_MODELS,
    advance,
    resolve_moment,
    scratch_at,
)
from benchledger.projections.history.snapshots import nearest_snapshot
from benchledger.projections.publishing.ledger_v0 import bucket_of, case_node
from benchledger.projections.read_models.ledger_row_text import ROWS, row_text
from benchledger.projections.read_models.scratch import OVERLAY_MAX_TAIL

if TYPE_CHECKING:
    from benchledger.ledger.store.connection import Connection, Database
    from benchledger.ledger.store.event_store import EventStore
    from benchledger.projections.read_models.engine import ProjectionEngine
SCHEMA = "benchmark_ledger_diff_v0"
LEDGER_EVENTS = (
    ev.LEDGER_UPSERTED,
    ev.LEDGER_RUNS_ARCHIVED,
    ev.LEDGER_RUNS_RESTORED,
    ev.LEDGER_MERGED,
    ev.LEDGER_IMPORTED,
)
CHANGE_KINDS = (
    "run_added",
    "run_moved_in",
    "run_moved_out",
    "run_archived",
    "run_restored",
    "run_updated",
    "decision_changed",
    "bucket_changed",
    "score_changed",
)
_CHUNK = 500

CaseKey = tuple[str, str]  # the row's benchmark_id and case_id columns
Rows = dict[str, dict[str, Any]]  # run_id -> row


def build_diff(
    store: EventStore,
    projections: ProjectionEngine,
    ledger_id: str,
    from_value: str,
    to_value: str,
    *,
    benchmark_id: str | None = None,
    snapshot_dir: Path | None = None,
) -> dict[str, Any]:
    """The ``benchmark_ledger_diff_v0`` document of ``ledger_id`` from one moment to another."""
    with store.database.connect() as live:
        start = resolve_moment(live, from_value, "--from")
        end = resolve_moment(live, to_value, "--to")
        if start.position > end.position:
            raise InputError(
                f"--from (position {start.position}) is after --to (position {end.position})"
            )
        touches = _touches(store, live, ledger_id, start.position, end.position)
        base = nearest_snapshot(live, snapshot_dir, start.position) if snapshot_dir else None
    # the overlay of a snapshot holds both replays in memory: a long span goes to a copy
    span = end.position - (base.position if base is not None else 0)
    with scratch_at(
        store, projections, start, base, names=LEDGER_READ_MODELS, own_file=span > OVERLAY_MAX_TAIL
    ) as (scratch, _):
        known_before = _ledger_known(scratch, ledger_id)
        runs_before = _runs(scratch, ledger_id, touches)
        cases_before = _case_rows(scratch, ledger_id, {_key(r) for r in runs_before.values()})
        advance(store, projections, scratch, start.position, end.position, names=LEDGER_READ_MODELS)
        if not known_before and not _ledger_known(scratch, ledger_id):
            raise InputError(f"no ledger {ledger_id} in the store at --to")
        runs_after = _runs(scratch, ledger_id, touches)
        keys = set(cases_before) | {_key(r) for r in runs_after.values()}
        cases_after = _case_rows(scratch, ledger_id, keys)
    for key in keys - set(cases_before):  # untouched rows are the same at both moments
        cases_before[key] = {
            run: row for run, row in cases_after.get(key, {}).items() if run not in touches
        }
    cases = [
        case
        for key in sorted(keys)
        if benchmark_id is None or key[0] == benchmark_id
        for case in [
            _case_diff(
                key,
                cases_before.get(key, {}),
                cases_after.get(key, {}),
                runs_before,
                runs_after,
                touches,
            )
        ]  # fmt: skip
        if case["changes"]
    ]
    return {
        "schema_version": SCHEMA,
        "ledger_id": ledger_id,
        "benchmark_id": benchmark_id,
        "from": {"requested": str(from_value).strip(), **start.as_dict()},
        "to": {"requested": str(to_value).strip(), **end.as_dict()},
        "built_from": f"snapshot at position {base.position}" if base else "replay from position 1",
        "summary": _summary(cases),
        "cases": cases,
    }


def _touches(
    store: EventStore, live: Connection, ledger_id: str, after: int, upto: int
) -> dict[str, list[int]]:
    """Run id -> positions of the ledger events in ``(after, upto]`` that wrote it."""
    touches: dict[str, list[int]] = {}
    if upto <= after:
        return touches
    for event in store.read(
        from_position=after + 1,
        to_position=upto,
        stream=f"ledger/{ledger_id}",
        event_types=LEDGER_EVENTS,
        conn=live,
    ):
        payload = event.payload
        if payload.get("ledger_id") != ledger_id:
            continue
        rows = [payload["row"]] if "row" in payload else list(payload.get("rows") or [])
        for row in rows:
            if isinstance(row, dict) and row.get("run_id") is not None:
                positions = touches.setdefault(str(row["run_id"]), [])
                if not positions or positions[-1] != event.position:
                    positions.append(event.position)
    return touches


def _ledger_known(database: Database, ledger_id: str) -> bool:
    with database.connect() as conn:
        query = "SELECT 1 FROM rm_ledgers WHERE ledger_id = ?"
        return conn.execute(query, (ledger_id,)).first() is not None


def _runs(database: Database, ledger_id: str, run_ids: Iterable[str]) -> Rows:
    """The rows of these runs in the ledger now (runs it does not hold are left out)."""
    wanted = sorted(run_ids)
    found: Rows = {}
    with database.connect() as conn:
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            query = (
                f"SELECT r.run_id, {row_text(conn)} FROM {ROWS}"
                f" WHERE r.ledger_id = ? AND r.run_id IN ({placeholders(len(chunk))})"
            )
            for run_id, text in conn.execute(query, [ledger_id, *chunk]):
                found[run_id] = orjson.loads(text)
    return found


def _case_rows(database: Database, ledger_id: str, keys: Iterable[CaseKey]) -> dict[CaseKey, Rows]:
    out: dict[CaseKey, Rows] = {}
    with database.connect() as conn:
        query = (
            f"SELECT r.run_id, {row_text(conn)} FROM {ROWS}"
            " WHERE r.ledger_id = ? AND r.benchmark_id = ? AND r.case_id = ?"
        )
        for key in keys:
            found = conn.execute(query, (ledger_id, *key))
            out[key] = {run_id: orjson.loads(text) for run_id, text in found}
    return out


def _key(row: dict[str, Any]) -> CaseKey:
    """The case columns the read model files a row under (``rm_ledger_rows``)."""
    return (str(row.get("benchmark_id") or ""), str(row.get("case_id") or ""))


def _case_diff(
    key: CaseKey,
    before: Rows,
    after: Rows,
    runs_before: Rows,
    runs_after: Rows,
    touches: dict[str, list[int]],
) -> dict[str, Any]:
    changes: list[dict[str, Any]] = []
    for run_id in sorted(set(before) | set(after)):
        if run_id in touches:
            change = _run_change(run_id, key, before.get(run_id), after.get(run_id), runs_before)
            if change is not None:
                changes.append({**change, "positions": touches[run_id]})
    state_before, state_after = _case_state(before), _case_state(after)
    causes = sorted({p for run in set(before) | set(after) for p in touches.get(run, ())})
    for field, kind in (
        ("decision", "decision_changed"),
        ("bucket", "bucket_changed"),
        ("score", "score_changed"),
    ):
        old = state_before[field] if state_before else None
        new = state_after[field] if state_after else None
        if old != new:
            changes.append({"kind": kind, "from": old, "to": new, "positions": causes})
    sample = next(iter(after.values()), None) or next(iter(before.values()), {})
    bid, cid = bucket_of(sample) if sample else key
    return {
        "benchmark_id": bid,
        "case_id": cid,
        "before": state_before,
        "after": state_after,
        "changes": changes,
    }


def _run_change(
    run_id: str,
    key: CaseKey,
    old: dict[str, Any] | None,
    new: dict[str, Any] | None,
    runs_before: Rows,
) -> dict[str, Any] | None:
    if new is None:  # in this case before, in another one now
        return {"kind": "run_moved_out", "run_id": run_id}
    if old is None:
        if run_id in runs_before and _key(runs_before[run_id]) != key:
            return {"kind": "run_moved_in", "run_id": run_id, "arm_id": new.get("arm_id")}
        return {"kind": "run_added", "run_id": run_id, "arm_id": new.get("arm_id"),
                "official_score": new.get("official_score")}  # fmt: skip
    was, now = is_archived(old), is_archived(new)
    if not was and now:
        return {"kind": "run_archived", "run_id": run_id, "reason": new.get("archive_reason")}
    if was and not now:
        return {"kind": "run_restored", "run_id": run_id}
    fields = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if not fields:
        return None  # written again, unchanged
    change: dict[str, Any] = {"kind": "run_updated", "run_id": run_id, "fields": fields}
    for name in ("official_score", "status"):
        if name in fields:
            change[name] = {"from": old.get(name), "to": new.get(name)}
    return change


def _case_state(rows: Rows) -> dict[str, Any] | None:
    """Decision, bucket, score and the best run of a case's rows (None: no rows)."""
    if not rows:
        return None
    listed = [dict(r) for r in rows.values()]
    node = case_node("", listed)
    # the run ``run-ledger-aggregate`` chooses by default, by the same rule
    best = case_result([row_facts(r) for r in listed if not is_archived(r)])
    summary = best.summary_dict()
    return {
        "decision": node["latest_decision"].get("decision"),
        "bucket": best.bucket,
        "score": summary.get("countable_score"),
        "best_run_id": summary.get("run_id") if best.active else None,
        "active_run_count": node["active_run_count"],
        "archived_run_count": node["archived_run_count"],
    }


def _summary(cases: list[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(CHANGE_KINDS, 0)
    for case in cases:
        for change in case["changes"]:
            counts[change["kind"]] += 1
    return {"cases_changed": len(cases), **counts}


def render_diff_markdown(doc: dict[str, Any]) -> str:
    start, end = doc["from"], doc["to"]
    lines = [
        "# Ledger Diff",
        "",
        f"- ledger: {doc['ledger_id']}",
        f"- from: position {start['position']} ({start['recorded_at']})",
        f"- to: position {end['position']} ({end['recorded_at']})",
        f"- cases changed: {doc['summary']['cases_changed']}",
    ]
    for case in doc["cases"]:
        lines += ["", f"## {case['benchmark_id']} / {case['case_id']}", ""]
        lines += [f"- {_change_text(change)}" for change in case["changes"]]
    return "\n".join(lines)


def _change_text(change: dict[str, Any]) -> str:
    """One change in words: a missing value reads ``none``, a score is rounded for reading
    (``ledger/core/readable.py``; the JSON keeps the values as stored)."""
    found = change["positions"]
    positions = ("position " if len(found) == 1 else "positions ") + ", ".join(map(str, found))
    kind = change["kind"].replace("_", " ")
    if "from" in change:
        return f"{kind}: {word(change['from'])} -> {word(change['to'])} ({positions})"
    detail = f" ({', '.join(change['fields'])})" if change.get("fields") else ""
    return f"{kind} `{change['run_id']}`{detail} ({positions})"
