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
# 64-bit integers are what orjson reads as integers; a longer one it reads as a float, rounded
# without a word (10**21 + 7 becomes 1e21). Only a run of 19+ digits can be one.
INT_MIN, UINT_MAX = -(2**63), 2**64 - 1
# Every digit as "1", everything else as a space: a run of 19 digits is then one substring
# search (C speed), ~6x cheaper than a regex over every runner file an ingest reads.
_DIGITS_AS_ONES = bytes(0x31 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_NINETEEN_DIGITS = b"1" * 19


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


def parse_json(
    raw: bytes, *, what: str, unique_keys: bool = False, exact_integers: bool = True
) -> Any:
    """The parsed document; an ``InputError`` ``"{what}: {reason}"`` otherwise.

    ``exact_integers`` refuses an integer past 64 bits (orjson would read it rounded); a file
    that other tools share, such as the global registry, turns it off: its other entries are
    kept as they are in the file, not refused.

    ``unique_keys`` also refuses an object that names a key twice: every parser keeps one of
    the two values without a word, so a hand-written record could say ``case_id`` twice and
    have the second silently win."""
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{what}: {_reason(raw, exc)}") from None
    if holds_nul(raw, document):
        raise InputError(f"{what}: {NUL_REASON}")
    big = inexact_integer(raw) if exact_integers else None
    if big is not None:  # valid JSON, but not a value benchledger keeps exactly
        raise InputError(f"{what.removesuffix(' is not valid JSON')}: {big}")
    if unique_keys and isinstance(document, dict | list):
        key = _duplicate_key(raw)
        if key is not None:
            shown = key if len(key) <= 60 else key[:59] + "…"
            raise InputError(
                f"{what}: key {json.dumps(shown)} appears twice in one object; keep one"
            )
    return document


def too_deep(document: Any, limit: int) -> str | None:
    """The path (``a.b[3].c``) of the first value nested deeper than ``limit`` containers,
    or None. Iterative: the documents checked are deep on purpose."""
    stack: list[tuple[Any, str, int]] = [(document, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if not isinstance(item, dict | list):
            continue
        if depth > limit:
            return path or "(the document)"
        children = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in children:
            step = f"[{key}]" if isinstance(key, int) else (f".{key}" if path else str(key))
            stack.append((child, _short(path + step), depth + 1))
    return None


def _short(path: str) -> str:
    return path if len(path) <= 160 else path[:60] + "…" + path[-90:]


def inexact_integer(raw: bytes) -> str | None:
    """Why ``raw`` holds an integer orjson would round (beyond 64 bits), naming it and its
    field, or None. Costs one digit-run search unless a 19-digit number is there."""
    if _NINETEEN_DIGITS not in raw.translate(_DIGITS_AS_ONES):
        return None
    found: list[str] = []

    def parse_int(text: str) -> int | str:
        try:
            value = int(text)
        except ValueError:  # more digits than Python converts: certainly past 64 bits
            value = None
        if value is None or not INT_MIN <= value <= UINT_MAX:
            found.append(text)
            return text  # a marker the walk below finds by identity
        return value

    try:
        document = json.loads(raw, parse_int=parse_int)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None
    if not found:
        return None
    marker = found[0]
    shown = marker if len(marker) <= 30 else f"{marker[:12]}…({len(marker)} digits)"
    where = _path_of(document, marker)
    at = f" at {where}" if where else ""
    return (
        f"the integer {shown}{at} is beyond 64 bits, which benchledger would only keep "
        "rounded; fix the figure or write it as a string"
    )


def _path_of(document: Any, marker: str) -> str | None:
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        item, path = stack.pop()
        if item is marker:
            return path or "(the document)"
        if isinstance(item, dict | list):
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                step = f"[{key}]" if isinstance(key, int) else (f".{key}" if path else str(key))
                stack.append((child, _short(path + step)))
    return None


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
