"""Event envelopes and the names of the events benchledger appends.

Names are past tense facts. Payloads are plain dicts on the hot paths (append and replay) and
are validated by the command handlers that build them; ``UPCASTERS`` turn an old
``schema_version`` of a payload into the current one on read, so stored events are never
rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

RUN_BUILT = "run_built"
RUN_APPENDED = "run_appended"
LEDGER_UPSERTED = "ledger_upserted"
LEDGER_RUNS_ARCHIVED = "ledger_runs_archived"
LEDGER_RUNS_RESTORED = "ledger_runs_restored"
LEDGER_MERGED = "ledger_merged"
LEDGER_IMPORTED = "ledger_imported"
GLOBAL_SYNCED = "global_synced"
EXPORT_WRITTEN = "export_written"
CASE_ANALYSIS_ACCEPTED = "case_analysis_accepted"
# Every name above: what ``events list --type`` accepts and names when given another.
EVENT_TYPES = (
    RUN_BUILT, RUN_APPENDED, LEDGER_UPSERTED, LEDGER_RUNS_ARCHIVED, LEDGER_RUNS_RESTORED,
    LEDGER_MERGED, LEDGER_IMPORTED, GLOBAL_SYNCED, EXPORT_WRITTEN, CASE_ANALYSIS_ACCEPTED,
)  # fmt: skip


@dataclass  # not frozen: cheaper to build and create; nothing hashes or mutates it
class NewEvent:
    """An event a handler wants appended; the store assigns position, version and hash."""

    stream: str
    event_type: str
    payload: dict[str, Any]
    schema_version: int = 1


@dataclass  # not frozen: cheaper to build and create; nothing hashes or mutates it
class StoredEvent:
    """An event as read back from the table (payload and metadata already parsed)."""

    position: int
    event_id: str
    stream: str
    stream_version: int
    event_type: str
    schema_version: int
    payload: dict[str, Any]
    metadata: dict[str, Any]
    correlation_id: str
    recorded_at: str
    idempotency_key: str | None
    prev_hash: str
    hash: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "event_id": self.event_id,
            "stream": self.stream,
            "stream_version": self.stream_version,
            "event_type": self.event_type,
            "schema_version": self.schema_version,
            "recorded_at": self.recorded_at,
            "correlation_id": self.correlation_id,
            "idempotency_key": self.idempotency_key,
            "payload": self.payload,
            "metadata": self.metadata,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


@dataclass
class AppendResult:
    """What an append did: the events now in the store, and whether they were already there."""

    events: list[StoredEvent] = field(default_factory=list)
    already_recorded: bool = False


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
# (event_type, stored schema_version) -> function returning the payload at version + 1.
UPCASTERS: dict[tuple[str, int], Upcaster] = {}
CURRENT_SCHEMA_VERSION: dict[str, int] = {}


def upcast(event_type: str, schema_version: int, payload: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored payload up to the current schema, one registered step at a time."""
    target = CURRENT_SCHEMA_VERSION.get(event_type, schema_version)
    while schema_version < target:
        payload = UPCASTERS[(event_type, schema_version)](payload)
        schema_version += 1
    return payload
