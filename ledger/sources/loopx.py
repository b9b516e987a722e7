"""How loopx 0.4.8 reads a ledger row when it loads a ledger (docs/formats/ledger_v0.md §6.4,
loopx-compat.md).

An imported loopx ledger is kept verbatim in its ``ledger_imported`` event; what users read is
the row as loopx itself would read it back: countability recomputed, the arm re-resolved for rows
that carry no arm source, the repair route recomputed from the stored failure class and scope,
archive fields tidied, the artifact refs through loopx's public-ref rule, and the benchmark and
case ids filled in. The stored failure class and
scope are *not* recomputed: loopx trusts them on load, and so does this reading.

Rules shared with rows benchledger writes (arm inference, the route table, countability) live
in ``ledger.rules``; this module only says which of them loopx applies on load and in what
order, plus the few load-only details (text compaction, the generic-arm replacement).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from benchledger.ledger.core.safety import join_public, public_json
from benchledger.ledger.rules.row.archive_state import ARCHIVE_FIELDS
from benchledger.ledger.rules.row.countability import countability
from benchledger.ledger.rules.row.identity import parse_terminal_bench_case, renormalise_arm
from benchledger.ledger.rules.row.refs import loopx_public_refs
from benchledger.ledger.rules.row.repair import REPAIR_FIELDS, loopx_repair_fields
from benchledger.ledger.rules.row.values import compact_text

# Fields loopx 0.4.8 re-derives on load from inputs that never survive compaction; benchledger
# does not carry them (docs/formats/ledger_v0.md §3).
DROPPED_ON_READ = ("benchmark_live_worker_phase",)
_ARCHIVE_LIMITS = (("archive_reason", 220), ("archive_batch_id", 120), ("archived_at", 80))


def read_imported_rows(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of a ``ledger_imported`` event as loopx reads them.

    ``row_locations`` holds each row's benchmark and case keys in the file (the fallbacks loopx
    uses for a row without its own ids); events recorded before it existed carry the keys in
    the rows themselves.
    """
    rows = payload.get("rows") or []
    locations = payload.get("row_locations") or []
    out = []
    for index, run in enumerate(rows):
        if index < len(locations):
            benchmark_key, case_key = locations[index]
        else:
            benchmark_key, case_key = run.get("benchmark_id") or "", run.get("case_id") or ""
        out.append(read_loopx_row(run, benchmark_key=str(benchmark_key), case_key=str(case_key)))
    return out


def read_loopx_row(run: Mapping[str, Any], *, benchmark_key: str, case_key: str) -> dict[str, Any]:
    """One stored loopx row as loopx 0.4.8 reads it back (plus benchledger's additive fields).

    loopx's public-ref rule comes first (it only shortens or drops refs), then the
    public-safety filter: loopx never filtered its rows, and everything below (ids, the
    content-derived run id) must be built from public values only."""
    row, dropped = public_json(_with_loopx_refs(run))
    if dropped:
        row["public_safety"] = {"dropped_field_count": dropped}
    benchmark_key, case_key = join_public("", benchmark_key), join_public("", case_key)
    row["benchmark_id"] = compact_text(row.get("benchmark_id") or benchmark_key, 120)
    _reparse_case(row)
    if not compact_text(row.get("case_id"), 160):
        row["case_id"] = compact_text(case_key, 160)
    renormalise_arm(row)
    _reroute(row)
    for key in (
        "official_score_countable",
        "official_score_countability_reason",
        "countable_score",
    ):
        row.pop(key, None)
    countable, reason, score = countability(row, loopx_reading=True)
    row["official_score_countable"] = countable
    row["official_score_countability_reason"] = reason
    if countable and score is not None:
        row["countable_score"] = score
    _tidy_archive(row)
    for key in DROPPED_ON_READ:
        row.pop(key, None)
    if not row.get("run_id"):
        row["run_id"] = content_run_id(row)
    return row


def content_run_id(run: Mapping[str, Any]) -> str:
    """A stable key for a stored row without a ``run_id`` (the read model is keyed by it)."""

    digest = hashlib.sha256(orjson.dumps(dict(run), option=orjson.OPT_SORT_KEYS)).hexdigest()
    return f"imported-{digest[:12]}"


def _reparse_case(row: dict[str, Any]) -> None:
    """Terminal-Bench rows whose case id is missing or still a job name get it from the job."""
    job_name = compact_text(row.get("job_name"), 160)
    case_id = compact_text(row.get("case_id"), 160)
    if not job_name:
        return
    if case_id and case_id != "unknown-case" and not case_id.startswith("terminal_bench_"):
        return
    parsed = parse_terminal_bench_case(job_name, row["benchmark_id"])
    if parsed:
        row["case_id"] = parsed
        row["case_ids"] = [parsed]


def _reroute(row: dict[str, Any]) -> None:
    """Recompute the repair route (class, priority, next action, profile) from the stored class
    and scope, as loopx does on load: the stored route fields never survive, whatever wording
    an older loopx stored (the route table holds loopx 0.4.8's sentences)."""
    for key in REPAIR_FIELDS:
        row.pop(key, None)
    row.update(loopx_repair_fields(row))


def _tidy_archive(row: dict[str, Any]) -> None:
    if compact_text(row.get("archive_state"), 40) != "archived":
        for key in ARCHIVE_FIELDS:
            row.pop(key, None)
        return
    row["archive_state"] = "archived"
    for key, limit in _ARCHIVE_LIMITS:
        text = compact_text(row.get(key), limit)
        if text:
            row[key] = text
        else:
            row.pop(key, None)


def _with_loopx_refs(run: Mapping[str, Any]) -> dict[str, Any]:
    """The row with ``artifact_refs`` as loopx keeps them on load (its three keys through its
    public-ref rule, ledger/rules/row/refs.py); the field goes when none is left."""
    row = dict(run)
    if "artifact_refs" not in row or not isinstance(row["artifact_refs"], Mapping):
        return row
    refs = loopx_public_refs(row["artifact_refs"])
    if refs:
        row["artifact_refs"] = refs
    else:
        row.pop("artifact_refs")
    return row
