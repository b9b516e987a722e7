"""``run-ledger-aggregate`` (ledger_v0 §11): one current result per canonical case; reads only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ledger.aggregate import TargetLanes, aggregate, aggregate_merge_preview
from ledger.errors import InputError
from ledger.handlers.ledger_source_files import (
    LedgerSources,
)
from ledger.handlers.ledger_store import (
    MaintenanceReads,
    display_path_text,
)
from ledger.ledger_target import LedgerTarget
from ledger.merge import MergeResult, merge_ledgers


@dataclass(frozen=True)
class AggregateRequest:
    benchmark_id: str
    selection: str = "best"
    canonical_case_ids: tuple[str, ...] = ()
    active_case_ids: tuple[str, ...] = ()
    include_noncanonical_sanity_sources: bool = False
    lanes: TargetLanes = field(default_factory=TargetLanes)


def aggregate_view(
    reads: MaintenanceReads,
    target: LedgerTarget,
    sources: LedgerSources,
    request: AggregateRequest,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The aggregate and its ``merge_preview``; sources are merged in memory, never written."""
    if not str(request.benchmark_id or "").strip():
        raise InputError("benchmark_id is required")
    benchmark_id = request.benchmark_id.strip()
    rows = reads.rows_by_benchmark(target.ledger_id, benchmark_id)
    primary_considered = len(rows)
    merged = MergeResult(rows)
    if sources.documents:
        merged = merge_ledgers(rows, sources.documents, benchmark_ids=[benchmark_id])
        rows = merged.rows
    has_primary = reads.ledger(target.ledger_id) is not None
    files = [display_path_text(target.display_path)] if has_primary else []
    primary = (reads.row_count(target.ledger_id), primary_considered) if has_primary else None
    result = aggregate(
        rows,
        benchmark_id=benchmark_id,
        selection=request.selection,
        canonical_case_ids=request.canonical_case_ids,
        active_case_ids=request.active_case_ids,
        include_noncanonical_sanity_sources=request.include_noncanonical_sanity_sources,
        lanes=request.lanes,
        source_ledger_files=[*files, *sources.names],
    )
    return result, aggregate_merge_preview(merged, sources.unique_paths, primary)
