"""``benchledger compare`` and ``benchledger diff``: read-only views over one stored ledger."""

from __future__ import annotations

from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.gc_pause import collector_paused
from benchledger.ledger.core.ledger_target import resolve_ledger_target
from benchledger.ledger.handlers.store_ledger import ledger_the_store_knows, no_rows_message
from benchledger.projections.history.snapshots import default_snapshot_dir
from benchledger.projections.read_models.queries import StoreReads
from benchledger.projections.reports.diff import build_diff
from benchledger.services.as_of_reads import Progress, ledger_reads_at
from benchledger.services.store_session import open_store


def run_compare(
    request: Any,
    *,
    run_ledger_path: str | None,
    ledger_id: str | None,
    as_of: str | None,
    db: str | None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The compare document of the ledger's rows (as they stand, or stood at ``as_of``).

    The cyclic collector is paused for the whole command: the facts of 30,000 rows and the
    document built from them are acyclic and live until it ends, so each collection their
    allocations set off walked them and freed nothing (~35 ms of ~0.5 s of CPU at 30,000
    rows, bench/README.md)."""
    with collector_paused():
        return _compare(request, run_ledger_path, ledger_id, as_of, db, progress)


def _compare(
    request: Any,
    run_ledger_path: str | None,
    ledger_id: str | None,
    as_of: str | None,
    db: str | None,
    progress: Progress | None,
) -> dict[str, Any]:
    from benchledger.projections.read_models.compare_facts import keep_facts, read_facts
    from benchledger.projections.reports.compare.document import build_compare_from_facts

    target = resolve_ledger_target(run_ledger_path, ledger_id=ledger_id)
    named = run_ledger_path is not None or ledger_id is not None
    with ledger_reads_at(db, target, as_of, progress, named=named) as (
        conn,
        reads,
        moment,
        target,
    ):
        facts, entries = read_facts(conn, target.ledger_id, request.benchmark_id)
        if not facts:
            raise InputError(no_rows_message(reads, target, request.benchmark_id))
        if moment is None:  # a past moment's scratch store is thrown away
            keep_facts(conn, entries)
    as_of_block = {"as_of": moment} if moment is not None else {}
    document = build_compare_from_facts(facts, request)
    return {"ok": True, **as_of_block, "compare": document}


def default_metric(per_case: str, metric: str | None) -> str:
    """pass@k summaries compare pass rates; everything else compares scores."""
    return metric or ("pass" if per_case.startswith("pass@k") else "score")


def run_diff(
    *,
    from_value: str,
    to_value: str | None,
    benchmark_id: str | None,
    run_ledger_path: str | None,
    ledger_id: str | None,
    db: str | None,
) -> dict[str, Any]:
    """Per case, what changed between two moments (replayed in a scratch store)."""
    target = resolve_ledger_target(run_ledger_path, ledger_id=ledger_id)
    with open_store(db) as opened:
        with opened.store.database.connect() as conn:
            named = run_ledger_path is not None or ledger_id is not None
            target = ledger_the_store_knows(StoreReads(conn), target, named=named)
        later = to_value if to_value is not None else str(opened.store.head_position())
        document = build_diff(
            opened.store,
            opened.projections,
            target.ledger_id,
            from_value,
            later,
            benchmark_id=benchmark_id,
            snapshot_dir=default_snapshot_dir(opened.location),
        )
    return {"ok": True, "diff": document}
