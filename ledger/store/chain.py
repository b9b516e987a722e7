"""The hash chain: each event's hash covers its canonical content and the previous hash.

Canonical JSON is orjson with sorted keys, so the same payload always hashes the same on every
backend; the stored payload text *is* that canonical form, which makes ``verify`` a byte-exact
re-walk instead of a re-serialisation guess.
"""

from __future__ import annotations

import hashlib
from typing import Any, final

import orjson

from benchledger.ledger.core.jsonfmt import orjson_prints_as_stdlib

GENESIS_HASH = "0" * 64


@final
class CanonicalJson:
    """A JSON object frozen as its canonical text when it is made; events carry it as a value
    and ``canonical_json`` writes its text as it is.

    Why: ``benchmark run`` puts each record in two events (``run_built``, and ``run_appended``
    inside the run record) and the goal run read model; serialising it once saves two sorted
    dumps and two NaN walks of ~2.5 MB per 3,000-trial ingest (bench/README.md, issue 18). The
    text is computed here, from the value as it is now (NaN and infinities refused, as by
    ``canonical_json``), and nothing can change it afterwards: changing the source dict later
    changes no stored byte. ``plain``: the value prints through orjson as through ``json``, so
    a render from the text needs no walk. (Its predecessor, a dict holding its bytes, could be
    mutated after it was serialised: the chain recorded stale bytes, and a NaN added later
    went unseen.)"""

    __slots__ = ("text", "plain")
    text: bytes
    plain: bool  # orjson prints the value as ``json`` does (``ledger.core.jsonfmt``)

    def __init__(self, value: dict[str, Any]) -> None:
        if not isinstance(value, dict):
            raise TypeError(f"CanonicalJson holds a JSON object, not {type(value).__name__}")
        # One walk: the proof that orjson prints the value as ``json`` does also proves every
        # float finite, so only a value it cannot prove pays ``canonical_json``'s NaN walk.
        # It trusts no proof but its own (``trust_proven=False``): a proven dict may have been
        # changed since.
        parts = [v for v in value.values() if type(v) is CanonicalJson]
        rest = {k: v for k, v in value.items() if type(v) is not CanonicalJson} if parts else value
        plain = all(p.plain for p in parts) and orjson_prints_as_stdlib(rest, trust_proven=False)
        text = _dumps(value) if plain else canonical_json(value).encode()
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "plain", plain)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("CanonicalJson is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("CanonicalJson is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is CanonicalJson and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"CanonicalJson({self.text[:60]!r}{'...' if len(self.text) > 60 else ''})"


def _fragment(value: Any) -> orjson.Fragment:
    """orjson's ``default``: a ``CanonicalJson`` is written as its text (already sorted and
    compact); any other type orjson cannot write is refused as before."""
    if type(value) is CanonicalJson:
        return orjson.Fragment(value.text)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_fragment, option=orjson.OPT_SORT_KEYS)


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON. NaN/Infinity raise TypeError instead of becoming ``null``.

    orjson writes a non-finite float as ``null``, so the (rare) output that contains a null is
    walked to tell a real null from a NaN; everything else pays nothing extra. A
    ``CanonicalJson`` inside ``value`` is written as its text, checked when it was made.
    """
    data = _dumps(value)
    if b"null" in data:
        _reject_non_finite(value)
    return data.decode()


def _reject_non_finite(
    value: Any, _str=str, _int=int, _bool=bool, _float=float, _dict=dict, _list=list
) -> None:
    """Walks the containers only; the exact scalar types, nearly every value, cost one test
    (bound as locals: this runs on every event whose payload holds a null).

    Subclasses and other types fall back to ``isinstance``, so the rule is the one orjson's
    ``null`` hides, whatever the payload holds: every dict is walked, whoever built it.
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
            elif kind is CanonicalJson:
                continue  # its text was checked when it was made, and cannot change
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
