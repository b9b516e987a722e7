"""The text a read model keeps for a value of an event payload."""

from __future__ import annotations

from typing import Any

import orjson

from benchledger.ledger.store.chain import CanonicalJson


def canonical_text(value: Any) -> str:
    """``canonical_json`` without its NaN walk: every payload a projection sees was already
    serialised by ``canonical_json`` on append (or parsed from that text on replay), so a
    non-finite float cannot be in it, and rows full of nulls no longer pay for the walk. A
    ``CanonicalJson`` (the run record ``run_appended`` carries) brings its text.
    """
    if type(value) is CanonicalJson:
        return value.text.decode()
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def json_or_none(value: Any) -> str | None:
    """``canonical_text`` of a value that is set; None for an absent or empty one."""
    return canonical_text(value) if value else None
