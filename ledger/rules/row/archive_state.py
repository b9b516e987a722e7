"""Archive state of a ledger row (docs/formats/ledger_v0.md §9): archived rows stay in the JSON for
traceability but leave decisions, the backlog and the aggregate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ARCHIVED = "archived"
ARCHIVE_FIELDS = ("archive_state", "archive_reason", "archive_batch_id", "archived_at")


def is_archived(row: Mapping[str, Any]) -> bool:
    """Exactly ``archive_state == "archived"``; any other stored value counts as active."""
    return row.get("archive_state") == ARCHIVED
