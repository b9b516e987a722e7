"""Merging other ledgers' runs into a target ledger (docs/formats/ledger_v0.md §10).

Every source row is read as its ledger is read (``ledger_rows.document_rows``) and upserted
into the target case by case; the ``merge`` block counts what was considered, skipped and new.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchledger.ledger.rules.row.build import drift_signature
from benchledger.ledger.rules.row.rows import clean_values, document_rows
from benchledger.ledger.rules.row.scoring import is_terminal
from benchledger.ledger.rules.row.upsert import UpsertResult, upsert_row

# ---------------------------------------------------------------------------------------------
# §10 merge
# ---------------------------------------------------------------------------------------------

MERGE_SCHEMA = "benchmark_run_ledger_merge_v0"


@dataclass
class MergeResult:
    """Target rows after the merge, the per-upsert outcomes, and the ``merge`` statistics."""

    rows: list[dict]
    outcomes: list[UpsertResult] = field(default_factory=list)
    payload: dict = field(default_factory=dict)


class _CaseIndex:
    """Rows bucketed by (benchmark, case) with a run-id index, so each upsert sees one case."""

    def __init__(self, rows: Iterable[dict]) -> None:
        self.buckets: dict[tuple[str, str], list[dict]] = {}
        self.where: dict[str, tuple[str, str]] = {}
        for row in rows:
            key = (str(row.get("benchmark_id") or ""), str(row.get("case_id") or ""))
            self.buckets.setdefault(key, []).append(row)
            if row.get("run_id"):
                self.where[str(row["run_id"])] = key

    def upsert(self, row: dict) -> UpsertResult:
        key = (str(row.get("benchmark_id") or ""), str(row.get("case_id") or ""))
        case_rows = self.buckets.get(key, [])
        previous = self.where.get(str(row.get("run_id") or ""))
        if previous is not None and previous != key:
            moved = [r for r in self.buckets[previous] if r.get("run_id") == row.get("run_id")]
            self.buckets[previous] = [
                r for r in self.buckets[previous] if r.get("run_id") != row.get("run_id")
            ]
            case_rows = [*case_rows, *moved]
        result = upsert_row(case_rows, row)
        if result.updated:
            self.buckets[key] = result.rows
            if result.row.get("run_id"):
                self.where[str(result.row["run_id"])] = key
        return result

    def rows(self) -> list[dict]:
        return [row for bucket in self.buckets.values() for row in bucket]


def merge_ledgers(
    target_rows: Sequence[dict],
    source_docs: Sequence[Any],
    *,
    benchmark_ids: Iterable[str] | None = None,
    run_group_contains: Iterable[str] | None = None,
    missing_source_count: int = 0,
    self_source_skipped: int = 0,
) -> MergeResult:
    """Upsert every run of every source ledger into the target, in the order given (§10).

    ``source_docs`` are loaded documents; resolving paths and globs, counting missing files and
    skipping the target itself are the caller's file-system work (passed in as counts).
    """
    wanted = set(clean_values(benchmark_ids))
    groups = clean_values(run_group_contains)
    index = _CaseIndex(target_rows)
    known_ids = set(index.where)
    known_signatures = {drift_signature(row) for row in target_rows}
    skipped: dict[str, int] = {}
    outcomes: list[UpsertResult] = []
    stats = {"source_runs": 0, "considered": 0, "new_ids": 0, "new_signatures": 0}
    for document in source_docs:
        for row in _in_reading_order(document_rows(document)):
            stats["source_runs"] += 1
            reason = _merge_skip_reason(row, wanted, groups)
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            if not is_terminal(row):
                skipped["non_terminal"] = skipped.get("non_terminal", 0) + 1
                continue
            # Considered = passed every skip, the non-terminal one included (as loopx counts).
            stats["considered"] += 1
            outcomes.append(index.upsert(row))
    rows = index.rows()
    # New = in the ledger after the merge and not before (a backfilled row adds no run id).
    stats["new_ids"] = len({str(r["run_id"]) for r in rows if r.get("run_id")} - known_ids)
    stats["new_signatures"] = len({drift_signature(r) for r in rows} - known_signatures)
    payload = {
        "schema_version": MERGE_SCHEMA,
        "source_ledger_count": len(source_docs),
        "missing_source_count": missing_source_count,
        "self_source_skipped": self_source_skipped,
        "source_run_count": stats["source_runs"],
        "considered_run_count": stats["considered"],
        "merged_run_count": len(outcomes),
        "new_run_id_count": stats["new_ids"],
        "new_signature_count": stats["new_signatures"],
        "target_run_count": len(rows),
        "skipped_run_count": sum(skipped.values()),
        "skipped_by_reason": dict(sorted(skipped.items())),
        "benchmark_ids": sorted(wanted),
        "run_group_contains": groups,
        "source_paths_recorded": False,
    }
    return MergeResult(rows, outcomes, payload)


def _in_reading_order(rows: Sequence[dict]) -> list[dict]:
    """A source's rows in the order loopx 0.4.8 upserts them: case by case (cases in order of
    first appearance), each case's runs sorted by ``recorded_at`` as text, then ``run_id``.

    Why it matters: with logical backfill the first of two equivalent rows lands and the second
    only fills its gaps, so the order decides which run id survives (and the merge counts)."""
    cases: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        key = (str(row.get("benchmark_id") or ""), str(row.get("case_id") or ""))
        cases.setdefault(key, []).append(row)
    return [
        row
        for case_rows in cases.values()
        for row in sorted(
            case_rows, key=lambda r: (str(r.get("recorded_at", "")), str(r.get("run_id", "")))
        )
    ]


def _merge_skip_reason(row: Mapping[str, Any], wanted: set[str], groups: list[str]) -> str | None:
    if wanted and row.get("benchmark_id") not in wanted:
        return "benchmark_filter"
    if groups and not any(p in str(row.get("run_group_id") or "") for p in groups):
        return "run_group_filter"
    return None
