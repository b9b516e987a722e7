"""The typed request of ``benchledger sync-global``."""

from __future__ import annotations

from dataclasses import dataclass

from benchledger.ledger.core.errors import InputError


@dataclass(frozen=True, slots=True)
class GlobalSyncRequest:
    """Which goal (None: every goal), whether to replace a colliding route, dry run or not."""

    goal_id: str | None
    replace_state: bool
    execute: bool

    @classmethod
    def parse(
        cls, *, goal_id: str | None, replace_state: bool, dry_run: bool, execute: bool
    ) -> GlobalSyncRequest:
        if dry_run and execute:
            raise InputError("sync-global accepts either --dry-run or --execute, not both")
        return cls(goal_id=goal_id, replace_state=replace_state, execute=execute)
