"""``run-ledger-aggregate`` (docs/formats/ledger_v0.md §11): one current result per canonical case;
reads only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import LedgerTarget
from benchledger.ledger.handlers.ledger_source_files import (
    LedgerSources,
)
from benchledger.ledger.handlers.ledger_store import (
    MaintenanceReads,
    display_path_text,
)
from benchledger.ledger.handlers.store_ledger import StoreBenchmarks, no_rows_message
from benchledger.ledger.rules.operations.aggregate import (
    CaseResult,
    Run,
    TargetLanes,
    aggregate,
    aggregate_merge_preview,
    aggregate_of_cases,
    selection_policy,
)
from benchledger.ledger.rules.operations.aggregate_facts import RowFacts
from benchledger.ledger.rules.operations.merge import MergeResult, merge_ledgers
from benchledger.ledger.rules.row.rows import document_rows


@dataclass(frozen=True)
class AggregateRequest:
    benchmark_id: str
    selection: str = "best"
    canonical_case_ids: tuple[str, ...] = ()
    active_case_ids: tuple[str, ...] = ()
    include_noncanonical_sanity_sources: bool = False
    lanes: TargetLanes = field(default_factory=TargetLanes)


class FactsReads(Protocol):
    """The store ledger's rows as the aggregate reads them
    (``ledger.rules.operations.aggregate_facts``), kept
    facts where the store has them (``projections/read_models/aggregate_facts.py``), and each case's
    best-of-N result where kept (``projections/read_models/aggregate_cases.py``)."""

    def facts(self, ledger_id: str, benchmark_id: str) -> list[RowFacts]: ...
    def rows(self, ledger_id: str, benchmark_id: str) -> tuple[list[dict], list[RowFacts]]: ...
    def case_results(
        self, ledger_id: str, benchmark_id: str
    ) -> tuple[dict[str, CaseResult], int] | None: ...


class _Options(TypedDict):
    """What both ways of aggregating take alike."""

    benchmark_id: str
    canonical_case_ids: tuple[str, ...]
    active_case_ids: tuple[str, ...]
    include_noncanonical_sanity_sources: bool
    source_ledger_files: list[str]


def aggregate_view(
    reads: MaintenanceReads,
    target: LedgerTarget,
    sources: LedgerSources,
    request: AggregateRequest,
    facts: FactsReads | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The aggregate and its ``merge_preview``; sources are merged in memory, never written.

    With ``facts`` the store's rows are read as facts: alone, without their rows, and under
    the default selection as each case's kept result where its rows did not change; with
    sources, each row the merge left as it was (the same object) as its facts, the rows it
    added or changed as rows, judged as before."""
    if not str(request.benchmark_id or "").strip():
        raise InputError("benchmark_id is required")
    benchmark_id = request.benchmark_id.strip()
    has_primary = reads.ledger(target.ledger_id) is not None
    files = [*([display_path_text(target.display_path)] if has_primary else []), *sources.names]
    options: _Options = {
        "benchmark_id": benchmark_id,
        "canonical_case_ids": request.canonical_case_ids,
        "active_case_ids": request.active_case_ids,
        "include_noncanonical_sanity_sources": request.include_noncanonical_sanity_sources,
        "source_ledger_files": files,
    }
    kept = _kept_cases(facts, sources, request, target.ledger_id, benchmark_id)
    if kept is not None:
        cases, considered = kept
        merged = MergeResult([])
        result = aggregate_of_cases(cases, **options)
    else:
        rows, considered, merged = _runs(reads, target, sources, facts, benchmark_id)
        result = aggregate(rows, selection=request.selection, lanes=request.lanes, **options)
    primary = (reads.row_count(target.ledger_id), considered) if has_primary else None
    return result, aggregate_merge_preview(merged, sources.unique_paths, primary)


def require_known_benchmark(
    reads: StoreBenchmarks,
    target: LedgerTarget,
    sources: LedgerSources,
    aggregate: dict[str, Any],
) -> None:
    """Refuse an aggregate of a benchmark no ledger it read holds a row of.

    loopx 0.4.8 returns an empty aggregate with exit 0, which reads like "every case missing"
    when the id was mistyped (issue 34; docs/loopx-compat.md). Checked only when the aggregate
    found no run, so a benchmark that exists costs no extra read."""
    if aggregate.get("deduped_run_count"):
        return
    benchmark_id = str(aggregate.get("benchmark_id"))
    if benchmark_id in reads.benchmark_ids(target.ledger_id):
        return  # rows without a run id, or only archived ones: the benchmark is there
    in_sources = {
        str(row.get("benchmark_id"))
        for document in sources.documents
        for row in document_rows(document)  # read as the merge reads them
    }
    if benchmark_id in in_sources:
        return
    raise InputError(
        no_rows_message(
            reads,
            target,
            benchmark_id,
            source_benchmarks=sorted(in_sources) if sources.documents else None,
        )
    )


def _kept_cases(
    facts: FactsReads | None,
    sources: LedgerSources,
    request: AggregateRequest,
    ledger_id: str,
    benchmark_id: str,
) -> tuple[dict[str, CaseResult], int] | None:
    """Each case's result and the benchmark's row count, when the aggregate is the store
    ledger's alone under the selection whose results are kept (best-of-N, no lanes)."""
    if facts is None or sources.documents or request.lanes.enabled:
        return None
    if selection_policy(request.selection) != "best":
        return None
    return facts.case_results(ledger_id, benchmark_id)


def _runs(
    reads: MaintenanceReads,
    target: LedgerTarget,
    sources: LedgerSources,
    facts: FactsReads | None,
    benchmark_id: str,
) -> tuple[Sequence[Run], int, MergeResult]:
    """The runs to aggregate (rows or their facts), the primary ledger's row count of the
    benchmark, and the merge of the sources into it."""
    if facts is not None and not sources.documents:
        runs = facts.facts(target.ledger_id, benchmark_id)
        return runs, len(runs), MergeResult([])
    whole, known = (
        facts.rows(target.ledger_id, benchmark_id)
        if facts is not None
        else (reads.rows_by_benchmark(target.ledger_id, benchmark_id), [])
    )
    if not sources.documents:
        return whole, len(whole), MergeResult(whole)
    merged = merge_ledgers(whole, sources.documents, benchmark_ids=[benchmark_id])
    # the merge never changes a row in place: a row it kept is the very object read
    kept = {id(row): run for row, run in zip(whole, known, strict=False)}
    return [kept.get(id(row), row) for row in merged.rows], len(whole), merged
