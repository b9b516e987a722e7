"""One notion of "now" per command, in the formats the specs use."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now_seconds() -> str:
    """``YYYY-MM-DDTHH:MM:SSZ``: the ledger and run-store timestamp format."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
