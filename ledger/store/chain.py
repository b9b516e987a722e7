"""The hash chain: each event's hash covers its canonical content and the previous hash.

Canonical JSON is orjson with sorted keys, so the same payload always hashes the same on every
backend; the stored payload text *is* that canonical form, which makes ``verify`` a byte-exact
re-walk instead of a re-serialisation guess.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from orjson import Fragment

from benchledger.ledger.core.jsonfmt import CanonicalDict, PlainJsonDict, with_canonical_fragments

GENESIS_HASH = "0" * 64


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON. NaN/Infinity raise TypeError instead of becoming ``null``.

    orjson writes a non-finite float as ``null``, so the (rare) output that contains a null is
    walked to tell a real null from a NaN; everything else pays nothing extra. A
    ``CanonicalDict`` (``ledger.core.jsonfmt``) brings its own bytes, and its proof covers the walk.
    """
    if type(value) is CanonicalDict:
        return value.canonical.decode()
    value = with_canonical_fragments(value)  # a run record's bytes, serialised once
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    if b"null" in data:
        _reject_non_finite(value)
    return data.decode()


def _reject_non_finite(
    value: Any, _str=str, _int=int, _bool=bool, _float=float, _dict=dict, _list=list
) -> None:
    """Walks the containers only; the exact scalar types, nearly every value, cost one test
    (bound as locals: this runs on every event whose payload holds a null).

    Subclasses and other types fall back to ``isinstance`` (a ``float`` subclass is still
    checked), so the rule is the one orjson's ``null`` hides, whatever the payload holds.
    """
    stack: list[Any] = [[value]]
    while stack:
        item = stack.pop()
        for child in item.values() if isinstance(item, _dict) else item:
            kind = type(child)
            if kind is _str or kind is _int or kind is _bool or child is None:
                continue
            if kind is _dict or kind is _list:
                stack.append(child)
            elif kind is PlainJsonDict or kind is CanonicalDict or kind is Fragment:
                continue  # proven finite when built (``benchledger.ledger.core.jsonfmt``)
            elif kind is _float or isinstance(child, float):
                if child - child != 0.0:  # NaN, or an infinity (inf - inf is NaN)
                    raise TypeError("NaN or Infinity is not valid JSON")
            elif isinstance(child, dict):
                stack.append(child)
            elif isinstance(child, list | tuple):
                stack.append(child)


def event_hash(
    *,
    prev_hash: str,
    position: int,
    event_id: str,
    stream: str,
    stream_version: int,
    event_type: str,
    schema_version: int,
    payload: str,
    metadata: str,
    correlation_id: str,
    recorded_at: str,
    idempotency_key: str | None,
) -> str:
    """sha256 over every envelope field, so moving, editing or re-typing an event breaks it."""
    h = hashlib.sha256()
    for part in (
        prev_hash,
        str(position),
        event_id,
        stream,
        str(stream_version),
        event_type,
        str(schema_version),
        correlation_id,
        recorded_at,
        idempotency_key or "",
        metadata,
        payload,
    ):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()
