"""The write controls every writing command shares, and the request of ``benchmark
run-ledger-upsert``: the one ledger command a batch runs thousands of times, so it loads only
these two classes (creating a frozen, slotted dataclass costs ~0.7 ms at import, and
``benchledger.ledger.requests.ledger`` makes eight; it re-exports both).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchledger.ledger.core.errors import InputError


@dataclass(frozen=True, slots=True)
class WriteControls:
    """``--dry-run`` / ``--execute``: a dry run unless --execute, never both."""

    dry_run: bool = False
    execute: bool = False

    def check(self, command: str) -> None:
        if self.dry_run and self.execute:
            raise InputError(f"{command} accepts either --dry-run or --execute, not both")


@dataclass(frozen=True, slots=True)
class LedgerUpsertRequest(WriteControls):
    benchmark_run_json: str | None = None
    post_launch_json: str | None = None
    run_ledger_path: str | None = None
    ledger_id: str | None = None
    run_group_id: str | None = None
    arm_id: str | None = None
    arm_role: str | None = None
    run_key: str | None = None
    recorded_at: str | None = None
    compact_artifact_ref: str | None = None
    run_ledger_note: str | None = None
    no_render: bool = False
