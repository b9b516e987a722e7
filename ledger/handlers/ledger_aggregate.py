"""``run-ledger-aggregate`` (ledger_v0 §11): one current result per canonical case; reads only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ledger.aggregate import Run, TargetLanes, aggregate, aggregate_merge_preview
from ledger.aggregate_facts import RowFacts
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


class FactsReads(Protocol):
    """The store ledger's rows as the aggregate reads them (``ledger.aggregate_facts``), kept
    facts where the store has them (``projections/aggregate_facts.py``)."""

    def facts(self, ledger_id: str, benchmark_id: str) -> list[RowFacts]: ...
    def rows(self, ledger_id: str, benchmark_id: str) -> tuple[list[dict], list[RowFacts]]: ...


def aggregate_view(
    reads: MaintenanceReads,
    target: LedgerTarget,
    sources: LedgerSources,
    request: AggregateRequest,
    facts: FactsReads | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The aggregate and its ``merge_preview``; sources are merged in memory, never written.

    With ``facts`` the store's rows are read as facts: alone, without their rows; with
    sources, each row the merge left as it was (the same object) as its facts, the rows it
    added or changed as rows, judged as before."""
    if not str(request.benchmark_id or "").strip():
        raise InputError("benchmark_id is required")
    benchmark_id = request.benchmark_id.strip()
    rows: Sequence[Run]
    if facts is not None and not sources.documents:
        rows = facts.facts(target.ledger_id, benchmark_id)
        primary_considered = len(rows)
        merged = MergeResult([])
    else:
        whole, known = (
            facts.rows(target.ledger_id, benchmark_id)
            if facts is not None
            else (reads.rows_by_benchmark(target.ledger_id, benchmark_id), [])
        )
        primary_considered = len(whole)
        merged = MergeResult(whole)
        rows = whole
        if sources.documents:
            merged = merge_ledgers(whole, sources.documents, benchmark_ids=[benchmark_id])
            # the merge never changes a row in place: a row it kept is the very object read
            kept = {id(row): run for row, run in zip(whole, known, strict=False)}
            rows = [kept.get(id(row), row) for row in merged.rows]
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
