"""Small value readers shared by the row rules: what counts as empty, a number, a text.

Stored rows and compact records are untyped JSON, so every rule reads fields through these
instead of trusting a type; one definition keeps "empty" and "number" the same everywhere (§3).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from benchledger.ledger.core.safety import ledger_short_text
from benchledger.ledger.core.safety import ledger_text as _safety_ledger_text


def is_empty(value: Any) -> bool:
    """Rows drop null, "" and []; ``{}`` and ``False``/``0`` are facts and stay (§3)."""
    return value is None or value == "" or value == []


def is_number(value: Any) -> TypeGuard[int | float]:
    if type(value) is float:  # every score and reward: the float case first
        return math.isfinite(value)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def as_number(value: Any) -> int | float | None:
    """Numbers, and numeric strings (the fallback rules count them as numeric, §5.6)."""
    if is_number(value):
        return value
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            parsed: int | float = float(text) if "." in text or "e" in text.lower() else int(text)
        except ValueError:
            return None
        return parsed if math.isfinite(parsed) else None
    return None


def is_pos_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else ``{}``; a plain dict and None (nearly every call:
    ~20 per row) are told apart without the ABC check."""
    if type(value) is dict:
        return value
    return value if value is not None and isinstance(value, Mapping) else {}


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def first_bool(src: Mapping[str, Any], *keys: str) -> bool | None:
    for key in keys:
        value = src.get(key)
        if isinstance(value, bool):
            return value
    return None


def drop_empty(row: dict[str, Any]) -> dict[str, Any]:
    """``is_empty`` written out: every row of an ingest goes through here (~90 keys each)."""
    return {
        key: value
        for key, value in row.items()
        if not (value is None or value == "" or value == [])
    }


def compact_text(value: Any, limit: int = 160) -> str:
    """loopx's reading of a stored text: whitespace collapsed, cut to ``limit`` with ``...``.

    No safety filter: it reads rows already written, it never writes new text.
    """
    if value is None:
        return ""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."


def ledger_text(value: Any, limit: int = 120) -> str | None:
    """The shared filter's ledger text compaction (``ledger.core.safety``); containers and bools
    are never text."""
    if type(value) is str:  # nearly every call: straight to the filter's cached form
        return ledger_short_text(value, limit)
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    return _safety_ledger_text(value, limit)


def text_list(value: Any, max_items: int, limit: int = 120) -> list[str]:
    items = value if isinstance(value, list) else ([value] if value is not None else [])
    out: list[str] = []
    for item in items:
        text = ledger_text(item, limit)
        if text is not None and text not in out:
            out.append(text)
        if len(out) >= max_items:
            break
    return out
