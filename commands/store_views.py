"""The human view of the event-store commands: ``verify``, ``rebuild``, ``events show``,
``snapshot`` and ``db`` (docs/verification.md says what each check proves).

Each view says what was checked, what is wrong and where, and the command that repairs it;
``--format json`` prints the payload itself (``commands/output.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchledger.ledger.core.readable import (
    inline_list,
    more_line,
    ok_failed,
    outline_lines,
    plural,
    shown_path,
    table,
    word,
)

RENDER = "`benchledger render`"
REBUILD = "`benchledger rebuild`"
SHOWN_ROWS = 20
# What each ``verify --files`` status means (projections/publishing/files.py ``_file_status``).
FILE_PROBLEMS = {
    "changed": "edited since it was written",
    "missing": "deleted",
    "stale": "written before the last events (a render failed or was skipped)",
    "beyond_head": "recorded by an event past the chain's head (events were deleted)",
    "export_missing": "the event that recorded it is gone",
}


# --------------------------------------------------------------------------- verify


def verify_failure(report: Mapping[str, Any]) -> str | None:
    """The one line saying why ``verify`` failed (also written to stderr): every check that
    failed, the chain first; None when it passed."""
    if report.get("ok"):
        return None
    reasons = []
    if report.get("reason"):
        reasons.append(f"the event chain is broken: {report['reason']}")
    schemas = report.get("schemas") or {}
    if schemas and not schemas.get("ok"):
        reasons.append(f"a payload breaks its contract: {schemas.get('reason')}")
    bad = [f for f in report.get("files") or [] if not f.get("ok")]
    if bad:
        first = bad[0]
        problem = FILE_PROBLEMS.get(first["status"], first["status"])
        reasons.append(
            f"{plural(len(bad), 'published file')} {_differ(bad)} from the store (first: "
            f"{shown_path(first['path'])}, {problem}): run {RENDER} to write them again"
        )
    exports = report.get("exports") or {}
    if not exports.get("ok", True) and not bad:
        reasons.append(str(exports.get("reason")))
    return "; ".join(reasons) or "verification failed"


def _differ(bad: Sequence[Any]) -> str:
    return "differs" if len(bad) == 1 else "differ"


def render_verify(payload: Mapping[str, Any]) -> str:
    """``verify`` (and ``events verify``): each check asked for, then one result line."""
    report = payload["verify"]
    lines = ["# Verify", "", *_chain_lines(report)]
    if "files" in report:
        lines += _file_lines(report)
    if "schemas" in report:
        lines += _schema_lines(report["schemas"])
    failure = verify_failure(report)
    lines += ["", f"Result: {ok_failed(failure is None)}" + (f": {failure}" if failure else "")]
    return "\n".join(lines)


def _chain_lines(report: Mapping[str, Any]) -> list[str]:
    """The chain walk, the witnesses held against it, and the head in the form
    ``--expect-head`` takes back (docs/verification.md, the head witness)."""
    checked = plural(report["checked"], "event")
    failed = report.get("first_bad_position") is not None
    if failed:
        lines = [f"- chain: FAILED at position {report['first_bad_position']} "
                 f"({checked} checked): {report['reason']}"]  # fmt: skip
    else:
        lines = [f"- chain: ok, {checked} checked"]
        if report.get("head_position"):
            lines.append(f"- head: {report['head_position']}:{report['head_hash']} (keep it; "
                         "`verify --expect-head` checks it later)")  # fmt: skip
    for witness in report.get("witnesses") or []:
        status = "matches" if witness.get("status") == "match" else "FAILED"
        lines.append(
            f"- witness: {witness['source']} says position {witness['position']}: {status}"
        )
    if failed:
        lines.append("- repair: none from the store itself; restore the store from a backup "
                     "and check its head (`verify --expect-head POS:HASH`)")  # fmt: skip
    return lines


def _file_lines(report: Mapping[str, Any]) -> list[str]:
    files = report["files"]
    bad = [f for f in files if not f.get("ok")]
    exports = report.get("exports") or {}
    if not bad:
        lines = [f"- files: ok, {plural(len(files), 'published file')} checked, all as the "
                 "store recorded them"]  # fmt: skip
    else:
        lines = [f"- files: FAILED, {len(bad)} of {plural(len(files), 'published file')} "
                 f"{_differ(bad)} from the store:", ""]  # fmt: skip
        rows = [
            (shown_path(f["path"]), f["kind"], FILE_PROBLEMS.get(f["status"], f["status"]))
            for f in bad[:SHOWN_ROWS]
        ]
        lines += table(("file", "kind", "problem"), rows)
        lines += more_line(len(bad), SHOWN_ROWS, "file")
        lines += ["", f"- repair: {RENDER} writes them again from the store"]
    if not exports.get("ok", True):
        lines.append(f"- exports: FAILED, {exports.get('reason')}")
    return lines


def _schema_lines(schemas: Mapping[str, Any]) -> list[str]:
    checked = plural(schemas.get("checked") or 0, "payload")
    if schemas.get("ok"):
        return [f"- schemas: ok, {checked} conform to their contracts"]
    return [f"- schemas: FAILED after {checked}: {schemas.get('reason')}"]


# --------------------------------------------------------------------------- rebuild


def render_rebuild(payload: Mapping[str, Any]) -> str:
    if "rebuild_verify" in payload:
        return _render_rebuild_verify(payload["rebuild_verify"])
    rebuilt = payload["rebuild"]
    return "\n".join([
        "# Rebuild", "",
        f"- rebuilt: {plural(len(rebuilt['projections']), 'read model')} "
        f"({word(rebuilt['projections'])})",
        f"- replayed: {plural(rebuilt['events_replayed'], 'event')} up to position "
        f"{rebuilt['head_position']}",
    ])  # fmt: skip


def _render_rebuild_verify(checked: Mapping[str, Any]) -> str:
    models = checked["projections"]
    lines = [
        "# Rebuild Verify", "",
        f"- replayed: {plural(checked['events_replayed'], 'event')} into a scratch database",
        f"- compared: {plural(len(models), 'read model')} ({word(models)})",
    ]  # fmt: skip
    differences = checked.get("differences") or []
    if not differences:
        lines += ["", "Result: ok, every read model is what the events say (nothing changed)"]
        return "\n".join(lines)
    lines += ["", *difference_table(differences), "",
              f"- repair: {REBUILD} replays every event into the read models again", "",
              f"Result: FAILED, {plural(len(differences), 'difference')} (nothing changed)",
              ]  # fmt: skip
    return "\n".join(lines)


def rebuild_failure(payload: Mapping[str, Any]) -> str:
    """The one line saying why ``rebuild --verify`` failed."""
    differences = payload["rebuild_verify"].get("differences") or []
    first = differences[0] if differences else {}
    return (
        f"{plural(len(differences), 'read-model row')} {_differ(differences)} from a replay "
        f"(first: {first.get('table')}, {_problem(first)}): run {REBUILD} to replay them"
    )


def difference_table(differences: Sequence[Mapping[str, Any]]) -> list[str]:
    """The rows a replay and a read model disagree on (``projections/read_models/diff.py``)."""
    rows = [
        (d.get("table"), word(d.get("key")) if "key" in d else "", _problem(d))
        for d in differences[:SHOWN_ROWS]
    ]
    return [*table(("table", "key", "problem"), rows),
            *more_line(len(differences), SHOWN_ROWS, "difference")]  # fmt: skip


def _problem(difference: Mapping[str, Any]) -> str:
    columns = difference.get("columns")
    problem = str(difference.get("problem") or "differs")
    return f"{problem} ({word(columns)})" if columns else problem


# --------------------------------------------------------------------------- snapshots


def render_snapshot_create(payload: Mapping[str, Any]) -> str:
    snapshot, built = payload["snapshot"], payload["built"]
    done = "created" if payload.get("created") else "already there, kept"
    return "\n".join([
        "# Snapshot", "",
        f"- snapshot at position {snapshot['position']} ({snapshot['recorded_at']}): {done}",
        f"- file: {snapshot['file']}",
        f"- built from: {built['built_from']}, {plural(built['events_replayed'], 'event')} "
        "replayed",
    ])  # fmt: skip


def render_snapshot_list(payload: Mapping[str, Any]) -> str:
    snapshots = payload["snapshots"]
    lines = ["# Snapshots", "", f"- {plural(payload['count'], 'snapshot')}"]
    if snapshots:
        rows = [(s["position"], s["recorded_at"], s["matches_store"], s["file"]) for s in snapshots]
        lines += ["", *table(("position", "recorded at", "matches store", "file"), rows)]
    return "\n".join(lines)


def render_snapshot_verify(payload: Mapping[str, Any]) -> str:
    snapshots = payload["snapshots"]
    lines = ["# Snapshot Verify", "", f"- checked: {plural(payload['count'], 'snapshot')}"]
    for s in snapshots:
        where = f"position {s['position']} ({s['file']})"
        if s.get("ok"):
            lines.append(f"- {where}: ok, every row matches a replay")
            continue
        problem = s.get("problem") or plural(len(s.get("differences") or []), "difference")
        lines.append(f"- {where}: FAILED, {problem}")
        if s.get("differences"):
            lines += ["", *difference_table(s["differences"]), ""]
    if not payload["ok"]:
        lines += ["- repair: delete the failing snapshot files (a snapshot is a disposable "
                  "cache) and run `benchledger snapshot create`"]  # fmt: skip
    lines += ["", f"Result: {ok_failed(payload['ok'])}"]
    return "\n".join(lines)


def snapshot_failure(payload: Mapping[str, Any]) -> str:
    """The one line saying why ``snapshot verify`` failed: the snapshot files to delete."""
    bad = [s["file"] for s in payload["snapshots"] if not s.get("ok")]
    return (
        f"{plural(len(bad), 'snapshot')} no longer {'matches' if len(bad) == 1 else 'match'} "
        f"the store ({inline_list(bad)}): delete them and run `benchledger snapshot create`"
    )


# --------------------------------------------------------------------------- events, db


def render_event(payload: Mapping[str, Any]) -> str:
    """One event: where it sits in the chain, then its metadata and payload as nested bullets
    (``--format json`` prints the event exactly as stored)."""
    event = payload["event"]
    head = (
        f"- position {event['position']}, {event['event_type']} v{event['schema_version']} "
        f"on {event['stream']} (version {event['stream_version']})"
    )
    lines = ["# Event", "", head, f"- recorded at: {event['recorded_at']}",
             f"- event id: {event['event_id']}", f"- hash: {event['hash']}",
             f"- previous hash: {event['prev_hash']}"]  # fmt: skip
    if event.get("idempotency_key"):
        lines.append(f"- idempotency key: {event['idempotency_key']}")
    lines += ["", "## Metadata", "", *outline_lines(event.get("metadata") or {}, hidden=set())]
    lines += ["", "## Payload", "", *outline_lines(event.get("payload") or {}, hidden=set())]
    return "\n".join(lines)


def render_db(title: str, payload: Mapping[str, Any]) -> str:
    """``db upgrade`` and ``db current``: the revision before and after, against this
    version's head."""
    lines = [f"# {title}", "", f"- store: {payload['database']}"]
    if "from_revision" in payload:
        before, after = payload["from_revision"] or "empty", payload["to_revision"]
        moved = "already at the head" if before == after else f"upgraded from {before}"
        lines.append(f"- revision: {after} ({moved})")
    else:
        state = "up to date" if payload["up_to_date"] else "behind: run `benchledger db upgrade`"
        lines.append(f"- revision: {payload['revision'] or 'empty'} ({state})")
    lines.append(f"- head of this version: {payload['head']}")
    return "\n".join(lines)


def row_count(count: int, truncated: bool) -> str:
    """``3 rows`` under a query's table, and whether ``--limit`` cut it."""
    return plural(count, "row") + (" (truncated at --limit)" if truncated else "")
