"""The order of a case's runs (ledger_v0 §6.3): ``recorded_at`` as an instant, then ``run_id``.

Both sides need it: the write side to decide a case when a row is upserted, the read side to
lay the document out. "Latest" is the last in this order.
"""

from __future__ import annotations

from datetime import UTC, datetime


def run_sort_key(row: dict) -> tuple:
    """§6.3 order: ``recorded_at`` as an instant, then ``run_id``; "latest" is the last."""
    rid = row.get("run_id")
    return (_instant(row.get("recorded_at")), rid if isinstance(rid, str) else str(rid or ""))


_INSTANTS: dict[str, float] = {}


def _instant(value: object) -> float:
    """Seconds since the epoch; naive values are read as UTC, unreadable ones sort first."""
    if not isinstance(value, str):
        return float("-inf")
    cached = _INSTANTS.get(value)
    if cached is not None:
        return cached
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        result = parsed.timestamp()
    except ValueError:
        result = float("-inf")
    if len(_INSTANTS) > 200_000:
        _INSTANTS.clear()
    _INSTANTS[value] = result
    return result
