"""Payloads of the events on a ledger's stream (``ledger/<ledger_id>``), docs/formats/ledger_v0.md
§6, §9,
§10: one upserted row, or a chunk of rows an import, archive, restore or merge changed. Each
carries the resulting rows whole, so replay never re-decides anything.
"""

from __future__ import annotations

from typing import Any, Literal

from benchledger.ledger.contracts.base import Closed, Count, Open, optional
from benchledger.ledger.contracts.ledger_row import LedgerRowV0


class UpdatePolicy(Open):
    """Written once when a ledger is created (docs/formats/ledger_v0.md §2); loopx ledgers bring
    their own."""

    source_of_truth: str = optional()
    raw_logs_recorded: bool = optional()
    raw_task_text_recorded: bool = optional()
    absolute_paths_recorded: bool = optional()
    update_rule: str = optional()


class LedgerUpsertedV1(Closed):
    ledger_id: str
    ledger_path: str
    row: LedgerRowV0
    merged_into: Literal["appended", "replaced", "backfilled", "archived_kept"]
    touched_run_id: str | None
    rules_version: str
    updated_at: str
    update_policy: UpdatePolicy = optional()


class ImportProvenance(Closed):
    kind: Literal["imported"]
    format: Literal["loopx_benchmark_run_ledger_v0"]
    source_sha256: str
    source_name: str
    chunk: Count
    chunks: Count
    row_count: Count


class LedgerImportedV1(Closed):
    ledger_id: str
    ledger_path: str
    # The file's rows verbatim (issue #14): whatever a loopx ledger held, within the types the
    # import itself checks; the row contract applies to the rows benchledger writes.
    rows: list[dict[str, Any]]
    # Each row's benchmark and case keys in the file, in row order (loopx's fallback ids).
    row_locations: list[list[str]] = optional()
    updated_at: str | None
    update_policy: UpdatePolicy | None
    provenance: ImportProvenance


class RowChunk(Closed):
    """What archive, restore and merge events share: a chunk of the rows they changed."""

    ledger_id: str
    ledger_path: str
    rows: list[LedgerRowV0]
    updated_at: str
    chunk: Count
    chunks: Count
    update_policy: UpdatePolicy = optional()


class LedgerRunsArchivedV1(RowChunk):
    benchmark_id: str
    reason: str
    archive_batch_id: str
    run_ids: list[str]
    previous_updated_at: str | None


class LedgerRunsRestoredV1(RowChunk):
    benchmark_id: str
    reason: str | None
    archive_batch_id: str | None
    run_ids: list[str]
    undid_archive_batch_id: str | None


class MergeStats(Closed):
    source_ledger_count: Count = optional()
    missing_source_count: Count = optional()
    self_source_skipped: bool | Count = optional()
    source_run_count: Count = optional()
    considered_run_count: Count = optional()
    merged_run_count: Count = optional()
    new_run_id_count: Count = optional()
    changed_run_count: Count = optional()
    benchmark_ids: list[str] = optional()
    run_group_contains: list[str] = optional()


class LedgerMergedV1(RowChunk):
    merge: MergeStats
