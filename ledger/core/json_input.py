"""Parse a JSON document a user handed us, and say exactly what is wrong with one that fails.

"must contain an object" for an empty file, a torn write, a NaN and a Latin-1 file alike sends
the user looking in the wrong place; each failure here names its cause and where it is.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from benchledger.ledger.core.errors import InputError

MAX_DEPTH = 1024  # orjson's own nesting limit; the stdlib fallback is held to the same


# JSON can hold U+0000 only as this escape: a document without it costs one substring search,
# and one without a backslash at all a single memchr (``_BACKSLASH``): searching for the escape
# itself checks every "0" of the document (~2.5 us per 4 KB trial file, 3,000 of them a job).
_NUL_ESCAPE = b"\\u0000"
_BACKSLASH = b"\\"
NUL_REASON = (
    "a text in it holds a NUL character (\\u0000), which benchledger does not store"
    " (PostgreSQL cannot); remove it"
)


def holds_nul(raw: bytes, document: Any) -> bool:
    """Whether a key or string of ``document`` (parsed from ``raw``) holds U+0000.

    Why refuse it: SQLite keeps it and PostgreSQL refuses it in any text, so the same input
    would be ledgered on one store and fail half-way on the other."""
    if _BACKSLASH not in raw or _NUL_ESCAPE not in raw:
        return False
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            if any("\x00" in key for key in item):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def parse_json(raw: bytes, *, what: str, unique_keys: bool = False) -> Any:
    """The parsed document; an ``InputError`` ``"{what}: {reason}"`` otherwise.

    ``unique_keys`` also refuses an object that names a key twice: every parser keeps one of
    the two values without a word, so a hand-written record could say ``case_id`` twice and
    have the second silently win."""
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{what}: {_reason(raw, exc)}") from None
    if holds_nul(raw, document):
        raise InputError(f"{what}: {NUL_REASON}")
    if unique_keys and isinstance(document, dict | list):
        key = _duplicate_key(raw)
        if key is not None:
            shown = key if len(key) <= 60 else key[:59] + "…"
            raise InputError(
                f"{what}: key {json.dumps(shown)} appears twice in one object; keep one"
            )
    return document


def _duplicate_key(raw: bytes) -> str | None:
    """The first key named twice in one object, found by the stdlib's pair hook."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if not found:
            seen: set[str] = set()
            for key, _value in items:
                if key in seen:
                    found.append(key)
                    break
                seen.add(key)
        return dict(items)

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):  # orjson accepted it; its depth check is the bound
        return None
    return found[0] if found else None


def _reason(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    if not raw.strip():
        return "the file is empty"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not UTF-8 at byte offset {bad.start}"
    if text.startswith("\ufeff"):
        return "it starts with a byte order mark; save it as UTF-8 without BOM"
    where = f"line {exc.lineno}, column {exc.colno}"
    message = str(exc.msg)
    if "recursion limit" in message or "depth limit" in message:
        return f"nested deeper than {MAX_DEPTH} levels (at {where})"
    constant = _non_finite_constant(text)
    if constant is not None:
        return f"{constant} is not allowed in JSON (at {constant_where(text, constant)})"
    if exc.pos >= len(text.rstrip()) or "EOF" in message:
        return f"truncated JSON: the document ends early (at {where})"
    return f"{message.split(':')[0]} (at {where})"


def _non_finite_constant(text: str) -> str | None:
    """NaN, Infinity or -Infinity when the stdlib (which accepts them) finds one."""
    found: list[str] = []

    def constant(name: str) -> float:
        found.append(name)
        raise ValueError(name)

    try:
        json.loads(text, parse_constant=constant)
    except (ValueError, RecursionError):
        pass
    return found[0] if found else None


def constant_where(text: str, constant: str) -> str:
    """Line and column of the first bare ``constant`` outside a string, roughly: good enough
    to point a user at it."""
    index = text.find(constant)
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, as errors cite it (``got an integer``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
