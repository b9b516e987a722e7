"""Which model describes what: each event payload by ``(event_type, schema_version)``, and every
contract by the name its JSON Schema is shipped under (``schemas/<name>.json``).

A new payload version is a new model added here beside the old one (stored events are never
rewritten; ``benchledger.ledger.store.events.UPCASTERS`` bring old versions up to date on read), so
``verify --schemas`` checks each stored payload against the version it was written as.
"""

from __future__ import annotations

from pydantic import BaseModel

from benchledger.ledger.contracts.benchmark_run import BenchmarkRunV0
from benchledger.ledger.contracts.case_analysis_events import CaseAnalysisAcceptedV1
from benchledger.ledger.contracts.export_events import ExportWrittenV1
from benchledger.ledger.contracts.goal_events import (
    GoalRunRecord,
    RolloutEvent,
    RunAppendedV1,
    RunBuiltV1,
)
from benchledger.ledger.contracts.ledger_events import (
    LedgerImportedV1,
    LedgerMergedV1,
    LedgerRunsArchivedV1,
    LedgerRunsRestoredV1,
    LedgerUpsertedV1,
)
from benchledger.ledger.contracts.ledger_row import LedgerRowV0
from benchledger.ledger.contracts.registry_events import GlobalSyncedV1
from benchledger.ledger.store import events as ev

EVENT_MODELS: dict[tuple[str, int], type[BaseModel]] = {
    (ev.RUN_BUILT, 1): RunBuiltV1,
    (ev.RUN_APPENDED, 1): RunAppendedV1,
    (ev.LEDGER_UPSERTED, 1): LedgerUpsertedV1,
    (ev.LEDGER_IMPORTED, 1): LedgerImportedV1,
    (ev.LEDGER_RUNS_ARCHIVED, 1): LedgerRunsArchivedV1,
    (ev.LEDGER_RUNS_RESTORED, 1): LedgerRunsRestoredV1,
    (ev.LEDGER_MERGED, 1): LedgerMergedV1,
    (ev.GLOBAL_SYNCED, 1): GlobalSyncedV1,
    (ev.EXPORT_WRITTEN, 1): ExportWrittenV1,
    (ev.CASE_ANALYSIS_ACCEPTED, 1): CaseAnalysisAcceptedV1,
}


def event_schema_name(event_type: str, schema_version: int) -> str:
    """``run_built`` version 1 is shipped as ``run_built.v1``."""
    return f"{event_type}.v{schema_version}"


# The record formats users exchange as files, then every event payload.
SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "benchmark_run_v0": BenchmarkRunV0,
    "benchmark_run_ledger_row_v0": LedgerRowV0,
    "goal_run_record": GoalRunRecord,
    "loopx_rollout_event_v0": RolloutEvent,
    **{event_schema_name(*key): model for key, model in EVENT_MODELS.items()},
}
