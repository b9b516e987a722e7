"""``case-analysis-candidates --apply-accepted`` as an event
(docs/formats/history_registry_rollout.md §11).

loopx wrote the accepted analysis straight to disk. Here the accepted document is first recorded
as a ``case_analysis_accepted`` event (who accepted what, from which ledger, under which policy),
and the output files are written from that payload after the commit, so the file on disk is
always a projection of something the audit log holds. Pure: the command layer appends the event
and writes the files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchledger.ledger.core.errors import InputError
from benchledger.ledger.store.chain import canonical_json
from benchledger.ledger.store.events import CASE_ANALYSIS_ACCEPTED, NewEvent

PAYLOAD_SCHEMA_VERSION = "benchledger_case_analysis_accepted_v0"


@dataclass(frozen=True)
class AcceptPlan:
    """The event to append and the key that makes a repeated identical apply a no-op."""

    event: NewEvent
    idempotency_key: str


def validate_output_key(key: str) -> str:
    """The stream names the output file; refuse names that could escape a directory."""
    parts = key.split("/")
    if not key or key.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise InputError(f"case-analysis output key is not a safe relative name: {key!r}")
    return key


def accepted_analysis_ids(report: Mapping[str, Any]) -> list[str]:
    """The ids the policy accepted (added or already present), in report order."""
    proposals = report.get("proposed_records") or []
    return [
        str(item.get("analysis_id"))
        for item in proposals
        if isinstance(item, Mapping) and (item.get("acceptance_policy") or {}).get("accepted")
    ]


def plan_case_analysis_accept(
    document: Mapping[str, Any],
    report: Mapping[str, Any],
    *,
    output_key: str,
    output_path: str,
    markdown_path: str | None,
    source_ledger: str,
    source_case_analysis: str,
) -> AcceptPlan:
    """Build the ``case_analysis_accepted`` event for an updated analysis document.

    Paths in the payload are the display forms the caller chose (relative to the project when
    possible); the document is stored whole so a replay can re-render the output exactly.
    """
    key = validate_output_key(output_key)
    upsert = report.get("accepted_upsert") or {}
    payload: dict[str, Any] = {
        "schema_version": PAYLOAD_SCHEMA_VERSION,
        "output_key": key,
        "output_path": output_path,
        "markdown_path": markdown_path,
        "source_run_ledger": source_ledger,
        "source_case_analysis": source_case_analysis,
        "acceptance_policy": (report.get("acceptance_policy") or {}).get("policy"),
        "accepted_analysis_ids": accepted_analysis_ids(report),
        "added_count": int(upsert.get("added_count") or 0),
        "skipped_count": int(upsert.get("skipped_count") or 0),
        "document": dict(document),
    }
    semantic = {"output_key": key, "markdown_path": markdown_path, "document": payload["document"]}
    digest = hashlib.sha256(canonical_json(semantic).encode("utf-8")).hexdigest()
    event = NewEvent(f"case_analysis/{key}", CASE_ANALYSIS_ACCEPTED, payload)
    return AcceptPlan(event=event, idempotency_key=f"case_analysis_accepted:{digest}")
