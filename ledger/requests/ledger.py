"""Typed requests of the ledger commands: ``benchmark run-ledger-*``, ``render``, ``import``.

Each is the command's flags, frozen, named as click names them. The services check the write
controls inside the command's error envelope, so the envelope reports the first problem.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchledger.ledger.requests.write_controls import LedgerUpsertRequest, WriteControls

__all__ = [
    "ImportLoopxRequest",
    "LedgerAggregateCommand",
    "LedgerArchiveCommand",
    "LedgerCheckRequest",
    "LedgerMergeRequest",
    "LedgerUpsertRequest",
    "RenderRequest",
    "WriteControls",
]


@dataclass(frozen=True, slots=True)
class LedgerArchiveCommand(WriteControls):
    """``run-ledger-archive`` (or ``--restore``) and ``run-ledger-restore``."""

    benchmark_id: str = ""
    reason: str = ""
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    archive_batch_id: str | None = None
    run_group_contains: tuple[str, ...] = ()
    keep_run_group_contains: tuple[str, ...] = ()
    case_id: tuple[str, ...] = ()
    arm_id: tuple[str, ...] = ()
    archive_all_matching_benchmark: bool = False
    restore: bool = False
    run_id: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LedgerMergeRequest(WriteControls):
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    source_run_ledger_path: tuple[str, ...] = ()
    source_run_ledger_glob: tuple[str, ...] = ()
    benchmark_id: tuple[str, ...] = ()
    run_group_contains: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LedgerAggregateCommand(WriteControls):
    benchmark_id: str = ""
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    source_run_ledger_path: tuple[str, ...] = ()
    source_run_ledger_glob: tuple[str, ...] = ()
    canonical_case_id: tuple[str, ...] = ()
    canonical_case_ids_file: str | None = None
    canonical_case_root: str | None = None
    active_case_id: tuple[str, ...] = ()
    active_case_ids_file: str | None = None
    include_noncanonical_sanity_sources: bool = False
    target_lane_id: str | None = None
    target_run_group_contains: tuple[str, ...] = ()
    target_current_run_group_contains: tuple[str, ...] = ()
    target_backfill_run_group_contains: tuple[str, ...] = ()
    selection_policy: str = "best"
    output_json: str | None = None
    as_of: str | None = None


@dataclass(frozen=True, slots=True)
class LedgerCheckRequest:
    goal_id: str
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    history_limit: int = 500
    limit: int = 20
    fail_on_drift: bool = False


@dataclass(frozen=True, slots=True)
class RenderRequest:
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    all_ledgers: bool = False
    as_of: str | None = None
    output_json: str | None = None


@dataclass(frozen=True, slots=True)
class ImportLoopxRequest(WriteControls):
    path: str = ""
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    in_place: bool = False
