"""The order of a case's runs (docs/formats/ledger_v0.md §6.3): "latest" is the last row in this
order.

The write side (upsert, aggregate, archive) and the projections must agree on it, so both
import this one key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from benchledger.ledger.rules.row.timestamps import instant


def row_sort_key(row: Mapping[str, Any]) -> tuple[float, str]:
    """``recorded_at`` as an instant, then ``run_id`` as text (a missing id sorts as "")."""
    run_id = row.get("run_id")
    return instant(row.get("recorded_at")), run_id if isinstance(run_id, str) else str(run_id or "")


def sort_rows(rows: Iterable[dict]) -> list[dict]:
    """The rows of one case in §6.3 order."""
    return sorted(rows, key=row_sort_key)
