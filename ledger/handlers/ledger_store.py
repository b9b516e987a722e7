"""What every ledger maintenance handler shares: the reads they need, the plan they return,
the guard against a ledger file the store does not know, and chunked row events.

Handlers read the store ledger through ``reads`` (handed over by the service), call the pure
operations (``ledger/rules/operations/archive.py``, ``merge.py``, ``aggregate.py``, ``drift.py``)
and return the
events to append plus the block the command prints. The store is never touched directly.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.core.ledger_target import LedgerTarget, resolve_ledger_target
from benchledger.ledger.store.events import NewEvent

EVENT_CHUNK_ROWS = 500
DEFAULT_UPDATE_POLICY = {
    "source_of_truth": "benchmark_run_v0 compact run events",
    "raw_logs_recorded": False,
    "raw_task_text_recorded": False,
    "absolute_paths_recorded": False,
    "update_rule": "upsert one run entry when a benchmark case is ingested or closed",
}


class LedgerLookup(Protocol):
    def ledger(self, ledger_id: str) -> dict[str, Any] | None: ...


class MaintenanceReads(Protocol):
    """What these handlers read (``StoreReads`` provides all of it): ``run_ids`` is a cheap
    id-only scan, ``last_ledger_event`` the newest event on the ledger's stream, as
    ``{"event_type", "payload"}``."""

    def ledger(self, ledger_id: str) -> dict[str, Any] | None: ...
    def rows_by_benchmark(self, ledger_id: str, benchmark_id: str) -> list[dict]: ...
    def case_rows(self, ledger_id: str, benchmark_id: str, case_id: str) -> list[dict]: ...
    def all_rows(self, ledger_id: str) -> Iterable[dict]: ...
    def row_count(self, ledger_id: str) -> int: ...
    def goal_records(self, goal_id: str, limit: int | None = None) -> list[dict]: ...
    def run_ids(self, ledger_id: str) -> list[str]: ...
    def last_ledger_event(self, ledger_id: str) -> dict[str, Any] | None: ...


@dataclass
class MaintenancePlan:
    """Events to append (empty when nothing changes) and the block the command prints."""

    events: list[NewEvent] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.events)


def require_store_ledger(reads: LedgerLookup, target: LedgerTarget) -> None:
    """Refuse a ledger file the store does not know: rendering after a write would replace it
    with only the rows the store holds, losing the rest of the file."""
    if reads.ledger(target.ledger_id) is None and target.json_path.exists():
        shown = display_path_text(target.display_path)
        # the command runs as printed from here: the path relative to the working directory
        # (an absolute one is not shown), quoted for the shell
        here = shlex.quote(os.path.relpath(target.json_path))
        if resolve_ledger_target(str(target.json_path)).ledger_id != target.ledger_id:
            here += f" --ledger-id {shlex.quote(target.ledger_id)}"
        raise InputError(
            f"{shown} is not in the store; import it first with "
            f"`benchledger import loopx-ledger {here} --execute`"
        )


def display_path_text(path_text: str) -> str:
    """A path as the user gave it when relative; only the file name when absolute."""
    text = str(path_text)
    return Path(text).name if os.path.isabs(os.path.expanduser(text)) else text


def _row_events(
    event_type: str,
    target: LedgerTarget,
    rows: Sequence[dict],
    extra: Mapping[str, Any],
    *,
    is_new_ledger: bool = False,
) -> list[NewEvent]:
    """Chunk the changed rows so no single event grows without bound (as the import does)."""
    chunks = [rows[i : i + EVENT_CHUNK_ROWS] for i in range(0, len(rows), EVENT_CHUNK_ROWS)]
    events = []
    for index, chunk in enumerate(chunks):
        payload = {
            "ledger_id": target.ledger_id,
            "ledger_path": target.display_path,
            "rows": list(chunk),
            **extra,
            "chunk": index + 1,
            "chunks": len(chunks),
        }
        if is_new_ledger and index == 0:
            payload["update_policy"] = DEFAULT_UPDATE_POLICY
        events.append(NewEvent(target.stream, event_type, payload))
    return events
